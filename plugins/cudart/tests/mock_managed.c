/*
 * Managed memory for the host-memory mock of the CUDA runtime
 * (mock_cudart.c): the mock's "device" memory is host memory already, so
 * a managed allocation is a cudaMalloc one; the module's __managed__
 * variables are the two mock_graphs.cu declares.
 */
#include <string.h>

#include <cuda_runtime_api.h>

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    if (size == 0 ||
        (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        return cudaErrorInvalidValue;
    return cudaMalloc(p, size);
}

/* mock_graphs.cu's __managed__ int mcounter[4] (starting {42, 0, 0, 0})
 * and __managed__ int mpair[2], in one page as a module's are. */
static char *segment;

cudaError_t cudaLibraryGetManaged(void **dptr, size_t *bytes,
                                  cudaLibrary_t lib, const char *name)
{
    (void)lib;
    int counter = strcmp(name, "mcounter") == 0;
    if (!counter && strcmp(name, "mpair") != 0)
        return cudaErrorSymbolNotFound;
    if (segment == NULL) {
        cudaError_t e = cudaMalloc((void **)&segment, 64);
        if (e != cudaSuccess)
            return e;
        memset(segment, 0, 64);
        ((int *)segment)[0] = 42;
    }
    *dptr = counter ? segment : segment + 40;
    *bytes = counter ? 16 : 8;
    return cudaSuccess;
}

const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaSuccess ? "cudaSuccess" : "mock error";
}
