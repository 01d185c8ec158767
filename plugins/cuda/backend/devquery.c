/* Device queries in the runtime plugin's wire forms (cuda.api
 * ATOMIC_CAPS, LOGS_DUMP): the layer's handler bodies (remote_be.h) over
 * the driver's functions. */
#include "be.h"

/* The operations are the enum's values, read through their int type. */
static int32_t caps(struct gvs_call *call, unsigned int *out,
                    const int32_t *ops, unsigned int n, int dev, int peer)
{
    const CUatomicOperation *o = (const void *)ops;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = peer < 0 ? CUDA_DRV(cuDeviceGetHostAtomicCapabilities)(out, o, n,
                                                                   dev)
                     : CUDA_DRV(cuDeviceGetP2PAtomicCapabilities)(
                           out, o, n, dev, peer);
    return r;
}

int cuda_be_atomic_caps(struct gvs_call *call)
{
    return cuda_be_remote->atomic_caps(call, caps);
}

static int32_t dump(struct gvs_call *call, unsigned int *it, char *buf,
                    size_t *size, unsigned int flags)
{
    CUresult r = cuda_be_enter(call);
    return r == CUDA_SUCCESS
               ? CUDA_DRV(cuLogsDumpToMemory)(it, buf, size, flags)
               : r;
}

int cuda_be_logs_dump(struct gvs_call *call)
{
    return cuda_be_remote->logs_dump(call, dump);
}
