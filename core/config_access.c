/* The access and limit keys of the config file (docs/config.md,
 * docs/security.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"

#define WHY_MAX CONFIG_WHY_MAX

static int is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
}

/* The secret is the first word; then name=NAME and quota=SIZE, each at
 * most once, separated by blanks. */
int config_set_token(struct gvs_config *c, const char *key, const char *v,
                     char *why)
{
    if (c->ntokens >= GVS_CONFIG_MAX_TOKENS) {
        snprintf(why, WHY_MAX, "too many '%s' entries (at most %d)", key,
                 GVS_CONFIG_MAX_TOKENS);
        return GVS_E_CONFIG;
    }
    char *copy = gvs_strdup(v);
    if (copy == NULL)
        return GVS_E_NOMEM;
    struct gvs_config_token t = {0};
    int r = 0;
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL && r == 0;
         w = strtok_r(NULL, " \t", &save)) {
        size_t n = strlen(w);
        if (t.secret == NULL) {
            int printable = 1;
            for (size_t i = 0; i < n; i++)
                printable &= w[i] > ' ' && w[i] < 127;
            if (n < GVS_TOKEN_MIN_LEN || n > GVS_TOKEN_MAX_LEN || !printable) {
                snprintf(why, WHY_MAX,
                         "'%s': the secret must be %d..%d printable "
                         "characters",
                         key, GVS_TOKEN_MIN_LEN, GVS_TOKEN_MAX_LEN);
                r = GVS_E_CONFIG;
            } else if ((t.secret = gvs_strdup(w)) == NULL) {
                r = GVS_E_NOMEM;
            }
        } else if (strncmp(w, "name=", 5) == 0 && t.name == NULL) {
            int ok = n > 5 && n - 5 <= GVS_TOKEN_NAME_MAX;
            for (size_t i = 5; i < n; i++)
                ok &= is_name_char(w[i]);
            if (!ok) {
                snprintf(why, WHY_MAX,
                         "'%s': name= takes 1..%d of A-Z a-z 0-9 _ - .", key,
                         GVS_TOKEN_NAME_MAX);
                r = GVS_E_CONFIG;
            } else if ((t.name = gvs_strdup(w + 5)) == NULL) {
                r = GVS_E_NOMEM;
            }
        } else if (strncmp(w, "quota=", 6) == 0 && t.quota == 0) {
            unsigned long long q;
            r = config_parse_size(key, w + 6, 1, 1ull << 50, &q, why);
            t.quota = (size_t)q;
        } else {
            snprintf(why, WHY_MAX,
                     "'%s' is SECRET [name=NAME] [quota=SIZE], each once",
                     key);
            r = GVS_E_CONFIG;
        }
    }
    gvs_free(copy);
    if (r < 0) {
        if (t.secret != NULL)
            explicit_bzero(t.secret, strlen(t.secret));
        gvs_free(t.secret);
        gvs_free(t.name);
        return r;
    }
    c->tokens[c->ntokens++] = t;
    return 0;
}

/* A yes or no into *out. */
static int parse_bool(const char *key, const char *v, int *out, char *why)
{
    static const char *const yes[] = {"1", "yes", "true"};
    static const char *const no[] = {"0", "no", "false"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(v, yes[i]) == 0 || strcmp(v, no[i]) == 0) {
            *out = strcmp(v, yes[i]) == 0;
            return 0;
        }
    }
    snprintf(why, WHY_MAX, "'%s' must be 0/1, yes/no or true/false", key);
    return GVS_E_CONFIG;
}

int config_set_insecure(struct gvs_config *c, const char *key, const char *v,
                        char *why)
{
    return parse_bool(key, v, &c->insecure, why);
}

int config_set_tls_cert(struct gvs_config *c, const char *key, const char *v,
                        char *why)
{
    (void)key;
    (void)why;
    return config_set_string(&c->tls_cert, v);
}

int config_set_tls_key(struct gvs_config *c, const char *key, const char *v,
                       char *why)
{
    (void)key;
    (void)why;
    return config_set_string(&c->tls_key, v);
}

int config_set_tls_ca(struct gvs_config *c, const char *key, const char *v,
                      char *why)
{
    (void)key;
    (void)why;
    return config_set_string(&c->tls_ca, v);
}

int config_set_socket_mode(struct gvs_config *c, const char *key,
                           const char *v, char *why)
{
    char *end;
    unsigned long m = strtoul(v, &end, 8);
    if (*v < '0' || *v > '7' || *end != '\0' || m > 0777) {
        snprintf(why, WHY_MAX, "'%s' must be an octal mode in 0..0777", key);
        return GVS_E_CONFIG;
    }
    c->socket_mode = (unsigned)m;
    return 0;
}

int config_set_socket_group(struct gvs_config *c, const char *key,
                            const char *v, char *why)
{
    (void)key;
    (void)why;
    return config_set_string(&c->socket_group, v);
}

/* Appends the ids of a comma-separated list. */
static int append_ids(unsigned *ids, int *n, const char *key, const char *v,
                      char *why)
{
    const char *p = v;
    for (;;) {
        char num[16];
        size_t len = strcspn(p, ",");
        unsigned long long x;
        if (len == 0 || len >= sizeof(num) || *n >= GVS_CONFIG_MAX_IDS) {
            snprintf(why, WHY_MAX,
                     "'%s' must be a comma-separated list of at most %d ids",
                     key, GVS_CONFIG_MAX_IDS);
            return GVS_E_CONFIG;
        }
        memcpy(num, p, len);
        num[len] = '\0';
        int r = config_parse_range(key, num, 0, 0xfffffffeu, &x, why);
        if (r < 0)
            return r;
        ids[(*n)++] = (unsigned)x;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

int config_set_allow_uid(struct gvs_config *c, const char *key, const char *v,
                         char *why)
{
    return append_ids(c->allow_uid, &c->nallow_uid, key, v, why);
}

int config_set_allow_gid(struct gvs_config *c, const char *key, const char *v,
                         char *why)
{
    return append_ids(c->allow_gid, &c->nallow_gid, key, v, why);
}

int config_set_idle_timeout(struct gvs_config *c, const char *key,
                            const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_range(key, v, 0, 86400000, &x, why);
    if (r == 0)
        c->idle_timeout_ms = (unsigned)x;
    return r;
}

int config_set_keepalive(struct gvs_config *c, const char *key,
                         const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_range(key, v, 0, 3600000, &x, why);
    if (r == 0)
        c->keepalive_ms = (unsigned)x;
    return r;
}

int config_set_memory_quota(struct gvs_config *c, const char *key,
                            const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_size(key, v, 0, 1ull << 50, &x, why);
    if (r == 0)
        c->memory_quota = (size_t)x;
    return r;
}

int config_set_ivshmem_area(struct gvs_config *c, const char *key,
                            const char *v, char *why)
{
    unsigned long long x;
    int r = config_parse_size(key, v, 0, 16ull << 30, &x, why);
    if (r == 0)
        c->ivshmem_area = x;
    return r;
}

int config_set_metrics_listen(struct gvs_config *c, const char *key,
                              const char *v, char *why)
{
    struct gvs_uri u;
    if (gvs_uri_parse(v, &u) < 0 || strcmp(u.scheme, "tcp") != 0) {
        snprintf(why, WHY_MAX, "'%s' must be a tcp://host:port URI", key);
        return GVS_E_CONFIG;
    }
    return config_set_string(&c->metrics_listen, v);
}

int config_set_metrics_sessions(struct gvs_config *c, const char *key,
                                const char *v, char *why)
{
    return parse_bool(key, v, &c->metrics_sessions, why);
}

void config_access_free(struct gvs_config *c)
{
    for (int i = 0; i < c->ntokens; i++) {
        explicit_bzero(c->tokens[i].secret, strlen(c->tokens[i].secret));
        gvs_free(c->tokens[i].secret);
        gvs_free(c->tokens[i].name);
    }
    gvs_free(c->tls_cert);
    gvs_free(c->tls_key);
    gvs_free(c->tls_ca);
    gvs_free(c->socket_group);
    gvs_free(c->metrics_listen);
}
