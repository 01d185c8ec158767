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

int main(void)
{
    CUdeviceptr p = 0;
    size_t size = 0;
    const char *s = NULL;
    int tid = 0;
    /* Graphics interop stays unsupported (unsupported.reasons). */
    if (cuGraphicsResourceGetMappedPointer(&p, &size, NULL) !=
            CUDA_ERROR_NOT_SUPPORTED ||
        cuGraphicsMapResources(0, NULL, NULL) != CUDA_ERROR_NOT_SUPPORTED ||
        cuGraphicsUnregisterResource(NULL) != CUDA_ERROR_NOT_SUPPORTED ||
        cuCheckpointProcessGetRestoreThreadId(1, &tid) !=
            CUDA_ERROR_NOT_SUPPORTED ||
        cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s) != CUDA_SUCCESS ||
        strcmp(s, "operation not supported") != 0) {
        printf("FAIL\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
