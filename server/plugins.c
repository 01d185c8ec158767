#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"
#include "plugins.h"

/* Beyond this many entries a table is taken to lack its GVS_OP_END. */
#define OPS_MAX 65535

__attribute__((format(printf, 3, 4))) static int reject(char *why, size_t len,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return GVS_E_PLUGIN;
}

static int validate_ops(const struct gvs_op *ops, char *why, size_t len)
{
    /* One bit per op number finds duplicates without sorting. */
    uint8_t seen[(OPS_MAX + 1) / 8 + 1] = {0};
    for (size_t i = 0;; i++) {
        const struct gvs_op *o = &ops[i];
        if (i == OPS_MAX)
            return reject(why, len, "ops table has no end marker");
        if (o->op == 0)
            return o->fn == NULL && o->name == NULL
                       ? 0
                       : reject(why, len, "entry %zu: op 0 is not an end marker", i);
        if (o->fn == NULL || o->name == NULL)
            return reject(why, len, "op %u: missing handler or name",
                          (unsigned)o->op);
        if (o->flags & ~(unsigned)GVS_OP_FLAGS_KNOWN)
            return reject(why, len, "op %u: unknown flags %#x",
                          (unsigned)o->op, (unsigned)o->flags);
        if ((o->flags & GVS_OP_BLOCKING) && (o->flags & GVS_OP_INLINE))
            return reject(why, len, "op %u: both blocking and inline",
                          (unsigned)o->op);
        if ((o->flags & GVS_OP_BATCH) &&
            (o->flags & (GVS_OP_ASYNC_OK | GVS_OP_BLOCKING)) != GVS_OP_ASYNC_OK)
            return reject(why, len, "op %u: batch but not async, or blocking",
                          (unsigned)o->op);
        if (seen[o->op / 8] & (1u << (o->op % 8)))
            return reject(why, len, "op %u listed twice", (unsigned)o->op);
        seen[o->op / 8] |= (uint8_t)(1u << (o->op % 8));
    }
}

int gvsd_plugin_validate(const struct gvs_plugin *d, char *why, size_t len)
{
    if (d == NULL)
        return reject(why, len, "no descriptor");
    if (d->abi != GVS_PLUGIN_ABI)
        return reject(why, len, "abi %u, expected %u", (unsigned)d->abi,
                      GVS_PLUGIN_ABI);
    if (d->id == 0)
        return reject(why, len, "id 0 is reserved");
    if (d->name == NULL || d->name[0] == '\0' ||
        strlen(d->name) > GVS_NAME_MAX)
        return reject(why, len, "missing or overlong name");
    if (d->session_open == NULL || d->session_close == NULL)
        return reject(why, len, "missing session hooks");
    if (d->ops == NULL)
        return reject(why, len, "no ops table");
    return validate_ops(d->ops, why, len);
}

static int build_index(struct gvsd_plugin *p)
{
    uint16_t max = 0;
    for (const struct gvs_op *o = p->desc->ops; o->op != 0; o++)
        if (o->op > max)
            max = o->op;
    p->index = gvs_calloc((size_t)max + 1, sizeof(*p->index));
    if (p->index == NULL)
        return GVS_E_NOMEM;
    for (const struct gvs_op *o = p->desc->ops; o->op != 0; o++)
        p->index[o->op] = o;
    p->max_op = max;
    return 0;
}

int gvsd_plugins_add(struct gvsd_plugins *ps, const struct gvs_plugin *d,
                     void *dl)
{
    char why[256];
    int rc = gvsd_plugin_validate(d, why, sizeof(why));
    if (rc == 0 && ps->n == GVS_MAX_PLUGINS)
        rc = reject(why, sizeof(why), "more than %d plugins", GVS_MAX_PLUGINS);
    if (rc == 0 && gvsd_plugins_find(ps, d->id) != NULL)
        rc = reject(why, sizeof(why), "id %u already taken", (unsigned)d->id);
    if (rc == 0 && gvsd_plugins_find_name(ps, d->name) != NULL)
        rc = reject(why, sizeof(why), "name already taken");
    if (rc < 0) {
        gvs_error("plugin %s: rejected: %s", d != NULL && d->name ? d->name : "?",
                  why);
        return rc;
    }
    struct gvsd_plugin *p = &ps->p[ps->n];
    memset(p, 0, sizeof(*p));
    p->desc = d;
    p->dl = dl;
    p->host = gvsd_host_api(ps->n, d->name);
    rc = build_index(p);
    if (rc < 0)
        return rc;
    ps->n++;
    return 0;
}

static void load_one(struct gvsd_plugins *ps, const char *path,
                     const char *name)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (dl == NULL) {
        gvs_error("plugin %s: %s", name, dlerror());
        return;
    }
    gvs_plugin_entry_fn entry =
        (gvs_plugin_entry_fn)dlsym(dl, GVS_PLUGIN_ENTRY);
    const struct gvs_plugin *d = NULL;
    int rc;
    if (entry == NULL) {
        gvs_error("plugin %s: %s: no symbol %s", name, path, GVS_PLUGIN_ENTRY);
        rc = GVS_E_PLUGIN;
    } else if ((rc = entry(GVS_PLUGIN_ABI, &d)) < 0) {
        gvs_error("plugin %s: entry failed: %s", name, gvs_strerror(rc));
    } else {
        rc = gvsd_plugins_add(ps, d, dl);
    }
    if (rc < 0) {
        dlclose(dl);
        return;
    }
    gvs_info("plugin %s: loaded %s (id %u)", name, path, (unsigned)d->id);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the gvs-*.so files in dir, sorted so the load order (and so
 * which of two clashing plugins wins) does not depend on the directory.
 * A directory that cannot be read has none, and is logged. */
static int scan_dir(const char *dir, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        gvs_error("plugin directory %s cannot be read: %s", dir,
                  strerror(errno));
        return 0;
    }
    char **names = NULL;
    int count = 0, rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 7 || strncmp(e->d_name, "gvs-", 4) != 0 ||
            strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        char **grown = gvs_realloc(names, (size_t)(count + 1) * sizeof(*names));
        char *name = gvs_malloc(len - 6);
        if (grown != NULL)
            names = grown;
        if (grown == NULL || name == NULL) {
            gvs_free(name);
            rc = GVS_E_NOMEM;
            break;
        }
        memcpy(name, e->d_name + 4, len - 7);
        name[len - 7] = '\0';
        names[count++] = name;
    }
    closedir(d);
    if (count > 0)
        qsort(names, (size_t)count, sizeof(*names), cmp_names);
    *out = names;
    *n = count;
    return rc;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        gvs_free(names[i]);
    gvs_free(names);
}

/* A plugin asked for by name that is not there stops gvsd: serving
 * without it would fail every client that needs it, far from the typo
 * that caused it.  The error lists what the directory holds. */
static int missing(const char *dir, const char *name)
{
    char **found;
    int n;
    char list[512] = "";
    size_t used = 0;
    if (scan_dir(dir, &found, &n) < 0)
        return GVS_E_NOMEM;
    for (int i = 0; i < n && used < sizeof(list); i++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
                                 i > 0 ? ", " : "", found[i]);
    free_names(found, n);
    gvs_error("no plugin %s in %s (found: %s)", name, dir,
              n > 0 ? list : "none");
    return GVS_E_PLUGIN;
}

int gvsd_plugins_load(struct gvsd_plugins *ps, const char *dir,
                      char *const *names, int n)
{
    char **found = NULL;
    int rc = 0;
    if (names == NULL) {
        rc = scan_dir(dir, &found, &n);
        names = found;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        char path[PATH_MAX];
        if (strchr(names[i], '/') != NULL ||
            (size_t)snprintf(path, sizeof(path), "%s/gvs-%s.so", dir,
                             names[i]) >= sizeof(path)) {
            gvs_error("plugin %s: bad name", names[i]);
            rc = GVS_E_PLUGIN;
        } else if (access(path, F_OK) != 0 && errno == ENOENT) {
            rc = missing(dir, names[i]);
        } else {
            load_one(ps, path, names[i]);
        }
    }
    free_names(found, found != NULL ? n : 0);
    return rc;
}

const struct gvsd_plugin *gvsd_plugins_find(const struct gvsd_plugins *ps,
                                            uint16_t id)
{
    for (int i = 0; i < ps->n; i++)
        if (ps->p[i].desc->id == id)
            return &ps->p[i];
    return NULL;
}

const struct gvsd_plugin *
gvsd_plugins_find_name(const struct gvsd_plugins *ps, const char *name)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->p[i].desc->name, name) == 0)
            return &ps->p[i];
    return NULL;
}

void gvsd_plugins_unload(struct gvsd_plugins *ps)
{
    for (int i = 0; i < ps->n; i++) {
        gvs_free(ps->p[i].index);
        if (ps->p[i].dl != NULL)
            dlclose(ps->p[i].dl);
    }
    ps->n = 0;
}
