/* Device attributes, asked of the backend once per device and attribute
 * through either API and answered here after that (gvs_remote.h): they
 * describe the hardware, which does not change while the program runs,
 * and the runtime's and the driver's attribute numbers are the same.
 * Failures are not kept, so a bad device or attribute is answered by the
 * backend every time, with the code CUDA gives. */
#include <pthread.h>
#include <stdint.h>

#include "gvs/client.h"
#include "gvs/comm.h"
#include "gvs/mem.h"
#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

/* cudaDevAttrCanMapHostMemory, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY. */
#define ATTR_CAN_MAP_HOST_MEMORY 19

#define CACHE_DEVICES 64
#define CACHE_ATTRS 512

struct dev_attrs {
    uint8_t have[CACHE_ATTRS];
    int value[CACHE_ATTRS];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev_attrs *devs[CACHE_DEVICES];

static int cacheable(int device, int attr)
{
    return device >= 0 && device < CACHE_DEVICES && attr >= 0 &&
           attr < CACHE_ATTRS;
}

EXPORT int gvs_remote_device_attr(int device, int attr, int *value)
{
    int hit = 0;
    if (!cacheable(device, attr))
        return 0;
    pthread_mutex_lock(&lock);
    const struct dev_attrs *d = devs[device];
    if (d != NULL && d->have[attr]) {
        *value = d->value[attr];
        hit = 1;
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

EXPORT int gvs_remote_maps_host_memory(void)
{
    struct gvs_client *cl;
    return gvs_client_get(&cl) == 0 &&
           (gvs_client_caps(cl) & (GVS_CONN_CAP_FDS | GVS_CONN_CAP_AREA)) != 0;
}

EXPORT void gvs_remote_device_attr_keep(int device, int attr, int *pvalue)
{
    if (attr == ATTR_CAN_MAP_HOST_MEMORY && !gvs_remote_maps_host_memory())
        *pvalue = 0;
    int value = *pvalue;
    if (!cacheable(device, attr))
        return;
    pthread_mutex_lock(&lock);
    /* Out of memory it is simply not kept. */
    if (devs[device] == NULL)
        devs[device] = gvs_calloc(1, sizeof(*devs[device]));
    if (devs[device] != NULL) {
        devs[device]->value[attr] = value;
        devs[device]->have[attr] = 1;
    }
    pthread_mutex_unlock(&lock);
}
