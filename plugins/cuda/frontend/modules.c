/* Libraries and modules (cuda.api, docs/driver.md "Modules"): an image
 * is loaded in one round trip whose reply lists every kernel with its
 * parameter layout, so that kernels are found by name and launches are
 * packed here.  Handles are the backend's ids. */
#include "call.h"
#include "exports.h"
#include "jit.h"
#include "kernels.h"

#include <pthread.h>
#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/u64map.h"
#include "gvs_remote.h"

#define KIND_LIBRARY 0
#define KIND_MODULE 1
/* GET_GLOBAL only: a library's __managed__ variable. */
#define KIND_MANAGED 2
/* More kernels than the backend lists in one reply is malformed. */
#define MAX_KERNELS 65536u
#define NAME_MAX_LEN 65536u

struct lib {
    int kind;
    uint32_t n;
    struct cuda_fe_kernel **k;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map libs;    /* id -> struct lib */
static struct gvs_u64map kernels; /* kernel or function id -> its layout */

struct cuda_fe_kernel *cuda_fe_kernel_find(uint64_t id)
{
    pthread_mutex_lock(&lock);
    struct cuda_fe_kernel *k = gvs_u64map_get(&kernels, id);
    pthread_mutex_unlock(&lock);
    return k;
}

static void kernel_free(struct cuda_fe_kernel *k)
{
    if (k == NULL)
        return;
    for (uint32_t i = 0; i < k->nfns; i++)
        kernel_free(k->fns[i]);
    gvs_free(k->fns);
    gvs_free(k->kept);
    gvs_free(k->occ);
    gvs_free(k->name);
    gvs_free(k->params);
    gvs_free(k);
}

static void lib_free(struct lib *l)
{
    if (l == NULL)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        kernel_free(l->k[i]);
    gvs_free(l->k);
    gvs_free(l);
}

static int decode_kernel(struct apigen_call *c, struct cuda_fe_kernel *k)
{
    int32_t status;
    if (c->rc == 0)
        c->rc = gvs_buf_get_str(c->get, NAME_MAX_LEN, &k->name);
    apigen_get_u64(c, &k->id);
    apigen_get_i32(c, &status);
    apigen_get_u32(c, &k->nparams);
    if (c->rc == 0 && k->nparams > CUDA_FE_PARAM_MAX)
        c->rc = GVS_E_RANGE;
    if (c->rc < 0)
        return c->rc;
    k->status = (CUresult)status;
    k->params = gvs_calloc(k->nparams + 1, sizeof(*k->params));
    if (k->params == NULL)
        return c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; i < k->nparams && c->rc == 0; i++) {
        apigen_get_u32(c, &k->params[i].offset);
        apigen_get_u32(c, &k->params[i].size);
        if (c->rc == 0 && (k->params[i].offset > CUDA_FE_PARAM_MAX ||
                           k->params[i].size >
                               CUDA_FE_PARAM_MAX - k->params[i].offset))
            c->rc = GVS_E_RANGE;
        if (c->rc == 0 &&
            k->params[i].offset + k->params[i].size > k->param_bytes)
            k->param_bytes = k->params[i].offset + k->params[i].size;
    }
    return c->rc;
}

/* Decodes LOAD's reply after its result into a new library, entered
 * with its kernels. */
static CUresult decode_lib(struct apigen_call *c, int kind, uint64_t *id)
{
    struct lib *l = gvs_calloc(1, sizeof(*l));
    uint32_t n = 0;
    apigen_get_u64(c, id);
    apigen_get_u32(c, &n);
    if (c->rc == 0 && n > MAX_KERNELS)
        c->rc = GVS_E_RANGE;
    if (l != NULL && c->rc == 0)
        l->k = gvs_calloc(n + 1, sizeof(*l->k));
    if (l == NULL || (c->rc == 0 && l->k == NULL)) {
        lib_free(l);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    l->kind = kind;
    for (uint32_t i = 0; i < n && c->rc == 0; i++) {
        struct cuda_fe_kernel *k = gvs_calloc(1, sizeof(*k));
        if (k == NULL) {
            c->rc = GVS_E_NOMEM;
            break;
        }
        k->is_kernel = kind == KIND_LIBRARY;
        k->root = k;
        l->k[l->n++] = k;
        decode_kernel(c, k);
    }
    if (c->rc == 0)
        c->rc = apigen_end(c);
    if (c->rc < 0) {
        lib_free(l);
        return c->rc == GVS_E_NOMEM ? CUDA_ERROR_OUT_OF_MEMORY
                                    : CUDA_ERROR_UNKNOWN;
    }
    pthread_mutex_lock(&lock);
    int rc = gvs_u64map_put(&libs, *id, l);
    for (uint32_t i = 0; i < l->n && rc == 0; i++)
        rc = gvs_u64map_put(&kernels, l->k[i]->id, l->k[i]);
    pthread_mutex_unlock(&lock);
    return rc == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Sends image (staged ahead when it is larger than a request) with the
 * JIT options, and decodes the reply: the report into the program's
 * option arrays and log buffers, failed or not, as the driver writes
 * them. */
static CUresult load_image(int kind, const void *code, unsigned nopt,
                           CUjit_option *opt, void **val, uint64_t *id)
{
    const uint8_t *img = NULL;
    struct gvs_client *cl;
    struct cuda_fe_jit jit;
    if (code == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    size_t len = gvs_remote_image_size(code, &img);
    if (len == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_client(&cl);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)kind);
    int staged = len + 64 + 12 * (size_t)nopt > GVS_BULK_CHUNK;
    apigen_put_u8(&c, (uint8_t)staged);
    r = cuda_fe_jit_put(&c, nopt, opt, val);
    if (r != CUDA_SUCCESS)
        return r;
    cuda_fe_jit_init(&jit, nopt, opt, val);
    if (!staged)
        apigen_put_blob(&c, img, len);
    if (staged) {
        gvs_client_lock(cl);
        int rc = gvs_remote_stage_locked(cl, img, len);
        gvs_client_unlock(cl);
        if (rc < 0)
            return cuda_fe_transport(rc);
    }
    r = cuda_fe_run(&c, CUDA_OP_LOAD, APIGEN_DEVICE);
    if (c.get != NULL && c.rc == 0 && gvs_buf_len(c.get) > 0)
        cuda_fe_jit_take_report(&c, &jit);
    if (r != CUDA_SUCCESS)
        return cuda_fe_end(&c, r);
    return decode_lib(&c, kind, id);
}

/* The compute capability of the device code loads for: the current
 * context's, else device 0's (a library loaded before any context). */
static unsigned load_cc(void)
{
    CUdevice dev = 0;
    int major = 0, minor = 0;
    if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
        dev = 0;
    CUdevice_attribute ma = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
    CUdevice_attribute mi = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
    (void)cuDeviceGetAttribute(&major, ma, dev);
    (void)cuDeviceGetAttribute(&minor, mi, dev);
    return (unsigned)(major * 10 + minor);
}

/* load_image, or where code is an -rdc program's linked image with no
 * code for the GPU, its units linked again (rdc.c). */
static CUresult load(int kind, const void *code, unsigned nopt,
                     CUjit_option *opt, void **val, uint64_t *id)
{
    const void *const *units = NULL;
    if (code != NULL && cuda_fe_initialized())
        units = cuda_fe_rdc_relink(code, load_cc);
    if (units == NULL)
        return load_image(kind, code, nopt, opt, val, id);
    CUlinkState link;
    void *cubin;
    size_t size;
    CUresult r = cuda_fe_rdc_link(units, &link, &cubin, &size);
    if (r != CUDA_SUCCESS)
        return r;
    r = load_image(kind, cubin, nopt, opt, val, id);
    (void)cuLinkDestroy(link);
    return r;
}

/* Library options are not passed: the backend keeps its copy of the
 * image for the library's life whatever BINARY_IS_PRESERVED says, and
 * a host table (HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) is the
 * program's memory, which the backend's driver cannot use. */
CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
                           CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions,
                           CUlibraryOption *libraryOptions,
                           void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    uint64_t id;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    if (library == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = load(KIND_LIBRARY, code, numJitOptions, jitOptions,
                      jitOptionsValues, &id);
    if (r == CUDA_SUCCESS)
        *library = (CUlibrary)(uintptr_t)id;
    return r;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
    uint64_t id;
    if (module == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (cuda_fe_ctx_current() == NULL)
        return cuda_fe_initialized() ? CUDA_ERROR_INVALID_CONTEXT
                                     : CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = load(KIND_MODULE, image, numOptions, options, optionValues,
                      &id);
    if (r == CUDA_SUCCESS)
        *module = (CUmodule)(uintptr_t)id;
    return r;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return cuModuleLoadDataEx(module, image, 0, NULL, NULL);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    return cuModuleLoadDataEx(module, fatCubin, 0, NULL, NULL);
}

static CUresult unload(int kind, uint64_t id)
{
    struct apigen_call c;
    pthread_mutex_lock(&lock);
    struct lib *l = gvs_u64map_get(&libs, id);
    pthread_mutex_unlock(&lock);
    if (l == NULL || l->kind != kind)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)kind);
    apigen_put_u64(&c, id);
    r = cuda_fe_run(&c, CUDA_OP_UNLOAD, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    l = gvs_u64map_remove(&libs, id);
    for (uint32_t i = 0; l != NULL && i < l->n; i++) {
        gvs_u64map_remove(&kernels, l->k[i]->id);
        for (uint32_t j = 0; j < l->k[i]->nfns; j++)
            gvs_u64map_remove(&kernels, l->k[i]->fns[j]->id);
    }
    pthread_mutex_unlock(&lock);
    lib_free(l);
    return CUDA_SUCCESS;
}

CUresult cuLibraryUnload(CUlibrary library)
{
    return unload(KIND_LIBRARY, (uint64_t)(uintptr_t)library);
}

CUresult cuModuleUnload(CUmodule hmod)
{
    return unload(KIND_MODULE, (uint64_t)(uintptr_t)hmod);
}

/* The kernel of library or module id named name. */
static CUresult by_name(int kind, uint64_t id, const char *name,
                        uint64_t *out)
{
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct lib *l = gvs_u64map_get(&libs, id);
    if (l != NULL && l->kind == kind) {
        r = CUDA_ERROR_NOT_FOUND;
        for (uint32_t i = 0; i < l->n; i++)
            if (strcmp(l->k[i]->name, name) == 0) {
                *out = l->k[i]->id;
                r = CUDA_SUCCESS;
                break;
            }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
                            const char *name)
{
    uint64_t id;
    if (pKernel == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = by_name(KIND_LIBRARY, (uint64_t)(uintptr_t)library, name,
                         &id);
    if (r == CUDA_SUCCESS)
        *pKernel = (CUkernel)(uintptr_t)id;
    return r;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                             const char *name)
{
    uint64_t id;
    if (hfunc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = by_name(KIND_MODULE, (uint64_t)(uintptr_t)hmod, name, &id);
    if (r == CUDA_SUCCESS)
        *hfunc = (CUfunction)(uintptr_t)id;
    return r;
}

static CUresult count_of(int kind, uint64_t id, unsigned int *count)
{
    if (count == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct lib *l = gvs_u64map_get(&libs, id);
    if (l != NULL && l->kind == kind)
        *count = l->n;
    pthread_mutex_unlock(&lock);
    return l != NULL && l->kind == kind ? CUDA_SUCCESS
                                        : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult enumerate(int kind, uint64_t id, void **out,
                          unsigned int n)
{
    if (out == NULL && n > 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct lib *l = gvs_u64map_get(&libs, id);
    int ok = l != NULL && l->kind == kind;
    for (uint32_t i = 0; ok && i < l->n && i < n; i++)
        out[i] = (void *)(uintptr_t)l->k[i]->id;
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    return count_of(KIND_LIBRARY, (uint64_t)(uintptr_t)lib, count);
}

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    return count_of(KIND_MODULE, (uint64_t)(uintptr_t)mod, count);
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels_out,
                                   unsigned int numKernels, CUlibrary lib)
{
    return enumerate(KIND_LIBRARY, (uint64_t)(uintptr_t)lib,
                     (void **)kernels_out, numKernels);
}

CUresult cuModuleEnumerateFunctions(CUfunction *functions,
                                    unsigned int numFunctions, CUmodule mod)
{
    return enumerate(KIND_MODULE, (uint64_t)(uintptr_t)mod,
                     (void **)functions, numFunctions);
}

/* The driver loads what it is given at once, whatever the program asks:
 * the backend's driver decides, and it is lazy by default. */
CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    if (mode == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    *mode = CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}

/* Caller holds lock: enters kernel k's function of id (the kernel's
 * own id where the backend gives it) in k's family and the table when it
 * is new, and keeps it as k's function in context ctx as of epoch,
 * dropping what an older epoch kept.  0, or -1 without memory. */
static int function_enter(struct cuda_fe_kernel *k, uint64_t id,
                          CUcontext ctx, uint64_t epoch)
{
    struct cuda_fe_kernel *f = gvs_u64map_get(&kernels, id);
    if (f != NULL && f->root != k)
        return 0; /* the backend's id of another's: not kept */
    if (f == NULL) {
        struct cuda_fe_kernel **fns =
            gvs_realloc(k->fns, (k->nfns + 1) * sizeof(*fns));
        if (fns == NULL)
            return -1;
        k->fns = fns;
        f = gvs_calloc(1, sizeof(*f));
        if (f != NULL)
            f->params = gvs_calloc(k->nparams + 1, sizeof(*f->params));
        if (f == NULL || f->params == NULL ||
            (f->name = gvs_strdup(k->name)) == NULL ||
            gvs_u64map_put(&kernels, id, f) < 0) {
            kernel_free(f);
            return -1;
        }
        f->id = id;
        f->root = k;
        f->status = k->status;
        f->nparams = k->nparams;
        f->param_bytes = k->param_bytes;
        memcpy(f->params, k->params, k->nparams * sizeof(*k->params));
        k->fns[k->nfns++] = f;
    }
    if (ctx == NULL)
        return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nkept; i++)
        if (k->kept[i].epoch == epoch && k->kept[i].ctx != ctx)
            k->kept[n++] = k->kept[i];
    struct cuda_fe_fn_kept *kept =
        gvs_realloc(k->kept, (n + 1) * sizeof(*kept));
    if (kept == NULL) {
        k->nkept = n;
        return 0;
    }
    kept[n] = (struct cuda_fe_fn_kept){ctx, epoch, id};
    k->kept = kept;
    k->nkept = n + 1;
    return 0;
}

/* A function shares its kernel's layout; the backend gives the same id
 * for the same function.  The answer is kept for the context it was
 * asked in until a context is destroyed or a primary context released
 * or reset (libraries ask before most launches: 340 times in a ResNet-50
 * training step). */
CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (pFunc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cuda_fe_kernel *k = cuda_fe_kernel_find((uint64_t)(uintptr_t)kernel);
    if (k == NULL || !k->is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    CUcontext ctx = cuda_fe_ctx_current();
    uint64_t epoch = cuda_fe_ctx_epoch();
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; ctx != NULL && i < k->nkept; i++)
        if (k->kept[i].ctx == ctx && k->kept[i].epoch == epoch) {
            *pFunc = (CUfunction)(uintptr_t)k->kept[i].id;
            pthread_mutex_unlock(&lock);
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, k->id);
    r = cuda_fe_run(&c, CUDA_OP_KERNEL_GET_FUNCTION, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &id);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    int rc = function_enter(k, id, ctx, epoch);
    pthread_mutex_unlock(&lock);
    if (rc < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pFunc = (CUfunction)(uintptr_t)id;
    return CUDA_SUCCESS;
}

static CUresult get_global(int kind, uint64_t id, const char *name,
                           CUdeviceptr *dptr, size_t *bytes)
{
    struct apigen_call c;
    uint64_t p = 0, size = 0;
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)kind);
    apigen_put_u64(&c, id);
    apigen_put_str(&c, name);
    r = cuda_fe_run_noted(&c, CUDA_OP_GET_GLOBAL, &p, &size);
    if (r != CUDA_SUCCESS)
        return r;
    if (dptr != NULL)
        *dptr = (CUdeviceptr)p;
    if (bytes != NULL)
        *bytes = (size_t)size;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes,
                              CUmodule hmod, const char *name)
{
    return get_global(KIND_MODULE, (uint64_t)(uintptr_t)hmod, name, dptr,
                      bytes);
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes,
                            CUlibrary library, const char *name)
{
    return get_global(KIND_LIBRARY, (uint64_t)(uintptr_t)library, name,
                      dptr, bytes);
}

/* A __managed__ variable is shadowed here (managed.c) before the program
 * gets its address. */
CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes,
                             CUlibrary library, const char *name)
{
    CUdeviceptr p = 0;
    size_t size = 0;
    CUdevice dev = 0;
    CUresult r = get_global(KIND_MANAGED, (uint64_t)(uintptr_t)library,
                            name, &p, &size);
    if (r == CUDA_SUCCESS) {
        (void)cuda_fe_ctx_device(&dev);
        r = cuda_fe_managed_shadow(p, size, dev);
    }
    if (r != CUDA_SUCCESS)
        return r;
    if (dptr != NULL)
        *dptr = p;
    if (bytes != NULL)
        *bytes = size;
    return CUDA_SUCCESS;
}

/* Function attributes, which libraries ask for before their launches
 * (PyTorch and its libraries 6,928 times in 64 tokens of a GPT-2
 * decode), are answered here after the backend's first answer for a
 * device: those of the kernel's code for good (kernels.h), those a
 * program may set until a setting changes (gvs_remote.h).  Failures are
 * not kept. */
static pthread_mutex_t attr_lock = PTHREAD_MUTEX_INITIALIZER;

static int attr_kept(struct cuda_fe_kernel *k, int attrib, CUdevice dev,
                     int *v)
{
    int hit = 0;
    if (attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return 0;
    uint64_t now = cuda_fe_kernel_settings(k);
    pthread_mutex_lock(&attr_lock);
    if ((k->attr_have & (1u << attrib)) && k->attr_dev == dev &&
        (attrib < CUDA_FE_CODE_ATTRS || k->attr_settings[attrib] == now)) {
        *v = k->attr_val[attrib];
        hit = 1;
    }
    pthread_mutex_unlock(&attr_lock);
    return hit;
}

/* asked: the count of kernel settings before the backend was asked, so
 * that an answer that crossed a setting is not kept. */
static void attr_keep(struct cuda_fe_kernel *k, int attrib, CUdevice dev,
                      int v, uint64_t asked)
{
    if (attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return;
    pthread_mutex_lock(&attr_lock);
    if (k->attr_have == 0)
        k->attr_dev = dev;
    if (k->attr_dev == dev) {
        k->attr_val[attrib] = v;
        k->attr_settings[attrib] = asked;
        k->attr_have |= 1u << attrib;
    }
    pthread_mutex_unlock(&attr_lock);
}

static CUresult get_attr(int *pi, int attrib, uint64_t id, int is_kernel,
                         CUdevice dev)
{
    struct apigen_call c;
    int32_t v = 0;
    int kept;
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cuda_fe_kernel *k = cuda_fe_kernel_find(id);
    if (k == NULL || (is_kernel && !k->is_kernel))
        return CUDA_ERROR_INVALID_HANDLE;
    /* A kernel where a function is asked for stands for its function in
     * the current context, as the driver takes it. */
    if (k->is_kernel && !is_kernel &&
        cuda_fe_ctx_device(&dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (attr_kept(k, attrib, dev, &kept)) {
        *pi = kept;
        return CUDA_SUCCESS;
    }
    uint64_t asked = cuda_fe_kernel_settings(k);
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)k->is_kernel);
    apigen_put_u64(&c, id);
    apigen_put_i32(&c, attrib);
    apigen_put_i32(&c, dev);
    r = cuda_fe_run(&c, CUDA_OP_FUNC_GET_ATTRIBUTE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_i32(&c, &v);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS) {
        *pi = v;
        attr_keep(k, attrib, dev, v, asked);
    }
    return r;
}

/* Whether attribute a of k was last set to v on dev through k, with no
 * setting of a in the family nor of the layer's since; otherwise the
 * family's setting of a about to be sent is counted, and *sets, *global
 * say the counts it is made at. */
static int set_again(struct cuda_fe_kernel *k, int a, int v, CUdevice dev,
                     uint64_t *sets, uint64_t *global)
{
    uint64_t g = gvs_remote_kernel_settings();
    pthread_mutex_lock(&attr_lock);
    int same = (k->set_have & (1u << a)) && k->set_dev[a] == dev &&
               k->set_val[a] == v &&
               k->set_sets[a] == k->root->attr_sets[a] &&
               k->set_global[a] == g;
    if (!same)
        *sets = ++k->root->attr_sets[a];
    pthread_mutex_unlock(&attr_lock);
    *global = g;
    return same;
}

static void set_keep(struct cuda_fe_kernel *k, int a, int v, CUdevice dev,
                     uint64_t sets, uint64_t global)
{
    pthread_mutex_lock(&attr_lock);
    k->set_have |= 1u << a;
    k->set_dev[a] = dev;
    k->set_val[a] = v;
    k->set_sets[a] = sets;
    k->set_global[a] = global;
    pthread_mutex_unlock(&attr_lock);
}

/* A setting to the value the attribute has is no change: libraries
 * set the dynamic shared memory a kernel may use before each launch, and
 * some another attribute too.  Any other setting is counted in the
 * kernel's family before it is sent: a smaller shared-memory allowance
 * can make a configuration that launched before fail now, and what was
 * kept of the family's settable attributes is asked again.  The
 * allowance set is what the driver then answers for it, so it is kept. */
static CUresult set_attr(int attrib, int value, uint64_t id, int is_kernel,
                         CUdevice dev)
{
    struct apigen_call c;
    int now;
    uint64_t sets = 0, global = 0;
    struct cuda_fe_kernel *k = cuda_fe_kernel_find(id);
    if (k == NULL || k->is_kernel != is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    if (attrib >= CUDA_FE_CODE_ATTRS && attr_kept(k, attrib, dev, &now) &&
        now == value)
        return CUDA_SUCCESS;
    int known = attrib >= CUDA_FE_CODE_ATTRS && attrib < CU_FUNC_ATTRIBUTE_MAX;
    if (known && set_again(k, attrib, value, dev, &sets, &global))
        return CUDA_SUCCESS;
    atomic_fetch_add(&k->root->family_settings, 1);
    uint64_t asked = cuda_fe_kernel_settings(k);
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)is_kernel);
    apigen_put_u64(&c, id);
    apigen_put_i32(&c, attrib);
    apigen_put_i32(&c, value);
    apigen_put_i32(&c, dev);
    r = cuda_fe_run(&c, CUDA_OP_FUNC_SET_ATTRIBUTE, APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS &&
        attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        attr_keep(k, attrib, dev, value, asked);
    if (r == CUDA_SUCCESS && known)
        set_keep(k, attrib, value, dev, sets, global);
    return r;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
                            CUfunction hfunc)
{
    return get_attr(pi, attrib, (uint64_t)(uintptr_t)hfunc, 0, 0);
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
                              CUkernel kernel, CUdevice dev)
{
    return get_attr(pi, attrib, (uint64_t)(uintptr_t)kernel, 1, dev);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                            int value)
{
    return set_attr(attrib, value, (uint64_t)(uintptr_t)hfunc, 0, 0);
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                              CUkernel kernel, CUdevice dev)
{
    return set_attr(attrib, val, (uint64_t)(uintptr_t)kernel, 1, dev);
}

/* Cache and shared memory preferences, which may move the carveout. */
CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    gvs_remote_kernel_settings_change();
    return cuda_rpc_cuFuncSetCacheConfig(hfunc, config);
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
                                CUdevice dev)
{
    gvs_remote_kernel_settings_change();
    return cuda_rpc_cuKernelSetCacheConfig(kernel, config, dev);
}

CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    gvs_remote_kernel_settings_change();
    return cuda_rpc_cuFuncSetSharedMemConfig(hfunc, config);
}

static CUresult param_info(uint64_t id, int is_kernel, size_t index,
                           size_t *offset, size_t *size)
{
    struct cuda_fe_kernel *k = cuda_fe_kernel_find(id);
    if (k == NULL || k->is_kernel != is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    if (k->status != CUDA_SUCCESS)
        return k->status;
    if (index >= k->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset != NULL)
        *offset = k->params[index].offset;
    if (size != NULL)
        *size = k->params[index].size;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
                              size_t *paramOffset, size_t *paramSize)
{
    return param_info((uint64_t)(uintptr_t)kernel, 1, paramIndex,
                      paramOffset, paramSize);
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                            size_t *paramOffset, size_t *paramSize)
{
    return param_info((uint64_t)(uintptr_t)func, 0, paramIndex, paramOffset,
                      paramSize);
}

static CUresult get_name(uint64_t id, int is_kernel, const char **name)
{
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cuda_fe_kernel *k = cuda_fe_kernel_find(id);
    if (k == NULL || k->is_kernel != is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = k->name;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    return get_name((uint64_t)(uintptr_t)hfunc, 1, name);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    return get_name((uint64_t)(uintptr_t)hfunc, 0, name);
}

unsigned int cuda_fe_module_each(CUmodule mod, cuda_fe_function_fn fn,
                                 void *cookie)
{
    struct {
        uint64_t id;
        const char *name;
    } *list = NULL;
    unsigned int n = 0;
    pthread_mutex_lock(&lock);
    struct lib *l = gvs_u64map_get(&libs, (uint64_t)(uintptr_t)mod);
    if (l != NULL && l->kind == KIND_MODULE &&
        (list = gvs_calloc(l->n + 1, sizeof(*list))) != NULL) {
        for (uint32_t i = 0; i < l->n; i++) {
            list[i].id = l->k[i]->id;
            list[i].name = l->k[i]->name;
        }
        n = l->n;
    }
    pthread_mutex_unlock(&lock);
    /* The names live until the module is unloaded, which the caller's
     * walk does not do. */
    for (unsigned int i = 0; i < n; i++)
        fn(cookie, (CUfunction)(uintptr_t)list[i].id, list[i].name);
    gvs_free(list);
    return n;
}
