/*
 * cuda.mock_modules: a driver API program (linked with -lcuda) through
 * gvsd and the mock driver, taking the paths of tests/gpu/driver_api.cpp,
 * driver_jit_link.cpp and nvrtc.cpp that no GPU is needed for.  The mock
 * image (mock_driver.c) as PTX text, as a fat binary's payload and as an
 * ELF cubin's section, loaded from files (cuModuleLoad,
 * cuLibraryLoadFromFile; files whose headers claim more than they hold
 * are refused) and from memory (cuModuleLoadData, cuModuleLoadFatBinary,
 * cuModuleLoadDataEx and cuLibraryLoadData with JIT options: the logs
 * and output options the mock's driver wrote reach the program's
 * buffers, after a failure too); a fat binary larger than a request;
 * launches with extra in either order, and what the driver refuses at
 * once; two created contexts pushed, popped and set current, each load
 * and launch in the right one.  Every step's round trips counted.
 * Prints "ok".
 */
#include <string.h>
#include <unistd.h>

#include "driver_check.h"
#include "jit_options.h"

#define TEXT "//gvs-mock module\n"
#define N 256

/* The mock text as a fat binary: header (magic, version, header size,
 * payload size), then the text with its NUL.  pad: bytes of 'x' before
 * the NUL, to make it large.  Returns its size; *out is malloc'd. */
static size_t make_fatbin(const char *text, size_t pad, uint8_t **out)
{
    size_t tlen = strlen(text), fat = tlen + pad + 1, len = 16 + fat;
    uint8_t *b = calloc(1, len);
    EXPECT(b != NULL);
    uint32_t magic = 0xba55ed50u;
    uint16_t version = 1, hdr = 16;
    uint64_t size = fat;
    memcpy(b, &magic, 4);
    memcpy(b + 4, &version, 2);
    memcpy(b + 6, &hdr, 2);
    memcpy(b + 8, &size, 8);
    memcpy(b + 16, text, tlen);
    memset(b + 16 + tlen, 'x', pad);
    *out = b;
    return len;
}

/* The mock text as a 64-bit ELF file: header, the text (with its NUL)
 * as section 0, then the section header table. */
static size_t make_cubin(const char *text, uint8_t **out)
{
    size_t tlen = strlen(text) + 1, shoff = (64 + tlen + 7) & ~(size_t)7;
    size_t len = shoff + 64;
    uint8_t *b = calloc(1, len);
    EXPECT(b != NULL);
    memcpy(b, "\x7f" "ELF\x02\x01\x01", 7);
    uint64_t v64 = shoff;
    uint16_t shent = 64, shnum = 1;
    memcpy(b + 0x28, &v64, 8);
    memcpy(b + 0x3a, &shent, 2);
    memcpy(b + 0x3c, &shnum, 2);
    memcpy(b + 64, text, tlen);
    uint8_t *sh = b + shoff;
    uint32_t type = 1; /* SHT_PROGBITS */
    uint64_t off = 64, size = tlen;
    memcpy(sh + 4, &type, 4);
    memcpy(sh + 0x18, &off, 8);
    memcpy(sh + 0x20, &size, 8);
    *out = b;
    return len;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    EXPECT(f != NULL && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

/* fill(p, value, n) of module m, then its N values read back. */
static void fill_check(CUmodule m, CUdeviceptr p, uint32_t value)
{
    static uint32_t host[N];
    CUfunction f;
    uint32_t n = N;
    CHECK(cuModuleGetFunction(&f, m, "fill"));
    void *args[] = {&p, &value, &n};
    CHECK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(host, p, sizeof(host)));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(host[i] == value);
}

/* Each form from a file, one round trip a load; a file whose headers
 * claim more than it holds never leaves the client. */
static void from_files(CUdeviceptr p)
{
    char dir[] = "/tmp/gvs-modules-XXXXXX", path[3][64], cut[64];
    uint8_t *fat, *elf;
    size_t flen = make_fatbin(TEXT, 0, &fat), elen = make_cubin(TEXT, &elf);
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(path[0], sizeof(path[0]), "%s/k.fatbin", dir);
    snprintf(path[1], sizeof(path[1]), "%s/k.cubin", dir);
    snprintf(path[2], sizeof(path[2]), "%s/k.ptx", dir);
    snprintf(cut, sizeof(cut), "%s/cut", dir);
    write_file(path[0], fat, flen);
    write_file(path[1], elf, elen);
    write_file(path[2], TEXT, strlen(TEXT));
    for (int i = 0; i < 3; i++) {
        CUmodule m;
        CUlibrary l;
        CUkernel k;
        struct stats s = now();
        CHECK(cuModuleLoad(&m, path[i]));
        EXPECT(now().round_trips - s.round_trips == 1);
        fill_check(m, p, 10u + (uint32_t)i);
        CHECK(cuModuleUnload(m));
        CHECK(cuLibraryLoadFromFile(&l, path[i], NULL, NULL, 0, NULL, NULL,
                                    0));
        CHECK(cuLibraryGetKernel(&k, l, "add"));
        CHECK(cuLibraryUnload(l));
    }
    CUmodule m;
    CUlibrary l;
    struct stats s = now();
    write_file(cut, fat, flen - 1);
    EXPECT(cuModuleLoad(&m, cut) == CUDA_ERROR_INVALID_IMAGE);
    write_file(cut, elf, elen - 1);
    EXPECT(cuModuleLoad(&m, cut) == CUDA_ERROR_INVALID_IMAGE);
    EXPECT(cuLibraryLoadFromFile(&l, cut, NULL, NULL, 0, NULL, NULL, 0) ==
           CUDA_ERROR_INVALID_IMAGE);
    write_file(cut, elf, 40);
    EXPECT(cuModuleLoad(&m, cut) == CUDA_ERROR_INVALID_IMAGE);
    EXPECT(now().round_trips == s.round_trips);
    for (int i = 0; i < 3; i++)
        EXPECT(unlink(path[i]) == 0);
    EXPECT(unlink(cut) == 0 && rmdir(dir) == 0);
    free(fat);
    free(elf);
}

/* From memory, each form, with JIT options: the info log names the form
 * the backend's driver got; a failure brings its error log. */
static void from_memory(CUdeviceptr p)
{
    uint8_t *fat, *elf, *big;
    make_fatbin(TEXT, 0, &fat);
    make_cubin(TEXT, &elf);
    const void *image[3] = {fat, elf, TEXT};
    const char *kind[3] = {"fatbin", "cubin", "ptx"};
    for (int i = 0; i < 3; i++) {
        CUmodule m;
        CUlibrary l;
        char want[64];
        snprintf(want, sizeof(want), "mock: loaded a %s image", kind[i]);
        reset_options();
        struct stats s = now();
        CHECK(cuModuleLoadDataEx(&m, image[i], 6, opts, vals));
        EXPECT(now().round_trips - s.round_trips == 1);
        EXPECT(strcmp(info, want) == 0 && error[0] == '\0');
        EXPECT((size_t)(uintptr_t)vals[1] == strlen(want) + 1);
        float ms;
        memcpy(&ms, &vals[4], sizeof(ms));
        EXPECT(ms == 2.5f && (uintptr_t)vals[5] == 1);
        fill_check(m, p, 20u + (uint32_t)i);
        CHECK(cuModuleUnload(m));
        reset_options();
        CHECK(cuLibraryLoadData(&l, image[i], opts, vals, 6, NULL, NULL, 0));
        EXPECT(strcmp(info, want) == 0);
        CHECK(cuLibraryUnload(l));
        CHECK(cuModuleLoadData(&m, image[i]));
        CHECK(cuModuleUnload(m));
    }
    CUmodule m;
    CHECK(cuModuleLoadFatBinary(&m, fat));
    fill_check(m, p, 30);
    CHECK(cuModuleUnload(m));

    /* A failure: the error log and its size, the info log untouched. */
    reset_options();
    EXPECT(cuModuleLoadDataEx(&m, "//gvs-mock bad\n", 6, opts, vals) ==
           CUDA_ERROR_INVALID_PTX);
    EXPECT(strcmp(error, "mock: bad PTX") == 0 && info[0] == '\0');
    EXPECT((size_t)(uintptr_t)vals[3] == strlen(error) + 1);
    /* A log cut to its buffer, as the driver cuts it. */
    reset_options();
    vals[1] = (void *)(uintptr_t)8;
    CHECK(cuModuleLoadDataEx(&m, TEXT, 6, opts, vals));
    EXPECT(strcmp(info, "mock: l") == 0 && (uintptr_t)vals[1] == 8);
    CHECK(cuModuleUnload(m));
    /* Options the backend cannot pass, and arrays missing. */
    CUjit_option names = CU_JIT_GLOBAL_SYMBOL_NAMES;
    void *v = (void *)"sym";
    EXPECT(cuModuleLoadDataEx(&m, TEXT, 1, &names, &v) ==
           CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(cuModuleLoadDataEx(&m, TEXT, 1, NULL, NULL) ==
           CUDA_ERROR_INVALID_VALUE);

    /* Larger than a request: staged ahead, still one round trip. */
    size_t blen = make_fatbin(TEXT, (size_t)9 << 20, &big);
    reset_options();
    struct stats s = now();
    CHECK(cuModuleLoadDataEx(&m, big, 6, opts, vals));
    EXPECT(now().round_trips - s.round_trips == 1);
    EXPECT(now().bytes_sent - s.bytes_sent >= blen);
    EXPECT(strcmp(info, "mock: loaded a fatbin image") == 0);
    fill_check(m, p, 31);
    CHECK(cuModuleUnload(m));
    free(big);
    free(fat);
    free(elf);
}

/* extra: the block as the program packs it, in either order; both ways
 * at once, unknown keys and a size without a buffer refused before any
 * request; the launch posted once its configuration was accepted. */
static void extra_launches(CUdeviceptr p)
{
    static uint32_t host[N];
    CUmodule m;
    CUfunction fill;
    CHECK(cuModuleLoadData(&m, TEXT));
    CHECK(cuModuleGetFunction(&fill, m, "fill"));
    struct {
        uint64_t p;
        uint32_t value, n;
    } block = {p, 40, N};
    size_t bsize = sizeof(block), zero = 0;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &bsize,
                     CU_LAUNCH_PARAM_BUFFER_POINTER, &block,
                     CU_LAUNCH_PARAM_END};
    struct stats s = now();
    CHECK(cuLaunchKernel(fill, 2, 1, 1, N / 2, 1, 1, 0, NULL, NULL, extra));
    EXPECT(now().round_trips - s.round_trips == 1);
    block.value = 41;
    s = now();
    CHECK(cuLaunchKernel(fill, 2, 1, 1, N / 2, 1, 1, 0, NULL, NULL, extra));
    EXPECT(now().round_trips == s.round_trips &&
           now().posts - s.posts == 1);
    CHECK(cuMemcpyDtoH(host, p, sizeof(host)));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(host[i] == 41);

    uint32_t value = 1, n = N;
    void *args[] = {&p, &value, &n};
    void *unknown[] = {(void *)(uintptr_t)0x77, &block, CU_LAUNCH_PARAM_END};
    void *no_buffer[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &bsize,
                         CU_LAUNCH_PARAM_END};
    void *empty[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &zero, CU_LAUNCH_PARAM_END};
    s = now();
    EXPECT(cuLaunchKernel(fill, 2, 1, 1, N / 2, 1, 1, 0, NULL, args,
                          extra) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fill, 2, 1, 1, N / 2, 1, 1, 0, NULL, NULL,
                          unknown) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fill, 2, 1, 1, N / 2, 1, 1, 0, NULL, NULL,
                          no_buffer) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips == s.round_trips && now().posts == s.posts);
    /* No buffer at all: the driver's to refuse, at once. */
    EXPECT(cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, empty) ==
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(now().round_trips - s.round_trips == 1);
    CUlaunchConfig cfg = {1, 1, 1, N, 1, 1, 0, NULL, NULL, 0};
    EXPECT(cuLaunchKernelEx(&cfg, fill, args, extra) ==
           CUDA_ERROR_INVALID_VALUE);
    block.value = 42;
    CHECK(cuLaunchKernelEx(&cfg, fill, NULL, extra));
    CHECK(cuMemcpyDtoH(host, p, sizeof(host)));
    EXPECT(host[0] == 42 && host[N - 1] == 42);
    CHECK(cuModuleUnload(m));
}

/* Two created contexts: the stack is the client's (no round trip to
 * push, pop or set), and the backend gets the new current context ahead
 * of the next request that needs it, posted with it. */
static void contexts(CUcontext first)
{
    CUcontext a, b, cur;
    CUdevice dev = -1;
    CUmodule ma, mb;
    CUdeviceptr pa, pb;
    CHECK(cuCtxCreate(&a, NULL, 0, 0));
    CHECK(cuCtxCreate(&b, NULL, 0, 1));
    struct stats s = now();
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == b);
    CHECK(cuCtxPopCurrent(&cur));
    EXPECT(cur == b);
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == a);
    CHECK(cuCtxGetDevice(&dev));
    EXPECT(dev == 0);
    CHECK(cuCtxPushCurrent(b));
    CHECK(cuCtxGetDevice(&dev));
    EXPECT(dev == 1);
    CHECK(cuCtxSetCurrent(a));
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == a);
    CHECK(cuCtxPopCurrent(NULL));
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == a);
    EXPECT(now().round_trips == s.round_trips && now().posts == s.posts);

    /* a was current when b's creation went: the lane has it. */
    s = now();
    CHECK(cuModuleLoadData(&ma, TEXT));
    EXPECT(now().round_trips - s.round_trips == 1 && now().posts == s.posts);
    CHECK(cuMemAlloc(&pa, N * sizeof(uint32_t)));
    fill_check(ma, pa, 50);
    /* b is not: it goes ahead of the load, posted. */
    CHECK(cuCtxPushCurrent(b));
    s = now();
    CHECK(cuModuleLoadData(&mb, TEXT));
    EXPECT(now().round_trips - s.round_trips == 1 &&
           now().posts - s.posts == 1);
    CHECK(cuMemAlloc(&pb, N * sizeof(uint32_t)));
    fill_check(mb, pb, 51);
    CHECK(cuMemFree(pb));
    CHECK(cuModuleUnload(mb));
    CHECK(cuCtxPopCurrent(&cur));
    EXPECT(cur == b);
    CHECK(cuMemFree(pa));
    CHECK(cuModuleUnload(ma));
    CHECK(cuCtxDestroy(b));
    /* The current one destroyed leaves the stack; first is below it. */
    CHECK(cuCtxDestroy(a));
    CHECK(cuCtxGetCurrent(&cur));
    EXPECT(cur == first);
    CHECK(cuCtxPopCurrent(&cur));
    EXPECT(cur == first);
    EXPECT(cuCtxPopCurrent(&cur) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxPushCurrent(first));
}

int main(void)
{
    CUcontext ctx;
    CUdeviceptr p;
    stats_init();
    CHECK(cuInit(0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, 0));
    CHECK(cuMemAlloc(&p, N * sizeof(uint32_t)));
    from_files(p);
    from_memory(p);
    extra_launches(p);
    contexts(ctx);
    CHECK(cuMemFree(p));
    CHECK(cuCtxDestroy(ctx));
    printf("ok\n");
    return 0;
}
