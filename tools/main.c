#include <stdio.h>
#include <string.h>

#include "gvs.h"
#include "gvs/proto.h"

static const char usage[] =
    "usage: gvs COMMAND [ARGS...]\n"
    "\n"
    "  run [--server URI] [--gvsd PATH] [--log-level LEVEL] -- PROGRAM "
    "[ARGS...]\n"
    "        runs PROGRAM with its GPU calls served by gvsd: by the server\n"
    "        at URI, else by a private gvsd started for the program\n"
    "  status [--server URI] [--bytes]\n"
    "        shows gvsd's GPUs and sessions (the server as a program\n"
    "        finds it: $GVS_SERVER, else the config's, else the default)\n"
    "  help  shows this text\n"
    "  version\n";

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
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "gvs: unknown command %s\n%s", cmd, usage);
    return GVS_TOOL_FAILED;
}
