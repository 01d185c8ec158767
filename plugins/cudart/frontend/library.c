/*
 * The library API (docs/cudart.md, "Libraries").  The image's bytes go
 * to the backend, read from the client's memory or file; the library
 * comes back as a module with every kernel's parameter layout, so its
 * kernels launch through the module paths (kernel.c): a cudaKernel_t of
 * a library is its kernel record, as for a registered module.
 */
#include "fe.h"
#include "gvs_remote.h"

#include <stdio.h>

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* As the backend bounds them (backend/library.c). */
#define MAX_JIT_OPTIONS 64u

struct opts {
    enum cudaJitOption *jit;
    void **jit_values;
    unsigned njit;
    enum cudaLibraryOption *lib;
    unsigned nlib;
};

/* The library options are the client's business: a preserved image is
 * copied anyway, and a host table of unified functions and data has
 * the client's addresses. */
static cudaError_t check_opts(const struct opts *o)
{
    if ((o->njit > 0 && (o->jit == NULL || o->jit_values == NULL)) ||
        (o->nlib > 0 && o->lib == NULL))
        return cudaErrorInvalidValue;
    if (o->njit > MAX_JIT_OPTIONS)
        return cudaErrorNotSupported;
    for (unsigned i = 0; i < o->nlib; i++)
        if (o->lib[i] != cudaLibraryBinaryIsPreserved)
            return cudaErrorNotSupported;
    return cudaSuccess;
}

/* Sends LIBRARY_LOAD, after the image's MODULE_STAGE pieces when it does
 * not fit one frame, and waits for the reply into c. */
static cudaError_t exchange(struct apigen_call *c, const uint8_t *img,
                            size_t len, const struct opts *o)
{
    struct gvs_client *cl;
    struct gvs_buf *reply = c->get;
    uint64_t id;
    int staged = len + 64 + (size_t)o->njit * 12 > GVS_BULK_CHUNK;
    c->get = NULL;
    apigen_put_u8(c, (uint8_t)staged);
    if (!staged)
        apigen_put_blob(c, img, len);
    apigen_put_u32(c, o->njit);
    for (unsigned i = 0; i < o->njit; i++) {
        apigen_put_u32(c, (uint32_t)o->jit[i]);
        apigen_put_u64(c, (uint64_t)(uintptr_t)o->jit_values[i]);
    }
    if (c->rc < 0)
        return c->rc == GVS_E_NOMEM || c->rc == GVS_E_TOOBIG
                   ? cudaErrorMemoryAllocation
                   : cudaErrorUnknown;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct iovec iov = {(void *)gvs_buf_ptr(c->put), gvs_buf_len(c->put)};
    gvs_client_lock(cl);
    int rc = staged ? fe_stage_locked(cl, img, len) : 0;
    if (rc == 0)
        rc = fe_send_locked(cl, CUDART_OP_LIBRARY_LOAD, APIGEN_DEVICE, 0,
                            &iov, 1, &id);
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_wait(cl, id, reply);
    if (rc < 0)
        return fe_transport_error(rc);
    c->get = reply;
    return fe_reply_result(c);
}

static cudaError_t load(cudaLibrary_t *library, const uint8_t *img,
                        size_t len, const struct opts *o)
{
    struct apigen_call c;
    struct fe_module *m;
    cudaError_t e = cudart_fe_begin(&c);
    if (e == cudaSuccess)
        e = exchange(&c, img, len, o);
    if (e != cudaSuccess)
        return cudart_fe_end(&c, e);
    e = fe_library_decode(&c, &m);
    if (e == cudaSuccess)
        *library = (cudaLibrary_t)m;
    return e;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *jitOptions,
                                void **jitOptionsValues,
                                unsigned int numJitOptions,
                                enum cudaLibraryOption *libraryOptions,
                                void **libraryOptionValues,
                                unsigned int numLibraryOptions)
{
    struct opts o = {jitOptions, jitOptionsValues, numJitOptions,
                     libraryOptions, numLibraryOptions};
    (void)libraryOptionValues;
    if (library == NULL || code == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = check_opts(&o);
    const uint8_t *img = NULL;
    size_t len = e == cudaSuccess ? gvs_remote_image_size(code, &img) : 0;
    if (e == cudaSuccess && len == 0)
        e = cudaErrorInvalidKernelImage;
    if (e == cudaSuccess)
        e = load(library, img, len, &o);
    return cudart_fe_ret(e);
}

/* The whole file, in memory of our own. */
static cudaError_t read_file(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return cudaErrorFileNotFound;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    cudaError_t e = cudaSuccess;
    while (e == cudaSuccess) {
        if (n == cap) {
            cap = cap ? cap * 2 : (size_t)64 << 10;
            uint8_t *p = cap <= GVS_BUF_MAX_CEILING ? gvs_realloc(buf, cap)
                                                    : NULL;
            if (p == NULL) {
                e = cudaErrorMemoryAllocation;
                break;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            e = ferror(f) ? cudaErrorFileNotFound : cudaSuccess;
        if (got == 0)
            break;
    }
    fclose(f);
    if (e != cudaSuccess) {
        gvs_free(buf);
        return e;
    }
    *out = buf;
    *len = n;
    return n > 0 ? cudaSuccess : cudaErrorInvalidKernelImage;
}

cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library,
                                    const char *fileName,
                                    enum cudaJitOption *jitOptions,
                                    void **jitOptionsValues,
                                    unsigned int numJitOptions,
                                    enum cudaLibraryOption *libraryOptions,
                                    void **libraryOptionValues,
                                    unsigned int numLibraryOptions)
{
    struct opts o = {jitOptions, jitOptionsValues, numJitOptions,
                     libraryOptions, numLibraryOptions};
    (void)libraryOptionValues;
    if (library == NULL || fileName == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    uint8_t *img = NULL;
    size_t len = 0;
    cudaError_t e = check_opts(&o);
    if (e == cudaSuccess)
        e = read_file(fileName, &img, &len);
    if (e == cudaSuccess)
        e = load(library, img, len, &o);
    gvs_free(img);
    return cudart_fe_ret(e);
}

/* Waits for MODULE_UNLOAD's reply, which the registered modules' unload
 * at exit never does. */
static cudaError_t unload(uint32_t id)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, id);
    e = cudart_fe_run(&c, CUDART_OP_MODULE_UNLOAD, 0);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    uint32_t id;
    int held = fe_library_remove((struct fe_module *)library, &id);
    if (held == 0)
        return cudart_fe_ret(cudaErrorInvalidResourceHandle);
    return cudart_fe_ret(held > 0 ? unload(id) : cudaSuccess);
}

cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
    uint32_t id, n;
    if (count == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    if (!fe_library_info((struct fe_module *)lib, &id, &n))
        return cudart_fe_ret(cudaErrorInvalidResourceHandle);
    *count = n;
    return cudaSuccess;
}

cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels,
                                        unsigned int numKernels,
                                        cudaLibrary_t lib)
{
    uint32_t id, n;
    if (kernels == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    if (!fe_library_info((struct fe_module *)lib, &id, &n))
        return cudart_fe_ret(cudaErrorInvalidResourceHandle);
    for (unsigned i = 0; i < numKernels && i < n; i++)
        kernels[i] = (cudaKernel_t)fe_library_kernel(
            (struct fe_module *)lib, i);
    return cudaSuccess;
}

/* LIBRARY_KERNEL or LIBRARY_SYMBOL (kind given) for a name.  out is
 * zeroed first: whatever the result, the caller reads no indeterminate
 * value. */
static cudaError_t ask(cudaLibrary_t lib, uint16_t op, int kind,
                       const char *name, uint64_t out[2])
{
    struct apigen_call c;
    uint32_t id, n, index = 0;
    out[0] = out[1] = 0;
    if (name == NULL)
        return cudaErrorInvalidValue;
    if (!fe_library_info((struct fe_module *)lib, &id, &n))
        return cudaErrorInvalidResourceHandle;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, id);
    if (kind >= 0)
        apigen_put_u8(&c, (uint8_t)kind);
    apigen_put_str(&c, name);
    e = cudart_fe_run(&c, op, APIGEN_DEVICE);
    if (e == cudaSuccess && kind < 0) {
        apigen_get_u32(&c, &index);
        out[0] = index;
    } else if (e == cudaSuccess) {
        apigen_get_u64(&c, &out[0]);
        apigen_get_u64(&c, &out[1]);
    }
    return cudart_fe_end(&c, e);
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
                                 const char *name)
{
    uint64_t got[2];
    if (pKernel == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = ask(library, CUDART_OP_LIBRARY_KERNEL, -1, name, got);
    struct fe_func *f = NULL;
    if (e == cudaSuccess) {
        f = fe_library_kernel((struct fe_module *)library, (uint32_t)got[0]);
        e = f != NULL ? cudaSuccess : cudaErrorUnknown;
    }
    if (e == cudaSuccess)
        *pKernel = (cudaKernel_t)f;
    return cudart_fe_ret(e);
}

cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes,
                                 cudaLibrary_t library, const char *name)
{
    uint64_t got[2];
    cudaError_t e = ask(library, CUDART_OP_LIBRARY_SYMBOL, 0, name, got);
    if (e == cudaSuccess) {
        fe_library_note_global((struct fe_module *)library, got[0], got[1]);
        if (dptr != NULL)
            *dptr = (void *)(uintptr_t)got[0];
        if (bytes != NULL)
            *bytes = (size_t)got[1];
    }
    return cudart_fe_ret(e);
}

/* The address is device code's: the program hands it to kernels, which
 * may call it; the client's host has no such code to call. */
cudaError_t cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t library,
                                          const char *symbol)
{
    uint64_t got[2];
    if (fptr == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = ask(library, CUDART_OP_LIBRARY_SYMBOL, 1, symbol, got);
    if (e == cudaSuccess)
        *fptr = (void *)(uintptr_t)got[0];
    return cudart_fe_ret(e);
}
