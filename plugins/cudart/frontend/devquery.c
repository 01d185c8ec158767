/* Device queries whose arguments are arrays or structures
 * (api/80-misc.api ATOMIC_CAPS, TEX1D_LINEAR_MAX_WIDTH). */
#include "fe.h"

#include "cudart_ops.h"
#include "gvs_remote.h"

/* peer < 0: the host's capabilities.  The operations are the enum's
 * values, read through their int type. */
static cudaError_t atomic_caps(unsigned *caps,
                               const enum cudaAtomicOperation *ops,
                               unsigned count, int dev, int peer)
{
    return (cudaError_t)gvs_remote_atomic_caps(
        &fe_remote_api, CUDART_OP_ATOMIC_CAPS, caps, (const void *)ops, count,
        dev, peer);
}

cudaError_t cudaDeviceGetHostAtomicCapabilities(
    unsigned int *capabilities, const enum cudaAtomicOperation *operations,
    unsigned int count, int device)
{
    if (device < 0)
        return cudart_fe_ret(cudaErrorInvalidDevice);
    return cudart_fe_ret(
        atomic_caps(capabilities, operations, count, device, -1));
}

cudaError_t cudaDeviceGetP2PAtomicCapabilities(
    unsigned int *capabilities, const enum cudaAtomicOperation *operations,
    unsigned int count, int srcDevice, int dstDevice)
{
    if (srcDevice < 0 || dstDevice < 0)
        return cudart_fe_ret(cudaErrorInvalidDevice);
    return cudart_fe_ret(
        atomic_caps(capabilities, operations, count, srcDevice, dstDevice));
}

static cudaError_t tex1d_width(size_t *width,
                               const struct cudaChannelFormatDesc *d, int dev)
{
    struct apigen_call c;
    uint64_t w;
    if (width == NULL || d == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_i32(&c, d->x);
    apigen_put_i32(&c, d->y);
    apigen_put_i32(&c, d->z);
    apigen_put_i32(&c, d->w);
    apigen_put_i32(&c, d->f);
    apigen_put_i32(&c, dev);
    e = cudart_fe_run(&c, CUDART_OP_TEX1D_LINEAR_MAX_WIDTH, 0);
    if (e == cudaSuccess) {
        apigen_get_u64(&c, &w);
        *width = (size_t)w;
    }
    return cudart_fe_end(&c, e);
}

cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(
    size_t *maxWidthInElements, const struct cudaChannelFormatDesc *fmtDesc,
    int device)
{
    return cudart_fe_ret(tex1d_width(maxWidthInElements, fmtDesc, device));
}
