/*
 * cuda.mock_order (and gpu.driver_order natively and through gvs): stream
 * order across the program's threads.  What one thread enqueued is ahead
 * of what another enqueues on the same stream after it, posted or not: a
 * thread fills device memory with cuMemsetD32Async (which returns at
 * once) and ends, and the main thread's synchronous copy of the last
 * word, which comes after it in the legacy stream, reads the value.
 * PyTorch works this way (its autograd thread launches behind the main
 * thread's work); gvsd once let such a copy pass the posted fill, whose
 * op may wait and so was taken for one that other threads go past.
 * Prints "ok".
 */
#include <pthread.h>

#include "driver_check.h"

#define WORDS (16u << 20) /* 64 MiB: a fill that takes a while */
#define ROUNDS 8

static CUcontext ctx;
static CUdeviceptr mem;

static void *fill(void *arg)
{
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuMemsetD32Async(mem, (unsigned)(uintptr_t)arg, WORDS, NULL));
    return NULL;
}

int main(void)
{
    CUdevice dev;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuMemAlloc(&mem, (size_t)WORDS * 4));
    CHECK(cuMemsetD32(mem, 0, WORDS));
    for (unsigned v = 1; v <= ROUNDS; v++) {
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, fill, (void *)(uintptr_t)v) == 0);
        EXPECT(pthread_join(t, NULL) == 0);
        unsigned last = 0;
        CHECK(cuMemcpyDtoH(&last, mem + (size_t)(WORDS - 1) * 4, 4));
        if (last != v) {
            printf("FAIL round %u: the last word is %u\n", v, last);
            return 1;
        }
    }
    CHECK(cuMemFree(mem));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("ok\n");
    return 0;
}
