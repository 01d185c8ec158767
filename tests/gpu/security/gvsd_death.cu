// gpu.security.gvsd_death (gvsd_death.py): what a client sees when gvsd
// dies under it.
//   gvsd_death wait    makes a session (an allocation and a copy), prints
//                      "ready", waits for the line "go" (the driver has
//                      killed gvsd meanwhile), then its next call must
//                      fail within 2 s with cudaErrorDevicesUnavailable
//                      (docs/cudart.md), and so must the one after (the
//                      failure is sticky); prints "lost ERROR MS".
//   gvsd_death fresh   an allocation and a copy round trip; prints "ok".
#include <chrono>
#include <cstdio>

#include "../check.h"
#include "roles.h"

static int round_trip()
{
    int *d, h = 42, back = 0;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaMemcpy(d, &h, sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(&back, d, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(back == 42);
    CHECK(cudaFree(d));
    return 0;
}

static int wait_for_death()
{
    round_trip();
    tell_driver("ready");
    if (expect_line("go") != 0)
        return 1;
    auto start = std::chrono::steady_clock::now();
    void *p;
    cudaError_t e = cudaMalloc(&p, 4096);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    EXPECT(e == cudaErrorDevicesUnavailable);
    EXPECT(ms < 2000);
    EXPECT(cudaDeviceSynchronize() == cudaErrorDevicesUnavailable);
    printf("lost %s %lld\n", cudaGetErrorName(e), (long long)ms);
    return 0;
}

static int fresh()
{
    round_trip();
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const role roles[] = {{"wait", wait_for_death}, {"fresh", fresh}};
    return run_role(argc, argv, roles);
}
