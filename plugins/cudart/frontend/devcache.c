/* Device properties and attributes, asked of the backend once per device
 * (and attribute) and answered locally after that: they describe the
 * hardware, which does not change while the program runs.  Failures are
 * not kept, so a bad device or attribute is answered by the backend
 * every time, with the code CUDA gives.  The attributes are the layer's
 * table (gvs_remote_device_attr), shared with the driver frontend. */
#include "fe.h"

#include <pthread.h>
#include <string.h>

#include "cudart_fe_gen.h"
#include "gvs/mem.h"
#include "gvs_remote.h"

#define CACHE_DEVICES 64

struct dev_cache {
    int have_prop;
    struct cudaDeviceProp prop;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev_cache *cache[CACHE_DEVICES];

/* Caller holds cache_lock.  NULL for a device out of the cache's range
 * or when out of memory: the query is then simply not cached. */
static struct dev_cache *entry(int device)
{
    if (device < 0 || device >= CACHE_DEVICES)
        return NULL;
    if (cache[device] == NULL)
        cache[device] = gvs_calloc(1, sizeof(*cache[device]));
    return cache[device];
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (prop == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    pthread_mutex_lock(&cache_lock);
    struct dev_cache *d = entry(device);
    int hit = d != NULL && d->have_prop;
    if (hit)
        *prop = d->prop;
    pthread_mutex_unlock(&cache_lock);
    if (hit)
        return cudaSuccess;
    e = cudart_rpc_cudaGetDeviceProperties(prop, device);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    if (!gvs_remote_maps_host_memory())
        prop->canMapHostMemory = 0;
    pthread_mutex_lock(&cache_lock);
    if ((d = entry(device)) != NULL) {
        d->prop = *prop;
        d->have_prop = 1;
    }
    pthread_mutex_unlock(&cache_lock);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                   int device)
{
    if (value == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    if (gvs_remote_device_attr(device, (int)attr, value))
        return cudaSuccess;
    e = cudart_rpc_cudaDeviceGetAttribute(value, attr, device);
    if (e != cudaSuccess)
        return cudart_fe_ret(e);
    gvs_remote_device_attr_keep(device, (int)attr, value);
    return cudaSuccess;
}
