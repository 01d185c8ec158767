#include <stdio.h>
#include <unistd.h>

#include "gvs/comm.h"
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

int test_conn_pair(const char *uri, struct gvs_listener **l,
                   struct gvs_conn **client, struct gvs_conn **server)
{
    *client = *server = NULL;
    int r = gvs_listen(uri, l);
    if (r < 0)
        return r;
    r = gvs_connect(gvs_listener_uri(*l), client);
    if (r == 0)
        r = gvs_accept(*l, server);
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
