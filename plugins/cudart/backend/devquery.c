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

/* The runtime's atomic queries, for the layer's ATOMIC_CAPS body: the
 * operations are the enum's values, read through their int type. */
static int32_t caps(struct gvs_call *call, unsigned int *out,
                    const int32_t *ops, unsigned int n, int dev, int peer)
{
    (void)call;
    const enum cudaAtomicOperation *o = (const void *)ops;
    return peer < 0 ? cudaDeviceGetHostAtomicCapabilities(out, o, n, dev)
                    : cudaDeviceGetP2PAtomicCapabilities(out, o, n, dev,
                                                         peer);
}

/* Request: u32 n, n x i32 operation, i32 device, i32 peer (-1: host).
 * Reply: i32, n x u32 capabilities. */
int cudart_be_atomic_caps(struct gvs_call *call)
{
    return be_remote->atomic_caps(call, caps);
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
