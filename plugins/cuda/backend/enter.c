/* The first step of every op (be.h). */
#include "be.h"

#include <pthread.h>

struct cuda_be_driver cuda_be_drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static void load(void)
{
    loaded = cuda_be_driver_load() == 0;
}

CUresult cuda_be_enter(struct gvs_call *call)
{
    (void)call;
    pthread_once(&once, load);
    return loaded ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}
