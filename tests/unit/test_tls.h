/*
 * Helpers of the tls:// tests: a throwaway PKI made with the openssl
 * command, and connected pairs whose server side runs its handshake.
 */
#ifndef GVS_TEST_TLS_H
#define GVS_TEST_TLS_H

#include "gvs/comm.h"
#include "test_core.h"

#define TEST_PKI_PATH 96

/* In a fresh temporary directory: two CAs, "ca" and "rogue", and PEM
 * certificates with their keys: "server" (by ca, for 127.0.0.1 and
 * localhost), "other" (by ca, for other.example only), "client" (by ca)
 * and "rogue" (a client certificate by the rogue CA). */
struct test_pki {
    char dir[32];
    char ca[TEST_PKI_PATH], rogue_ca[TEST_PKI_PATH];
    char server_cert[TEST_PKI_PATH], server_key[TEST_PKI_PATH];
    char other_cert[TEST_PKI_PATH], other_key[TEST_PKI_PATH];
    char client_cert[TEST_PKI_PATH], client_key[TEST_PKI_PATH];
    char rogue_cert[TEST_PKI_PATH], rogue_key[TEST_PKI_PATH];
};

/* 0, or -1 with the reason on stderr (the openssl command missing is a
 * failure: the tests would check nothing). */
int test_pki_make(struct test_pki *p);
void test_pki_remove(const struct test_pki *p);

/* gvs_tls_configure with these files (NULL: unset). */
int test_tls_use(const char *ca, const char *cert, const char *key);

/* Listens on tls://127.0.0.1:0 with the server certificate, trusting
 * client_ca (NULL: no client certificates asked), then leaves the
 * process's files as ca / cert / key for the connects that follow. */
int test_tls_listen(const struct test_pki *p, const char *client_ca,
                    const char *ca, const char *cert, const char *key,
                    struct gvs_listener **l);

/* Connects to uri (NULL: l's) on a thread while this one accepts on l
 * and runs the server's handshake (gvs_conn_start, 5 s): each side's
 * result in *crc / *src, each connection (NULL where it failed) in
 * *client / *server. */
void test_tls_pair(struct gvs_listener *l, const char *uri,
                   struct gvs_conn **client, int *crc,
                   struct gvs_conn **server, int *src);

/* test_tls_pair, expecting both sides to succeed: 0, or 1 after
 * printing why. */
int test_tls_pair_ok(struct gvs_listener *l, const char *uri,
                     struct gvs_conn **client, struct gvs_conn **server);

/* A fresh PKI in p and a listener on it that asks no client certificate,
 * its connects trusting p's CA.  0, or 1 after printing why. */
int test_tls_setup(struct test_pki *p, struct gvs_listener **l);

#endif
