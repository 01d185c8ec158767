/*
 * Configuration file: one "key = value" per line, '#' starts a comment,
 * blank lines ignored, keys may repeat where documented.  docs/config.md
 * lists the keys.  Used by gvsd and by the frontend (key "server").
 */
#ifndef GVS_CONFIG_H
#define GVS_CONFIG_H

#include <stddef.h>

#include "gvs/comm.h"

#define GVS_CONFIG_MAX_LISTEN 8
#define GVS_CONFIG_MAX_PLUGINS 16
#define GVS_CONFIG_MAX_TOKENS 64
#define GVS_CONFIG_MAX_IDS 64
#define GVS_TOKEN_MIN_LEN 16
#define GVS_TOKEN_MAX_LEN 256
#define GVS_TOKEN_NAME_MAX 64

/* A pre-shared token (docs/security.md): the secret clients prove they
 * hold, the name sessions that prove it are shown under, and their GPU
 * memory quota (0: the config's memory_quota). */
struct gvs_config_token {
    char *secret;
    char *name;
    size_t quota;
};

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
    /* Connections still in their handshake, apart from the sessions:
     * overall and from one peer (a uid on unix/shm, an address on
     * tcp/tls). */
    int max_handshakes;                   /* "max_handshakes" */
    int max_handshakes_per_peer;          /* "max_handshakes_per_peer" */
    char *devices; /* "devices": the GPUs workers show (gvs/devices.h) */
    /* access and limits (docs/security.md) */
    struct gvs_config_token tokens[GVS_CONFIG_MAX_TOKENS]; /* "token" */
    int ntokens;                  /* repeatable; a client uses the first */
    int insecure;                 /* "insecure": tcp off loopback, no token */
    char *tls_cert, *tls_key;     /* "tls_cert", "tls_key": PEM paths */
    char *tls_ca;                 /* "tls_ca": PEM path of trusted CAs */
    unsigned socket_mode;         /* "socket_mode", octal; default 0660 */
    char *socket_group;           /* "socket_group": name or gid */
    unsigned allow_uid[GVS_CONFIG_MAX_IDS]; /* "allow_uid", repeatable */
    int nallow_uid;
    unsigned allow_gid[GVS_CONFIG_MAX_IDS]; /* "allow_gid", repeatable */
    int nallow_gid;
    unsigned idle_timeout_ms;     /* "idle_timeout_ms"; 0: none */
    size_t memory_quota;          /* "memory_quota" bytes; 0: none */
    char *metrics_listen;         /* "metrics_listen": tcp:// URI */
    int metrics_sessions;         /* "metrics_sessions": per-session series */
    /* frontend */
    char *server;                         /* "server" */
    unsigned keepalive_ms;        /* "keepalive_ms"; 0: none */
    /* both: tcp:// and tls:// peers that vanish without a FIN (docs/
     * config.md, "Vanished peers"): "tcp_keepalive_idle_s",
     * "tcp_keepalive_interval_s", "tcp_keepalive_count", and
     * "tcp_ack_timeout_ms" (0: none) for gvs_conn_unanswered. */
    struct gvs_tcp_keepalive tcp_keepalive;
    unsigned tcp_ack_timeout_ms;
    /* server: the regions of ivshmem:// listeners (gvs_ivshmem_set_layout,
     * docs/vm.md): "ivshmem_slots", "ivshmem_area" bytes per slot. */
    unsigned ivshmem_slots;
    uint64_t ivshmem_area;
};

/* Fills *c with defaults (no listen, no plugins, max_frame default,
 * handshake timeout 5000 ms, max_sessions 64, max_handshakes 64,
 * max_handshakes_per_peer 16, socket_mode 0660,
 * keepalive 30000 ms, no tokens, no quota, no idle timeout; TCP
 * keepalive after 60 s, then every 10 s, 6 probes, and an ack timeout
 * of 120000 ms, so that a vanished peer is let go within 2 minutes;
 * ivshmem regions of 16 slots with 16 MiB data areas). */
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
 * max_sessions, max_handshakes and max_handshakes_per_peer in 1..4096,
 * devices a list gvs_devices_check accepts.
 * Access keys (docs/config.md): token is "SECRET [name=NAME]
 * [quota=SIZE]" with a secret of GVS_TOKEN_MIN_LEN..GVS_TOKEN_MAX_LEN
 * printable characters; insecure is 0/1/yes/no/true/false; socket_mode
 * octal in 0..0777; allow_uid / allow_gid comma-separated decimal ids;
 * idle_timeout_ms in 0..86400000; keepalive_ms in 0..3600000;
 * memory_quota a size (K, M, G, T suffixes) or 0; metrics_listen a
 * tcp:// URI; metrics_sessions as insecure; tls_* non-empty paths.
 * tcp_keepalive_idle_s in 0..32767, tcp_keepalive_interval_s in
 * 1..32767, tcp_keepalive_count in 1..127 (the kernel's bounds),
 * tcp_ack_timeout_ms in 0..86400000, ivshmem_slots in
 * 1..GVS_IVSHMEM_SLOTS_MAX, ivshmem_area a size in 0..16G. */
int gvs_config_parse(struct gvs_config *c, const char *text, size_t len,
                     char *err, size_t errlen);

/* Reads and parses a file (at most 1 MiB).  GVS_E_IO if unreadable.
 * err names the file: "PATH: No such file or directory", or
 * "PATH:N: reason" for a bad line N. */
int gvs_config_load(struct gvs_config *c, const char *path, char *err,
                    size_t errlen);

/* Loads the config of a program given none on its command line:
 * $GVS_CONFIG, which must be there (GVS_E_IO, err saying that the
 * variable names it), else the default file when it exists (a missing
 * /etc/gvs/gvs.conf is no error; one that cannot be read is).  Errors
 * as gvs_config_load. */
int gvs_config_load_default(struct gvs_config *c, char *err, size_t errlen);

/* Frees every string the config holds and re-inits it. */
void gvs_config_free(struct gvs_config *c);

/* Default config path: $GVS_CONFIG if set, else "/etc/gvs/gvs.conf". */
const char *gvs_config_default_path(void);

#endif
