// Driver API functions of the CUDA test programs, found at run time in
// libcuda.so.1 as frameworks find them: through gvs that is its driver
// frontend, natively NVIDIA's driver.  A program linked with -lcuda would
// not even start on a machine without a driver, where the e2e tests run
// it to see it fail as natively.  DRIVER(cuName)(args...) calls the
// function cuda.h names cuName (its versioned export: cuStreamWaitValue32
// is cuStreamWaitValue32_v2), with cuda.h's prototype.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <dlfcn.h>

#define GVS_DRIVER_NAME2(f) #f
#define GVS_DRIVER_NAME(f) GVS_DRIVER_NAME2(f)
#define DRIVER(f) (*(__typeof__(&f))gvs_driver_sym(GVS_DRIVER_NAME(f)))

static inline void *gvs_driver_sym(const char *name)
{
    static void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *p = lib != NULL ? dlsym(lib, name) : NULL;
    if (p == NULL) {
        printf("FAIL no driver function %s\n", name);
        exit(1);
    }
    return p;
}

// The driver's name of a result.
static inline const char *driver_error_name(CUresult r)
{
    const char *n = "unknown";
    DRIVER(cuGetErrorName)(r, &n);
    return n;
}

// Makes the primary context of device dev, the runtime's, the thread's
// current one for the driver API too, as a library sharing the runtime's
// context retains it: 0, or 1 after printing why not.
static inline int driver_use_primary(int dev)
{
    CUcontext ctx;
    CUresult r = DRIVER(cuInit)(0);
    if (r == CUDA_SUCCESS)
        r = DRIVER(cuDevicePrimaryCtxRetain)(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = DRIVER(cuCtxSetCurrent)(ctx);
    if (r != CUDA_SUCCESS)
        printf("FAIL the primary context of device %d: %s\n", dev,
               driver_error_name(r));
    return r != CUDA_SUCCESS;
}
