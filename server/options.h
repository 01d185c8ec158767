/*
 * gvsd's command line.  Flags override the config file: a repeatable
 * flag given at least once replaces that key's values from the file.
 */
#ifndef GVSD_OPTIONS_H
#define GVSD_OPTIONS_H

#include "gvs/config.h"
#include "gvs/log.h"

struct gvsd_options {
    struct gvs_config cfg; /* final settings, plugin_dir always set */
    enum gvs_log_level log_level;
    int ready_fd; /* -1: none */
};

/* Outcome of gvsd_options_parse besides 0 (run). */
#define GVSD_OPTIONS_EXIT 1 /* --help or --version was printed */

/* Parses argv into o (which the caller frees with gvsd_options_free even
 * on failure).  Returns 0, GVSD_OPTIONS_EXIT, or a negative GVS_E_* code
 * after printing the problem on stderr. */
int gvsd_options_parse(struct gvsd_options *o, int argc, char **argv);
void gvsd_options_free(struct gvsd_options *o);

#endif
