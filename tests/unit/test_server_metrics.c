/* The metrics an operator alerts on (docs/config.md, "Metrics"): the
 * text format and its labels, cumulative counters that outlive the
 * workers, per-GPU gauges, and the per-session series only when asked
 * for; against a real gvsd serving the echo plugin. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "test.h"
#include "test_server_harness.h"

#define MAX_FAMILIES 64
#define MAX_SERIES 1024

static int name_char(int c, int first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* The end of a label set {name="value",...} starting at p, or NULL when
 * it is malformed: names of [a-zA-Z_][a-zA-Z0-9_]*, values with only \\,
 * \" and \n escaped. */
static const char *labels_end(const char *p)
{
    if (*p++ != '{')
        return NULL;
    while (*p != '}') {
        if (!name_char(*p, 1) || *p == ':')
            return NULL;
        while (name_char(*p, 0) && *p != ':')
            p++;
        if (p[0] != '=' || p[1] != '"')
            return NULL;
        for (p += 2; *p != '"'; p++) {
            if (*p == '\n' || *p == '\0')
                return NULL;
            if (*p == '\\' && strchr("\\\"n", *++p) == NULL)
                return NULL;
        }
        p++;
        if (*p == ',')
            p++;
        else if (*p != '}')
            return NULL;
    }
    return p + 1;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Checks an exposition body (text format 0.0.4) as Prometheus reads it,
 * and the conventions gvs keeps: each family's HELP, then its TYPE
 * (counter or gauge), then all its samples; a counter's name ends in
 * _total and a gauge's does not; no series twice.  0, or 1 after saying
 * which line is wrong. */
static int exposition_ok(const char *body)
{
    static char family[MAX_FAMILIES][128];
    static const char *series[MAX_SERIES];
    static size_t series_len[MAX_SERIES];
    int nfamilies = 0, nseries = 0, typed = 0, counter = 0;
    char helped[128] = "";
    for (const char *line = body; *line != '\0';) {
        const char *eol = strchr(line, '\n');
        if (eol == NULL)
            TEST_FAIL_AT("no newline after the last line: %s", line);
        size_t len = (size_t)(eol - line);
        char type[16];
        if (strncmp(line, "# HELP ", 7) == 0) {
            ASSERT_EQ(sscanf(line + 7, "%127s", helped), 1);
            for (int i = 0; i < nfamilies; i++)
                if (strcmp(family[i], helped) == 0)
                    TEST_FAIL_AT("%s described twice", helped);
            typed = 0;
        } else if (strncmp(line, "# TYPE ", 7) == 0) {
            char name[128];
            ASSERT_EQ(sscanf(line + 7, "%127s %15s", name, type), 2);
            if (strcmp(name, helped) != 0 || nfamilies == MAX_FAMILIES)
                TEST_FAIL_AT("TYPE without its HELP: %.*s", (int)len, line);
            counter = strcmp(type, "counter") == 0;
            if (!counter && strcmp(type, "gauge") != 0)
                TEST_FAIL_AT("type %s of %s", type, name);
            if (counter != ends_with(name, strlen(name), "_total"))
                TEST_FAIL_AT("%s %s: only counters end in _total", type,
                             name);
            snprintf(family[nfamilies++], sizeof(family[0]), "%s", name);
            typed = 1;
        } else {
            const char *p = line;
            while (name_char(*p, p == line))
                p++;
            size_t nlen = (size_t)(p - line);
            if (!typed || nlen != strlen(family[nfamilies - 1]) ||
                memcmp(line, family[nfamilies - 1], nlen) != 0)
                TEST_FAIL_AT("sample outside its family: %.*s", (int)len,
                             line);
            if (*p == '{' && (p = labels_end(p)) == NULL)
                TEST_FAIL_AT("bad labels: %.*s", (int)len, line);
            char *end = (char *)p;
            if (*p == ' ')
                (void)strtod(p + 1, &end);
            if (end != eol)
                TEST_FAIL_AT("bad value: %.*s", (int)len, line);
            for (int i = 0; i < nseries; i++)
                if (series_len[i] == (size_t)(p - line) &&
                    memcmp(series[i], line, series_len[i]) == 0)
                    TEST_FAIL_AT("series twice: %.*s", (int)len, line);
            ASSERT_LT(nseries, MAX_SERIES);
            series[nseries] = line;
            series_len[nseries++] = (size_t)(p - line);
        }
        line = eol + 1;
    }
    return 0;
}

/* GET /metrics into text; the body (checked by exposition_ok), or NULL. */
static const char *scrape(int port, char *text, size_t len)
{
    if (test_http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", text,
                  len) <= 0 ||
        strncmp(text, "HTTP/1.1 200 OK\r\n", 17) != 0)
        return NULL;
    const char *body = strstr(text, "\r\n\r\n");
    return body != NULL && exposition_ok(body + 4) == 0 ? body + 4 : NULL;
}

/* The value of the sample series (name and labels as served), -1 when it
 * is not there. */
static double value(const char *body, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = body; (p = strstr(p, series)) != NULL; p += n)
        if ((p == body || p[-1] == '\n') && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

#define ASSERT_VALUE(body, series, want)                                     \
    do {                                                                     \
        double v_ = value(body, series);                                     \
        if (v_ != (double)(want))                                            \
            TEST_FAIL_AT("%s: %g, want %g in\n%s", series, v_,               \
                         (double)(want), body);                              \
    } while (0)

/* Scrapes until series has want (the parent sees a worker's end a moment
 * after its client does); the last body, or NULL after 5 s. */
static const char *wait_value(int port, char *text, size_t len,
                              const char *series, double want)
{
    long long deadline = test_now_ms() + 5000;
    const char *body;
    while ((body = scrape(port, text, len)) != NULL &&
           value(body, series) != want && test_now_ms() < deadline)
        usleep(20000);
    return body != NULL && value(body, series) == want ? body : NULL;
}

/* The session's device names the GPU whose UUID is 16 bytes of fill,
 * and holds bytes on it. */
static int report_gpu(struct gvs_conn *c, uint64_t id, int32_t device,
                      uint8_t fill, uint64_t bytes)
{
    uint8_t body[28];
    for (int i = 0; i < 4; i++)
        body[i] = (uint8_t)((uint32_t)device >> (8 * i));
    memset(body + 4, fill, 16);
    for (int i = 0; i < 8; i++)
        body[20 + i] = (uint8_t)(bytes >> (8 * i));
    return test_echo_op(c, ECHO_OP_REPORT_GPU_MEMORY, id, body,
                        sizeof(body));
}

/* Without metrics_sessions no series names a session: the label sets are
 * bounded whatever the clients do. */
TEST_IMPL(server_metrics_format)
{
    struct test_gvsd g = {0};
    static char text[65536];
    int port;
    ASSERT_EQ(test_gvsd_start_metrics(&g, &port, NULL, NULL), 0);
    const char *body = scrape(port, text, sizeof(text));
    ASSERT(body != NULL);
    struct gvs_conn *c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = test_session(i == 1 ? g.tcp_uri : g.unix_uri);
        ASSERT(c[i] != NULL);
        ASSERT_EQ(test_echo(c[i], 1, 10), 0);
        ASSERT_EQ(test_report_memory(c[i], 2, 1000u * (i + 1)), 0);
    }
    body = scrape(port, text, sizeof(text));
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_sessions", 3);
    ASSERT(strstr(body, "\ngvs_session_") == NULL);
    ASSERT(strstr(body, "session=") == NULL);
    ASSERT(strstr(body, "identity=") == NULL);
    /* 3000 of the quota of 2 MiB. */
    ASSERT_VALUE(body, "gvs_sessions_quota_used_max_ratio", 0.001431);
    for (int i = 0; i < 3; i++)
        gvs_conn_close(c[i]);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* The cumulative counters count every session served, ended and killed
 * ones included, while a session's own series (metrics_sessions) count
 * its own calls alone, in a slot an ended one held before. */
TEST_IMPL(server_metrics_totals)
{
    struct test_gvsd g = {0};
    static char text[65536];
    int port;
    ASSERT_EQ(test_gvsd_start_metrics(&g, &port, "metrics_sessions = yes\n",
                                      NULL),
              0);
    const char *body = scrape(port, text, sizeof(text));
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_sessions_started_total", 0);
    ASSERT_VALUE(body, "gvs_calls_total{plugin=\"echo\"}", 0);
    ASSERT_VALUE(body, "gvs_calls_total{plugin=\"peer\"}", 0);
    ASSERT_VALUE(body, "gvs_bytes_total{direction=\"in\"}", 0);
    ASSERT_VALUE(body, "gvs_bytes_total{direction=\"out\"}", 0);

    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    for (int i = 1; i <= 3; i++)
        ASSERT_EQ(test_echo(c, (uint64_t)i, 50), 0);
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "session 1: ended", 5000));
    body = wait_value(port, text, sizeof(text), "gvs_sessions", 0);
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_sessions_started_total", 1);
    ASSERT_VALUE(body, "gvs_calls_total{plugin=\"echo\"}", 3);
    /* Three echoes of 28 + 50 bytes each way. */
    ASSERT_VALUE(body, "gvs_bytes_total{direction=\"in\"}", 3 * 78);
    ASSERT_VALUE(body, "gvs_bytes_total{direction=\"out\"}", 3 * 78);

    /* The next session takes the same slot, and counts from zero. */
    c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(test_echo(c, 1, 50), 0);
    ASSERT_EQ(test_echo(c, 2, 50), 0);
    body = scrape(port, text, sizeof(text));
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_sessions_started_total", 2);
    ASSERT_VALUE(body, "gvs_calls_total{plugin=\"echo\"}", 5);
    char series[256];
    snprintf(series, sizeof(series),
             "gvs_session_calls_total{session=\"2\",identity=\"uid=%u",
             (unsigned)getuid());
    const char *at = strstr(body, series);
    ASSERT(at != NULL);
    at = strstr(at, "} ");
    ASSERT(at != NULL);
    ASSERT_EQ(strtoul(at + 2, NULL, 10), 2);

    /* A worker that dies keeps what it counted. */
    struct gvs_conn *k = test_session(g.unix_uri);
    ASSERT(k != NULL);
    ASSERT_EQ(test_echo(k, 1, 50), 0);
    ASSERT_NE(test_echo_op(k, ECHO_OP_CRASH, 2, NULL, 0), 0);
    gvs_conn_close(k);
    body = wait_value(port, text, sizeof(text),
                      "gvs_sessions_ended_total{reason=\"worker_killed\"}", 1);
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_sessions", 1);
    ASSERT_VALUE(body, "gvs_sessions_started_total", 3);
    /* Its ECHO and its CRASH. */
    ASSERT_VALUE(body, "gvs_calls_total{plugin=\"echo\"}", 7);
    ASSERT_VALUE(body, "gvs_calls_total{plugin=\"peer\"}", 0);
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

#define GPU0 "uuid=\"GPU-00000000-0000-0000-0000-000000000000\"}"
#define GPU1 "uuid=\"GPU-11111111-1111-1111-1111-111111111111\"}"
#define GPU_AB "uuid=\"GPU-abababab-abab-abab-abab-abababababab\"}"

/* Per GPU, labelled by NVML's index and the UUID: the memory the
 * sessions' plugins report on it, and how many sessions have some.  A
 * GPU NVML does not list has no index. */
TEST_IMPL(server_metrics_gpus)
{
    struct test_gvsd g = {0};
    static char text[65536];
    char nvml[512];
    int port;
    /* tests/nvml/libnvidia-ml.so.1 lists GPU-0000... and GPU-1111... */
    snprintf(nvml, sizeof(nvml), "%s/tests/nvml", test_build_dir());
    setenv("LD_LIBRARY_PATH", nvml, 1);
    ASSERT_EQ(test_gvsd_start_metrics(&g, &port, NULL, NULL), 0);
    const char *body = wait_value(port, text, sizeof(text),
                                  "gvs_gpu_sessions{gpu=\"1\"," GPU1, 0);
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_gpu_memory_bytes{gpu=\"0\"," GPU0, 0);
    ASSERT_VALUE(body, "gvs_gpu_sessions{gpu=\"0\"," GPU0, 0);

    struct gvs_conn *a = test_session(g.unix_uri);
    struct gvs_conn *b = test_session(g.tcp_uri);
    ASSERT(a != NULL && b != NULL);
    ASSERT_EQ(report_gpu(a, 1, 0, 0x11, 5000), 0);
    ASSERT_EQ(report_gpu(a, 2, 1, 0xab, 7), 0);
    ASSERT_EQ(test_report_memory(a, 3, 1 << 20), 0);
    ASSERT_EQ(report_gpu(b, 1, 0, 0x11, 3000), 0);
    /* A later report replaces the earlier one; the first name stands. */
    ASSERT_EQ(report_gpu(b, 2, 0, 0x12, 3500), 0);
    body = scrape(port, text, sizeof(text));
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_gpu_memory_bytes{gpu=\"1\"," GPU1, 8500);
    ASSERT_VALUE(body, "gvs_gpu_sessions{gpu=\"1\"," GPU1, 2);
    ASSERT_VALUE(body, "gvs_gpu_memory_bytes{gpu=\"0\"," GPU0, 0);
    ASSERT_VALUE(body, "gvs_gpu_memory_bytes{gpu=\"\"," GPU_AB, 7);
    ASSERT_VALUE(body, "gvs_gpu_sessions{gpu=\"\"," GPU_AB, 1);
    /* Half of the quota of 2 MiB. */
    ASSERT_VALUE(body, "gvs_sessions_quota_used_max_ratio", 0.5);

    /* A session's GPUs go with it; it shows ordinals below
     * GVS_SESSION_GPUS only. */
    gvs_conn_close(a);
    for (int32_t d = 1; d <= 20; d++)
        ASSERT_EQ(report_gpu(b, 10 + (uint64_t)d, d, (uint8_t)(0x20 + d), 1),
                  0);
    body = wait_value(port, text, sizeof(text), "gvs_sessions", 1);
    ASSERT(body != NULL);
    ASSERT_VALUE(body, "gvs_gpu_memory_bytes{gpu=\"1\"," GPU1, 3500);
    ASSERT_VALUE(body, "gvs_gpu_sessions{gpu=\"1\"," GPU1, 1);
    ASSERT(strstr(body, GPU_AB) == NULL);
    int unlisted = 0;
    for (const char *p = body;
         (p = strstr(p, "\ngvs_gpu_sessions{gpu=\"\",")) != NULL; p++)
        unlisted++;
    ASSERT_EQ(unlisted, 15);
    ASSERT_VALUE(body, "gvs_sessions_quota_used_max_ratio", 0);
    gvs_conn_close(b);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
