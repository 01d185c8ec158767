#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gvs.h"
#include "gvs/err.h"

int gvs_exe_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return GVS_E_IO;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    if ((size_t)snprintf(out, len, "%s", exe) >= len)
        return GVS_E_TOOBIG;
    return 0;
}
