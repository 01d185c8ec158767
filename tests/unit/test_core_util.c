#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "gvs/comm.h"
#include "gvs/err.h"
#include "test.h"
#include "test_core.h"

void test_unix_uri(char *out, size_t outlen, char *path, size_t pathlen,
                   const char *tag)
{
    char p[108];
    snprintf(p, sizeof(p), "/tmp/gvs-test-%ld-%s.sock", (long)getpid(), tag);
    snprintf(out, outlen, "unix://%s", p);
    if (path != NULL)
        snprintf(path, pathlen, "%s", p);
}

struct connector {
    const char *uri;
    struct gvs_conn *conn;
    int rc;
};

static void *connector_main(void *arg)
{
    struct connector *k = arg;
    k->rc = gvs_connect(k->uri, &k->conn);
    return NULL;
}

/* The connect runs on a thread of its own: an shm connect completes
 * only once the accept has sent the region. */
int test_conn_pair(const char *uri, struct gvs_listener **l,
                   struct gvs_conn **client, struct gvs_conn **server)
{
    *client = *server = NULL;
    int r = gvs_listen(uri, l);
    if (r < 0)
        return r;
    struct connector k = {.uri = gvs_listener_uri(*l)};
    pthread_t t;
    if (pthread_create(&t, NULL, connector_main, &k) != 0) {
        gvs_listener_close(*l, 0);
        *l = NULL;
        return GVS_E_NOMEM;
    }
    r = gvs_accept(*l, server);
    pthread_join(t, NULL);
    if (r == 0 && k.rc < 0) {
        gvs_conn_close(*server);
        *server = NULL;
        r = k.rc;
    }
    *client = k.conn;
    if (r < 0) {
        gvs_conn_close(*client);
        gvs_listener_close(*l, 0);
        *client = NULL;
        *l = NULL;
    }
    return r;
}

long test_vm_peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmPeak: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}
