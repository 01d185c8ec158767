#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gvs/config.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "test.h"

static int parse(struct gvs_config *c, const char *text, char *err)
{
    return gvs_config_parse(c, text, strlen(text), err, 128);
}

TEST_IMPL(config_defaults_and_keys)
{
    struct gvs_config c;
    char err[128];
    gvs_config_init(&c);
    ASSERT_EQ(c.nlisten, 0);
    ASSERT_EQ(c.nplugins, 0);
    ASSERT_EQ(c.max_frame, GVS_FRAME_MAX_DEFAULT);
    ASSERT_EQ(c.handshake_timeout_ms, 5000);
    ASSERT_EQ(c.max_sessions, 64);
    ASSERT(c.server == NULL && c.plugin_dir == NULL && c.log_level == NULL);

    const char *text =
        "# gvsd configuration\n"
        "\n"
        "listen = unix:///run/gvs/gvsd.sock\n"
        "listen=tcp://0.0.0.0:7000   # trailing comment\n"
        "  plugin_dir =  /usr/lib/gvs/plugins  \n"
        "plugin = cudart\n"
        "plugin = test#1\n"
        "\tlog_level = debug\r\n"
        "max_frame = 32M\n"
        "handshake_timeout_ms = 250\n"
        "max_sessions = 4096\n"
        "server = tcp://[::1]:7000\n"
        "   # indented comment";
    ASSERT_EQ(parse(&c, text, err), 0);
    ASSERT_STR_EQ(err, "");
    ASSERT_EQ(c.nlisten, 2);
    ASSERT_STR_EQ(c.listen[0], "unix:///run/gvs/gvsd.sock");
    ASSERT_STR_EQ(c.listen[1], "tcp://0.0.0.0:7000");
    ASSERT_STR_EQ(c.plugin_dir, "/usr/lib/gvs/plugins");
    ASSERT_EQ(c.nplugins, 2);
    ASSERT_STR_EQ(c.plugins[0], "cudart");
    ASSERT_STR_EQ(c.plugins[1], "test#1");
    ASSERT_STR_EQ(c.log_level, "debug");
    ASSERT_EQ(c.max_frame, 32u << 20);
    ASSERT_EQ(c.handshake_timeout_ms, 250);
    ASSERT_EQ(c.max_sessions, 4096);
    ASSERT_STR_EQ(c.server, "tcp://[::1]:7000");

    /* Later scalars replace, repeatable keys append. */
    ASSERT_EQ(parse(&c, "server = unix:///tmp/s\nplugin = x\nmax_frame=4096",
                    err), 0);
    ASSERT_STR_EQ(c.server, "unix:///tmp/s");
    ASSERT_EQ(c.nplugins, 3);
    ASSERT_EQ(c.max_frame, 4096);
    ASSERT_EQ(parse(&c, "max_frame = 1G\n", err), 0);
    ASSERT_EQ(c.max_frame, (size_t)1 << 30);
    ASSERT_EQ(parse(&c, "max_frame = 64k\n", err), 0);
    ASSERT_EQ(c.max_frame, 65536);

    gvs_config_free(&c);
    ASSERT_EQ(c.nplugins, 0);
    ASSERT(c.server == NULL);
    ASSERT_EQ(c.max_sessions, 64);
    ASSERT_EQ(parse(&c, "", err), 0);
    gvs_config_free(&c);
    return 0;
}

/* Parses text into a fresh config and checks the error message. */
static int expect_error(const char *text, const char *message)
{
    struct gvs_config c;
    char err[128];
    gvs_config_init(&c);
    int r = parse(&c, text, err);
    gvs_config_free(&c);
    if (r != GVS_E_CONFIG || strcmp(err, message) != 0) {
        fprintf(stderr, "text \"%s\": got %d \"%s\", want \"%s\"\n", text, r,
                err, message);
        return 1;
    }
    return 0;
}

TEST_IMPL(config_errors)
{
    ASSERT_EQ(expect_error("\n\nfoo = 1\n", "line 3: unknown key 'foo'"), 0);
    ASSERT_EQ(expect_error("listen unix:///x", "line 1: expected 'key = value'"), 0);
    ASSERT_EQ(expect_error("# c\n = x", "line 2: missing key before '='"), 0);
    ASSERT_EQ(expect_error("server =   # nothing", "line 1: empty value for 'server'"), 0);
    ASSERT_EQ(expect_error("server = http://x", "line 1: 'server': malformed or unsupported URI"), 0);
    ASSERT_EQ(expect_error("x\n\nlisten = tcp://h", "line 1: expected 'key = value'"), 0);
    ASSERT_EQ(expect_error("listen = unix:///a\nlisten = tcp://h", "line 2: 'listen': malformed or unsupported URI"), 0);
    ASSERT_EQ(expect_error("log_level = loud", "line 1: 'log_level' must be error, warn, info or debug"), 0);
    ASSERT_EQ(expect_error("max_sessions = 0", "line 1: 'max_sessions' must be a number in 1..4096"), 0);
    ASSERT_EQ(expect_error("max_sessions = 4097", "line 1: 'max_sessions' must be a number in 1..4096"), 0);
    ASSERT_EQ(expect_error("max_sessions = -1", "line 1: 'max_sessions' must be a number in 1..4096"), 0);
    ASSERT_EQ(expect_error("max_sessions = 99999999999999999999999", "line 1: 'max_sessions' must be a number in 1..4096"), 0);
    ASSERT_EQ(expect_error("handshake_timeout_ms = 5s", "line 1: 'handshake_timeout_ms' must be a number in 0..3600000"), 0);

    static const char *const bad_frames[] = {"4095", "2G", "1025M", "16 M",
                                             "16MB", "M", "0x1000", "-1",
                                             "18446744073709551616"};
    for (size_t i = 0; i < sizeof(bad_frames) / sizeof(bad_frames[0]); i++) {
        char text[64];
        snprintf(text, sizeof(text), "max_frame = %s", bad_frames[i]);
        ASSERT_EQ(expect_error(text, "line 1: 'max_frame' must be a size in "
                                     "4096..1073741824 bytes (suffix K, M, G "
                                     "or T)"), 0);
    }

    char text[1024] = "";
    for (int i = 0; i < GVS_CONFIG_MAX_LISTEN + 1; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text),
                 "listen = unix:///tmp/s%d\n", i);
    ASSERT_EQ(expect_error(text, "line 9: too many 'listen' entries (at most 8)"), 0);
    text[0] = '\0';
    for (int i = 0; i < GVS_CONFIG_MAX_PLUGINS + 1; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text),
                 "plugin = p%d\n", i);
    ASSERT_EQ(expect_error(text, "line 17: too many 'plugin' entries (at most 16)"), 0);

    struct gvs_config c;
    char err[128];
    gvs_config_init(&c);
    static const char nul[] = "plugin = a\nplugin = b\0c\n";
    ASSERT_EQ(gvs_config_parse(&c, nul, sizeof(nul) - 1, err, sizeof(err)),
              GVS_E_CONFIG);
    ASSERT_STR_EQ(err, "line 2: NUL byte in line");
    ASSERT_EQ(gvs_config_parse(&c, "bogus", 5, NULL, 0), GVS_E_CONFIG);
    char tiny[8];
    ASSERT_EQ(gvs_config_parse(&c, "bogus", 5, tiny, sizeof(tiny)), GVS_E_CONFIG);
    ASSERT_STR_EQ(tiny, "line 1:");
    gvs_config_free(&c);
    return 0;
}

TEST_IMPL(config_load)
{
    struct gvs_config c;
    char err[256];
    char path[] = "/tmp/gvs-config-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const char *text = "plugin = cudart\nmax_sessions = 3\n";
    ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
    gvs_config_init(&c);
    ASSERT_EQ(gvs_config_load(&c, path, err, sizeof(err)), 0);
    ASSERT_EQ(c.max_sessions, 3);
    ASSERT_STR_EQ(c.plugins[0], "cudart");
    gvs_config_free(&c);

    /* A bad line is named by the file and its number, as compilers do. */
    char want[300];
    const char *typo = "plugin = cudart\n\nlisten_on = unix:///x\n";
    ASSERT_EQ(ftruncate(fd, 0), 0);
    ASSERT_EQ(pwrite(fd, typo, strlen(typo), 0), (long long)strlen(typo));
    ASSERT_EQ(gvs_config_load(&c, path, err, sizeof(err)), GVS_E_CONFIG);
    snprintf(want, sizeof(want), "%s:3: unknown key 'listen_on'", path);
    ASSERT_STR_EQ(err, want);
    gvs_config_free(&c);

    /* Larger than 1 MiB: refused without parsing. */
    ASSERT_EQ(ftruncate(fd, (1 << 20) + 1), 0);
    ASSERT_EQ(gvs_config_load(&c, path, err, sizeof(err)), GVS_E_CONFIG);
    snprintf(want, sizeof(want), "%s: file larger than 1 MiB", path);
    ASSERT_STR_EQ(err, want);
    close(fd);
    unlink(path);
    gvs_config_free(&c);

    ASSERT_EQ(gvs_config_load(&c, "/nonexistent/gvs.conf", err, sizeof(err)),
              GVS_E_IO);
    ASSERT_STR_EQ(err, "/nonexistent/gvs.conf: No such file or directory");
    /* A file that cannot be read: a directory opens, but reads fail. */
    ASSERT_EQ(gvs_config_load(&c, "/tmp", err, sizeof(err)), GVS_E_IO);
    ASSERT_STR_EQ(err, "/tmp: Is a directory");

    setenv("GVS_CONFIG", "/tmp/other.conf", 1);
    ASSERT_STR_EQ(gvs_config_default_path(), "/tmp/other.conf");
    unsetenv("GVS_CONFIG");
    ASSERT_STR_EQ(gvs_config_default_path(), "/etc/gvs/gvs.conf");
    return 0;
}

/* Only the default file may be missing: one $GVS_CONFIG names must be
 * there. */
TEST_IMPL(config_load_default)
{
    struct gvs_config c;
    char err[256];
    gvs_config_init(&c);
    setenv("GVS_CONFIG", "/nonexistent/gvs.conf", 1);
    ASSERT_EQ(gvs_config_load_default(&c, err, sizeof(err)), GVS_E_IO);
    ASSERT_STR_EQ(err, "/nonexistent/gvs.conf: No such file or directory "
                       "(the file GVS_CONFIG names)");
    setenv("GVS_CONFIG", "/dev/null", 1);
    ASSERT_EQ(gvs_config_load_default(&c, err, sizeof(err)), 0);
    ASSERT_STR_EQ(err, "");
    /* Unset or empty: the default file, which need not exist. */
    setenv("GVS_CONFIG", "", 1);
    if (access("/etc/gvs/gvs.conf", F_OK) != 0)
        ASSERT_EQ(gvs_config_load_default(&c, err, sizeof(err)), 0);
    unsetenv("GVS_CONFIG");
    gvs_config_free(&c);
    return 0;
}

/* Vanished tcp peers are let go within 3 minutes by default, and the
 * bounds are the kernel's. */
TEST_IMPL(config_tcp_keys)
{
    struct gvs_config c;
    char err[128];
    gvs_config_init(&c);
    ASSERT_EQ(c.tcp_keepalive.idle_s, 60);
    ASSERT_EQ(c.tcp_keepalive.interval_s, 10);
    ASSERT_EQ(c.tcp_keepalive.count, 6);
    ASSERT_EQ(c.tcp_ack_timeout_ms, 120000);
    ASSERT_LE(c.tcp_keepalive.idle_s +
                  c.tcp_keepalive.interval_s * c.tcp_keepalive.count,
              180);
    /* gvsd's watch looks four times per timeout: at most a quarter late. */
    ASSERT_LE(c.tcp_ack_timeout_ms + c.tcp_ack_timeout_ms / 4, 180000);
    ASSERT_EQ(parse(&c,
                    "tcp_keepalive_idle_s = 1\ntcp_keepalive_interval_s = 2\n"
                    "tcp_keepalive_count = 127\ntcp_ack_timeout_ms = 0\n",
                    err),
              0);
    ASSERT_EQ(c.tcp_keepalive.idle_s, 1);
    ASSERT_EQ(c.tcp_keepalive.interval_s, 2);
    ASSERT_EQ(c.tcp_keepalive.count, 127);
    ASSERT_EQ(c.tcp_ack_timeout_ms, 0);
    ASSERT_EQ(parse(&c, "tcp_keepalive_idle_s = 0", err), 0);
    ASSERT_EQ(c.tcp_keepalive.idle_s, 0);
    ASSERT_EQ(parse(&c, "tcp_keepalive_count = 128", err), GVS_E_CONFIG);
    ASSERT_STR_EQ(err, "line 1: 'tcp_keepalive_count' must be a number in "
                       "1..127");
    ASSERT_EQ(parse(&c, "tcp_keepalive_interval_s = 0", err), GVS_E_CONFIG);
    ASSERT_STR_EQ(err, "line 1: 'tcp_keepalive_interval_s' must be a number "
                       "in 1..32767");
    ASSERT_EQ(parse(&c, "tcp_keepalive_idle_s = 32768", err), GVS_E_CONFIG);
    ASSERT_EQ(parse(&c, "tcp_ack_timeout_ms = 86400001", err), GVS_E_CONFIG);
    gvs_config_free(&c);
    ASSERT_EQ(c.tcp_ack_timeout_ms, 120000);
    return 0;
}

/* The ivshmem:// region's keys: defaults, bounds, sizes; a refused line
 * leaves what the lines before set. */
TEST_IMPL(config_ivshmem_keys)
{
    static const struct {
        const char *text;
        int rc;
        unsigned slots;
        uint64_t area;
    } cases[] = {
        {"", 0, 16, 16u << 20},
        {"ivshmem_slots = 64\nivshmem_area = 1G\n", 0, 64, 1u << 30},
        {"ivshmem_area = 0", 0, 16, 0},
        {"ivshmem_slots = 1\nivshmem_slots = 0", GVS_E_CONFIG, 1, 16u << 20},
        {"ivshmem_slots = 65", GVS_E_CONFIG, 16, 16u << 20},
        {"ivshmem_area = 4K\nivshmem_area = 17G", GVS_E_CONFIG, 16, 4096},
        {"ivshmem_area = lots", GVS_E_CONFIG, 16, 16u << 20},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gvs_config c;
        char why[128];
        gvs_config_init(&c);
        ASSERT_EQ(parse(&c, cases[i].text, why), cases[i].rc);
        ASSERT_EQ(c.ivshmem_slots, cases[i].slots);
        ASSERT_EQ(c.ivshmem_area, cases[i].area);
        gvs_config_free(&c);
    }
    return 0;
}

TEST_IMPL(config_alloc_failure)
{
    const char *text = "listen = unix:///tmp/a\nplugin = cudart\n"
                       "plugin_dir = /p\nserver = tcp://h:1\nlog_level = info\n";
    int ok = 0;
    for (long n = 0; n < 32 && !ok; n++) {
        struct gvs_config c;
        char err[128];
        gvs_config_init(&c);
        gvs_mem_fail_after(n);
        int r = gvs_config_parse(&c, text, strlen(text), err, sizeof(err));
        gvs_mem_fail_after(-1);
        if (r == 0) {
            ok = 1;
            ASSERT_STR_EQ(c.log_level, "info");
        } else {
            ASSERT_EQ(r, GVS_E_NOMEM);
            ASSERT(strstr(err, "out of memory") != NULL);
        }
        gvs_config_free(&c);
    }
    ASSERT(ok);
    return 0;
}

/* The access and limit keys (docs/security.md). */
TEST_IMPL(config_access_keys)
{
    struct gvs_config c;
    char err[128];
    gvs_config_init(&c);
    ASSERT_EQ(c.socket_mode, 0660);
    ASSERT_EQ(c.keepalive_ms, 30000);
    ASSERT_EQ(c.ntokens, 0);
    const char *text =
        "token = 0123456789abcdef0123\n"
        "token = s3cr3t-for-alice-only  name=alice quota=8G\n"
        "insecure = yes\n"
        "tls_cert = /etc/gvs/cert.pem\n"
        "tls_key = /etc/gvs/key.pem\n"
        "tls_ca = /etc/gvs/ca.pem\n"
        "socket_mode = 0600\n"
        "socket_group = gpu\n"
        "allow_uid = 1000,1001\n"
        "allow_uid = 0\n"
        "allow_gid = 44\n"
        "idle_timeout_ms = 600000\n"
        "keepalive_ms = 0\n"
        "memory_quota = 512M\n"
        "metrics_listen = tcp://127.0.0.1:9400\n"
        "metrics_sessions = yes\n";
    ASSERT_EQ(parse(&c, text, err), 0);
    ASSERT_EQ(c.ntokens, 2);
    ASSERT_STR_EQ(c.tokens[0].secret, "0123456789abcdef0123");
    ASSERT(c.tokens[0].name == NULL);
    ASSERT_EQ(c.tokens[0].quota, 0);
    ASSERT_STR_EQ(c.tokens[1].secret, "s3cr3t-for-alice-only");
    ASSERT_STR_EQ(c.tokens[1].name, "alice");
    ASSERT_U64_EQ(c.tokens[1].quota, 8ull << 30);
    ASSERT_EQ(c.insecure, 1);
    ASSERT_STR_EQ(c.tls_cert, "/etc/gvs/cert.pem");
    ASSERT_STR_EQ(c.tls_key, "/etc/gvs/key.pem");
    ASSERT_STR_EQ(c.tls_ca, "/etc/gvs/ca.pem");
    ASSERT_EQ(c.socket_mode, 0600);
    ASSERT_STR_EQ(c.socket_group, "gpu");
    ASSERT_EQ(c.nallow_uid, 3);
    ASSERT_EQ(c.allow_uid[0], 1000);
    ASSERT_EQ(c.allow_uid[1], 1001);
    ASSERT_EQ(c.allow_uid[2], 0);
    ASSERT_EQ(c.nallow_gid, 1);
    ASSERT_EQ(c.allow_gid[0], 44);
    ASSERT_EQ(c.idle_timeout_ms, 600000);
    ASSERT_EQ(c.keepalive_ms, 0);
    ASSERT_U64_EQ(c.memory_quota, 512ull << 20);
    ASSERT_STR_EQ(c.metrics_listen, "tcp://127.0.0.1:9400");
    ASSERT_EQ(c.metrics_sessions, 1);
    ASSERT_EQ(parse(&c, "insecure = false", err), 0);
    ASSERT_EQ(c.insecure, 0);
    ASSERT_EQ(parse(&c, "metrics_sessions = 0", err), 0);
    ASSERT_EQ(c.metrics_sessions, 0);
    gvs_config_free(&c);
    ASSERT_EQ(c.ntokens, 0);
    ASSERT(c.tls_ca == NULL);

    ASSERT_EQ(expect_error("token = short", "line 1: 'token': the secret must be 16..256 printable characters"), 0);
    ASSERT_EQ(expect_error("token = 0123456789abcdef name=", "line 1: 'token': name= takes 1..64 of A-Z a-z 0-9 _ - ."), 0);
    ASSERT_EQ(expect_error("token = 0123456789abcdef name=a/b", "line 1: 'token': name= takes 1..64 of A-Z a-z 0-9 _ - ."), 0);
    ASSERT_EQ(expect_error("token = 0123456789abcdef quota=1X", "line 1: 'token' must be a size in 1..1125899906842624 bytes (suffix K, M, G or T)"), 0);
    ASSERT_EQ(expect_error("token = 0123456789abcdef name=a name=b", "line 1: 'token' is SECRET [name=NAME] [quota=SIZE], each once"), 0);
    ASSERT_EQ(expect_error("token = 0123456789abcdef extra", "line 1: 'token' is SECRET [name=NAME] [quota=SIZE], each once"), 0);
    ASSERT_EQ(expect_error("insecure = maybe", "line 1: 'insecure' must be 0/1, yes/no or true/false"), 0);
    ASSERT_EQ(expect_error("socket_mode = 0800", "line 1: 'socket_mode' must be an octal mode in 0..0777"), 0);
    ASSERT_EQ(expect_error("socket_mode = 1777", "line 1: 'socket_mode' must be an octal mode in 0..0777"), 0);
    ASSERT_EQ(expect_error("allow_uid = 1,,2", "line 1: 'allow_uid' must be a comma-separated list of at most 64 ids"), 0);
    ASSERT_EQ(expect_error("allow_gid = x", "line 1: 'allow_gid' must be a number in 0..4294967294"), 0);
    ASSERT_EQ(expect_error("idle_timeout_ms = 86400001", "line 1: 'idle_timeout_ms' must be a number in 0..86400000"), 0);
    ASSERT_EQ(expect_error("memory_quota = 2048T", "line 1: 'memory_quota' must be a size in 0..1125899906842624 bytes (suffix K, M, G or T)"), 0);
    ASSERT_EQ(expect_error("metrics_listen = unix:///tmp/m", "line 1: 'metrics_listen' must be a tcp://host:port URI"), 0);
    ASSERT_EQ(expect_error("metrics_sessions = on", "line 1: 'metrics_sessions' must be 0/1, yes/no or true/false"), 0);
    char many[4096] = "";
    for (int i = 0; i < GVS_CONFIG_MAX_TOKENS + 1; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many),
                 "token = token-number-%04d\n", i);
    ASSERT_EQ(expect_error(many, "line 65: too many 'token' entries (at most 64)"), 0);
    return 0;
}
