/*
 * Managed memory.  The backend allocates it; the client mirrors each
 * allocation at the same address and sends the pages the program wrote
 * (MANAGED_PUSH) before device work.  Pushes are posted: a failure is
 * logged, and the context's error, if any, reaches the client with its
 * next call.
 */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

int cudart_be_malloc_managed(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size;
    uint32_t flags;
    apigen_get_u64(&c, &size);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    void *p = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(size);
    if (e == cudaSuccess) {
        e = cudaMallocManaged(&p, (size_t)size, flags);
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p, 0,
                        size, size);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
    return c.rc;
}

int cudart_be_managed_push(struct gvs_call *call)
{
    struct be_session *s = call->state;
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t dst;
    const uint8_t *data;
    size_t len;
    apigen_get_u64(&c, &dst);
    apigen_get_blob(&c, &data, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_check_device_range(dst, len);
    if (e == cudaSuccess && len > 0)
        e = cudaMemcpy((void *)(uintptr_t)dst, data, len,
                       cudaMemcpyHostToDevice);
    if (e != cudaSuccess)
        s->host->log(GVS_LOG_WARN, "managed memory push to 0x%llx failed: %s",
                     (unsigned long long)dst, cudaGetErrorName(e));
    if (!call->noreply)
        apigen_put_i32(&c, e);
    return c.rc;
}

/* Request: u32 module id, str name.  Reply: i32, u64 address, u64 size
 * of the module's __managed__ variable. */
int cudart_be_managed_var(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t id;
    char *name = NULL;
    apigen_get_u32(&c, &id);
    if (c.rc == 0)
        c.rc = gvs_buf_get_str(call->in, BE_NAME_MAX_LEN, &name);
    if (apigen_end(&c) < 0) {
        gvs_free(name);
        return c.rc;
    }
    struct be_module *m = be_module_get(call->state, id);
    if (m == NULL) {
        gvs_free(name);
        return GVS_E_RANGE;
    }
    void *p = NULL;
    size_t size = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaLibraryGetManaged(&p, &size, m->lib, name);
    gvs_free(name);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
        apigen_put_u64(&c, size);
    }
    return c.rc;
}
