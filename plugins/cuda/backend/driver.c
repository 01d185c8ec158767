/* The worker's NVIDIA driver, resolved by name (be.h).  The same
 * libcuda.so.1 the CUDA runtime of the cudart plugin loads: one driver,
 * one set of contexts, for every API of the session. */
#include "be.h"

#include <dlfcn.h>

int cuda_be_driver_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return -1;
    /* ISO C has no conversion from void * to a function pointer. */
#define CUDA_BE_RESOLVE(name)                                                \
    if ((*(void **)&cuda_be_drv.name = dlsym(h, #name)) == NULL)             \
        return -1;
    CUDA_BE_CALLED(CUDA_BE_RESOLVE)
    CUDA_BE_CALLED_BY_HAND(CUDA_BE_RESOLVE)
#undef CUDA_BE_RESOLVE
    return 0;
}
