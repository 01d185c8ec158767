/* cuInit and the device calls that are more than a generated round trip
 * (cuda.api). */
#include "call.h"

#include <string.h>

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

/* The backend sends the whole name; it is cut to len here, as the driver
 * cuts it. */
CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    struct apigen_call c;
    const uint8_t *bytes;
    size_t n;
    if (name == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_i32(&c, (int32_t)dev);
    r = cuda_fe_run(&c, CUDA_OP_DEVICE_GET_NAME, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_blob(&c, &bytes, &n);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    if (n > (size_t)len - 1)
        n = (size_t)len - 1;
    memcpy(name, bytes, n);
    name[n] = '\0';
    return CUDA_SUCCESS;
}
