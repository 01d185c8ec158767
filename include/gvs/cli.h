/*
 * Conventions every gvs command line follows (gvs and its subcommands,
 * gvsd): -h and --help print the usage on stdout and succeed; an option
 * that cannot be read is named, with what is wrong with it, and the
 * user is pointed at --help.
 */
#ifndef GVS_CLI_H
#define GVS_CLI_H

#include <stddef.h>

/* Says in out (len bytes, NUL-terminated) what getopt_long meant by
 * returning c, '?' or ':', for argv: "unknown option --x", "option --x
 * needs a value" or "option --x takes no value".  Call it right after
 * that getopt_long, which must have run with opterr = 0 and an optstring
 * that starts with ':' (after any '+'), so that a missing value is ':'. */
void gvs_cli_option_error(char *out, size_t len, int c, char *const *argv);

#endif
