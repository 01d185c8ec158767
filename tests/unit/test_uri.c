#include "gvs/comm.h"
#include "gvs/err.h"
#include "test.h"

static int roundtrip(const char *text, const char *canonical)
{
    struct gvs_uri u;
    char out[400];
    if (gvs_uri_parse(text, &u) != 0)
        return 1;
    if (gvs_uri_format(&u, out, sizeof(out)) != 0)
        return 2;
    return strcmp(out, canonical) == 0 ? 0 : 3;
}

TEST_IMPL(uri_valid)
{
    struct gvs_uri u;
    ASSERT_EQ(gvs_uri_parse("unix:///run/gvs/gvsd.sock", &u), 0);
    ASSERT_STR_EQ(u.scheme, "unix");
    ASSERT_STR_EQ(u.path, "/run/gvs/gvsd.sock");
    ASSERT_STR_EQ(u.host, "");

    ASSERT_EQ(gvs_uri_parse("tcp://127.0.0.1:5000", &u), 0);
    ASSERT_STR_EQ(u.scheme, "tcp");
    ASSERT_STR_EQ(u.host, "127.0.0.1");
    ASSERT_EQ(u.port, 5000);
    ASSERT_STR_EQ(u.path, "");

    ASSERT_EQ(gvs_uri_parse("tcp://[::1]:0", &u), 0);
    ASSERT_STR_EQ(u.host, "::1");
    ASSERT_EQ(u.port, 0);
    ASSERT_EQ(gvs_uri_parse("tcp://gpu-host.example_1:65535", &u), 0);
    ASSERT_EQ(u.port, 65535);

    ASSERT_EQ(roundtrip("unix:///tmp/x", "unix:///tmp/x"), 0);
    ASSERT_EQ(roundtrip("shm:///tmp/x", "shm:///tmp/x"), 0);
    ASSERT_EQ(gvs_uri_parse("shm:///run/gvs/shm.sock", &u), 0);
    ASSERT_STR_EQ(u.scheme, "shm");
    ASSERT_STR_EQ(u.path, "/run/gvs/shm.sock");
    ASSERT_EQ(roundtrip("tcp://localhost:7", "tcp://localhost:7"), 0);
    ASSERT_EQ(roundtrip("tcp://[fe80::1]:80", "tcp://[fe80::1]:80"), 0);

    /* 107 characters is the most sun_path holds with its NUL. */
    char path[140] = "unix://";
    memset(path + 7, 'a', 107);
    path[7] = '/';
    path[7 + 107] = '\0';
    ASSERT_EQ(gvs_uri_parse(path, &u), 0);
    ASSERT_EQ(strlen(u.path), 107);
    return 0;
}

TEST_IMPL(uri_invalid)
{
    static const char *const bad[] = {
        "",
        "unix",
        "unix://",
        "unix://relative/path",
        "shm://",
        "shm://relative/path",
        "shm://host:80",
        "http://host:80",
        "UNIX:///tmp/x",
        "tcp://",
        "tcp://host",
        "tcp://host:",
        "tcp://:80",
        "tcp://host:65536",
        "tcp://host:-1",
        "tcp://host:+80",
        "tcp://host:80/",
        "tcp://host:80 ",
        "tcp://host:123456",
        "tcp://host:0080x",
        "tcp://ho st:80",
        "tcp://::1:80",
        "tcp://[::1]",
        "tcp://[::1]80",
        "tcp://[::1:80",
        "tcp://[]:80",
        "tcp://[not-v6]:80",
        "tcp://[::1]:80x",
        "vsock://3:5000",
    };
    struct gvs_uri u;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&u, 0x5a, sizeof(u));
        if (gvs_uri_parse(bad[i], &u) != GVS_E_URI)
            TEST_FAIL_AT("accepted \"%s\"", bad[i]);
        ASSERT_EQ(u.scheme[0], 0);
        ASSERT_EQ(u.port, 0);
    }
    ASSERT_EQ(gvs_uri_parse(NULL, &u), GVS_E_URI);

    char path[140] = "unix://";
    memset(path + 7, 'a', 108);
    path[7] = '/';
    path[7 + 108] = '\0';
    ASSERT_EQ(gvs_uri_parse(path, &u), GVS_E_URI);

    char host[400] = "tcp://";
    memset(host + 6, 'h', 300);
    strcpy(host + 306, ":80");
    ASSERT_EQ(gvs_uri_parse(host, &u), GVS_E_URI);
    memset(host + 6, 'h', 256);
    strcpy(host + 262, ":80");
    ASSERT_EQ(gvs_uri_parse(host, &u), GVS_E_URI);

    char out[16];
    ASSERT_EQ(gvs_uri_parse("unix:///a/rather/long/path", &u), 0);
    ASSERT_EQ(gvs_uri_format(&u, out, sizeof(out)), GVS_E_TOOBIG);
    ASSERT_STR_EQ(out, "");
    memcpy(u.scheme, "vsock", 6);
    ASSERT_EQ(gvs_uri_format(&u, out, sizeof(out)), GVS_E_URI);
    return 0;
}
