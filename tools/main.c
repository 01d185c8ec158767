#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gvs.h"
#include "gvs/cli.h"
#include "gvs/proto.h"

static const char usage[] =
    "usage: gvs COMMAND [ARGS...]\n"
    "\n"
    "  run [--server URI] [--gvsd PATH] [--log-level LEVEL] [--] PROGRAM "
    "[ARGS...]\n"
    "        runs PROGRAM with its GPU calls served by gvsd: by the server\n"
    "        at URI, else by a private gvsd started for the program\n"
    "  status [--server URI] [--bytes]\n"
    "        shows gvsd's GPUs and sessions (the server as a program\n"
    "        finds it: $GVS_SERVER, else the config's, else the default)\n"
    "  help, -h, --help\n"
    "        shows this text\n"
    "  version, --version\n"
    "\n"
    "`gvs COMMAND --help` shows a command's options and exit statuses;\n"
    "man pages: gvs(1), gvsd(8), gvs.conf(5).\n";

void gvs_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gvs%s%s: ", cmd[0] != '\0' ? " " : "", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(try gvs%s%s --help)\n", cmd[0] != '\0' ? " " : "",
            cmd);
    va_end(ap);
}

void gvs_option_error(const char *cmd, int c, char *const *argv)
{
    char what[256];
    gvs_cli_option_error(what, sizeof(what), c, argv);
    gvs_usage_error(cmd, "%s", what);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "help";
    if (strcmp(cmd, "run") == 0)
        return gvs_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "status") == 0)
        return gvs_cmd_status(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("gvs %s (protocol %u)\n", GVS_VERSION, GVS_PROTO_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    gvs_usage_error("", "unknown %s %s", cmd[0] == '-' ? "option" : "command",
                    cmd);
    return GVS_TOOL_USAGE;
}
