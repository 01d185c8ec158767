/* Pinning host memory (the backend's mappings of memory the client
 * shares): the mock's device is the host, so any mapping is reachable
 * and its device address is its own. */
#include <cuda_runtime_api.h>
#include <stdint.h>

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return ptr == NULL || size == 0 ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    return ptr == NULL ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                     unsigned int flags)
{
    if (pDevice == NULL || flags != 0)
        return cudaErrorInvalidValue;
    *pDevice = pHost;
    return cudaSuccess;
}
