// cudart.mock_devices*: several devices, peers and per-device settings of
// an unmodified -cudart shared program, through our libcudart.so.13 and a
// gvsd whose cudart plugin runs on the host-memory mock (mock_devices.c:
// two devices, which CUDA_VISIBLE_DEVICES narrows as CUDA does).
//
//   mock_devices                 the calls, on both devices
//   mock_devices expect P...     the devices shown are the mock's physical
//                                devices P... in this order ("none": no
//                                device at all)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_check.h"

static int expect(int argc, char **argv)
{
    int n = -1;
    if (argc == 1 && strcmp(argv[0], "none") == 0) {
        CHECK(cudaGetDeviceCount(&n) == cudaErrorNoDevice);
        return 0;
    }
    OK(cudaGetDeviceCount(&n));
    CHECK(n == argc);
    for (int d = 0; d < n; d++) {
        cudaDeviceProp p;
        char want[32];
        OK(cudaGetDeviceProperties(&p, d));
        snprintf(want, sizeof(want), "gvs mock %s", argv[d]);
        CHECK(strcmp(p.name, want) == 0);
        char bus[16];
        int back = -1;
        OK(cudaDeviceGetPCIBusId(bus, sizeof(bus), d));
        OK(cudaDeviceGetByPCIBusId(&back, bus));
        CHECK(back == d);
    }
    CHECK(cudaSetDevice(n) == cudaErrorInvalidDevice);
    return 0;
}

static void peers()
{
    int can = -1, v = -1;
    OK(cudaDeviceCanAccessPeer(&can, 0, 1));
    CHECK(can == 1);
    OK(cudaDeviceCanAccessPeer(&can, 1, 1));
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 2) == cudaErrorInvalidDevice);
    OK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1));
    CHECK(v == 1);
    CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0,
                                    0) == cudaErrorInvalidDevice);

    // Peer access is the current device's: per host thread.
    OK(cudaSetDevice(0));
    OK(cudaDeviceEnablePeerAccess(1, 0));
    CHECK(cudaDeviceEnablePeerAccess(1, 0) ==
          cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorPeerAccessUnsupported);
    CHECK(cudaGetLastError() == cudaErrorPeerAccessUnsupported);
    OK(cudaSetDevice(1));
    CHECK(cudaDeviceDisablePeerAccess(0) == cudaErrorPeerAccessNotEnabled);
    OK(cudaSetDevice(0));
    OK(cudaDeviceDisablePeerAccess(1));

    int *a, *b, h[256], back[256];
    for (int i = 0; i < 256; i++)
        h[i] = i * 7;
    OK(cudaMalloc(&a, sizeof(h)));
    OK(cudaSetDevice(1));
    OK(cudaMalloc(&b, sizeof(h)));
    OK(cudaMemcpy(a, h, sizeof(h), cudaMemcpyHostToDevice));
    OK(cudaMemcpyPeer(b, 1, a, 0, sizeof(h)));
    OK(cudaMemcpy(back, b, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, sizeof(h)) == 0);
    OK(cudaMemset(a, 0, sizeof(h)));
    OK(cudaMemcpyPeerAsync(a, 0, b, 1, sizeof(h), 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(back, a, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, sizeof(h)) == 0);
    CHECK(cudaMemcpyPeer(b, 1, h, 0, sizeof(h)) == cudaErrorInvalidValue);
    CHECK(cudaMemcpyPeer(b, 1, a, 5, sizeof(h)) == cudaErrorInvalidDevice);
    OK(cudaFree(a));
    OK(cudaFree(b));
    OK(cudaSetDevice(0));
}

static void ids()
{
    char bus[32];
    memset(bus, 'x', sizeof(bus));
    OK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 1));
    CHECK(strcmp(bus, "0000:0e:00.0") == 0);
    memset(bus, 'x', sizeof(bus));
    CHECK(cudaDeviceGetPCIBusId(bus, 5, 0) == cudaErrorInvalidValue);
    CHECK(memcmp(bus, "0000\0x", 6) == 0);
    CHECK(cudaDeviceGetPCIBusId(bus, 0, 0) == cudaErrorInvalidValue);
    CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 9) ==
          cudaErrorInvalidDevice);
    int d = -1;
    OK(cudaDeviceGetByPCIBusId(&d, "0000:0d:00.0"));
    CHECK(d == 0);
    CHECK(cudaDeviceGetByPCIBusId(&d, "0000:00:00.0") ==
          cudaErrorInvalidDevice);
    CHECK(cudaDeviceGetByPCIBusId(NULL, "0000:0d:00.0") ==
          cudaErrorInvalidValue);

    cudaDeviceProp p = {};
    p.major = 9;
    OK(cudaChooseDevice(&d, &p));
    CHECK(d == 1);
    OK(cudaInitDevice(1, 0, 0));
    CHECK(cudaInitDevice(5, 0, 0) == cudaErrorInvalidDevice);
}

// Settings are the current device's: device 1 keeps its own.
static void settings()
{
    size_t lim = 0;
    cudaFuncCache cc;
    unsigned flags = 0;
    OK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20));
    OK(cudaDeviceGetLimit(&lim, cudaLimitPrintfFifoSize));
    CHECK(lim == 1 << 20);
    CHECK(cudaDeviceGetLimit(&lim, (cudaLimit)77) == cudaErrorInvalidValue);
    OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
    OK(cudaDeviceGetCacheConfig(&cc));
    CHECK(cc == cudaFuncCachePreferL1);
    OK(cudaGetDeviceFlags(&flags));
    CHECK(flags == cudaDeviceMapHost);
    OK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    OK(cudaGetDeviceFlags(&flags));
    CHECK(flags == (cudaDeviceScheduleBlockingSync | cudaDeviceMapHost));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cudaSharedMemConfig smc;
    OK(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    OK(cudaDeviceGetSharedMemConfig(&smc));
    CHECK(smc == cudaSharedMemBankSizeEightByte);
    OK(cudaSetDevice(1));
    OK(cudaDeviceGetSharedMemConfig(&smc));
    CHECK(smc == cudaSharedMemBankSizeFourByte);
#pragma GCC diagnostic pop
    OK(cudaDeviceGetLimit(&lim, cudaLimitPrintfFifoSize));
    CHECK(lim == 0);
    OK(cudaDeviceGetCacheConfig(&cc));
    CHECK(cc == cudaFuncCachePreferNone);
    OK(cudaSetDevice(0));
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "expect") == 0)
        expect(argc - 2, argv + 2);
    else {
        peers();
        ids();
        settings();
    }
    printf("ok\n");
    return 0;
}
