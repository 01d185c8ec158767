#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/tls.h"
#include "test.h"
#include "test_tls.h"

/* Extensions of each kind of certificate: a CA, a server for the
 * addresses the tests use, one for another name, a client. */
static const char openssl_cnf[] =
    "[req]\n"
    "distinguished_name = dn\n"
    "[dn]\n"
    "[ca_ext]\n"
    "basicConstraints = critical,CA:TRUE\n"
    "keyUsage = critical,keyCertSign,cRLSign\n"
    "subjectKeyIdentifier = hash\n"
    "[server_ext]\n"
    "basicConstraints = CA:FALSE\n"
    "extendedKeyUsage = serverAuth\n"
    "subjectAltName = IP:127.0.0.1,DNS:localhost\n"
    "[other_ext]\n"
    "basicConstraints = CA:FALSE\n"
    "extendedKeyUsage = serverAuth\n"
    "subjectAltName = DNS:other.example\n"
    "[client_ext]\n"
    "basicConstraints = CA:FALSE\n"
    "extendedKeyUsage = clientAuth\n";

__attribute__((format(printf, 2, 3))) static int sh(const char *dir,
                                                    const char *fmt, ...)
{
    char cmd[1024], line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "cd '%s' && %s >>openssl.log 2>&1", dir, line);
    if (system(cmd) != 0) {
        fprintf(stderr, "FAILED: %s (see %s/openssl.log)\n", line, dir);
        return -1;
    }
    return 0;
}

#define NEW_KEY "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"

static int make_ca(const char *dir, const char *name)
{
    return sh(dir,
              "openssl req -x509 -new " NEW_KEY " -keyout %s.key -out %s.pem"
              " -days 2 -subj /CN=gvs-test-%s -config x.cnf -extensions ca_ext",
              name, name, name);
}

/* name.pem / name.key, signed by ca, with the extensions of section ext. */
static int make_leaf(const char *dir, const char *name, const char *ca,
                     const char *ext)
{
    if (sh(dir,
           "openssl req -new " NEW_KEY " -keyout %s.key -out %s.csr"
           " -subj /CN=gvs-test-%s -config x.cnf",
           name, name, name) < 0)
        return -1;
    return sh(dir,
              "openssl x509 -req -in %s.csr -out %s.pem -CA %s.pem"
              " -CAkey %s.key -set_serial 7 -days 2 -extfile x.cnf"
              " -extensions %s_ext",
              name, name, ca, ca, ext);
}

static void path(char out[TEST_PKI_PATH], const char dir[32],
                 const char *file)
{
    snprintf(out, TEST_PKI_PATH, "%s/%s", dir, file);
}

int test_pki_make(struct test_pki *p)
{
    memset(p, 0, sizeof(*p));
    if (system("openssl version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "FAILED: the openssl command, which makes the test "
                        "certificates, is missing\n");
        return -1;
    }
    snprintf(p->dir, sizeof(p->dir), "/tmp/gvs-tls-XXXXXX");
    if (mkdtemp(p->dir) == NULL) {
        perror("mkdtemp");
        return -1;
    }
    char cnf[TEST_PKI_PATH];
    path(cnf, p->dir, "x.cnf");
    FILE *f = fopen(cnf, "w");
    if (f == NULL || fputs(openssl_cnf, f) < 0 || fclose(f) != 0) {
        perror(cnf);
        return -1;
    }
    if (make_ca(p->dir, "ca") < 0 || make_ca(p->dir, "rogue_ca") < 0 ||
        make_leaf(p->dir, "server", "ca", "server") < 0 ||
        make_leaf(p->dir, "other", "ca", "other") < 0 ||
        make_leaf(p->dir, "client", "ca", "client") < 0 ||
        make_leaf(p->dir, "rogue", "rogue_ca", "client") < 0)
        return -1;
    path(p->ca, p->dir, "ca.pem");
    path(p->rogue_ca, p->dir, "rogue_ca.pem");
    path(p->server_cert, p->dir, "server.pem");
    path(p->server_key, p->dir, "server.key");
    path(p->other_cert, p->dir, "other.pem");
    path(p->other_key, p->dir, "other.key");
    path(p->client_cert, p->dir, "client.pem");
    path(p->client_key, p->dir, "client.key");
    path(p->rogue_cert, p->dir, "rogue.pem");
    path(p->rogue_key, p->dir, "rogue.key");
    return 0;
}

void test_pki_remove(const struct test_pki *p)
{
    char cmd[TEST_PKI_PATH + 16];
    if (strncmp(p->dir, "/tmp/gvs-tls-", 13) != 0)
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", p->dir);
}

int test_tls_use(const char *ca, const char *cert, const char *key)
{
    struct gvs_tls_files f = {ca, cert, key};
    return gvs_tls_configure(&f);
}

int test_tls_listen(const struct test_pki *p, const char *client_ca,
                    const char *ca, const char *cert, const char *key,
                    struct gvs_listener **l)
{
    int r = test_tls_use(client_ca, p->server_cert, p->server_key);
    if (r == 0)
        r = gvs_listen("tls://127.0.0.1:0", l);
    if (r == 0)
        r = test_tls_use(ca, cert, key);
    return r;
}

void test_tls_pair(struct gvs_listener *l, const char *uri,
                   struct gvs_conn **client, int *crc,
                   struct gvs_conn **server, int *src)
{
    struct test_connector k;
    *client = *server = NULL;
    *crc = *src = GVS_E_NOMEM;
    if (test_connector_start(&k, uri != NULL ? uri : gvs_listener_uri(l)) < 0)
        return;
    *src = gvs_accept(l, server);
    if (*src == 0)
        *src = gvs_conn_start(*server, 5000);
    if (*src < 0 && *server != NULL) {
        gvs_conn_close(*server);
        *server = NULL;
    }
    test_connector_join(&k);
    *client = k.conn;
    *crc = k.rc;
}

int test_tls_pair_ok(struct gvs_listener *l, const char *uri,
                     struct gvs_conn **client, struct gvs_conn **server)
{
    int rc, rs;
    test_tls_pair(l, uri, client, &rc, server, &rs);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(rs, 0);
    return 0;
}

int test_tls_setup(struct test_pki *p, struct gvs_listener **l)
{
    ASSERT_EQ(test_pki_make(p), 0);
    ASSERT_EQ(test_tls_listen(p, NULL, p->ca, NULL, NULL, l), 0);
    return 0;
}
