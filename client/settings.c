#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvs/config.h"
#include "gvs/err.h"
#include "internal.h"

int client_settings_load(struct client_settings *s, char *why, size_t len)
{
    struct gvs_config cfg;
    char err[512] = "";

    gvs_config_init(&cfg);
    int rc = gvs_config_load_default(&cfg, err, sizeof(err));
    const char *env = getenv("GVS_SERVER");
    const char *server;
    if (env != NULL && env[0] != '\0') {
        server = env;
        snprintf(s->origin, sizeof(s->origin), "GVS_SERVER is %s", env);
    } else if (cfg.server != NULL) {
        server = cfg.server;
        snprintf(s->origin, sizeof(s->origin),
                 "GVS_SERVER is unset, and %s names this server",
                 gvs_config_default_path());
    } else {
        server = GVS_DEFAULT_SERVER;
        snprintf(s->origin, sizeof(s->origin),
                 "GVS_SERVER is unset, and no config file names a server: "
                 "this is the default");
    }
    int n = snprintf(s->server, sizeof(s->server), "%s", server);
    s->handshake_timeout_ms = cfg.handshake_timeout_ms;
    s->keepalive_ms = cfg.keepalive_ms;
    s->tcp_keepalive = cfg.tcp_keepalive;
    s->tcp_ack_timeout_ms = cfg.tcp_ack_timeout_ms;
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
        snprintf(why, len, "config file %s", err);
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
