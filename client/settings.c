#include <stdio.h>
#include <stdlib.h>
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
    if (rc < 0) {
        snprintf(why, len, "config %s: %s", path,
                 err[0] != '\0' ? err : gvs_strerror(rc));
    } else if (n < 0 || (size_t)n >= sizeof(s->server)) {
        snprintf(why, len, "server URI too long");
        rc = GVS_E_URI;
    }
    gvs_config_free(&cfg);
    return rc;
}
