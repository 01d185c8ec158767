#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "gvs/tls.h"
#include "tls_impl.h"

enum { CA, CERT, KEY, NFILES };

/* The process's files; contexts are built under the lock so that a
 * concurrent gvs_tls_configure never frees a path being read. */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static char *files[NFILES];

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* OpenSSL would free its state from an atexit handler, which runs before
 * the libraries' destructors and while other threads may still be
 * sending: the frontend's destructor flushes its buffered posts at
 * exit, gvsd's lane threads may outlive a session.  The first
 * initialization decides, so it is made here, before anything else of
 * the process calls OpenSSL (gvs_tls_configure comes first in gvsd and
 * in the frontend); the OS reclaims the memory. */
static void init_openssl(void)
{
    OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT, NULL);
}

void gvs_tls_init(void)
{
    pthread_once(&init_once, init_openssl);
}

int gvs_tls_configure(const struct gvs_tls_files *f)
{
    gvs_tls_init();
    const char *want[NFILES] = {f ? f->ca : NULL, f ? f->cert : NULL,
                                f ? f->key : NULL};
    char *copy[NFILES] = {NULL, NULL, NULL};
    for (int i = 0; i < NFILES; i++) {
        if (want[i] == NULL || want[i][0] == '\0')
            continue;
        copy[i] = gvs_strdup(want[i]);
        if (copy[i] == NULL) {
            for (int j = 0; j < i; j++)
                gvs_free(copy[j]);
            return GVS_E_NOMEM;
        }
    }
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < NFILES; i++) {
        char *old = files[i];
        files[i] = copy[i];
        copy[i] = old;
    }
    pthread_mutex_unlock(&files_lock);
    for (int i = 0; i < NFILES; i++)
        gvs_free(copy[i]);
    return 0;
}

void gvs_tls_files_env(struct gvs_tls_files *f)
{
    static const char *const names[NFILES] = {"GVS_TLS_CA", "GVS_TLS_CERT",
                                              "GVS_TLS_KEY"};
    const char **fields[NFILES] = {&f->ca, &f->cert, &f->key};
    for (int i = 0; i < NFILES; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL && v[0] != '\0')
            *fields[i] = v;
    }
}

void gvs_tls_reason(const SSL *ssl, char *out, size_t len)
{
    long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
    /* The first error queued is the cause; later ones its fallout. */
    unsigned long e = ERR_peek_error();
    if (v != X509_V_OK)
        snprintf(out, len, "certificate verify failed: %s",
                 X509_verify_cert_error_string(v));
    else if (e != 0)
        ERR_error_string_n(e, out, len);
    else
        snprintf(out, len, "connection closed");
    ERR_clear_error();
}

static int config_error(const char *uri, const char *what, const char *path)
{
    char why[256];
    gvs_tls_reason(NULL, why, sizeof(why));
    gvs_error("%s: cannot use %s %s: %s", uri, what, path, why);
    return GVS_E_CONFIG;
}

/* Settings both sides share.  No session resumption (tickets, cache):
 * a session is one long connection, and no renegotiation (TLS 1.2),
 * which would have reads write and writes read. */
static SSL_CTX *new_ctx(const SSL_METHOD *method)
{
    SSL_CTX *ctx = SSL_CTX_new(method);
    if (ctx == NULL)
        return NULL;
    /* TLS 1.2 only with forward secrecy and AEAD, as 1.3 always is.
     * In 1.3, AES-128-GCM first (the suite every implementation must
     * have): a third faster than AES-256-GCM, OpenSSL's first choice
     * (openssl speed on the H200's host, 16 KiB records: 12.9 against
     * 10.0 GB/s), and a bulk copy is encrypted on one core a side. */
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1 ||
        SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:"
                                      "TLS_AES_256_GCM_SHA384:"
                                      "TLS_CHACHA20_POLY1305_SHA256") != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    /* Sends hand out what the socket takes, a record at a time, and are
     * retried from where they stopped. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* A receive takes what the socket holds, up to GVS_TLS_READ_AHEAD,
     * rather than a record's header and then its body: two system calls
     * per 16 KiB record of a bulk copy otherwise.  What it read beyond
     * the record stays in OpenSSL (comm_tls.c, tls_readable). */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, GVS_TLS_READ_AHEAD);
    return ctx;
}

static int load_own(SSL_CTX *ctx, const char *uri)
{
    if (SSL_CTX_use_certificate_chain_file(ctx, files[CERT]) != 1)
        return config_error(uri, "certificate", files[CERT]);
    if (SSL_CTX_use_PrivateKey_file(ctx, files[KEY], SSL_FILETYPE_PEM) != 1)
        return config_error(uri, "key", files[KEY]);
    if (SSL_CTX_check_private_key(ctx) != 1)
        return config_error(uri, "key", files[KEY]);
    return 0;
}

static int load_ca(SSL_CTX *ctx, const char *uri, int server)
{
    if (SSL_CTX_load_verify_locations(ctx, files[CA], NULL) != 1)
        return config_error(uri, "CA file", files[CA]);
    if (!server) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        return 0;
    }
    /* The CAs' names go in the certificate request, so that a client
     * holding several certificates can pick. */
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(files[CA]);
    if (names == NULL)
        return config_error(uri, "CA file", files[CA]);
    SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       NULL);
    return 0;
}

static int build(const char *uri, int server, SSL_CTX **out)
{
    *out = NULL;
    gvs_tls_init();
    if (server && (files[CERT] == NULL || files[KEY] == NULL)) {
        gvs_error("%s: a tls:// endpoint needs a certificate and its key "
                  "(tls_cert, tls_key)", uri);
        return GVS_E_CONFIG;
    }
    if (!server && files[CA] == NULL) {
        gvs_error("%s: no CA to verify the server's certificate with "
                  "(tls_ca, or $GVS_TLS_CA): refusing to connect", uri);
        return GVS_E_CONFIG;
    }
    if (!server && (files[CERT] == NULL) != (files[KEY] == NULL)) {
        gvs_error("%s: a client certificate needs its key and a key its "
                  "certificate (tls_cert, tls_key)", uri);
        return GVS_E_CONFIG;
    }
    SSL_CTX *ctx = new_ctx(server ? TLS_server_method() : TLS_client_method());
    if (ctx == NULL) {
        ERR_clear_error();
        return GVS_E_NOMEM;
    }
    int rc = files[CERT] != NULL ? load_own(ctx, uri) : 0;
    if (rc == 0 && files[CA] != NULL)
        rc = load_ca(ctx, uri, server);
    if (rc < 0) {
        SSL_CTX_free(ctx);
        return rc;
    }
    *out = ctx;
    return 0;
}

int gvs_tls_server_ctx(const char *uri, SSL_CTX **out)
{
    pthread_mutex_lock(&files_lock);
    int rc = build(uri, 1, out);
    pthread_mutex_unlock(&files_lock);
    return rc;
}

int gvs_tls_client_ctx(const char *uri, SSL_CTX **out)
{
    pthread_mutex_lock(&files_lock);
    int rc = build(uri, 0, out);
    pthread_mutex_unlock(&files_lock);
    return rc;
}
