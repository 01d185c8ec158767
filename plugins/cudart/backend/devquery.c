/*
 * Device queries whose arguments are arrays or structures
 * (api/80-misc.api): atomic capabilities and the 1D linear texture
 * width.  Device numbers are the client's: the worker shows the devices
 * the client sees (VISIBLE_DEVICES).
 */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* More operations than this are more than CUDA defines. */
#define MAX_ATOMIC_OPS 1024u

/* Request: u32 n, n x i32 operation, i32 device, i32 peer (-1: host).
 * Reply: i32, n x u32 capabilities. */
int cudart_be_atomic_caps(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t n;
    int32_t dev, peer;
    apigen_get_u32(&c, &n);
    if (c.rc == 0 && n > MAX_ATOMIC_OPS)
        return GVS_E_RANGE;
    enum cudaAtomicOperation *ops = gvs_calloc(n ? n : 1, sizeof(*ops));
    unsigned *caps = gvs_calloc(n ? n : 1, sizeof(*caps));
    if (ops == NULL || caps == NULL) {
        gvs_free(ops);
        gvs_free(caps);
        return GVS_E_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        int32_t o;
        apigen_get_i32(&c, &o);
        ops[i] = (enum cudaAtomicOperation)o;
    }
    apigen_get_i32(&c, &dev);
    apigen_get_i32(&c, &peer);
    if (apigen_end(&c) == 0) {
        cudaError_t e =
            peer < 0 ? cudaDeviceGetHostAtomicCapabilities(caps, ops, n, dev)
                     : cudaDeviceGetP2PAtomicCapabilities(caps, ops, n, dev,
                                                          peer);
        apigen_put_i32(&c, e);
        for (uint32_t i = 0; e == cudaSuccess && i < n; i++)
            apigen_put_u32(&c, caps[i]);
    }
    gvs_free(ops);
    gvs_free(caps);
    return c.rc;
}

/* Request: channel desc (i32 x, y, z, w, kind), i32 device.  Reply: i32,
 * u64 width in elements. */
int cudart_be_tex1d_linear_max_width(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cudaChannelFormatDesc d;
    int32_t kind, dev;
    apigen_get_i32(&c, &d.x);
    apigen_get_i32(&c, &d.y);
    apigen_get_i32(&c, &d.z);
    apigen_get_i32(&c, &d.w);
    apigen_get_i32(&c, &kind);
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    d.f = (enum cudaChannelFormatKind)kind;
    size_t w = 0;
    cudaError_t e = cudaDeviceGetTexture1DLinearMaxWidth(&w, &d, dev);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, w);
    return c.rc;
}
