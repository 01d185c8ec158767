/* Request timelines (gvs/trace.h). */
#include "gvs/trace.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/mem.h"

struct gvs_trace_entry {
    uint64_t id;
    uint16_t plugin, op;
    long long t[GVS_TRACE_POINTS];
};

struct gvs_trace_entry *gvs_trace_table;
static char trace_dir[PATH_MAX];

/* Stamps of one request may come from two threads (sender and reader):
 * each writes its own field.  An entry is reused GVS_TRACE_REQUESTS
 * requests later, its old stamps cleared by the first stamp of the new
 * request. */
void gvs_trace_stamp(uint64_t id, uint16_t plugin, uint16_t op,
                     enum gvs_trace_point point)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    struct gvs_trace_entry *e = &gvs_trace_table[id % GVS_TRACE_REQUESTS];
    if (e->id != id) {
        memset(e, 0, sizeof(*e));
        e->id = id;
    }
    if (plugin != 0 || op != 0) {
        e->plugin = plugin;
        e->op = op;
    }
    e->t[point] = (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gvs_trace_open(const char *dir)
{
    if (dir == NULL || dir[0] == '\0' || strlen(dir) >= sizeof(trace_dir))
        return GVS_E_INVAL;
    struct gvs_trace_entry *t =
        gvs_calloc(GVS_TRACE_REQUESTS, sizeof(*t));
    if (t == NULL)
        return GVS_E_NOMEM;
    strcpy(trace_dir, dir);
    gvs_free(gvs_trace_table);
    gvs_trace_table = t;
    return 0;
}

static int stamped(const struct gvs_trace_entry *e)
{
    for (int k = 0; k < GVS_TRACE_POINTS; k++)
        if (e->t[k] != 0)
            return 1;
    return 0;
}

int gvs_trace_dump(void)
{
    const struct gvs_trace_entry *t = gvs_trace_table;
    if (t == NULL)
        return 0;
    FILE *f = NULL;
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
    snprintf(path, sizeof(path), "%s/gvs-trace-%d.txt", trace_dir,
             (int)getpid());
    snprintf(tmp, sizeof(tmp), "%s/.gvs-trace-%d.tmp", trace_dir,
             (int)getpid());
    for (unsigned i = 0; i < GVS_TRACE_REQUESTS; i++) {
        if (!stamped(&t[i]))
            continue;
        if (f == NULL && (f = fopen(tmp, "w")) == NULL)
            return GVS_E_IO;
        fprintf(f, "%llu %u %u", (unsigned long long)t[i].id,
                (unsigned)t[i].plugin, (unsigned)t[i].op);
        for (int k = 0; k < GVS_TRACE_POINTS; k++)
            fprintf(f, " %lld", t[i].t[k]);
        fputc('\n', f);
    }
    if (f == NULL)
        return 0;
    /* Renamed once whole: a reader never sees half a file. */
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        (void)unlink(tmp);
        return GVS_E_IO;
    }
    return 0;
}

__attribute__((constructor)) static void trace_load(void)
{
    (void)gvs_trace_open(getenv("GVS_TRACE_DIR"));
}

__attribute__((destructor)) static void trace_exit(void)
{
    (void)gvs_trace_dump();
}
