/*
 * What the tls:// transport (comm_tls.c) takes from tls_ctx.c and
 * tls_bio.c.  Internal to gvs_core.
 */
#ifndef GVS_TLS_IMPL_H
#define GVS_TLS_IMPL_H

#include <stddef.h>

#include <openssl/ssl.h>

/* TLS records carry at most this many bytes of data. */
#define GVS_TLS_RECORD_MAX 16384
/* Bytes a receive may take from the socket at once (tls_ctx.c). */
#define GVS_TLS_READ_AHEAD ((size_t)64 << 10)

/* Initializes OpenSSL once, without its cleanup at exit (tls_ctx.c
 * says why). */
void gvs_tls_init(void);

/* A context for gvsd's side from the files of gvs_tls_configure:
 * certificate and key required, client certificates required and
 * verified when a CA is set.  GVS_E_CONFIG (the reason logged, naming
 * uri) or GVS_E_NOMEM.  The caller frees *out. */
int gvs_tls_server_ctx(const char *uri, SSL_CTX **out);

/* A context for the client's side: the CA is required and the server's
 * certificate verified against it; the certificate and key, when set,
 * are shown to a server that asks.  Errors as gvs_tls_server_ctx. */
int gvs_tls_client_ctx(const char *uri, SSL_CTX **out);

/* A BIO on the socket fd (not owned: freeing the BIO leaves it open)
 * whose writes never raise SIGPIPE, as the plain socket transports'
 * don't.  NULL when out of memory. */
BIO *gvs_tls_bio_new(int fd);

/* Why the last OpenSSL call on ssl (may be NULL) failed, in words (a
 * certificate verification result first); clears this thread's OpenSSL
 * error queue. */
void gvs_tls_reason(const SSL *ssl, char *out, size_t len);

#endif
