#include "mem3d.h"

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

int cudart_be_malloc_3d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t w, h, d;
    apigen_get_u64(&c, &w);
    apigen_get_u64(&c, &h);
    apigen_get_u64(&c, &d);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cudaPitchedPtr p = {0};
    uint64_t bound = be_quota_pitched_bound(w, h, d);
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_quota_take(bound);
    if (e == cudaSuccess) {
        e = cudaMalloc3D(&p, (struct cudaExtent){w, h, d});
        /* The pitch CUDA chose is at most the bound's, so the bound
         * holds: CUDA's own size is pitch x height x depth. */
        be_quota_settle(call, e, BE_QUOTA_PTR, (uint64_t)(uintptr_t)p.ptr, 0,
                        bound, e == cudaSuccess ? p.pitch * h * d : 0);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p.ptr);
        apigen_put_u64(&c, p.pitch);
    }
    return c.rc;
}

/* Request: u64 pointer, u64 pitch, u64 rows per slice, i32 value, box,
 * u8 async, u64 stream.  The box's rows must lie in device memory. */
int cudart_be_memset3d(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct gvs_remote_side side = {GVS_RSIDE_DEVICE, 0, 0, 0, 0, 0, 0};
    struct gvs_remote_box b;
    int32_t value;
    uint8_t async;
    uint64_t stream;
    apigen_get_u64(&c, &side.addr);
    apigen_get_u64(&c, &side.pitch);
    apigen_get_u64(&c, &side.ysize);
    apigen_get_i32(&c, &value);
    gvs_remote_get_box(&c, &b);
    apigen_get_u8(&c, &async);
    apigen_get_u64(&c, &stream);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (async > 1)
        return GVS_E_PROTO;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess && b.w != 0 && b.h != 0 && b.d != 0)
        e = be_check_linear(&side, &b);
    /* A memset's narrow pitch is an invalid value, as CUDA reports it. */
    if (e == cudaErrorInvalidPitchValue)
        e = cudaErrorInvalidValue;
    struct cudaPitchedPtr ptr = (struct cudaPitchedPtr){
        (void *)(uintptr_t)side.addr, side.pitch, b.w, side.ysize};
    struct cudaExtent ext = (struct cudaExtent){b.w, b.h, b.d};
    if (e == cudaSuccess && !async) {
        e = cudaMemset3D(ptr, value, ext);
    } else if (e == cudaSuccess) {
        cudaStream_t s;
        e = be_stream(call, stream, &s);
        if (e == cudaSuccess)
            e = cudaMemset3DAsync(ptr, value, ext, s);
    }
    apigen_put_i32(&c, e);
    return c.rc;
}
