/* What CUDA writes only to a file (a graph's DOT description), read back
 * for the client (remote_be.h, capture_file). */
#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gvs/mem.h"
#include "state.h"

static int32_t read_all(int fd, size_t max, uint8_t **out, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 0)
        return CUDA_ERROR_UNKNOWN;
    if ((size_t)st.st_size > max)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint8_t *b = gvs_malloc((size_t)st.st_size + 1);
    if (b == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
        if (n <= 0) {
            gvs_free(b);
            return CUDA_ERROR_UNKNOWN;
        }
        got += (size_t)n;
    }
    *out = b;
    *len = got;
    return CUDA_SUCCESS;
}

int32_t remote_be_capture_file(int32_t (*write)(const char *path, void *arg),
                               void *arg, size_t max, uint8_t **out,
                               size_t *len)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    *out = NULL;
    *len = 0;
    if (snprintf(path, sizeof(path), "%s/gvs-out-XXXXXX",
                 dir != NULL && *dir != '\0' ? dir : "/tmp") >=
        (int)sizeof(path))
        return CUDA_ERROR_INVALID_VALUE;
    int fd = mkstemp(path);
    if (fd < 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    int32_t r = write(path, arg);
    if (r == CUDA_SUCCESS)
        r = read_all(fd, max, out, len);
    (void)unlink(path);
    (void)close(fd);
    return r;
}
