#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "gvs/cli.h"

void gvs_cli_option_error(char *out, size_t len, int c, char *const *argv)
{
    /* getopt_long has stepped past a long option it could not use, so
     * argv[optind - 1] is it; a short one may sit inside a group ("-xv"),
     * and optopt is the only sure name of it. */
    const char *arg = argv[optind - 1];
    if (strncmp(arg, "--", 2) != 0) {
        if (c == ':')
            snprintf(out, len, "option -%c needs a value", optopt);
        else
            snprintf(out, len, "unknown option -%c", optopt);
        return;
    }
    int name = (int)strcspn(arg, "=");
    if (c == ':')
        snprintf(out, len, "option %.*s needs a value", name, arg);
    else if (optopt != 0) /* a known option given "=value" */
        snprintf(out, len, "option %.*s takes no value", name, arg);
    else
        snprintf(out, len, "unknown option %.*s", name, arg);
}
