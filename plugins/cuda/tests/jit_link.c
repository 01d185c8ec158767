/*
 * cuda.mock_jit_link: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver (mock_link.c): a JIT link of data and file
 * inputs, one too large for a request (staged) so that its image comes
 * back in pieces; the logs and output options the driver wrote, filled
 * into the program's buffers; the image loaded as a module; options and
 * states the backend refuses.  Prints "ok".
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver_check.h"
#include "jit_options.h"

#define BIG ((size_t)9 << 20)

/* Two small inputs and a large one, a failing one with its log. */
static void link_data(void)
{
    static const char a[] = "// unit a\n", b[] = "// unit b\n";
    CUlinkState s;
    reset_options();
    CHECK(cuLinkCreate(6, opts, vals, &s));
    CHECK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)a, sizeof(a), "a.ptx",
                        0, NULL, NULL));
    EXPECT(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)"bad\n", 5, "b.ptx",
                         0, NULL, NULL) == CUDA_ERROR_INVALID_PTX);
    EXPECT(strcmp(error, "mock: b.ptx is bad") == 0);
    EXPECT((size_t)(uintptr_t)vals[3] == strlen(error) + 1);
    char *big = malloc(BIG);
    EXPECT(big != NULL);
    memset(big, 'x', BIG);
    memcpy(big, "//", 2);
    big[BIG - 2] = '\n';
    big[BIG - 1] = '\0';
    uint64_t before = now().round_trips;
    CHECK(cuLinkAddData(s, CU_JIT_INPUT_PTX, big, BIG, "big.ptx", 0, NULL,
                        NULL));
    EXPECT(now().round_trips - before == 1);
    CHECK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)b, sizeof(b), NULL, 0,
                        NULL, NULL));

    void *cubin;
    size_t size;
    CHECK(cuLinkComplete(s, &cubin, &size));
    size_t want = strlen("//gvs-mock\n") + strlen(a) + (BIG - 1) + strlen(b);
    EXPECT(size == want + 1);
    EXPECT(memcmp(cubin, "//gvs-mock\n// unit a\n//xx", 25) == 0);
    EXPECT(strcmp((char *)cubin + size - 1 - strlen(b), b) == 0);
    EXPECT(strcmp(info, "mock linked 3 inputs") == 0);
    EXPECT((size_t)(uintptr_t)vals[1] == strlen(info) + 1);
    float ms;
    memcpy(&ms, &vals[4], sizeof(ms));
    EXPECT(ms == 1.5f);
    /* The image stays until cuLinkDestroy: loaded as a module. */
    CUmodule m;
    CHECK(cuModuleLoadData(&m, cubin));
    CHECK(cuModuleUnload(m));
    CHECK(cuLinkDestroy(s));
    free(big);
    EXPECT(cuLinkDestroy(s) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)a, sizeof(a), "a", 0,
                         NULL, NULL) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLinkComplete(s, &cubin, &size) == CUDA_ERROR_INVALID_HANDLE);
}

/* A file input, an input without its size, no options, and a small
 * image in one reply. */
static void link_file(void)
{
    char path[] = "/tmp/gvs-jit-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    EXPECT(write(fd, "// file unit\n", 13) == 13);
    close(fd);
    CUlinkState s;
    CHECK(cuLinkCreate(0, NULL, NULL, &s));
    EXPECT(cuLinkComplete(s, &(void *){0}, &(size_t){0}) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuLinkAddFile(s, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
    EXPECT(cuLinkAddFile(s, CU_JIT_INPUT_PTX, "/nonexistent/x.ptx", 0, NULL,
                         NULL) == CUDA_ERROR_FILE_NOT_FOUND);
    unlink(path);
    /* Text with no size: its own length. */
    CHECK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)"// no size\n", 0, "t",
                        0, NULL, NULL));
    void *cubin;
    size_t size;
    uint64_t before = now().round_trips;
    CHECK(cuLinkComplete(s, &cubin, &size));
    EXPECT(now().round_trips - before == 1);
    EXPECT(strcmp(cubin, "//gvs-mock\n// file unit\n// no size\n") == 0);
    CHECK(cuLinkDestroy(s));
}

/* What the backend refuses and the driver's own refusals. */
static void refused(void)
{
    CUlinkState s;
    CUjit_option names = CU_JIT_GLOBAL_SYMBOL_NAMES;
    void *v = (void *)"sym";
    EXPECT(cuLinkCreate(1, &names, &v, &s) == CUDA_ERROR_NOT_SUPPORTED);
    CUjit_option unknown = CU_JIT_NUM_OPTIONS;
    EXPECT(cuLinkCreate(1, &unknown, &v, &s) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLinkCreate(1, NULL, NULL, &s) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLinkCreate(0, NULL, NULL, NULL) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLinkDestroy((CUlinkState)(uintptr_t)0x7777) ==
           CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuLinkCreate(0, NULL, NULL, &s));
    EXPECT(cuLinkAddData(s, CU_JIT_NUM_INPUT_TYPES, (void *)"x", 1, "x", 0,
                         NULL, NULL) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLinkAddData(s, CU_JIT_INPUT_PTX, NULL, 1, "x", 0, NULL, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
    CUjit_option wall = CU_JIT_WALL_TIME;
    EXPECT(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)"x", 1, "x", 1, &wall,
                         &v) == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(cuLinkDestroy(s));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUlinkState s;
    stats_init();
    EXPECT(cuLinkCreate(0, NULL, NULL, &s) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    link_data();
    link_file();
    refused();
    CHECK(cuCtxDestroy(ctx));
    printf("ok\n");
    return 0;
}
