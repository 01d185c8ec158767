/* The worker's NVML, resolved by name (be.h). */
#include "be.h"

#include <dlfcn.h>
#include <pthread.h>

struct nvml_be_lib nvml_be_lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static nvmlReturn_t state = NVML_ERROR_UNINITIALIZED;
static int initialized;

static nvmlReturn_t load(void)
{
    /* A host without NVML is one without NVIDIA's driver: NVML's answer
     * there, as the client's when it finds no gvsd. */
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    /* ISO C has no conversion from void * to a function pointer. */
#define NVML_BE_RESOLVE(name)                                                \
    if ((*(void **)&nvml_be_lib.name = dlsym(h, #name)) == NULL)             \
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    NVML_BE_CALLED(NVML_BE_RESOLVE)
    NVML_BE_CALLED_BY_HAND(NVML_BE_RESOLVE)
#undef NVML_BE_RESOLVE
#define NVML_BE_RESOLVE_IF_THERE(name) *(void **)&nvml_be_lib.name = dlsym(h, #name);
    NVML_BE_CALLED_IF_THERE(NVML_BE_RESOLVE_IF_THERE)
#undef NVML_BE_RESOLVE_IF_THERE
    nvmlReturn_t r = NVML_LIB(nvmlInit_v2)();
    if (r != NVML_SUCCESS)
        return r;
    initialized = 1;
    return nvml_be_devices_list();
}

static void start(void)
{
    state = load();
}

nvmlReturn_t nvml_be_ready(void)
{
    pthread_once(&once, start);
    return state;
}

void nvml_be_unload(void)
{
    if (initialized)
        (void)NVML_LIB(nvmlShutdown)();
    initialized = 0;
}
