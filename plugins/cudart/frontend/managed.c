/*
 * Managed memory (cudaMallocManaged, __managed__ variables) over a GPU in
 * another process, for programs that touch it from the host only between
 * synchronizations (docs/cudart.md, "Managed memory").
 *
 * The shadows are the layer's (gvs_remote.h, shared with the driver
 * frontend): here are the runtime's ops that move their bytes, pushes
 * before every device request (MANAGED_PUSH) and pulls after a
 * synchronization (MEMCPY_D2H), and the runtime's ways to make managed
 * memory.
 */
#include "fe.h"

#include <pthread.h>
#include <string.h>

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs_remote.h"

/* MEMCPY_D2H: u64 src, u64 count. */
static int pull_request(struct gvs_buf *req, uint64_t src, size_t n)
{
    int rc = gvs_buf_put_u64(req, src);
    return rc == 0 ? gvs_buf_put_u64(req, n) : rc;
}

static const struct gvs_remote_managed_io io = {
    .api = &fe_remote_api,
    .push_op = CUDART_OP_MANAGED_PUSH,
    .pull_op = CUDART_OP_MEMCPY_D2H,
    .pull_request = pull_request,
};

int fe_managed_push_locked(struct gvs_client *cl)
{
    return gvs_remote_managed_push_locked(&io, cl);
}

cudaError_t fe_managed_synced(uint16_t op)
{
    if (!gvs_remote_managed_any())
        return cudaSuccess;
    switch (op) {
    case CUDART_OP_cudaDeviceSynchronize:
    case CUDART_OP_cudaStreamSynchronize:
    case CUDART_OP_cudaStreamQuery:
    case CUDART_OP_cudaEventSynchronize:
    case CUDART_OP_cudaEventQuery:
        return (cudaError_t)gvs_remote_managed_pull(&io, -1);
    default:
        return cudaSuccess;
    }
}

/* Allocation -------------------------------------------------------------- */

/* Shadows [lo, hi) with its current bytes, in the allocation map too,
 * so that cudaMemcpyDefault sees device memory.
 * cudaErrorMemoryAllocation when the addresses are taken here. */
static cudaError_t shadow(uint64_t lo, uint64_t hi)
{
    int slot = gvs_remote_managed_add(lo, hi);
    if (slot < 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = fe_mem_track((void *)(uintptr_t)lo, hi - lo)
                        ? cudaSuccess
                        : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = (cudaError_t)gvs_remote_managed_pull(&io, slot);
    if (e != cudaSuccess) {
        fe_mem_untrack((void *)(uintptr_t)lo);
        gvs_remote_managed_forget(lo);
    }
    return e;
}

static cudaError_t malloc_managed(void **out, size_t size, unsigned flags)
{
    struct apigen_call c;
    uint64_t ptr = 0;
    if (out == NULL)
        return cudaErrorInvalidValue;
    /* As cudaMalloc: a failed allocation (past the session's quota, say)
     * leaves a null pointer behind. */
    *out = NULL;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, size);
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_MALLOC_MANAGED, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &ptr);
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    e = shadow(ptr, ptr + size);
    if (e != cudaSuccess) {
        (void)cudaFree((void *)(uintptr_t)ptr);
        return e;
    }
    *out = (void *)(uintptr_t)ptr;
    return cudaSuccess;
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    return cudart_fe_ret(malloc_managed(devPtr, size, flags));
}

void fe_managed_forget(const void *p)
{
    gvs_remote_managed_forget((uint64_t)(uintptr_t)p);
}

/* __managed__ variables --------------------------------------------------- */

/* A variable nvcc registered: the host code reads it through *ptr once
 * __cudaInitModule has succeeded. */
struct managed_var {
    struct managed_var *next;
    void **handle;
    void **ptr;
    char *name;
    size_t size;
    int ready;
};

static struct managed_var *vars;
/* Guards vars. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void fe_managed_var_register(void **handle, void **ptr, const char *name,
                             size_t size)
{
    struct managed_var *v = gvs_calloc(1, sizeof(*v));
    char *n = name != NULL ? gvs_strdup(name) : NULL;
    if (v == NULL || n == NULL || ptr == NULL) {
        gvs_free(v);
        gvs_free(n);
        return;
    }
    *v = (struct managed_var){NULL, handle, ptr, n, size, 0};
    pthread_mutex_lock(&lock);
    v->next = vars;
    vars = v;
    pthread_mutex_unlock(&lock);
}

/* The backend's address of a module's managed variable. */
static cudaError_t var_address(uint32_t module, const char *name,
                               uint64_t *addr, uint64_t *size)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, module);
    apigen_put_str(&c, name);
    e = cudart_fe_run(&c, CUDART_OP_MANAGED_VAR, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, addr);
        apigen_get_u64(&c, size);
    }
    return cudart_fe_end(&c, e);
}

cudaError_t fe_managed_vars_ready(void **handle, uint32_t module)
{
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (struct managed_var *v = vars; v != NULL; v = v->next)
        n += v->handle == handle && !v->ready;
    struct managed_var **vs = n ? gvs_calloc(n, sizeof(*vs)) : NULL;
    uint64_t *at = n ? gvs_calloc(n, sizeof(*at)) : NULL;
    size_t k = 0;
    for (struct managed_var *v = vars; vs != NULL && v != NULL; v = v->next)
        if (v->handle == handle && !v->ready)
            vs[k++] = v;
    pthread_mutex_unlock(&lock);
    cudaError_t e = n == 0 || (vs != NULL && at != NULL)
                        ? cudaSuccess
                        : cudaErrorMemoryAllocation;
    /* Variables that share pages share a shadow (the layer's). */
    size_t done = 0;
    for (; e == cudaSuccess && done < n; done++) {
        uint64_t size = 0;
        e = var_address(module, vs[done]->name, &at[done], &size);
        if (e == cudaSuccess && (size != vs[done]->size || size == 0))
            e = cudaErrorInvalidSymbol;
        if (e == cudaSuccess)
            e = shadow(at[done], at[done] + size);
    }
    for (size_t i = 0; i < n && vs != NULL && at != NULL; i++) {
        if (e == cudaSuccess) {
            *vs[i]->ptr = (void *)(uintptr_t)at[i];
            vs[i]->ready = 1;
        } else if (i + 1 < done) {
            fe_mem_untrack((void *)(uintptr_t)at[i]);
            gvs_remote_managed_forget(at[i]);
        }
    }
    gvs_free(vs);
    gvs_free(at);
    return e;
}

/* fork() --------------------------------------------------------------------
 * The child's session is new: its module's variables are to be found
 * again (the layer drops the shadows). */

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (struct managed_var *v = vars; v != NULL; v = v->next)
        v->ready = 0;
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void managed_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
