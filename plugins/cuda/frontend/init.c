/* cuInit: the driver's initialization, on the backend (cuda.api); and
 * the backend driver's version, asked once. */
#include "call.h"

#include <stdatomic.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"

CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_rpc_cuInit(Flags);
    if (r == CUDA_SUCCESS)
        cuda_fe_set_initialized();
    return r;
}

/* NVIDIA's runtime asks for it again and again (1,749 times in 64
 * tokens of a GPT-2 decode); the backend's driver is the same for the
 * whole session. */
CUresult cuDriverGetVersion(int *driverVersion)
{
    static _Atomic int kept;
    if (driverVersion == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int v = atomic_load_explicit(&kept, memory_order_relaxed);
    if (v > 0) {
        *driverVersion = v;
        return CUDA_SUCCESS;
    }
    CUresult r = cuda_rpc_cuDriverGetVersion(driverVersion);
    if (r == CUDA_SUCCESS && *driverVersion > 0)
        atomic_store_explicit(&kept, *driverVersion, memory_order_relaxed);
    return r;
}
