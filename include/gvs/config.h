/*
 * Configuration file: one "key = value" per line, '#' starts a comment,
 * blank lines ignored, keys may repeat where documented.  docs/config.md
 * lists the keys.  Used by gvsd and by the frontend (key "server").
 */
#ifndef GVS_CONFIG_H
#define GVS_CONFIG_H

#include <stddef.h>

#define GVS_CONFIG_MAX_LISTEN 8
#define GVS_CONFIG_MAX_PLUGINS 16

struct gvs_config {
    /* gvsd */
    char *listen[GVS_CONFIG_MAX_LISTEN]; /* "listen", repeatable */
    int nlisten;
    char *plugin_dir;                     /* "plugin_dir" */
    char *plugins[GVS_CONFIG_MAX_PLUGINS]; /* "plugin", repeatable */
    int nplugins;
    char *log_level;                      /* "log_level" */
    size_t max_frame;                     /* "max_frame" (bytes) */
    unsigned handshake_timeout_ms;        /* "handshake_timeout_ms" */
    int max_sessions;                     /* "max_sessions" */
    /* frontend */
    char *server;                         /* "server" */
};

/* Fills *c with defaults (no listen, no plugins, max_frame default,
 * handshake timeout 5000 ms, max_sessions 64). */
void gvs_config_init(struct gvs_config *c);

/* Parses text of length len into *c (on top of what it holds; later
 * values replace earlier scalars, repeatable keys append).  On error
 * returns GVS_E_CONFIG and, if err is not NULL, writes
 * "line N: reason" into err (errlen bytes). */
int gvs_config_parse(struct gvs_config *c, const char *text, size_t len,
                     char *err, size_t errlen);

/* Reads and parses a file (at most 1 MiB).  GVS_E_IO if unreadable. */
int gvs_config_load(struct gvs_config *c, const char *path, char *err,
                    size_t errlen);

/* Frees every string the config holds and re-inits it. */
void gvs_config_free(struct gvs_config *c);

/* Default config path: $GVS_CONFIG if set, else "/etc/gvs/gvs.conf". */
const char *gvs_config_default_path(void);

#endif
