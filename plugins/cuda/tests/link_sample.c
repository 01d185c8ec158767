/*
 * Linked with `-lcuda` against the frontend's directory, as Triton
 * compiles its launchers: cuda.h maps the names written here to the
 * current ABI (cuMemAlloc to cuMemAlloc_v2; cuStreamQuery to
 * cuStreamQuery_ptsz under CUDA_API_PER_THREAD_DEFAULT_STREAM), which
 * the frontend must export.  Prints "ok" when the calls fail as stubs do
 * (functions not remoted yet: unsupported.reasons).
 */
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cudaProfiler.h>

int main(void)
{
    CUarray a = NULL;
    const char *s = NULL;
    CUDA_ARRAY_DESCRIPTOR desc;
    CUDA_MEMCPY3D copy;
    memset(&desc, 0, sizeof(desc));
    memset(&copy, 0, sizeof(copy));
    if (cuArrayCreate(&a, &desc) != CUDA_ERROR_NOT_SUPPORTED ||
        cuMemcpy3D(&copy) != CUDA_ERROR_NOT_SUPPORTED ||
        cuGraphicsMapResources(0, NULL, NULL) != CUDA_ERROR_NOT_SUPPORTED ||
        cuProfilerStart() != CUDA_ERROR_NOT_SUPPORTED ||
        cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s) != CUDA_SUCCESS ||
        strcmp(s, "operation not supported") != 0) {
        printf("FAIL\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
