/* Libraries and modules (cuda.api): loaded from the image the client
 * sent, answered in one round trip with every kernel and its parameter
 * layout, so that the client resolves kernels by name and packs their
 * launches by itself. */
#include "jit.h"

#include <pthread.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "gvs_remote.h"

#define KIND_LIBRARY 0
#define KIND_MODULE 1
/* GET_GLOBAL only: a library's __managed__ variable. */
#define KIND_MANAGED 2
/* Longest global name asked for. */
#define NAME_MAX_LEN 65536u

/* The libraries and modules loaded, by id, for session_close. */
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map loaded;

static uint16_t lib_type(int kind)
{
    return kind == KIND_LIBRARY ? GVS_RH_LIBRARY : GVS_RH_MODULE;
}

struct cuda_be_kernel *cuda_be_kernel_get(int kind, uint64_t id)
{
    return gvs_handles_get(cuda_be_remote->handles(),
                           kind ? GVS_RH_KERNEL : GVS_RH_FUNCTION, id);
}

CUresult cuda_be_func(uint64_t wire, CUfunction *out)
{
    struct cuda_be_kernel *k = cuda_be_kernel_get(0, wire);
    if (k == NULL)
        k = cuda_be_kernel_get(1, wire);
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = (CUfunction)k->handle;
    return CUDA_SUCCESS;
}

CUresult cuda_be_kernel_handle(uint64_t wire, CUkernel *out)
{
    struct cuda_be_kernel *k = cuda_be_kernel_get(1, wire);
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = (CUkernel)k->handle;
    return CUDA_SUCCESS;
}

/* The layout of k->handle, learned parameter by parameter until the
 * driver says there are no more; a failure is k->status. */
static void learn_layout(struct cuda_be_kernel *k, int is_kernel)
{
    for (size_t i = 0;; i++) {
        size_t off = 0, size = 0;
        CUresult r = is_kernel ? CUDA_DRV(cuKernelGetParamInfo)(
                                     (CUkernel)k->handle, i, &off, &size)
                               : CUDA_DRV(cuFuncGetParamInfo)(
                                     (CUfunction)k->handle, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return;
        if (r == CUDA_SUCCESS && (off > CUDA_BE_PARAM_MAX ||
                                  size > CUDA_BE_PARAM_MAX - off))
            r = CUDA_ERROR_INVALID_IMAGE;
        struct cuda_be_param *p =
            r == CUDA_SUCCESS
                ? gvs_realloc(k->params, (i + 1) * sizeof(*p))
                : NULL;
        if (p == NULL) {
            k->status = r != CUDA_SUCCESS ? r : CUDA_ERROR_OUT_OF_MEMORY;
            gvs_free(k->params);
            k->params = NULL;
            k->nparams = k->param_bytes = 0;
            return;
        }
        k->params = p;
        p[i] = (struct cuda_be_param){(uint32_t)off, (uint32_t)size};
        k->nparams = (uint32_t)i + 1;
        if (off + size > k->param_bytes)
            k->param_bytes = (uint32_t)(off + size);
    }
}

static void put_layout(struct apigen_call *c, const struct cuda_be_kernel *k)
{
    apigen_put_i32(c, k->status);
    apigen_put_u32(c, k->nparams);
    for (uint32_t i = 0; i < k->nparams; i++) {
        apigen_put_u32(c, k->params[i].offset);
        apigen_put_u32(c, k->params[i].size);
    }
}

static void kernel_free(struct cuda_be_kernel *k)
{
    if (k != NULL)
        gvs_free(k->params);
    gvs_free(k);
}

/* Enters a kernel or function of handle in the table, with its layout,
 * and puts its name, id and layout in the reply. */
static int add_kernel(struct apigen_call *c, struct cuda_be_library *lib,
                      void *handle, int is_kernel)
{
    const char *name = NULL;
    struct cuda_be_kernel *k = gvs_calloc(1, sizeof(*k));
    uint64_t id;
    if (k == NULL)
        return GVS_E_NOMEM;
    k->handle = handle;
    CUresult r = is_kernel
                     ? CUDA_DRV(cuKernelGetName)(&name, (CUkernel)handle)
                     : CUDA_DRV(cuFuncGetName)(&name, (CUfunction)handle);
    if (r != CUDA_SUCCESS || name == NULL)
        name = "";
    learn_layout(k, is_kernel);
    if (gvs_handles_add(cuda_be_remote->handles(),
                        is_kernel ? GVS_RH_KERNEL : GVS_RH_FUNCTION, k,
                        &id) < 0) {
        kernel_free(k);
        return GVS_E_NOMEM;
    }
    lib->kernels[lib->nkernels++] = id;
    apigen_put_str(c, name);
    apigen_put_u64(c, id);
    put_layout(c, k);
    return c->rc;
}

static void library_free(struct cuda_be_library *lib, int kind)
{
    if (lib == NULL)
        return;
    for (uint32_t i = 0; i < lib->nkernels; i++)
        kernel_free(gvs_handles_remove(
            cuda_be_remote->handles(),
            kind == KIND_LIBRARY ? GVS_RH_KERNEL : GVS_RH_FUNCTION,
            lib->kernels[i]));
    if (lib->handle != NULL)
        (void)(kind == KIND_LIBRARY
                   ? CUDA_DRV(cuLibraryUnload)((CUlibrary)lib->handle)
                   : CUDA_DRV(cuModuleUnload)((CUmodule)lib->handle));
    gvs_free(lib->kernels);
    gvs_free(lib->image);
    gvs_free(lib);
}

/* Loads lib->image with the JIT options of jit; the kernels it lists,
 * in the driver's order. */
static CUresult load(struct cuda_be_library *lib, int kind,
                     struct cuda_be_jit *jit, void ***handles,
                     unsigned int *n)
{
    CUresult r;
    *handles = NULL;
    *n = 0;
    if (kind == KIND_LIBRARY) {
        r = CUDA_DRV(cuLibraryLoadData)((CUlibrary *)&lib->handle, lib->image,
                                        jit->opt, jit->val, jit->n, NULL,
                                        NULL, 0);
        if (r == CUDA_SUCCESS)
            r = CUDA_DRV(cuLibraryGetKernelCount)(n, (CUlibrary)lib->handle);
    } else {
        r = CUDA_DRV(cuModuleLoadDataEx)((CUmodule *)&lib->handle, lib->image,
                                         jit->n, jit->opt, jit->val);
        if (r == CUDA_SUCCESS)
            r = CUDA_DRV(cuModuleGetFunctionCount)(n, (CUmodule)lib->handle);
    }
    if (r != CUDA_SUCCESS || *n == 0)
        return r;
    if (*n > CUDA_BE_MAX_KERNELS)
        return CUDA_ERROR_INVALID_IMAGE;
    *handles = gvs_calloc(*n, sizeof(void *));
    lib->kernels = gvs_calloc(*n, sizeof(uint64_t));
    if (*handles == NULL || lib->kernels == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    return kind == KIND_LIBRARY
               ? CUDA_DRV(cuLibraryEnumerateKernels)(
                     (CUkernel *)*handles, *n, (CUlibrary)lib->handle)
               : CUDA_DRV(cuModuleEnumerateFunctions)(
                     (CUfunction *)*handles, *n, (CUmodule)lib->handle);
}

/* NVIDIA's runtime loads libraries, and finds their __managed__
 * variables, before it makes its context current; the driver tells a
 * kernel's parameters only in a context (CUDA_ERROR_INVALID_CONTEXT
 * without one).  So with no context current the backend works in the
 * first device's primary context, retained once for the session:
 * natively the runtime's own retain of it follows.  Whether it made it
 * current; where it could not, the driver's own failure is the answer. */
int cuda_be_enter_library_context(void)
{
    static CUcontext primary;
    CUcontext cur = NULL;
    CUresult r = CUDA_DRV(cuCtxGetCurrent)(&cur);
    if (r != CUDA_SUCCESS || cur != NULL)
        return 0;
    if (primary == NULL)
        r = CUDA_DRV(cuDevicePrimaryCtxRetain)(&primary, 0);
    return r == CUDA_SUCCESS && CUDA_DRV(cuCtxSetCurrent)(primary) == CUDA_SUCCESS;
}

/* Request: u8 kind, u8 staged, options, [blob image].  Reply: i32, the
 * report, then after CUDA_SUCCESS u64 id, u32 count, the kernels
 * (cuda.api). */
int cuda_be_load(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cuda_be_jit_request o;
    struct cuda_be_jit jit = {0};
    uint8_t kind, staged;
    const uint8_t *blob = NULL;
    size_t len = 0;
    apigen_get_u8(&c, &kind);
    apigen_get_u8(&c, &staged);
    cuda_be_jit_get(&c, &o);
    if (c.rc == 0 && !staged)
        apigen_get_blob(&c, &blob, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (kind > KIND_MODULE || staged > 1)
        return GVS_E_PROTO;
    struct cuda_be_library *lib = gvs_calloc(1, sizeof(*lib));
    if (lib == NULL)
        return GVS_E_NOMEM;
    int rc = 0;
    if (staged) {
        rc = cuda_be_remote->take_stage(call, &lib->image, &len);
    } else if ((lib->image = gvs_malloc(len + 1)) != NULL) {
        memcpy(lib->image, blob, len);
        lib->image[len] = 0;
    } else {
        rc = GVS_E_NOMEM;
    }
    if (rc < 0) {
        library_free(lib, kind);
        return rc;
    }
    void **handles = NULL;
    unsigned int n = 0;
    uint64_t id = 0;
    const uint8_t *start;
    CUresult r = cuda_be_enter(call);
    /* The driver reads an image as far as its headers say: they must
     * stay within the bytes that came, and the NUL put after them. */
    if (r == CUDA_SUCCESS &&
        gvs_remote_image_size_in(lib->image, len + 1, &start) == 0)
        r = CUDA_ERROR_INVALID_IMAGE;
    if (r == CUDA_SUCCESS)
        r = cuda_be_jit_fill(&jit, &o);
    if (r == CUDA_SUCCESS)
        r = load(lib, kind, &jit, &handles, &n);
    lib->kind = kind;
    if (r == CUDA_SUCCESS &&
        gvs_handles_add(cuda_be_remote->handles(), lib_type(kind), lib, &id) <
            0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&loaded_lock);
        int rc = gvs_u64map_put(&loaded, id, lib);
        pthread_mutex_unlock(&loaded_lock);
        if (rc < 0) {
            gvs_handles_remove(cuda_be_remote->handles(), lib_type(kind), id);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    int entered = r == CUDA_SUCCESS && kind == KIND_LIBRARY && n > 0 &&
                  cuda_be_enter_library_context();
    apigen_put_i32(&c, r);
    cuda_be_jit_put_report(&c, &jit);
    cuda_be_jit_free(&jit);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, id);
        apigen_put_u32(&c, n);
        for (unsigned int i = 0; i < n && c.rc == 0; i++)
            c.rc = add_kernel(&c, lib, handles[i], kind == KIND_LIBRARY);
        if (entered)
            (void)CUDA_DRV(cuCtxSetCurrent)(NULL);
    } else {
        library_free(lib, kind);
    }
    gvs_free(handles);
    return c.rc;
}

/* Request: u8 kind, u64 id.  Reply: i32. */
int cuda_be_unload(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t kind;
    uint64_t id;
    apigen_get_u8(&c, &kind);
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (kind > KIND_MODULE)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    struct cuda_be_library *lib = NULL;
    if (r == CUDA_SUCCESS)
        lib = gvs_handles_remove(cuda_be_remote->handles(), lib_type(kind),
                                 id);
    if (r == CUDA_SUCCESS && lib == NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (lib != NULL) {
        pthread_mutex_lock(&loaded_lock);
        gvs_u64map_remove(&loaded, id);
        pthread_mutex_unlock(&loaded_lock);
    }
    library_free(lib, kind);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* The function ids already handed out, by CUfunction: a kernel asked
 * again in the same context gets the same. */
static pthread_mutex_t funcs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map funcs;

/* Request: u64 kernel id.  Reply: i32, u64 function id. */
int cuda_be_kernel_get_function(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t kid, id = 0;
    CUfunction f = NULL;
    apigen_get_u64(&c, &kid);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    struct cuda_be_kernel *k = cuda_be_kernel_get(1, kid);
    if (r == CUDA_SUCCESS && k == NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuKernelGetFunction)(&f, (CUkernel)k->handle);
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&funcs_lock);
        uint64_t *known = gvs_u64map_get(&funcs, (uint64_t)(uintptr_t)f);
        struct cuda_be_kernel *fn = NULL;
        uint64_t *slot = NULL;
        if (known != NULL) {
            id = *known;
        } else if ((fn = gvs_calloc(1, sizeof(*fn))) != NULL &&
                   (slot = gvs_malloc(sizeof(*slot))) != NULL &&
                   (fn->params = gvs_calloc(k->nparams + 1,
                                            sizeof(*fn->params))) != NULL &&
                   gvs_handles_add(cuda_be_remote->handles(),
                                   GVS_RH_FUNCTION, fn, &id) == 0) {
            fn->handle = f;
            fn->status = k->status;
            fn->nparams = k->nparams;
            fn->param_bytes = k->param_bytes;
            memcpy(fn->params, k->params, k->nparams * sizeof(*k->params));
            *slot = id;
            if (gvs_u64map_put(&funcs, (uint64_t)(uintptr_t)f, slot) < 0)
                gvs_free(slot);
        } else {
            if (fn != NULL)
                gvs_free(fn->params);
            gvs_free(fn);
            gvs_free(slot);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
        pthread_mutex_unlock(&funcs_lock);
    }
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(&c, id);
    return c.rc;
}

/* Request: u8 kind, u64 id, str name.  Reply: i32, u64 address, u64
 * size. */
int cuda_be_get_global(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t kind;
    uint64_t id;
    char *name = NULL;
    CUdeviceptr p = 0;
    size_t size = 0;
    apigen_get_u8(&c, &kind);
    apigen_get_u64(&c, &id);
    if (c.rc == 0)
        c.rc = gvs_buf_get_str(c.get, NAME_MAX_LEN, &name);
    if (apigen_end(&c) < 0 || kind > KIND_MANAGED) {
        gvs_free(name);
        return c.rc < 0 ? c.rc : GVS_E_PROTO;
    }
    CUresult r = cuda_be_enter(call);
    struct cuda_be_library *lib = gvs_handles_get(
        cuda_be_remote->handles(),
        lib_type(kind == KIND_MANAGED ? KIND_LIBRARY : kind), id);
    if (r == CUDA_SUCCESS && lib == NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && kind == KIND_MANAGED) {
        /* Managed memory has one address in every context. */
        int entered = cuda_be_enter_library_context();
        r = CUDA_DRV(cuLibraryGetManaged)(&p, &size, (CUlibrary)lib->handle,
                                          name);
        if (entered)
            (void)CUDA_DRV(cuCtxSetCurrent)(NULL);
    } else if (r == CUDA_SUCCESS)
        r = kind == KIND_LIBRARY
                ? CUDA_DRV(cuLibraryGetGlobal)(&p, &size,
                                               (CUlibrary)lib->handle, name)
                : CUDA_DRV(cuModuleGetGlobal_v2)(&p, &size,
                                                 (CUmodule)lib->handle, name);
    gvs_free(name);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, p);
        apigen_put_u64(&c, size);
    }
    return c.rc;
}

/* Request: u8 kind (0 function, 1 kernel), u64 id, i32 attribute, i32
 * dev.  Reply: i32, i32 value. */
int cuda_be_func_get_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t kind;
    uint64_t id;
    int32_t attr, dev;
    int v = 0;
    apigen_get_u8(&c, &kind);
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &attr);
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (kind > 1)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    struct cuda_be_kernel *k = cuda_be_kernel_get(kind, id);
    if (r == CUDA_SUCCESS && k == NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = kind ? CUDA_DRV(cuKernelGetAttribute)(
                       &v, (CUfunction_attribute)attr, (CUkernel)k->handle,
                       dev)
                 : CUDA_DRV(cuFuncGetAttribute)(
                       &v, (CUfunction_attribute)attr, (CUfunction)k->handle);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_i32(&c, v);
    return c.rc;
}

/* Request: u8 kind, u64 id, i32 attribute, i32 value, i32 dev.  Reply:
 * i32. */
int cuda_be_func_set_attribute(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t kind;
    uint64_t id;
    int32_t attr, v, dev;
    apigen_get_u8(&c, &kind);
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &attr);
    apigen_get_i32(&c, &v);
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (kind > 1)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    struct cuda_be_kernel *k = cuda_be_kernel_get(kind, id);
    if (r == CUDA_SUCCESS && k == NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = kind ? CUDA_DRV(cuKernelSetAttribute)(
                       (CUfunction_attribute)attr, v, (CUkernel)k->handle, dev)
                 : CUDA_DRV(cuFuncSetAttribute)((CUfunction)k->handle,
                                                (CUfunction_attribute)attr, v);
    apigen_put_i32(&c, r);
    return c.rc;
}

uint64_t cuda_be_kernel_id_of(CUkernel kernel, CUfunction func,
                              struct cuda_be_kernel **k)
{
    uint64_t id = 0;
    void *want = kernel != NULL ? (void *)kernel : (void *)func;
    int kind = kernel != NULL ? KIND_LIBRARY : KIND_MODULE;
    if (kernel == NULL) {
        pthread_mutex_lock(&funcs_lock);
        uint64_t *known = gvs_u64map_get(&funcs, (uint64_t)(uintptr_t)func);
        id = known != NULL ? *known : 0;
        pthread_mutex_unlock(&funcs_lock);
    }
    int is_kernel = kernel != NULL;
    pthread_mutex_lock(&loaded_lock);
    for (size_t i = 0; id == 0 && i < loaded.n; i++) {
        const struct cuda_be_library *lib = loaded.e[i].val;
        for (uint32_t j = 0; id == 0 && j < lib->nkernels; j++) {
            struct cuda_be_kernel *c = cuda_be_kernel_get(
                lib->kind == KIND_LIBRARY, lib->kernels[j]);
            CUfunction f = NULL;
            if (c == NULL)
                continue;
            if (lib->kind == kind && c->handle == want) {
                id = lib->kernels[j];
            } else if (kernel == NULL && lib->kind == KIND_LIBRARY &&
                       (c->handle == (void *)func ||
                        (CUDA_DRV(cuKernelGetFunction)(&f, c->handle) ==
                             CUDA_SUCCESS &&
                         f == func))) {
                /* A library kernel given as a function, or its function
                 * in the current context, which the driver may report
                 * for a node made of the kernel. */
                id = lib->kernels[j];
                is_kernel = 1;
            }
        }
    }
    pthread_mutex_unlock(&loaded_lock);
    *k = id != 0 ? cuda_be_kernel_get(is_kernel, id) : NULL;
    return *k != NULL ? id : 0;
}

void cuda_be_modules_free(void)
{
    struct gvs_handles *t = cuda_be_remote->handles();
    pthread_mutex_lock(&funcs_lock);
    for (size_t i = 0; i < funcs.n; i++) {
        uint64_t *id = funcs.e[i].val;
        kernel_free(gvs_handles_remove(t, GVS_RH_FUNCTION, *id));
        gvs_free(id);
    }
    gvs_u64map_clear(&funcs);
    pthread_mutex_unlock(&funcs_lock);
    pthread_mutex_lock(&loaded_lock);
    for (size_t i = 0; i < loaded.n; i++) {
        struct cuda_be_library *lib = loaded.e[i].val;
        gvs_handles_remove(t, lib_type(lib->kind), loaded.e[i].key);
        library_free(lib, lib->kind);
    }
    gvs_u64map_clear(&loaded);
    pthread_mutex_unlock(&loaded_lock);
}
