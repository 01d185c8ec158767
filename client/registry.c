#include <string.h>

#include "gvs/err.h"
#include "internal.h"

static struct gvs_client_plugin registered[GVS_MAX_PLUGINS];
static char names[GVS_MAX_PLUGINS][GVS_NAME_MAX + 1];
static int nregistered;

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
