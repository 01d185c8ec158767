#include <string.h>

#include "gvs/err.h"
#include "internal.h"

static struct gvs_client_plugin registered[GVS_MAX_PLUGINS];
static char names[GVS_MAX_PLUGINS][GVS_NAME_MAX + 1];
static gvs_notify_fn notify_fns[GVS_MAX_PLUGINS];
static void *notify_args[GVS_MAX_PLUGINS];
static int nregistered;

static struct {
    uint16_t plugin, op;
    gvs_notify_fn fn;
    const struct gvs_notify_into *into;
    void *arg;
} inline_fns[GVS_MAX_INLINE_NOTIFY];
static int ninline;

int client_registry_add(const struct gvs_client_plugin *p)
{
    if (p == NULL || p->id == 0 || p->name == NULL || p->name[0] == '\0' ||
        strlen(p->name) > GVS_NAME_MAX)
        return GVS_E_INVAL;
    for (int i = 0; i < nregistered; i++) {
        if (registered[i].id != p->id && strcmp(names[i], p->name) != 0)
            continue;
        if (registered[i].id == p->id && strcmp(names[i], p->name) == 0 &&
            registered[i].table_hash == p->table_hash)
            return 0;
        return GVS_E_INVAL;
    }
    if (nregistered == GVS_MAX_PLUGINS)
        return GVS_E_TOOBIG;
    /* The name is copied: the caller's string may live in a library that
     * is unloaded before the next handshake (after a fork). */
    strcpy(names[nregistered], p->name);
    registered[nregistered] = *p;
    registered[nregistered].name = names[nregistered];
    nregistered++;
    return 0;
}

void client_registry_fill(struct gvs_hello *h)
{
    h->nplugins = (uint32_t)nregistered;
    for (int i = 0; i < nregistered; i++) {
        h->plugins[i].id = registered[i].id;
        h->plugins[i].table_hash = registered[i].table_hash;
        strcpy(h->plugins[i].name, names[i]);
    }
}

int client_registry_set_notify(uint16_t plugin, gvs_notify_fn fn, void *arg)
{
    for (int i = 0; i < nregistered; i++) {
        if (registered[i].id != plugin)
            continue;
        notify_fns[i] = fn;
        notify_args[i] = arg;
        return 0;
    }
    return GVS_E_INVAL;
}

int client_registry_notify(uint16_t plugin, gvs_notify_fn *fn, void **arg)
{
    for (int i = 0; i < nregistered; i++) {
        if (registered[i].id != plugin || notify_fns[i] == NULL)
            continue;
        *fn = notify_fns[i];
        *arg = notify_args[i];
        return 1;
    }
    return 0;
}

static int is_registered(uint16_t plugin)
{
    for (int i = 0; i < nregistered; i++)
        if (registered[i].id == plugin)
            return 1;
    return 0;
}

int client_registry_set_inline(uint16_t plugin, uint16_t op, gvs_notify_fn fn,
                               const struct gvs_notify_into *into, void *arg)
{
    if (!is_registered(plugin))
        return GVS_E_INVAL;
    int i = 0;
    while (i < ninline &&
           (inline_fns[i].plugin != plugin || inline_fns[i].op != op))
        i++;
    if (i == GVS_MAX_INLINE_NOTIFY)
        return GVS_E_TOOBIG;
    if (i == ninline)
        ninline++;
    inline_fns[i].plugin = plugin;
    inline_fns[i].op = op;
    inline_fns[i].fn = fn;
    inline_fns[i].into = into;
    inline_fns[i].arg = arg;
    return 0;
}

static int find_inline(uint16_t plugin, uint16_t op)
{
    for (int i = 0; i < ninline; i++)
        if (inline_fns[i].plugin == plugin && inline_fns[i].op == op)
            return i;
    return -1;
}

int client_registry_inline(uint16_t plugin, uint16_t op, gvs_notify_fn *fn,
                           void **arg)
{
    int i = find_inline(plugin, op);
    if (i < 0 || inline_fns[i].fn == NULL)
        return 0;
    *fn = inline_fns[i].fn;
    *arg = inline_fns[i].arg;
    return 1;
}

int client_registry_into(uint16_t plugin, uint16_t op,
                         const struct gvs_notify_into **into, void **arg)
{
    int i = find_inline(plugin, op);
    if (i < 0 || inline_fns[i].into == NULL)
        return 0;
    *into = inline_fns[i].into;
    *arg = inline_fns[i].arg;
    return 1;
}
