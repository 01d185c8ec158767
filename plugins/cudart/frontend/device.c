#include "fe.h"


#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs_remote.h"
#include "streams.h"

/* The device each thread works on, as in the real runtime, and the one
 * its lane has on the backend.  A thread that chooses none works on
 * device 0, whatever cudaSetValidDevices listed: that is what CUDA 13
 * does (seen on two H200s). */
static _Thread_local int thread_dev;
static _Thread_local int lane_dev;
/* The lane was sent a device: cudaSetDevice makes the device's primary
 * context current on the thread at once, so the backend is told even of
 * device 0, the one a lane starts on (backend/lanes.c). */
static _Thread_local int lane_told;

int fe_thread_device(void)
{
    return thread_dev;
}

int fe_device_sync_locked(struct gvs_client *cl)
{
    int dev = fe_thread_device();
    gvs_remote_runtime_device_set(dev);
    if (lane_dev == dev)
        return 0;
    struct gvs_buf *b = gvs_buf_new(sizeof(int32_t));
    if (b == NULL)
        return GVS_E_NOMEM;
    int rc = gvs_buf_put_i32(b, dev);
    if (rc == 0) {
        struct iovec iov = {(void *)gvs_buf_ptr(b), gvs_buf_len(b)};
        rc = gvs_client_send_locked(cl, CUDART_PLUGIN_ID,
                                    CUDART_OP_cudaSetDevice, GVS_F_NOREPLY,
                                    &iov, 1, NULL);
    }
    gvs_buf_free(b);
    if (rc == 0) {
        lane_dev = dev;
        lane_told = 1;
    }
    return rc;
}

/* Runs in the child's only thread. */
void fe_device_forget_session(void)
{
    lane_dev = 0;
    lane_told = 0;
}

static cudaError_t device_count_get(int *count)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e == cudaSuccess)
        *count = fe_device_count();
    return e;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(device_count_get(count));
}

cudaError_t cudaSetDevice(int device)
{
    int n;
    cudaError_t e = device_count_get(&n);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    if (device < 0 || device >= n)
        return cudart_fe_ret(cudaErrorInvalidDevice);
    thread_dev = device;
    struct gvs_client *cl;
    e = fe_client(&cl);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    gvs_client_lock(cl);
    if (!lane_told)
        lane_dev = -1;
    int rc = fe_device_sync_locked(cl);
    gvs_client_unlock(cl);
    return cudart_fe_ret(rc < 0 ? fe_transport_error(rc) : cudaSuccess);
}

cudaError_t cudaGetDevice(int *device)
{
    struct gvs_client *cl;
    if (device == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    *device = fe_thread_device();
    return cudaSuccess;
}

cudaError_t cudaSetValidDevices(int *device_arr, int len)
{
    int n;
    if (len < 0 || (len > 0 && device_arr == NULL))
        return cudart_fe_ret(cudaErrorInvalidValue);
    cudaError_t e = device_count_get(&n);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    if (len > n)
        return cudart_fe_ret(cudaErrorInvalidValue);
    for (int i = 0; i < len; i++)
        if (device_arr[i] < 0 || device_arr[i] >= n)
            return cudart_fe_ret(cudaErrorInvalidDevice);
    return cudaSuccess;
}

/* A primary context's release, reset or new flags: the remoting layer
 * forgets what it kept of its state (gvs_remote.h). */
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags,
                           unsigned int flags)
{
    gvs_remote_primary_changed();
    return cudart_fe_ret(cudart_rpc_cudaInitDevice(device, deviceFlags, flags));
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    gvs_remote_primary_changed();
    return cudart_fe_ret(cudart_rpc_cudaSetDeviceFlags(flags));
}

cudaError_t cudaDeviceReset(void)
{
    gvs_remote_primary_changed();
    cudaError_t e = cudart_rpc_cudaDeviceReset();
    if (e == cudaSuccess) {
        fe_mem_forget_device(fe_thread_device());
        fe_modules_forget_device(fe_thread_device());
        fe_known_forget_device(fe_thread_device());
    }
    return cudart_fe_ret(e);
}

/* The runtime version is the frontend's own: the one it was built for. */
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}
