/*
 * Backend plugins as gvsd holds them: loaded in the parent at start-up,
 * used (through the op index) only in session workers.  Loading calls
 * nothing but the entry symbol, so no GPU state exists before fork.
 */
#ifndef GVSD_PLUGINS_H
#define GVSD_PLUGINS_H

#include <stddef.h>
#include <stdint.h>

#include "gvs/plugin.h"
#include "gvs/proto.h"

struct gvsd_plugin {
    void *dl;
    const struct gvs_plugin *desc;
    const struct gvs_host_api *host; /* logs with the plugin's name */
    /* op number -> table entry, NULL where the table has none. */
    const struct gvs_op **index;
    uint16_t max_op;
};

struct gvsd_plugins {
    struct gvsd_plugin p[GVS_MAX_PLUGINS];
    int n;
};

/* Checks a descriptor: abi, id >= 1, name, an ops table of ops >= 1,
 * unique, with handlers, names and known flags (not both blocking and
 * inline), ended by GVS_OP_END, and both session hooks.  GVS_E_PLUGIN
 * with the reason in why. */
int gvsd_plugin_validate(const struct gvs_plugin *d, char *why, size_t len);

/* Loads <dir>/gvs-<name>.so for each of names[0..n-1], or every
 * gvs-*.so in dir (in name order) when names is NULL.  A plugin that
 * fails to load, or whose id or name is already taken, is logged and
 * skipped.  Returns 0 (even when none loaded), GVS_E_NOMEM, or
 * GVS_E_PLUGIN (logged, with what dir holds) when a name is malformed
 * or no file of dir has it. */
int gvsd_plugins_load(struct gvsd_plugins *ps, const char *dir,
                      char *const *names, int n);

/* Adds an already obtained descriptor (validated, indexed); dl is
 * dlclosed on unload, may be NULL.  GVS_E_PLUGIN (logged) on rejection. */
int gvsd_plugins_add(struct gvsd_plugins *ps, const struct gvs_plugin *d,
                     void *dl);

const struct gvsd_plugin *gvsd_plugins_find(const struct gvsd_plugins *ps,
                                            uint16_t id);
const struct gvsd_plugin *
gvsd_plugins_find_name(const struct gvsd_plugins *ps, const char *name);

static inline const struct gvs_op *gvsd_plugin_op(const struct gvsd_plugin *p,
                                                  uint16_t op)
{
    return op <= p->max_op ? p->index[op] : NULL;
}

void gvsd_plugins_unload(struct gvsd_plugins *ps);

/* host.c: the host API handed to the plugin in slot i (< GVS_MAX_PLUGINS);
 * its log function prefixes each line with name. */
const struct gvs_host_api *gvsd_host_api(int slot, const char *name);

#endif
