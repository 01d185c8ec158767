/*
 * nvml.nodriver, nvml.noserver: NVML through gvs where there is no GPU
 * to see: a gvsd on a host without NVIDIA's driver (this machine's, with
 * the real plugins), or no gvsd at all.  nvmlInit answers
 * NVML_ERROR_DRIVER_NOT_LOADED either way, as NVIDIA's NVML on a host
 * without its driver; what needs no driver still works.  Prints "ok".
 */
#include <nvml.h>
#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                   \
            return 1;                                                        \
        }                                                                    \
    } while (0)

int main(void)
{
    unsigned n;
    CHECK(nvmlDeviceGetCount_v2(&n) == NVML_ERROR_UNINITIALIZED);
    CHECK(nvmlInit_v2() == NVML_ERROR_DRIVER_NOT_LOADED);
    CHECK(nvmlInit_v2() == NVML_ERROR_DRIVER_NOT_LOADED);
    CHECK(nvmlDeviceGetCount_v2(&n) == NVML_ERROR_UNINITIALIZED);
    CHECK(nvmlShutdown() == NVML_ERROR_UNINITIALIZED);
    CHECK(strcmp(nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED),
                 "Driver Not Loaded") == 0);
    printf("ok\n");
    return 0;
}
