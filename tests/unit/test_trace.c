/* Request timelines (gvs/trace.h): a client's stamps and its worker's,
 * joined by request id, come in the order a round trip makes them.
 * CTest sets GVS_TRACE_DIR for this test (tests/CMakeLists.txt): the
 * client library reads it as it loads, and gvsd inherits it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/echo.h"
#include "gvs/client.h"
#include "gvs/trace.h"
#include "test.h"
#include "test_server_harness.h"

#define CALLS 50

struct stamps {
    unsigned plugin, op;
    long long t[GVS_TRACE_POINTS];
};

/* The client side, in a child whose exit writes the client library's
 * stamps and ends its worker, which writes its own: CALLS echo round
 * trips over shm. */
static int client_run(const struct test_gvsd *g)
{
    static const struct gvs_client_plugin echo = {
        ECHO_PLUGIN_ID, ECHO_PLUGIN_NAME, ECHO_TABLE_HASH};
    struct gvs_client *c;
    setenv("GVS_CONFIG", "/dev/null", 1);
    setenv("GVS_SERVER", g->shm_uri, 1);
    if (gvs_client_register(&echo) != 0 || gvs_client_get(&c) != 0)
        return 1;
    struct gvs_buf *reply = gvs_buf_new(64);
    struct iovec iov = {"ping", 4};
    for (int i = 0; i < CALLS; i++)
        if (gvs_client_call(c, ECHO_PLUGIN_ID, ECHO_OP_ECHO, &iov, 1,
                            reply) != 0)
            return 1;
    gvs_buf_free(reply);
    return 0;
}

/* Merges one trace file into by_id (indexed by request id, < 256). */
static int load(const char *path, struct stamps *by_id, int *files)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    unsigned long long id;
    struct stamps s;
    while (fscanf(f, "%llu %u %u", &id, &s.plugin, &s.op) == 3) {
        for (int k = 0; k < GVS_TRACE_POINTS; k++)
            if (fscanf(f, "%lld", &s.t[k]) != 1) {
                fclose(f);
                return -1;
            }
        if (id < 256)
            for (int k = 0; k < GVS_TRACE_POINTS; k++)
                if (s.t[k] != 0) {
                    by_id[id].t[k] = s.t[k];
                    by_id[id].plugin = s.plugin;
                    by_id[id].op = s.op;
                }
    }
    fclose(f);
    (*files)++;
    return 0;
}

/* Loads (by_id set) or removes (by_id NULL) the trace files in dir;
 * returns how many there were, negative if one is malformed. */
static int each_file(const char *dir, struct stamps *by_id)
{
    int files = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[512];
        if (strncmp(e->d_name, "gvs-trace-", 10) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (by_id == NULL)
            files += unlink(path) == 0;
        else if (load(path, by_id, &files) < 0)
            files = -100;
    }
    if (d != NULL)
        closedir(d);
    return files;
}

TEST_IMPL(trace_round_trips)
{
    const char *dir = getenv("GVS_TRACE_DIR");
    ASSERT(dir != NULL);
    (void)mkdir(dir, 0700);
    (void)each_file(dir, NULL);
    struct test_gvsd g = {0};
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0)
        exit(client_run(&g));
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* The worker writes its file as it exits, once the client has gone. */
    static struct stamps by_id[256];
    int files = 0;
    for (int i = 0; i < 100 && files < 2; i++) {
        memset(by_id, 0, sizeof(by_id));
        usleep(50000);
        files = each_file(dir, by_id);
    }
    ASSERT_EQ(files, 2);
    int echoes = 0;
    for (int id = 0; id < 256; id++) {
        const long long *t = by_id[id].t;
        if (by_id[id].plugin != ECHO_PLUGIN_ID || by_id[id].op != ECHO_OP_ECHO)
            continue;
        echoes++;
        for (int k = 0; k < GVS_TRACE_POINTS; k++)
            if (t[k] <= 0)
                TEST_FAIL_AT("request %d: no stamp at point %d", id, k);
        /* Only what causality orders: the sender may stamp SENT after
         * gvsd has read the request, gvsd REPLIED after the client has
         * read the reply. */
        ASSERT(t[GVS_TRACE_SEND] <= t[GVS_TRACE_SENT]);
        ASSERT(t[GVS_TRACE_SEND] <= t[GVS_TRACE_READ]);
        ASSERT(t[GVS_TRACE_READ] <= t[GVS_TRACE_RUN]);
        ASSERT(t[GVS_TRACE_RUN] <= t[GVS_TRACE_RAN]);
        ASSERT(t[GVS_TRACE_RAN] <= t[GVS_TRACE_REPLIED]);
        ASSERT(t[GVS_TRACE_RAN] <= t[GVS_TRACE_REPLY_READ]);
        ASSERT(t[GVS_TRACE_REPLY_READ] <= t[GVS_TRACE_RETURN]);
    }
    ASSERT_EQ(echoes, CALLS);
    test_gvsd_stop(&g);
    return 0;
}
