/* Device queries that are not a driver call alone (cuda.api). */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "gvs/err.h"

/* The longest name a device has (cudaDeviceProp's name field). */
#define NAME_MAX_LEN 256

int cuda_be_cudevicetotalmem_v2(struct gvs_call *call)
{
    struct cuda_be_session *s = call->state;
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    size_t bytes = 0;
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDeviceTotalMem_v2)(&bytes, (CUdevice)dev);
    /* What the session may hold, as cudart's cudaMemGetInfo shows it. */
    struct gvs_session_info info;
    s->host->session_info(s->session, &info);
    if (r == CUDA_SUCCESS && info.memory_quota != 0 &&
        info.memory_quota < bytes)
        bytes = (size_t)info.memory_quota;
    apigen_put_i32(&c, (int32_t)r);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(&c, bytes);
    return c.rc;
}

int cuda_be_device_get_name(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t dev;
    char name[NAME_MAX_LEN];
    apigen_get_i32(&c, &dev);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuDeviceGetName)(name, (int)sizeof(name), (CUdevice)dev);
    apigen_put_i32(&c, (int32_t)r);
    if (r == CUDA_SUCCESS)
        apigen_put_blob(&c, name, strnlen(name, sizeof(name)));
    return c.rc;
}
