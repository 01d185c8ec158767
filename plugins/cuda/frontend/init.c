/* cuInit: the driver's initialization, on the backend (cuda.api). */
#include "call.h"

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
