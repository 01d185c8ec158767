#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_impl.h"
#include "gvs/comm.h"
#include "gvs/config.h"
#include "gvs/devices.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

#define CONFIG_FILE_MAX ((size_t)1 << 20)
#define WHY_MAX CONFIG_WHY_MAX

typedef config_setter_fn setter_fn;

int config_set_string(char **slot, const char *v)
{
    char *s = gvs_strdup(v);
    if (s == NULL)
        return GVS_E_NOMEM;
    gvs_free(*slot);
    *slot = s;
    return 0;
}

static int append(char **arr, int *n, int max, const char *key,
                  const char *v, char *why)
{
    if (*n >= max) {
        snprintf(why, WHY_MAX, "too many '%s' entries (at most %d)", key, max);
        return GVS_E_CONFIG;
    }
    arr[*n] = gvs_strdup(v);
    if (arr[*n] == NULL)
        return GVS_E_NOMEM;
    (*n)++;
    return 0;
}

static int check_uri(const char *key, const char *v, char *why)
{
    struct gvs_uri u;
    if (gvs_uri_parse(v, &u) == 0)
        return 0;
    snprintf(why, WHY_MAX, "'%s': malformed or unsupported URI", key);
    return GVS_E_CONFIG;
}

/* Plain decimal, no sign, no overflow; *end gets the first non-digit. */
static int parse_decimal(const char *v, unsigned long long *out,
                         const char **end)
{
    unsigned long long x = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (ULLONG_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *out = x;
    *end = p;
    return p == v ? -1 : 0;
}

int config_parse_range(const char *key, const char *v, unsigned long long lo,
                       unsigned long long hi, unsigned long long *out,
                       char *why)
{
    const char *end;
    if (parse_decimal(v, out, &end) < 0 || *end != '\0' || *out < lo ||
        *out > hi) {
        snprintf(why, WHY_MAX, "'%s' must be a number in %llu..%llu", key, lo,
                 hi);
        return GVS_E_CONFIG;
    }
    return 0;
}

static int set_listen(struct gvs_config *c, const char *key, const char *v,
                      char *why)
{
    int r = check_uri(key, v, why);
    return r < 0 ? r
                 : append(c->listen, &c->nlisten, GVS_CONFIG_MAX_LISTEN, key,
                          v, why);
}

static int set_plugin_dir(struct gvs_config *c, const char *key,
                          const char *v, char *why)
{
    (void)key;
    (void)why;
    return config_set_string(&c->plugin_dir, v);
}

static int set_plugin(struct gvs_config *c, const char *key, const char *v,
                      char *why)
{
    return append(c->plugins, &c->nplugins, GVS_CONFIG_MAX_PLUGINS, key, v,
                  why);
}

static int set_log_level(struct gvs_config *c, const char *key,
                         const char *v, char *why)
{
    enum gvs_log_level level;
    if (gvs_log_parse_level(v, &level) < 0) {
        snprintf(why, WHY_MAX, "'%s' must be error, warn, info or debug", key);
        return GVS_E_CONFIG;
    }
    return config_set_string(&c->log_level, v);
}

int config_parse_size(const char *key, const char *v, unsigned long long lo,
                      unsigned long long hi, unsigned long long *out,
                      char *why)
{
    unsigned long long x, mul = 1;
    const char *end;
    int ok = parse_decimal(v, &x, &end) == 0;
    if (ok && *end != '\0') {
        static const char units[] = "KMGTkmgt";
        const char *u = strchr(units, *end);
        ok = u != NULL && end[1] == '\0';
        if (ok)
            mul = 1ull << (10 * ((u - units) % 4 + 1));
    }
    if (!ok || x > hi / mul || x * mul < lo) {
        snprintf(why, WHY_MAX,
                 "'%s' must be a size in %llu..%llu bytes (suffix K, M, G "
                 "or T)",
                 key, lo, hi);
        return GVS_E_CONFIG;
    }
    *out = x * mul;
    return 0;
}

static int set_max_frame(struct gvs_config *c, const char *key,
                         const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_size(key, v, 4096, GVS_BUF_MAX_CEILING, &x, why);
    if (r == 0)
        c->max_frame = (size_t)x;
    return r;
}

static int set_handshake_timeout(struct gvs_config *c, const char *key,
                                 const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_range(key, v, 0, 3600000, &x, why);
    if (r == 0)
        c->handshake_timeout_ms = (unsigned)x;
    return r;
}

/* A count of processes or connections: 1..4096. */
static int set_count(int *dst, const char *key, const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_range(key, v, 1, 4096, &x, why);
    if (r == 0)
        *dst = (int)x;
    return r;
}

static int set_max_sessions(struct gvs_config *c, const char *key,
                            const char *v, char *why)
{
    return set_count(&c->max_sessions, key, v, why);
}

static int set_max_handshakes(struct gvs_config *c, const char *key,
                              const char *v, char *why)
{
    return set_count(&c->max_handshakes, key, v, why);
}

static int set_max_handshakes_per_peer(struct gvs_config *c, const char *key,
                                       const char *v, char *why)
{
    return set_count(&c->max_handshakes_per_peer, key, v, why);
}

static int set_devices(struct gvs_config *c, const char *key, const char *v,
                       char *why)
{
    if (gvs_devices_check(v) < 0) {
        snprintf(why, WHY_MAX,
                 "'%s' must be a comma-separated list of device ordinals "
                 "or UUIDs (GPU-..., MIG-...)",
                 key);
        return GVS_E_CONFIG;
    }
    return config_set_string(&c->devices, v);
}

static int set_server(struct gvs_config *c, const char *key, const char *v,
                      char *why)
{
    int r = check_uri(key, v, why);
    return r < 0 ? r : config_set_string(&c->server, v);
}

/* Keys holding a number in a range. */
static const struct {
    const char *name;
    size_t offset; /* of an unsigned in struct gvs_config */
    unsigned lo, hi;
} numbers[] = {
    {"tcp_keepalive_idle_s", offsetof(struct gvs_config, tcp_keepalive.idle_s),
     0, 32767},
    {"tcp_keepalive_interval_s",
     offsetof(struct gvs_config, tcp_keepalive.interval_s), 1, 32767},
    {"tcp_keepalive_count", offsetof(struct gvs_config, tcp_keepalive.count),
     1, 127},
    {"tcp_ack_timeout_ms", offsetof(struct gvs_config, tcp_ack_timeout_ms), 0,
     86400000},
    {"ivshmem_slots", offsetof(struct gvs_config, ivshmem_slots), 1,
     GVS_IVSHMEM_SLOTS_MAX},
};

static int set_number(struct gvs_config *c, const char *key, const char *v,
                      char *why)
{
    size_t i = 0;
    while (strcmp(numbers[i].name, key) != 0)
        i++;
    unsigned long long x;
    int r = config_parse_range(key, v, numbers[i].lo, numbers[i].hi, &x, why);
    if (r == 0)
        *(unsigned *)(void *)((char *)c + numbers[i].offset) = (unsigned)x;
    return r;
}

static const struct {
    const char *name;
    setter_fn set;
} keys[] = {
    {"listen", set_listen},
    {"plugin_dir", set_plugin_dir},
    {"plugin", set_plugin},
    {"log_level", set_log_level},
    {"max_frame", set_max_frame},
    {"handshake_timeout_ms", set_handshake_timeout},
    {"max_sessions", set_max_sessions},
    {"max_handshakes", set_max_handshakes},
    {"max_handshakes_per_peer", set_max_handshakes_per_peer},
    {"devices", set_devices},
    {"server", set_server},
    {"token", config_set_token},
    {"insecure", config_set_insecure},
    {"tls_cert", config_set_tls_cert},
    {"tls_key", config_set_tls_key},
    {"tls_ca", config_set_tls_ca},
    {"socket_mode", config_set_socket_mode},
    {"socket_group", config_set_socket_group},
    {"allow_uid", config_set_allow_uid},
    {"allow_gid", config_set_allow_gid},
    {"idle_timeout_ms", config_set_idle_timeout},
    {"keepalive_ms", config_set_keepalive},
    {"memory_quota", config_set_memory_quota},
    {"metrics_listen", config_set_metrics_listen},
    {"metrics_sessions", config_set_metrics_sessions},
    {"tcp_keepalive_idle_s", set_number},
    {"tcp_keepalive_interval_s", set_number},
    {"tcp_keepalive_count", set_number},
    {"tcp_ack_timeout_ms", set_number},
    {"ivshmem_slots", set_number},
    {"ivshmem_area", config_set_ivshmem_area},
};

void gvs_config_init(struct gvs_config *c)
{
    memset(c, 0, sizeof(*c));
    c->max_frame = GVS_FRAME_MAX_DEFAULT;
    c->handshake_timeout_ms = 5000;
    c->max_sessions = 64;
    c->max_handshakes = 64;
    c->max_handshakes_per_peer = 16;
    c->socket_mode = 0660;
    c->keepalive_ms = 30000;
    c->tcp_keepalive = (struct gvs_tcp_keepalive){60, 10, 6};
    c->tcp_ack_timeout_ms = 120000;
    c->ivshmem_slots = 16;
    c->ivshmem_area = 16ull << 20;
}

void gvs_config_free(struct gvs_config *c)
{
    for (int i = 0; i < c->nlisten; i++)
        gvs_free(c->listen[i]);
    for (int i = 0; i < c->nplugins; i++)
        gvs_free(c->plugins[i]);
    gvs_free(c->plugin_dir);
    gvs_free(c->log_level);
    gvs_free(c->server);
    gvs_free(c->devices);
    config_access_free(c);
    gvs_config_init(c);
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Trims s in place; returns the first non-blank character. */
static char *trim(char *s)
{
    while (is_space(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* A '#' starts a comment at the start of a line or after a blank, so
 * values like "a#b" keep their '#'. */
static void strip_comment(char *s)
{
    for (char *p = s; *p != '\0'; p++) {
        if (*p == '#' && (p == s || is_space(p[-1]))) {
            *p = '\0';
            return;
        }
    }
}

static int parse_line(struct gvs_config *c, char *line, char *why)
{
    strip_comment(line);
    line = trim(line);
    if (*line == '\0')
        return 0;
    char *eq = strchr(line, '=');
    if (eq == NULL) {
        snprintf(why, WHY_MAX, "expected 'key = value'");
        return GVS_E_CONFIG;
    }
    *eq = '\0';
    char *key = trim(line), *value = trim(eq + 1);
    if (*key == '\0') {
        snprintf(why, WHY_MAX, "missing key before '='");
        return GVS_E_CONFIG;
    }
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (strcmp(key, keys[i].name) != 0)
            continue;
        if (*value == '\0') {
            snprintf(why, WHY_MAX, "empty value for '%s'", key);
            return GVS_E_CONFIG;
        }
        return keys[i].set(c, key, value, why);
    }
    snprintf(why, WHY_MAX, "unknown key '%.64s'", key);
    return GVS_E_CONFIG;
}

/* Parses text; on error *lineno is the line at fault and why says what
 * is wrong with it. */
static int parse_text(struct gvs_config *c, const char *text, size_t len,
                      int *lineno, char *why)
{
    int r = 0;
    *lineno = 0;
    char *copy = gvs_malloc(len + 1);
    if (copy == NULL) {
        snprintf(why, WHY_MAX, "out of memory");
        return GVS_E_NOMEM;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    for (char *line = copy; r == 0 && line != NULL && line <= copy + len;) {
        char *nl = memchr(line, '\n', (size_t)(copy + len - line));
        if (nl != NULL)
            *nl = '\0';
        ++*lineno;
        if (strlen(line) != (size_t)((nl != NULL ? nl : copy + len) - line)) {
            snprintf(why, WHY_MAX, "NUL byte in line");
            r = GVS_E_CONFIG;
        } else {
            r = parse_line(c, line, why);
        }
        if (r == GVS_E_NOMEM)
            snprintf(why, WHY_MAX, "out of memory");
        line = nl != NULL ? nl + 1 : NULL;
    }
    gvs_free(copy);
    return r;
}

int gvs_config_parse(struct gvs_config *c, const char *text, size_t len,
                     char *err, size_t errlen)
{
    char why[WHY_MAX] = "";
    int lineno;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    int r = parse_text(c, text, len, &lineno, why);
    if (r < 0 && err != NULL && errlen > 0)
        snprintf(err, errlen, "line %d: %s", lineno, why);
    return r;
}

/* Reads at most CONFIG_FILE_MAX + 1 bytes of fd into a new buffer. */
static int read_file(int fd, char **text, size_t *len)
{
    char *t = gvs_malloc(CONFIG_FILE_MAX + 1);
    size_t n = 0;
    if (t == NULL)
        return GVS_E_NOMEM;
    while (n <= CONFIG_FILE_MAX) {
        ssize_t got = read(fd, t + n, CONFIG_FILE_MAX + 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            gvs_free(t);
            return GVS_E_IO;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *text = t;
    *len = n;
    return 0;
}

int gvs_config_load(struct gvs_config *c, const char *path, char *err,
                    size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    char why[WHY_MAX] = "";
    int lineno = 0;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int r = fd < 0 ? GVS_E_IO : read_file(fd, &text, &len);
    if (r < 0)
        snprintf(why, sizeof(why), "%s",
                 r == GVS_E_IO ? strerror(errno) : "out of memory");
    if (fd >= 0)
        close(fd);
    if (r == 0 && len > CONFIG_FILE_MAX) {
        r = GVS_E_CONFIG;
        snprintf(why, sizeof(why), "file larger than 1 MiB");
    }
    if (r == 0)
        r = parse_text(c, text, len, &lineno, why);
    /* "file:line:", as compilers say it, which editors can open. */
    if (r < 0 && err != NULL && errlen > 0 && lineno > 0)
        snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
    else if (r < 0 && err != NULL && errlen > 0)
        snprintf(err, errlen, "%s: %s", path, why);
    gvs_free(text);
    return r;
}

int gvs_config_load_default(struct gvs_config *c, char *err, size_t errlen)
{
    const char *path = gvs_config_default_path();
    const char *env = getenv("GVS_CONFIG");
    int named = env != NULL && env[0] != '\0';
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (!named && access(path, F_OK) != 0 && errno == ENOENT)
        return 0;
    int r = gvs_config_load(c, path, err, errlen);
    size_t n = err != NULL ? strlen(err) : 0;
    if (r == GVS_E_IO && named && n + 1 < errlen)
        snprintf(err + n, errlen - n, " (the file GVS_CONFIG names)");
    return r;
}

const char *gvs_config_default_path(void)
{
    const char *p = getenv("GVS_CONFIG");
    return p != NULL && *p != '\0' ? p : "/etc/gvs/gvs.conf";
}
