/*
 * The export tables' implemented slots (frontend/exports.c), linked here
 * with a fake of the driver functions they call, so that what they pass
 * on and what they answer can be seen:
 *
 *   exports_test storage   cuda.ctx_storage: CONTEXT_LOCAL_STORAGE's put,
 *                          get and delete, the current context, and the
 *                          destructors cuda_fe_ctx_storage_release runs
 *   exports_test slots     cuda.export_slots: every other implemented
 *                          slot, the integrity check over the fake's
 *                          devices, and the stubs' one line on stderr
 *   exports_test rdc       cuda.rdc_link: -rdc units linked at load
 *   exports_test cache     cuda.compute_cache: DA9151D3, the compute
 *                          cache, kept in a temporary directory
 */
#include "exports.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                    \
            return 1;                                                         \
        }                                                                     \
    } while (0)

/* ---- The fake driver. */

static CUcontext current;
static CUresult current_rc, count_rc;
static int device_count = 2;
static const void *loaded_fatbin;
static CUdevice retained_dev = -1;

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (current_rc == CUDA_SUCCESS)
        *pctx = current;
    return current_rc;
}

CUresult cuDeviceGetCount(int *count)
{
    if (count_rc == CUDA_SUCCESS)
        *count = device_count;
    return count_rc;
}

/* Handles unlike ordinals, to see that the handle is what is queried. */
CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    *device = 100 + ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    for (int i = 0; i < 16; i++)
        uuid->bytes[i] = (char)(dev * 16 + i);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    *pi = dev * 1000 + (int)attrib;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    *driverVersion = 13010;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    loaded_fatbin = fatCubin;
    *module = (CUmodule)0x4d4f44;
    return CUDA_SUCCESS;
}

/* The link of an -rdc program's units: what was added, and the fake's
 * answers. */
static struct {
    int created, destroyed, completed;
    const void *added[4];
    size_t added_len[4];
    int nadded;
    CUresult add_rc;
} link_seen;
static const char linked_cubin[] = "\x7f" "ELF linked";

/* The layer's measure: a wrapper's fatbinary, header and entries. */
size_t gvs_remote_image_size(const void *code, const uint8_t **start)
{
    const uint8_t *p = code;
    uint16_t hdr;
    uint64_t fat;
    if (((const uint32_t *)code)[0] == 0x466243b1u)
        p = ((const void *const *)code)[1];
    memcpy(&hdr, p + 6, 2);
    memcpy(&fat, p + 8, 8);
    *start = p;
    return hdr + fat;
}

CUresult cuLinkCreate_v2(unsigned int n, CUjit_option *options,
                         void **values, CUlinkState *state)
{
    (void)options;
    (void)values;
    link_seen.created += n == 0;
    *state = (CUlinkState)0x11;
    return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
                          size_t size, const char *name, unsigned int n,
                          CUjit_option *options, void **values)
{
    (void)name;
    (void)options;
    (void)values;
    if (state != (CUlinkState)0x11 || type != CU_JIT_INPUT_FATBINARY ||
        n != 0 || link_seen.nadded == 4)
        return CUDA_ERROR_INVALID_VALUE;
    link_seen.added[link_seen.nadded] = data;
    link_seen.added_len[link_seen.nadded++] = size;
    return link_seen.add_rc;
}

CUresult cuLinkComplete(CUlinkState state, void **cubin, size_t *size)
{
    link_seen.completed += state == (CUlinkState)0x11;
    *cubin = (void *)linked_cubin;
    *size = sizeof(linked_cubin);
    return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state)
{
    link_seen.destroyed += state == (CUlinkState)0x11;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    retained_dev = dev;
    *pctx = (CUcontext)0xc7c7;
    return CUDA_SUCCESS;
}

/* The module walk of modules.c: module 0x4d4f44 holds two functions. */
unsigned int cuda_fe_module_each(CUmodule mod, cuda_fe_function_fn fn,
                                 void *cookie)
{
    if (mod != (CUmodule)0x4d4f44)
        return 0;
    fn(cookie, (CUfunction)0xf1, "first");
    fn(cookie, (CUfunction)0xf2, "second");
    return 2;
}

/* ---- The tables, as a caller sees them. */

static void *const *table(const char *uuid_hex)
{
    CUuuid u;
    for (int i = 0; i < 16; i++) {
        unsigned b;
        sscanf(uuid_hex + 2 * i, "%2x", &b);
        u.bytes[i] = (char)b;
    }
    const void *t = NULL;
    return cuGetExportTable(&t, &u) == CUDA_SUCCESS ? t : NULL;
}

#define CUDART_INTERFACE "6bd5fb6c5bf4e74a8987d93912fd9df9"
#define TOOLS_TLS "42d85a8123f6cb478298f6e78a3aecdc"
#define CALLBACK_HOOKS "a094798c2e742e7493f20800200c0a66"
#define CONTEXT_LOCAL_STORAGE "c693336e1121df11a8c368f355d89593"
#define CONTEXT_CHECKS "263e88607cd2614392f6bbd5006dfa7e"
#define INTEGRITY_CHECK "d4082055bde6704b8d34ba123c66e1f2"
#define CUBLAS_CUFFT "21318c60971432488ca641ff7324c8f2"
#define DEVICE_EXTENDED_RT "b10541e1f7c7c74a9f64f223be99f1e2"
#define TOOLS_MODULE "6e163fbeb958444d835ce182aff1991e"
#define UNNAMED "69cbe9165742034a84cc93f7b151c5c9"
#define COMPUTE_CACHE "da9151d33ae6cc41a5c04f26d533e328"

/* A slot as a function of the type the caller knows. */
#define SLOT(type, uuid, i) ((type)table(uuid)[i])

/* ---- CONTEXT_LOCAL_STORAGE. */

typedef void (*dtor_fn)(CUcontext, void *, void *);
typedef CUresult (*put_fn)(CUcontext, void *, void *, dtor_fn);
typedef CUresult (*delete_fn)(CUcontext, void *);
typedef CUresult (*get_fn)(void **, CUcontext, void *);

struct dtor_call {
    CUcontext ctx;
    void *key, *value;
};
static struct dtor_call dtor_calls[8];
static int ndtor_calls;

static void dtor(CUcontext ctx, void *key, void *value)
{
    if (ndtor_calls < 8)
        dtor_calls[ndtor_calls] = (struct dtor_call){ctx, key, value};
    ndtor_calls++;
}

/* A destructor that uses the storage: it must not find it locked. */
static void dtor_reentrant(CUcontext ctx, void *key, void *value)
{
    put_fn put = SLOT(put_fn, CONTEXT_LOCAL_STORAGE, 0);
    dtor(ctx, key, value);
    put((CUcontext)0xbbbb, key, value, NULL);
}

#define THREADS 8
#define ROUNDS 20000

static void *storage_thread(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    put_fn put = SLOT(put_fn, CONTEXT_LOCAL_STORAGE, 0);
    delete_fn del = SLOT(delete_fn, CONTEXT_LOCAL_STORAGE, 1);
    get_fn get = SLOT(get_fn, CONTEXT_LOCAL_STORAGE, 2);
    CUcontext ctx = (CUcontext)0xdddd;
    for (uintptr_t i = 0; i < ROUNDS; i++) {
        void *key = (void *)(id * 4 + i % 4), *value = NULL;
        if (put(ctx, key, (void *)(i + 1), NULL) != CUDA_SUCCESS ||
            get(&value, ctx, key) != CUDA_SUCCESS || value != (void *)(i + 1) ||
            del(ctx, key) != CUDA_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

/* As driver 580 answers (docs/driver.md, "Export tables"). */
static int test_storage(void)
{
    void *const *t = table(CONTEXT_LOCAL_STORAGE);
    EXPECT(t != NULL && t[3] == NULL);
    put_fn put = SLOT(put_fn, CONTEXT_LOCAL_STORAGE, 0);
    delete_fn del = SLOT(delete_fn, CONTEXT_LOCAL_STORAGE, 1);
    get_fn get = SLOT(get_fn, CONTEXT_LOCAL_STORAGE, 2);
    CUcontext a = (CUcontext)0xaaaa, b = (CUcontext)0xbbbb;
    void *k1 = (void *)0x11, *k2 = (void *)0x22, *k3 = (void *)0x33, *v = (void *)0x5e;

    /* A missing key: INVALID_HANDLE, nothing written. */
    EXPECT(get(&v, a, k1) == CUDA_ERROR_INVALID_HANDLE && v == (void *)0x5e);
    EXPECT(get(NULL, a, k1) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(del(a, k1) == CUDA_ERROR_INVALID_HANDLE);

    /* Put once, get; a second put of the key is refused, the value kept;
     * keys are per context. */
    EXPECT(put(a, k1, (void *)0x100, dtor) == CUDA_SUCCESS);
    EXPECT(get(&v, a, k1) == CUDA_SUCCESS && v == (void *)0x100);
    EXPECT(put(a, k1, (void *)0x101, dtor) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(get(&v, a, k1) == CUDA_SUCCESS && v == (void *)0x100);
    EXPECT(get(&v, b, k1) == CUDA_ERROR_INVALID_HANDLE);

    /* NULL is the current context: none current is INVALID_CONTEXT, and
     * cuCtxGetCurrent's failure (before cuInit) is the answer. */
    current = a;
    EXPECT(get(&v, NULL, k1) == CUDA_SUCCESS && v == (void *)0x100);
    EXPECT(put(NULL, k2, (void *)0x200, NULL) == CUDA_SUCCESS);
    EXPECT(get(&v, a, k2) == CUDA_SUCCESS && v == (void *)0x200);
    EXPECT(del(NULL, k2) == CUDA_SUCCESS);
    EXPECT(get(&v, a, k2) == CUDA_ERROR_INVALID_HANDLE);
    current = NULL;
    EXPECT(get(&v, NULL, k1) == CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(put(NULL, k1, v, NULL) == CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(del(NULL, k1) == CUDA_ERROR_INVALID_CONTEXT);
    current_rc = CUDA_ERROR_NOT_INITIALIZED;
    EXPECT(get(&v, NULL, k1) == CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(put(NULL, k1, v, NULL) == CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(del(NULL, k1) == CUDA_ERROR_NOT_INITIALIZED);
    current_rc = CUDA_SUCCESS;

    /* Delete forgets without the destructor, once. */
    EXPECT(put(b, k2, (void *)0x300, dtor) == CUDA_SUCCESS);
    EXPECT(del(b, k2) == CUDA_SUCCESS && ndtor_calls == 0);
    EXPECT(del(b, k2) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(get(&v, b, k2) == CUDA_ERROR_INVALID_HANDLE);

    /* Release: a's destructors, newest first, once each; a's keys gone,
     * b's kept. */
    EXPECT(put(a, k2, (void *)0x201, NULL) == CUDA_SUCCESS);
    EXPECT(put(a, k3, (void *)0x301, dtor) == CUDA_SUCCESS);
    EXPECT(put(b, k1, (void *)0x400, dtor) == CUDA_SUCCESS);
    cuda_fe_ctx_storage_release(a);
    EXPECT(ndtor_calls == 2);
    EXPECT(dtor_calls[0].ctx == a && dtor_calls[0].key == k3 &&
           dtor_calls[0].value == (void *)0x301);
    EXPECT(dtor_calls[1].ctx == a && dtor_calls[1].key == k1 &&
           dtor_calls[1].value == (void *)0x100);
    EXPECT(get(&v, a, k1) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(get(&v, a, k2) == CUDA_ERROR_INVALID_HANDLE);
    EXPECT(get(&v, b, k1) == CUDA_SUCCESS && v == (void *)0x400);
    cuda_fe_ctx_storage_release(a);
    EXPECT(ndtor_calls == 2);

    /* A destructor may use the storage. */
    EXPECT(put(a, k2, (void *)0x202, dtor_reentrant) == CUDA_SUCCESS);
    cuda_fe_ctx_storage_release(a);
    EXPECT(ndtor_calls == 3 && dtor_calls[2].key == k2);
    EXPECT(get(&v, b, k2) == CUDA_SUCCESS && v == (void *)0x202);
    cuda_fe_ctx_storage_release(b);
    EXPECT(ndtor_calls == 4 && dtor_calls[3].ctx == b && dtor_calls[3].key == k1);
    EXPECT(get(&v, b, k2) == CUDA_ERROR_INVALID_HANDLE);

    /* Threads on one context, each its own keys. */
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        EXPECT(pthread_create(&th[i], NULL, storage_thread, (void *)(i + 1)) == 0);
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        failed += r != NULL;
    }
    EXPECT(failed == 0);

    printf("context storage: put/get/delete, current context, %d threads, "
           "destructors on release\n", THREADS);
    return 0;
}

/* ---- The other slots. */

struct wrapper {
    uint32_t magic, version;
    const void *fatbin, *more;
};

/* The text f wrote on stderr while it ran. */
static int stderr_of(void (*f)(void), char *out, size_t size)
{
    FILE *log = tmpfile();
    int saved = dup(STDERR_FILENO);
    if (log == NULL || saved < 0)
        return -1;
    fflush(stderr);
    dup2(fileno(log), STDERR_FILENO);
    f();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(log);
    size_t n = fread(out, 1, size - 1, log);
    out[n] = '\0';
    fclose(log);
    return 0;
}

typedef CUresult (*stub_fn)(void);
static CUresult stub_rc[3];

static void call_stubs(void)
{
    stub_rc[0] = SLOT(stub_fn, CUDART_INTERFACE, 3)();
    stub_rc[1] = SLOT(stub_fn, CUDART_INTERFACE, 3)();
    stub_rc[2] = SLOT(stub_fn, UNNAMED, 1)();
}

static int test_integrity(void)
{
    typedef CUresult (*integrity_fn)(unsigned, unsigned long long, unsigned long long *);
    void *const *t = table(INTEGRITY_CHECK);
    integrity_fn check = (integrity_fn)t[1];
    unsigned long long out[2] = {0, 0};

    /* Over this process, thread, tables and the fake's devices. */
    struct cuda_fe_integrity_dev dev[2];
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 16; k++)
            dev[i].uuid[k] = (uint8_t)((100 + i) * 16 + k);
        dev[i].pci_domain = (100 + i) * 1000 + CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID;
        dev[i].pci_bus = (100 + i) * 1000 + CU_DEVICE_ATTRIBUTE_PCI_BUS_ID;
        dev[i].pci_device = (100 + i) * 1000 + CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID;
    }
    struct cuda_fe_integrity_in in = {
        .driver_version = 13010,
        .version = 13002,
        .pid = (uint32_t)getpid(),
        .thread = (uint32_t)(uintptr_t)pthread_self(),
        .cudart_table = (uintptr_t)table(CUDART_INTERFACE),
        .integrity_table = (uintptr_t)t,
        .integrity_fn = (uintptr_t)t[1],
        .unix_seconds = 1795603243,
        .ndevices = 2,
        .devices = dev,
    };
    uint64_t want[2];
    cuda_fe_integrity(&in, want);
    EXPECT(check(13002, 1795603243, out) == CUDA_SUCCESS);
    EXPECT(out[0] == want[0] && out[1] == want[1]);
    EXPECT(check(13000, 1795603243, out) == CUDA_SUCCESS);
    EXPECT(out[0] == 0x3341181c03cb675cull && out[1] == 0x8ed383aa1f4cd1e8ull);
    EXPECT(check(13002, 1, NULL) == CUDA_ERROR_INVALID_VALUE);

    /* Before cuInit the driver answers NOT_INITIALIZED, out untouched. */
    count_rc = CUDA_ERROR_NOT_INITIALIZED;
    out[0] = out[1] = 7;
    EXPECT(check(13002, 1795603243, out) == CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(out[0] == 7 && out[1] == 7);
    count_rc = CUDA_SUCCESS;
    return 0;
}

struct walk {
    int n;
    CUfunction last;
    const char *name;
};

static void walked(void *cookie, CUfunction f, const char *name)
{
    struct walk *w = cookie;
    w->n++;
    w->last = f;
    w->name = name;
}

static int test_slots(void)
{
    struct walk walk = {0, NULL, NULL};
    /* CUDART_INTERFACE: modules and primary contexts. */
    typedef CUresult (*load_fn)(CUmodule *, const struct wrapper *);
    typedef CUresult (*load_ext_fn)(CUmodule *, const struct wrapper *, void *, void *,
                                    unsigned);
    typedef CUresult (*fatbin_ext_fn)(const void *, CUmodule *, void *, void *, unsigned);
    typedef CUresult (*primary_fn)(CUcontext *, CUdevice);
    typedef CUresult (*size_fn)(size_t);
    static const char fatbin[16] = "\x50\xed\x55\xba";
    struct wrapper w = {0x466243b1, 1, fatbin, NULL}, bad = {0x12345678, 1, fatbin, NULL};
    CUmodule mod = NULL;
    CUcontext ctx = NULL;
    EXPECT(SLOT(load_fn, CUDART_INTERFACE, 1)(&mod, &w) == CUDA_SUCCESS);
    EXPECT(loaded_fatbin == &w && mod == (CUmodule)0x4d4f44);
    EXPECT(SLOT(load_fn, CUDART_INTERFACE, 1)(&mod, &bad) == CUDA_ERROR_INVALID_IMAGE);
    EXPECT(SLOT(load_fn, CUDART_INTERFACE, 1)(NULL, &w) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(SLOT(primary_fn, CUDART_INTERFACE, 2)(&ctx, 3) == CUDA_SUCCESS);
    EXPECT(retained_dev == 3 && ctx == (CUcontext)0xc7c7);
    loaded_fatbin = NULL;
    EXPECT(SLOT(load_ext_fn, CUDART_INTERFACE, 6)(&mod, &w, NULL, NULL, 0) == CUDA_SUCCESS);
    EXPECT(loaded_fatbin == &w);
    EXPECT(SLOT(load_ext_fn, CUDART_INTERFACE, 6)(&mod, &w, &w, NULL, 0) ==
           CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(SLOT(load_ext_fn, CUDART_INTERFACE, 6)(&mod, &w, NULL, NULL, 1) ==
           CUDA_ERROR_NOT_SUPPORTED);
    loaded_fatbin = NULL;
    EXPECT(SLOT(fatbin_ext_fn, CUDART_INTERFACE, 8)(fatbin, &mod, NULL, NULL, 0) ==
           CUDA_SUCCESS);
    EXPECT(loaded_fatbin == fatbin);
    EXPECT(SLOT(fatbin_ext_fn, CUDART_INTERFACE, 8)(fatbin, &mod, NULL, &w, 0) ==
           CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(SLOT(size_fn, CUDART_INTERFACE, 7)(4096) == CUDA_SUCCESS);
    EXPECT(SLOT(stub_fn, CUDART_INTERFACE, 12)() == CUDA_SUCCESS);
    EXPECT(table(CUDART_INTERFACE)[10] == NULL);

    /* TOOLS_TLS and TOOLS_RUNTIME_CALLBACK_HOOKS. */
    typedef CUresult (*buffer_fn)(void **, size_t *);
    EXPECT(SLOT(stub_fn, TOOLS_TLS, 1)() == CUDA_SUCCESS);
    EXPECT(SLOT(stub_fn, TOOLS_TLS, 2)() == CUDA_SUCCESS);
    static const int hooks_zero[] = {1, 3, 4, 5};
    for (int i = 0; i < 4; i++)
        EXPECT(SLOT(stub_fn, CALLBACK_HOOKS, hooks_zero[i])() == CUDA_SUCCESS);
    void *buf = NULL;
    size_t n = 0;
    EXPECT(SLOT(buffer_fn, CALLBACK_HOOKS, 2)(&buf, &n) == CUDA_SUCCESS);
    EXPECT(buf != NULL && n == 1024 && ((uint64_t *)buf)[1023] == 0);
    EXPECT(SLOT(buffer_fn, CALLBACK_HOOKS, 6)(&buf, &n) == CUDA_SUCCESS);
    EXPECT(buf != NULL && n == 14 && ((uint64_t *)buf)[13] == 0);

    /* CONTEXT_CHECKS. */
    typedef CUresult (*check_fn)(CUcontext, uint32_t *, void **);
    uint32_t r1 = 7;
    void *r2 = &r1;
    EXPECT(SLOT(check_fn, CONTEXT_CHECKS, 2)(NULL, &r1, &r2) == CUDA_SUCCESS);
    EXPECT(r1 == 0 && r2 == &r1);
    EXPECT(SLOT(stub_fn, CONTEXT_CHECKS, 3)() == CUDA_SUCCESS);

    /* 21318C60, for cuBLAS and cuFFT. */
    typedef CUresult (*flag_fn)(uint64_t, uint64_t *);
    typedef CUresult (*zero_fn)(uint64_t, uint64_t, uint64_t *);
    typedef CUresult (*object_fn)(uint64_t, uint64_t, void **);
    uint64_t flag = 7;
    EXPECT(SLOT(flag_fn, CUBLAS_CUFFT, 4)(5, &flag) == CUDA_SUCCESS && flag == 1);
    EXPECT(SLOT(flag_fn, CUBLAS_CUFFT, 4)(0, &flag) == CUDA_SUCCESS && flag == 0);
    flag = 7;
    EXPECT(SLOT(zero_fn, CUBLAS_CUFFT, 39)(1, 2, &flag) == CUDA_SUCCESS && flag == 0);
    void *obj = NULL;
    EXPECT(SLOT(object_fn, CUBLAS_CUFFT, 51)(0, 1, &obj) == CUDA_SUCCESS);
    EXPECT(obj != NULL && ((uint64_t *)obj)[63] == 0);
    EXPECT(SLOT(object_fn, CUBLAS_CUFFT, 51)(0, UINT64_MAX, &obj) ==
           CUDA_ERROR_INVALID_HANDLE);

    /* 6E163FBE [7]: the module's functions, counted. */
    typedef CUresult (*walk_fn)(CUcontext, CUmodule, cuda_fe_function_fn, void *);
    EXPECT(SLOT(walk_fn, TOOLS_MODULE, 7)(NULL, (CUmodule)0x4d4f44, walked, &walk) == 2);
    EXPECT(walk.n == 2 && walk.last == (CUfunction)0xf2 && strcmp(walk.name, "second") == 0);
    EXPECT(SLOT(walk_fn, TOOLS_MODULE, 7)(NULL, (CUmodule)0x1, walked, &walk) == 0);
    EXPECT(walk.n == 2);

    /* DEVICE_EXTENDED_RT. */
    typedef CUresult (*attr_fn)(CUdevice, unsigned, int, size_t *);
    typedef CUresult (*byte_fn)(unsigned char *, CUdevice);
    size_t pair[2] = {1, 1};
    unsigned char byte = 7;
    EXPECT(SLOT(attr_fn, DEVICE_EXTENDED_RT, 5)(4, 16, 0, pair) == CUDA_SUCCESS);
    EXPECT(pair[0] == 1 && pair[1] == 4016);
    EXPECT(SLOT(attr_fn, DEVICE_EXTENDED_RT, 5)(4, 16, 1, pair) == CUDA_SUCCESS);
    EXPECT(pair[0] == 1 && pair[1] == 0);
    EXPECT(SLOT(byte_fn, DEVICE_EXTENDED_RT, 13)(&byte, 4) == CUDA_SUCCESS && byte == 0);

    if (test_integrity() != 0)
        return 1;

    /* A stub: NOT_SUPPORTED, and one line the first time. */
    char text[512];
    EXPECT(stderr_of(call_stubs, text, sizeof text) == 0);
    EXPECT(stub_rc[0] == CUDA_ERROR_NOT_SUPPORTED && stub_rc[1] == CUDA_ERROR_NOT_SUPPORTED &&
           stub_rc[2] == CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(strcmp(text, "gvs: export table CUDART_INTERFACE slot 3 is not supported yet\n"
                        "gvs: export table 69CBE916-5742-034A-84CC-93F7B151C5C9 slot 1 "
                        "is not supported yet\n") == 0);

    printf("export slots: CUDART_INTERFACE, TOOLS_TLS, TOOLS_RUNTIME_CALLBACK_HOOKS, "
           "CONTEXT_CHECKS, 21318C60, 6E163FBE, DEVICE_EXTENDED_RT, INTEGRITY_CHECK, stubs\n");
    return 0;
}

/* A fatbinary of one entry of kind (2: a cubin, 1: PTX) for arch. */
struct fatbin1 {
    uint8_t b[16 + 64 + 8];
};

static void fatbin1(struct fatbin1 *f, uint16_t kind, uint32_t arch)
{
    const uint32_t magic = 0xba55ed50u, ehdr = 64;
    const uint16_t version = 1, hdr = 16;
    const uint64_t fat = 64 + 8, size = 8;
    memset(f, 0, sizeof(*f));
    memcpy(f->b, &magic, 4);
    memcpy(f->b + 4, &version, 2);
    memcpy(f->b + 6, &hdr, 2);
    memcpy(f->b + 8, &fat, 8);
    memcpy(f->b + 16, &kind, 2);
    memcpy(f->b + 20, &ehdr, 4);
    memcpy(f->b + 24, &size, 8);
    memcpy(f->b + 16 + 0x1c, &arch, 4);
}

/* An -rdc program's units (rdc.c): linked again from a version 2
 * wrapper alone, when its linked image has no cubin the GPU runs (same
 * major version, no newer minor); each linked whole, the link
 * destroyed when a step fails. */
static unsigned cc_75(void)
{
    return 75;
}

static unsigned cc_78(void)
{
    return 78;
}

static unsigned cc_86(void)
{
    return 86;
}

static unsigned cc_90(void)
{
    return 90;
}

static int test_rdc(void)
{
    struct fatbin1 sm75, ptx90, unit_a, unit_b;
    fatbin1(&sm75, 2, 75);
    fatbin1(&ptx90, 1, 90);
    fatbin1(&unit_a, 1, 75);
    fatbin1(&unit_b, 1, 75);
    const void *units[] = {&unit_a, &unit_b, NULL};
    struct wrapper rdc = {0x466243b1, 2, &sm75, units};
    struct wrapper rdc_ptx = {0x466243b1, 2, &ptx90, units};
    struct wrapper one = {0x466243b1, 1, &sm75, NULL};
    CUlinkState link;
    void *cubin = NULL;
    size_t size = 0;
    EXPECT(cuda_fe_rdc_relink(&rdc, cc_90) == units);
    EXPECT(cuda_fe_rdc_relink(&rdc_ptx, cc_90) == units);
    EXPECT(cuda_fe_rdc_relink(&rdc, cc_75) == NULL);
    EXPECT(cuda_fe_rdc_relink(&rdc, cc_78) == NULL);
    EXPECT(cuda_fe_rdc_relink(&rdc, cc_86) == units);
    EXPECT(cuda_fe_rdc_relink(&one, cc_90) == NULL);
    EXPECT(cuda_fe_rdc_relink(&sm75, cc_90) == NULL);
    EXPECT(cuda_fe_rdc_link(units, &link, &cubin, &size) == CUDA_SUCCESS);
    EXPECT(cubin == linked_cubin && size == sizeof(linked_cubin));
    EXPECT(link_seen.created == 1 && link_seen.completed == 1 &&
           link_seen.destroyed == 0 && link_seen.nadded == 2);
    EXPECT(link_seen.added[0] == unit_a.b && link_seen.added[1] == unit_b.b &&
           link_seen.added_len[0] == sizeof(unit_a.b));
    link_seen.add_rc = CUDA_ERROR_INVALID_PTX;
    link_seen.nadded = 0;
    EXPECT(cuda_fe_rdc_link(units, &link, &cubin, &size) ==
           CUDA_ERROR_INVALID_PTX);
    EXPECT(link_seen.nadded == 1 && link_seen.completed == 1 &&
           link_seen.destroyed == 1);
    puts("ok");
    return 0;
}

/* ---- DA9151D3, the compute cache (compute_cache.h). */

typedef CUresult (*cc_open_fn)(void **, unsigned int, const void *, size_t,
                               const char *, const char *);
typedef CUresult (*cc_close_fn)(void *);
typedef CUresult (*cc_lookup_fn)(void *, unsigned int, void **, unsigned int *);
typedef CUresult (*cc_store_fn)(void *, unsigned int, const void *, size_t);
typedef CUresult (*cc_free_fn)(void *);

#define CC_OPEN SLOT(cc_open_fn, COMPUTE_CACHE, 1)
#define CC_CLOSE SLOT(cc_close_fn, COMPUTE_CACHE, 2)
#define CC_LOOKUP SLOT(cc_lookup_fn, COMPUTE_CACHE, 3)
#define CC_STORE SLOT(cc_store_fn, COMPUTE_CACHE, 4)
#define CC_FREE SLOT(cc_free_fn, COMPUTE_CACHE, 6)

struct cc_key {
    unsigned int kind;
    const char *input, *options, *build;
};

static const struct cc_key cc_k1 = {1, "BC\xc0\xde input one", "-arch=sm_90a -ftz=1", "HOST64"};

/* What the cache holds under k: 1 and its bytes in out, 0 for a miss
 * (which must leave the outputs empty), -1 on anything else. */
static int cc_get(const struct cc_key *k, char *out, size_t cap)
{
    void *h = NULL, *data = (void *)1;
    unsigned int size = 7;
    if (CC_OPEN(&h, k->kind, k->input, strlen(k->input), k->options, k->build) !=
        CUDA_SUCCESS)
        return -1;
    CUresult r = CC_LOOKUP(h, 0, &data, &size);
    int got = -1;
    if (r == CUDA_ERROR_NOT_FOUND && data == NULL && size == 0)
        got = 0;
    if (r == CUDA_SUCCESS && size < cap) {
        memcpy(out, data, size);
        out[size] = '\0';
        got = CC_FREE(data) == CUDA_SUCCESS ? 1 : -1;
    }
    return CC_CLOSE(h) == CUDA_SUCCESS ? got : -1;
}

static int cc_put(const struct cc_key *k, const char *bytes)
{
    void *h = NULL;
    if (CC_OPEN(&h, k->kind, k->input, strlen(k->input), k->options, k->build) !=
        CUDA_SUCCESS)
        return -1;
    CUresult r = CC_STORE(h, 0, bytes, strlen(bytes));
    return CC_CLOSE(h) == CUDA_SUCCESS && r == CUDA_SUCCESS ? 0 : -1;
}

/* The path of the cache's one entry file in dir, or "" when not one. */
static void cc_entry(const char *dir, char *path, size_t len)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    path[0] = '\0';
    while (d != NULL && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "gvs-", 4) == 0 && n++ == 0 &&
            snprintf(path, len, "%s/%s", dir, e->d_name) >= (int)len)
            n++;
    if (d != NULL)
        closedir(d);
    if (n != 1)
        path[0] = '\0';
}

static int cc_files(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

static void cc_set_time(const char *dir, const struct cc_key *k, time_t t)
{
    char path[PATH_MAX];
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    DIR *d = opendir(dir);
    struct dirent *e;
    /* The entry is the one whose file holds k's options. */
    while (d != NULL && (e = readdir(d)) != NULL) {
        char buf[4096] = {0};
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
            continue;
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        if (memmem(buf, n, k->input, strlen(k->input)) != NULL)
            utimensat(AT_FDCWD, path, ts, 0);
    }
    if (d != NULL)
        closedir(d);
}

static int test_cache(void)
{
    char root[] = "/tmp/gvs-cc-XXXXXX", dir[PATH_MAX], path[PATH_MAX], got[256];
    EXPECT(mkdtemp(root) != NULL);
    snprintf(dir, sizeof(dir), "%s/a/b", root);
    unsetenv("CUDA_CACHE_DISABLE");
    unsetenv("CUDA_CACHE_MAXSIZE");
    setenv("CUDA_CACHE_PATH", dir, 1);

    /* A miss, the caller's compilation kept, then found by a later open
     * (another process's as well: nothing is kept in memory). */
    EXPECT(cc_get(&cc_k1, got, sizeof(got)) == 0);
    EXPECT(cc_put(&cc_k1, "cubin one") == 0);
    EXPECT(cc_get(&cc_k1, got, sizeof(got)) == 1);
    EXPECT(strcmp(got, "cubin one") == 0);
    struct stat st;
    EXPECT(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);

    /* Every part of the key counts. */
    struct cc_key k = cc_k1;
    k.kind = 2;
    EXPECT(cc_get(&k, got, sizeof(got)) == 0);
    k = cc_k1;
    k.input = "BC\xc0\xde input two";
    EXPECT(cc_get(&k, got, sizeof(got)) == 0);
    k = cc_k1;
    k.options = "-arch=sm_90a -ftz=0";
    EXPECT(cc_get(&k, got, sizeof(got)) == 0);
    k = cc_k1;
    k.build = "HOST32";
    EXPECT(cc_get(&k, got, sizeof(got)) == 0);

    /* A damaged entry is a miss, never other bytes: a flipped byte of
     * the key, a truncation, a trailing byte. */
    cc_entry(dir, path, sizeof(path));
    EXPECT(path[0] != '\0');
    FILE *f = fopen(path, "r+b");
    EXPECT(f != NULL);
    EXPECT(fseek(f, 20, SEEK_SET) == 0 && fputc('X', f) != EOF && fclose(f) == 0);
    EXPECT(cc_get(&cc_k1, got, sizeof(got)) == 0);
    EXPECT(cc_put(&cc_k1, "cubin one") == 0);
    EXPECT(stat(path, &st) == 0 && truncate(path, st.st_size - 1) == 0);
    EXPECT(cc_get(&cc_k1, got, sizeof(got)) == 0);
    EXPECT(cc_put(&cc_k1, "cubin one") == 0);
    f = fopen(path, "ab");
    EXPECT(f != NULL && fputc(0, f) != EOF && fclose(f) == 0);
    EXPECT(cc_get(&cc_k1, got, sizeof(got)) == 0);
    EXPECT(cc_put(&cc_k1, "cubin one") == 0);
    EXPECT(cc_files(dir) == 1);

    /* Arguments no caller gives. */
    void *h = (void *)1, *data;
    unsigned int size;
    char foreign[64] = {0};
    EXPECT(CC_OPEN(NULL, 1, "x", 1, "", "") == CUDA_ERROR_INVALID_VALUE);
    EXPECT(CC_OPEN(&h, 1, NULL, 1, "", "") == CUDA_ERROR_INVALID_VALUE && h == NULL);
    EXPECT(CC_OPEN(&h, 1, "x", 1, NULL, NULL) == CUDA_SUCCESS);
    EXPECT(CC_LOOKUP(h, 0, NULL, &size) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(CC_LOOKUP(h, 0, &data, NULL) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(CC_STORE(h, 0, NULL, 4) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(CC_CLOSE(h) == CUDA_SUCCESS);
    EXPECT(CC_CLOSE(NULL) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(CC_FREE(NULL) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(CC_FREE(foreign + 32) == CUDA_ERROR_INVALID_VALUE);

    /* Bounded by CUDA_CACHE_MAXSIZE: an entry larger is not kept; the
     * least recently used go to make room, a hit counting as a use. */
    setenv("CUDA_CACHE_MAXSIZE", "200", 1);
    k = cc_k1;
    k.options = "big";
    char big[256];
    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    EXPECT(cc_put(&k, big) == 0);
    EXPECT(cc_get(&k, got, sizeof(got)) == 0);
    struct cc_key a = cc_k1, b = cc_k1, c = cc_k1;
    a.input = "input a";
    b.input = "input b";
    c.input = "input c";
    setenv("CUDA_CACHE_MAXSIZE", "260", 1);
    EXPECT(cc_put(&a, "cubin a") == 0);
    EXPECT(cc_put(&b, "cubin b") == 0);
    EXPECT(cc_files(dir) <= 3);
    cc_set_time(dir, &a, 1000);
    cc_set_time(dir, &b, 2000);
    EXPECT(cc_get(&a, got, sizeof(got)) == 1);
    EXPECT(cc_put(&c, "cubin c") == 0);
    EXPECT(cc_get(&b, got, sizeof(got)) == 0);
    EXPECT(cc_get(&a, got, sizeof(got)) == 1 && strcmp(got, "cubin a") == 0);
    EXPECT(cc_get(&c, got, sizeof(got)) == 1 && strcmp(got, "cubin c") == 0);
    unsetenv("CUDA_CACHE_MAXSIZE");

    /* Off, or nowhere to keep it: the caller compiles. */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    h = (void *)1;
    EXPECT(CC_OPEN(&h, 1, "x", 1, "", "") == CUDA_ERROR_NOT_SUPPORTED && h == NULL);
    unsetenv("CUDA_CACHE_DISABLE");
    unsetenv("CUDA_CACHE_PATH");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    EXPECT(CC_OPEN(&h, 1, "x", 1, "", "") == CUDA_ERROR_NOT_SUPPORTED);
    setenv("XDG_CACHE_HOME", root, 1);
    EXPECT(cc_put(&cc_k1, "cubin one") == 0);
    snprintf(dir, sizeof(dir), "%s/gvs/ComputeCache", root);
    EXPECT(cc_files(dir) == 1);

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    EXPECT(system(cmd) == 0);
    puts("ok");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "storage") == 0)
        return test_storage();
    if (argc == 2 && strcmp(argv[1], "slots") == 0)
        return test_slots();
    if (argc == 2 && strcmp(argv[1], "rdc") == 0)
        return test_rdc();
    if (argc == 2 && strcmp(argv[1], "cache") == 0)
        return test_cache();
    fprintf(stderr, "usage: %s storage|slots|rdc|cache\n", argv[0]);
    return 2;
}
