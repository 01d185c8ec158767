/*
 * cuGetExportTable: the driver's private tables (exports.h), answered in
 * the client.  export_tables.inc, generated from what NVIDIA's driver 580
 * answered the probe, gives every table that driver knows at its size,
 * with a stub where the driver's slot is not NULL; the slots below
 * replace stubs where shared/driver-api-facts.md says what the runtime
 * and NVIDIA's libraries need of them, answering as driver 580 does where
 * it was asked (docs/driver.md, "Export tables").  A slot that needs the
 * rest of the driver calls the frontend's own export (bound inside the
 * library), so it answers as that export does.
 */
#include "exports.h"

#include "compute_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A slot: the table's size in bytes, or a function the caller calls
 * through a pointer of the type it knows. */
typedef void (*export_fn)(void);
union export_slot {
    size_t size;
    export_fn fn;
};

struct export_table {
    unsigned char uuid[16];
    const union export_slot *slots;
};

/* Says once per slot that it is missing; fails as an unsupported call. */
static CUresult not_supported(const char *table, int slot, atomic_flag *logged)
{
    if (!atomic_flag_test_and_set(logged))
        fprintf(stderr, "gvs: export table %s slot %d is not supported yet\n",
                table, slot);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* Slots that answer success and nothing else: TOOLS_TLS's, most of
 * TOOLS_RUNTIME_CALLBACK_HOOKS', CONTEXT_CHECKS [3], and CUDART_INTERFACE
 * [7] (given a size) and [12] ("load the compilers"). */
static CUresult succeed(void)
{
    return CUDA_SUCCESS;
}

/* ---- CUDART_INTERFACE: modules and primary contexts for the runtime. */

/* [1] (CUmodule *, wrapper *): the wrapped fatbinary's module (an -rdc
 * program's units linked again where need be: rdc.c). */
static CUresult load_wrapper(CUmodule *module, const struct cuda_fe_fatbinc *w)
{
    if (module == NULL || w == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (w->magic != CUDA_FE_FATBINC_MAGIC)
        return CUDA_ERROR_INVALID_IMAGE;
    return cuModuleLoadFatBinary(module, w);
}

/* [2] (CUcontext *, CUdevice): the device's primary context, retained
 * as driver 580 retains it (the caller releases it). */
static CUresult primary_context(CUcontext *ctx, CUdevice dev)
{
    if (ctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuDevicePrimaryCtxRetain(ctx, dev);
}

/* [6]: [1] with three more arguments, refused unless all are 0. */
static CUresult load_wrapper_ext(CUmodule *module, const struct cuda_fe_fatbinc *w,
                                 void *arg3, void *arg4, unsigned int arg5)
{
    if (arg3 != NULL || arg4 != NULL || arg5 != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    return load_wrapper(module, w);
}

/* [8]: the same from the fatbinary itself, which comes first. */
static CUresult load_fatbin_ext(const void *fatbin, CUmodule *module,
                                void *arg3, void *arg4, unsigned int arg5)
{
    if (arg3 != NULL || arg4 != NULL || arg5 != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (module == NULL || fatbin == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return cuModuleLoadFatBinary(module, fatbin);
}

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS: [2] and [6] lend the runtime a
 * zeroed buffer and its size, where it keeps hooks for tools that nothing
 * here calls.  The sizes are driver 580's; their unit is not known
 * (Lupine counts bytes, ZLUDA u32s), so each buffer holds that many u64s.
 * The driver's return nothing; success is as good. */

static uint64_t hooks_buffer2[1024], hooks_buffer6[14];

static CUresult hooks_2(void **buffer, size_t *size)
{
    if (buffer == NULL || size == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *buffer = hooks_buffer2;
    *size = sizeof hooks_buffer2 / sizeof hooks_buffer2[0];
    return CUDA_SUCCESS;
}

static CUresult hooks_6(void **buffer, size_t *size)
{
    if (buffer == NULL || size == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *buffer = hooks_buffer6;
    *size = sizeof hooks_buffer6 / sizeof hooks_buffer6[0];
    return CUDA_SUCCESS;
}

/* ---- CONTEXT_LOCAL_STORAGE: the runtime's state per context, by key,
 * asked for on every runtime call.  It answers as driver 580 does
 * (docs/driver.md, "Export tables"): a key is put once, deleted once,
 * and its destructor runs when the context goes
 * (cuda_fe_ctx_storage_release), not on delete.  A context has few keys
 * (the runtime uses one), so a list does. */

typedef void (*storage_dtor)(CUcontext ctx, void *key, void *value);

struct storage_entry {
    CUcontext ctx;
    void *key, *value;
    storage_dtor dtor;
    struct storage_entry *next;
};

static pthread_mutex_t storage_lock = PTHREAD_MUTEX_INITIALIZER;
static struct storage_entry *storage; /* newest first */

/* NULL means the calling thread's current context: none is
 * CUDA_ERROR_INVALID_CONTEXT, and before cuInit cuCtxGetCurrent's
 * CUDA_ERROR_NOT_INITIALIZED is the answer, as the driver's. */
static CUresult storage_context(CUcontext *ctx)
{
    if (*ctx != NULL)
        return CUDA_SUCCESS;
    CUresult rc = cuCtxGetCurrent(ctx);
    if (rc == CUDA_SUCCESS && *ctx == NULL)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    return rc;
}

/* The link that points at ctx's key, or at the NULL ending the list.
 * Called with storage_lock held. */
static struct storage_entry **storage_find(CUcontext ctx, void *key)
{
    struct storage_entry **e = &storage;
    while (*e != NULL && ((*e)->ctx != ctx || (*e)->key != key))
        e = &(*e)->next;
    return e;
}

/* [0] put(ctx, key, value, dtor): CUDA_ERROR_INVALID_HANDLE, the value
 * kept, for a key already there. */
static CUresult storage_put(CUcontext ctx, void *key, void *value, storage_dtor dtor)
{
    CUresult rc = storage_context(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct storage_entry *e = malloc(sizeof *e);
    if (e == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (struct storage_entry){ctx, key, value, dtor, NULL};
    pthread_mutex_lock(&storage_lock);
    int fresh = *storage_find(ctx, key) == NULL;
    if (fresh) {
        e->next = storage;
        storage = e;
    }
    pthread_mutex_unlock(&storage_lock);
    if (!fresh)
        free(e);
    return fresh ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* [1] delete(ctx, key): forgets the key without running its destructor;
 * CUDA_ERROR_INVALID_HANDLE for a missing key. */
static CUresult storage_delete(CUcontext ctx, void *key)
{
    CUresult rc = storage_context(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&storage_lock);
    struct storage_entry **link = storage_find(ctx, key), *e = *link;
    if (e != NULL)
        *link = e->next;
    pthread_mutex_unlock(&storage_lock);
    if (e == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    free(e);
    return CUDA_SUCCESS;
}

/* [2] get(&value, ctx, key): CUDA_ERROR_INVALID_HANDLE for a missing key,
 * after which the runtime puts one. */
static CUresult storage_get(void **value, CUcontext ctx, void *key)
{
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = storage_context(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&storage_lock);
    const struct storage_entry *e = *storage_find(ctx, key);
    if (e != NULL)
        *value = e->value;
    pthread_mutex_unlock(&storage_lock);
    return e != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

void cuda_fe_ctx_storage_release(CUcontext ctx)
{
    struct storage_entry *gone = NULL, **tail = &gone;
    pthread_mutex_lock(&storage_lock);
    for (struct storage_entry **link = &storage; *link != NULL;) {
        struct storage_entry *e = *link;
        if (e->ctx == ctx) {
            *link = e->next;
            e->next = NULL;
            *tail = e;
            tail = &e->next;
        } else {
            link = &e->next;
        }
    }
    pthread_mutex_unlock(&storage_lock);
    /* Unlocked: a destructor may use the storage. */
    while (gone != NULL) {
        struct storage_entry *e = gone;
        gone = e->next;
        if (e->dtor != NULL)
            e->dtor(ctx, e->key, e->value);
        free(e);
    }
}

/* ---- CONTEXT_CHECKS [2] check(ctx, u32 *r1, void **r2): 0 in *r1, r2
 * untouched, as driver 580 answers; cublasCreate needs it so (Lupine). */
static CUresult context_check(CUcontext ctx, uint32_t *r1, void **r2)
{
    (void)ctx;
    (void)r2;
    if (r1 == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *r1 = 0;
    return CUDA_SUCCESS;
}

/* ---- 21318C60 (CUBLAS_CUFFT), which cuBLAS and cuFFT ask for: what
 * Lupine answers them with (driver 580's [4], called so, crashed: not
 * checked). */

/* [4] (a0, u64 *flag): whether a0 is set. */
static CUresult tools_context_4(uint64_t a0, uint64_t *flag)
{
    if (flag == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *flag = a0 != 0;
    return CUDA_SUCCESS;
}

/* [39] (a0, a1, u64 *out): 0. */
static CUresult tools_context_39(uint64_t a0, uint64_t a1, uint64_t *out)
{
    (void)a0;
    (void)a1;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *out = 0;
    return CUDA_SUCCESS;
}

/* [51] (a0, handle, void **out): an object of zeros, 512 bytes; no
 * object for the handle ~0. */
static CUresult tools_context_51(uint64_t a0, uint64_t handle, void **out)
{
    static uint64_t object[64];
    (void)a0;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (handle == UINT64_MAX)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = object;
    return CUDA_SUCCESS;
}

/* ---- DEVICE_EXTENDED_RT. */

/* [5] (dev, attribute, which, size_t out[2]): driver 580 answers {1, the
 * attribute} where which is 0 and {1, 0} where it is 1 (seen on an H100;
 * not the facts' {value, 0}). */
static CUresult device_attribute(CUdevice dev, unsigned int attribute, int which,
                                 size_t out[2])
{
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int value = 0;
    CUresult rc = which == 0
                      ? cuDeviceGetAttribute(&value, (CUdevice_attribute)attribute, dev)
                      : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        out[0] = 1;
        out[1] = (size_t)value;
    }
    return rc;
}

/* [13] (uchar *out, dev): 0. */
static CUresult device_flag(unsigned char *out, CUdevice dev)
{
    (void)dev;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *out = 0;
    return CUDA_SUCCESS;
}

/* ---- 6E163FBE (the tools' module table, unnamed in the facts).
 * [7] (ctx, module, fn, cookie): fn(cookie, function, name) for each
 * function of the module, whatever ctx; returns their number, as driver
 * 580 does (probe: 3 for a module of 3 kernels, 0 for a library). */
static CUresult tools_module_7(CUcontext ctx, CUmodule mod,
                               cuda_fe_function_fn fn, void *cookie)
{
    (void)ctx;
    if (fn == NULL)
        return CUDA_SUCCESS;
    return (CUresult)cuda_fe_module_each(mod, fn, cookie);
}

/* ---- INTEGRITY_CHECK [1], below the tables, whose addresses it hashes. */
static CUresult integrity_check(unsigned int version, unsigned long long unix_seconds,
                                unsigned long long out[2]);

/* ---- The tables. */

#define EXPORT_STUB(t, i)                                                    \
    static CUresult stub_##t##_##i(void)                                     \
    {                                                                        \
        static atomic_flag logged = ATOMIC_FLAG_INIT;                        \
        return not_supported(NAME_##t, i, &logged);                          \
    }
#define EXPORT_SIZE(bytes) {.size = (bytes)}
#define EXPORT_SLOT(t, i) {.fn = (export_fn)stub_##t##_##i}
#define EXPORT_NULL {.fn = NULL}
#define EXPORT_TABLE(t, ...) {{__VA_ARGS__}, table_##t}
#define FN(f) {.fn = (export_fn)(f)}

/* The implemented slots, as initializers that override the stubs. */
#define EXPORT_IMPL_CUDART_INTERFACE                                         \
    [1] = FN(load_wrapper), [2] = FN(primary_context),                       \
    [6] = FN(load_wrapper_ext), [7] = FN(succeed),                           \
    [8] = FN(load_fatbin_ext), [12] = FN(succeed),
#define EXPORT_IMPL_TOOLS_TLS [1] = FN(succeed), [2] = FN(succeed),
#define EXPORT_IMPL_TOOLS_RUNTIME_CALLBACK_HOOKS                             \
    [1] = FN(succeed), [2] = FN(hooks_2), [3] = FN(succeed),                 \
    [4] = FN(succeed), [5] = FN(succeed), [6] = FN(hooks_6),
#define EXPORT_IMPL_CONTEXT_LOCAL_STORAGE_V0301                              \
    [0] = FN(storage_put), [1] = FN(storage_delete), [2] = FN(storage_get),
#define EXPORT_IMPL_CONTEXT_CHECKS [2] = FN(context_check), [3] = FN(succeed),
#define EXPORT_IMPL_INTEGRITY_CHECK [1] = FN(integrity_check),
#define EXPORT_IMPL_CUBLAS_CUFFT                                             \
    [4] = FN(tools_context_4), [39] = FN(tools_context_39),                  \
    [51] = FN(tools_context_51),
#define EXPORT_IMPL_T_6E163FBE_B958_444D_835C_E182AFF1991E [7] = FN(tools_module_7),
#define EXPORT_IMPL_DEVICE_EXTENDED_RT                                       \
    [5] = FN(device_attribute), [13] = FN(device_flag),
/* DA9151D3: the compute cache (compute_cache.h). */
#define EXPORT_IMPL_T_DA9151D3_3AE6_CC41_A5C0_4F26D533E328                    \
    [1] = FN(cuda_fe_cc_open), [2] = FN(cuda_fe_cc_close),                   \
    [3] = FN(cuda_fe_cc_lookup), [4] = FN(cuda_fe_cc_store),                 \
    [6] = FN(cuda_fe_cc_free),

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#include "export_tables.inc"
#pragma GCC diagnostic pop

CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    /* The driver's answer to anything else: INVALID_VALUE, NULL. */
    if (ppExportTable == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *ppExportTable = NULL;
    if (pExportTableId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof export_tables / sizeof export_tables[0]; i++)
        if (memcmp(export_tables[i].uuid, pExportTableId->bytes, 16) == 0) {
            *ppExportTable = export_tables[i].slots;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

/* One device's part of the integrity check. */
static CUresult device_hash_input(int ordinal, struct cuda_fe_integrity_dev *d)
{
    CUdevice dev;
    CUuuid uuid;
    CUresult rc = cuDeviceGet(&dev, ordinal);
    if (rc == CUDA_SUCCESS)
        rc = cuDeviceGetUuid_v2(&uuid, dev);
    if (rc == CUDA_SUCCESS)
        rc = cuDeviceGetAttribute(&d->pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
    if (rc == CUDA_SUCCESS)
        rc = cuDeviceGetAttribute(&d->pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
    if (rc == CUDA_SUCCESS)
        rc = cuDeviceGetAttribute(&d->pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
    if (rc == CUDA_SUCCESS)
        memcpy(d->uuid, uuid.bytes, sizeof d->uuid);
    return rc;
}

/* [1] (version, unix_seconds, u64 out[2]): the digest of this process,
 * this thread, these tables and the devices.  Before cuInit the device
 * count fails, and so does the check, as the driver's (NOT_INITIALIZED). */
static CUresult integrity_check(unsigned int version, unsigned long long unix_seconds,
                                unsigned long long out[2])
{
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int count, driver_version;
    CUresult rc = cuDeviceGetCount(&count);
    if (rc == CUDA_SUCCESS)
        rc = cuDriverGetVersion(&driver_version);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct cuda_fe_integrity_dev *devices = calloc(count > 0 ? (size_t)count : 1,
                                                   sizeof *devices);
    if (devices == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < count && rc == CUDA_SUCCESS; i++)
        rc = device_hash_input(i, &devices[i]);
    if (rc == CUDA_SUCCESS) {
        const struct cuda_fe_integrity_in in = {
            .driver_version = (uint32_t)driver_version,
            .version = version,
            .pid = (uint32_t)getpid(),
            .thread = (uint32_t)(uintptr_t)pthread_self(),
            .cudart_table = (uintptr_t)table_CUDART_INTERFACE,
            .integrity_table = (uintptr_t)table_INTEGRITY_CHECK,
            .integrity_fn = (uintptr_t)table_INTEGRITY_CHECK[1].fn,
            .unix_seconds = unix_seconds,
            .ndevices = count,
            .devices = devices,
        };
        uint64_t digest[2];
        cuda_fe_integrity(&in, digest);
        out[0] = digest[0];
        out[1] = digest[1];
    }
    free(devices);
    return rc;
}
