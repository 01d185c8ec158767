// Events: flags, recording, queries, synchronization, elapsed time, and
// the errors of misuse.
#include "check.h"

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

int main()
{
    int khz;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start, stop, nt, bs;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreateWithFlags(&stop, cudaEventDefault));
    CHECK(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&bs, cudaEventBlockingSync));
    cudaEvent_t e;
    printf("bad flags: %s\n",
           cudaGetErrorName(cudaEventCreateWithFlags(&e, 0xff)));
    printf("interprocess with timing: %s\n",
           cudaGetErrorName(cudaEventCreateWithFlags(&e, cudaEventInterprocess)));
    CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess |
                                           cudaEventDisableTiming));
    CHECK(cudaEventDestroy(e));
    printf("null event pointer: %s\n", cudaGetErrorName(cudaEventCreate(NULL)));

    float ms = -1;
    printf("never recorded: query %s sync %s elapsed %s\n",
           cudaGetErrorName(cudaEventQuery(start)),
           cudaGetErrorName(cudaEventSynchronize(start)),
           cudaGetErrorName(cudaEventElapsedTime(&ms, start, stop)));
    printf("null ms: %s\n",
           cudaGetErrorName(cudaEventElapsedTime(NULL, start, stop)));
    EXPECT(cudaGetLastError() != cudaSuccess);

    CHECK(cudaEventRecord(start, s));
    spin<<<1, 1, 0, s>>>((long long)khz * 200);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecordWithFlags(stop, s, cudaEventRecordDefault));
    CHECK(cudaEventRecord(nt, s));
    CHECK(cudaEventRecord(bs, s));
    printf("while spinning: query %s elapsed %s\n",
           cudaGetErrorName(cudaEventQuery(stop)),
           cudaGetErrorName(cudaEventElapsedTime(&ms, start, stop)));
    CHECK(cudaEventSynchronize(bs));
    CHECK(cudaEventSynchronize(stop));
    printf("after sync: query %s\n", cudaGetErrorName(cudaEventQuery(stop)));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("elapsed at least 150 ms: %s\n", ms >= 150 ? "yes" : "no");
    printf("elapsed with a no-timing event: %s\n",
           cudaGetErrorName(cudaEventElapsedTime(&ms, start, nt)));
    printf("record flags 5: %s\n",
           cudaGetErrorName(cudaEventRecordWithFlags(stop, s, 5)));
    printf("record external outside capture: %s\n",
           cudaGetErrorName(cudaEventRecordWithFlags(stop, s,
                                                     cudaEventRecordExternal)));
    printf("wait flags 5: %s\n",
           cudaGetErrorName(cudaStreamWaitEvent(s, stop, 5)));
    EXPECT(cudaGetLastError() != cudaSuccess);

    // Re-recording moves the event; the per-thread and legacy streams
    // record too.
    CHECK(cudaEventRecord(start, 0));
    CHECK(cudaEventRecord(stop, cudaStreamPerThread));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("re-recorded: %s\n", ms >= 0 ? "ok" : "WRONG");

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(nt));
    CHECK(cudaEventDestroy(bs));
    CHECK(cudaStreamDestroy(s));
    printf("done\n");
    return 0;
}
