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
    char *devices; /* "devices": the GPUs workers show (gvs/devices.h) */
    /* frontend */
    char *server;                         /* "server" */
};

/* Fills *c with defaults (no listen, no plugins, max_frame default,
 * handshake timeout 5000 ms, max_sessions 64). */
void gvs_config_init(struct gvs_config *c);

/* Parses text of length len into *c (on top of what it holds; later
 * values replace earlier scalars, repeatable keys append).  On error
 * returns GVS_E_CONFIG (GVS_E_NOMEM when out of memory) and, if err is
 * not NULL, writes "line N: reason" into err (errlen bytes); *c then
 * keeps what the lines before held, for gvs_config_free.
 *
 * Syntax: "key = value" or "key=value"; keys and values are trimmed; a
 * '#' at the start of a line or after a blank starts a comment ("a#b"
 * is a value).  Values are checked: listen and server are URIs that
 * gvs_uri_parse accepts, log_level one gvs_log_parse_level accepts,
 * max_frame a decimal byte count with an optional K, M or G suffix in
 * 4096..GVS_BUF_MAX_CEILING, handshake_timeout_ms in 0..3600000,
 * max_sessions in 1..4096, devices a list gvs_devices_check accepts. */
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
