#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gvs/config.h"
#include "gvs/err.h"
#include "internal.h"

int client_settings_load(struct client_settings *s, char *why, size_t len)
{
    struct gvs_config cfg;
    const char *path = gvs_config_default_path();
    char err[256] = "";
    int rc = 0;

    gvs_config_init(&cfg);
    if (access(path, F_OK) == 0)
        rc = gvs_config_load(&cfg, path, err, sizeof(err));
    const char *env = getenv("GVS_SERVER");
    const char *server = env != NULL && env[0] != '\0' ? env
                         : cfg.server != NULL       ? cfg.server
                                                    : GVS_DEFAULT_SERVER;
    int n = snprintf(s->server, sizeof(s->server), "%s", server);
    s->handshake_timeout_ms = cfg.handshake_timeout_ms;
    s->keepalive_ms = cfg.keepalive_ms;
    const char *token = getenv("GVS_TOKEN");
    if (token == NULL || token[0] == '\0')
        token = cfg.ntokens > 0 ? cfg.tokens[0].secret : "";
    int tn = snprintf(s->token, sizeof(s->token), "%s", token);
    snprintf(s->tls_ca, sizeof(s->tls_ca), "%s",
             cfg.tls_ca != NULL ? cfg.tls_ca : "");
    snprintf(s->tls_cert, sizeof(s->tls_cert), "%s",
             cfg.tls_cert != NULL ? cfg.tls_cert : "");
    snprintf(s->tls_key, sizeof(s->tls_key), "%s",
             cfg.tls_key != NULL ? cfg.tls_key : "");
    if (rc < 0) {
        snprintf(why, len, "config %s: %s", path,
                 err[0] != '\0' ? err : gvs_strerror(rc));
    } else if (n < 0 || (size_t)n >= sizeof(s->server)) {
        snprintf(why, len, "server URI too long");
        rc = GVS_E_URI;
    } else if (tn < 0 || (size_t)tn >= sizeof(s->token)) {
        explicit_bzero(s->token, sizeof(s->token));
        snprintf(why, len, "GVS_TOKEN longer than %d characters",
                 GVS_TOKEN_MAX_LEN);
        rc = GVS_E_CONFIG;
    }
    gvs_config_free(&cfg);
    return rc;
}
