/* A file the program named, written with what the backend's CUDA wrote
 * to one of its own (gvs_remote.h). */
#include <stdio.h>

#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int gvs_remote_write_file(const char *path, const uint8_t *bytes,
                                 size_t len)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    int rc = fwrite(bytes, 1, len, f) == len ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}
