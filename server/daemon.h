/*
 * gvsd's parent process: loads plugins, listens, forks one worker per
 * accepted connection and shuts down on SIGTERM/SIGINT.
 */
#ifndef GVSD_DAEMON_H
#define GVSD_DAEMON_H

#include "gvs/config.h"

/* Grace period between SIGTERM and SIGKILL for workers at shutdown. */
#define GVSD_STOP_GRACE_MS 2000u

/* Runs until SIGTERM/SIGINT with the final settings in cfg (listen URIs,
 * plugin_dir set; no plugins listed means every plugin of the dir).
 * Writes "ready\n" to ready_fd (unless -1) and closes it once every
 * listener is up.  Returns the process exit status. */
int gvsd_run(const struct gvs_config *cfg, int ready_fd);

#endif
