/* cudaProfilerStart/Stop: the profiler runs on the GPU host, around the
 * session's own work there. */
#include "fe.h"

#pragma GCC visibility push(default)
#include <cuda_profiler_api.h>
#pragma GCC visibility pop

#include "cudart_fe_gen.h"

cudaError_t cudaProfilerStart(void)
{
    return cudart_fe_ret(cudart_rpc_PROFILER(1));
}

cudaError_t cudaProfilerStop(void)
{
    return cudart_fe_ret(cudart_rpc_PROFILER(0));
}
