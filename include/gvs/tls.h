/*
 * The files behind tls:// endpoints (docs/security-tls.md).  They are a
 * process-wide setting: gvsd sets them from its config before it
 * listens, the frontend from its settings before it connects, and every
 * tls:// listener or connection made afterwards reads them (a listener
 * when it is made, so a worker inherits its parent's).
 *
 *   server: cert and key (PEM) are required; with ca, a client must show
 *           a certificate signed by one of those CAs (mutual TLS).
 *   client: ca is required (the server's certificate is verified against
 *           it, and the URI's host name or address against the
 *           certificate); cert and key are shown when the server asks.
 *
 * TLS 1.2 at least; 1.3 when both sides have it.
 */
#ifndef GVS_TLS_H
#define GVS_TLS_H

/* PEM file paths; NULL or "" where unset. */
struct gvs_tls_files {
    const char *ca;
    const char *cert;
    const char *key;
};

/* Replaces the process's TLS files by copies of f's (f NULL: none).
 * GVS_E_NOMEM; files are read only when used, and a file that cannot be
 * read fails that listen or connect with GVS_E_CONFIG, the reason
 * logged. */
int gvs_tls_configure(const struct gvs_tls_files *f);

/* The frontend's overrides: each of $GVS_TLS_CA, $GVS_TLS_CERT and
 * $GVS_TLS_KEY that is set and not empty replaces its field of f (the
 * strings are the environment's). */
void gvs_tls_files_env(struct gvs_tls_files *f);

#endif
