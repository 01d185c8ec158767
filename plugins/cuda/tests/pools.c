/*
 * cuda.mock_pools: memory pools and the stream-ordered allocator through
 * the driver frontend, gvsd and the mock driver (mock_driver.c): an
 * allocation on a stream is device memory to copies and freed on the
 * stream; a device's default pool has one id; a created pool keeps an
 * attribute, serves allocations, becomes the device's current pool and
 * is destroyed; bad pools are refused.  Then the device queries in the
 * runtime's wire forms: atomic capabilities, the driver's logs.  Prints
 * "ok".
 */
#include <cuda.h>
#include <stdint.h>
#include <string.h>

#include "driver_check.h"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CUdeviceptr p;
    uint32_t in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = 3u * (uint32_t)i;
    CHECK(cuMemAllocAsync(&p, sizeof(in), s));
    CHECK(cuMemcpyHtoDAsync(p, in, sizeof(in), s));
    memset(out, 0, sizeof(out));
    /* Pool memory is device memory to a unified copy. */
    CHECK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)out, p, sizeof(out), s));
    CHECK(cuStreamSynchronize(s));
    EXPECT(memcmp(in, out, sizeof(in)) == 0);
    CHECK(cuMemFreeAsync(p, s));
    EXPECT(cuMemFreeAsync(p, s) == CUDA_ERROR_INVALID_VALUE);

    CUmemoryPool def, def2, cur, pool;
    CHECK(cuDeviceGetDefaultMemPool(&def, dev));
    CHECK(cuDeviceGetDefaultMemPool(&def2, dev));
    CHECK(cuDeviceGetMemPool(&cur, dev));
    EXPECT(def == def2 && cur == def && def != NULL);
    EXPECT(cuDeviceGetDefaultMemPool(&def2, 7) == CUDA_ERROR_INVALID_DEVICE);

    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    CHECK(cuMemPoolCreate(&pool, &props));
    EXPECT(pool != def);
    uint64_t threshold = UINT64_MAX, got = 0;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                &threshold));
    CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                &got));
    EXPECT(got == UINT64_MAX);
    CHECK(cuMemAllocFromPoolAsync(&p, 4096, pool, s));
    CHECK(cuMemFreeAsync(p, s));
    EXPECT(cuMemAllocFromPoolAsync(&p, 4096, NULL, s) ==
           CUDA_ERROR_INVALID_VALUE);

    CHECK(cuDeviceSetMemPool(dev, pool));
    CHECK(cuDeviceGetMemPool(&cur, dev));
    EXPECT(cur == pool);
    CHECK(cuDeviceSetMemPool(dev, def));
    CHECK(cuMemPoolDestroy(pool));
    EXPECT(cuMemPoolDestroy(pool) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemPoolDestroy(def) == CUDA_ERROR_INVALID_VALUE);

    CUatomicOperation ops[2] = {CU_ATOMIC_OPERATION_INTEGER_ADD,
                                CU_ATOMIC_OPERATION_CAS};
    unsigned int caps[2] = {0, 0};
    CHECK(cuDeviceGetHostAtomicCapabilities(caps, ops, 2, dev));
    EXPECT(caps[0] == CU_ATOMIC_CAPABILITY_SIGNED &&
           caps[1] == CU_ATOMIC_CAPABILITY_SIGNED);
    EXPECT(cuDeviceGetHostAtomicCapabilities(caps, ops, 2, 9) ==
           CUDA_ERROR_INVALID_DEVICE);
    char logs[64];
    size_t size = sizeof(logs);
    CUlogIterator it = 4;
    CHECK(cuLogsDumpToMemory(&it, logs, &size, 0));
    EXPECT(size == 16 && strcmp(logs, "mock driver log\n") == 0 && it == 5);

    CHECK(cuStreamDestroy(s));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("ok\n");
    return 0;
}
