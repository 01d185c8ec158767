/*
 * Driver API device queries, as a program linked with -lcuda makes them:
 * what the driver answers before cuInit, bad arguments, and each
 * device's name, UUID, memory, compute capability, attributes, PCI bus
 * id, properties and peers.
 * Prints them: the GPU test compares the output natively and through
 * gvs (tests/gpu/compare.py).  With --mock it also checks the values of
 * the tests' mock driver (mock_driver.c) and prints "ok".
 */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                    \
            return 1;                                                         \
        }                                                                     \
    } while (0)

static int device(CUdevice i, int mock)
{
    CUdevice d = -1;
    char name[256], cut[5];
    CUuuid uuid;
    size_t bytes = 0;
    int major = 0, minor = 0, sms = 0, bus = 0;
    CHECK(cuDeviceGet(&d, i) == CUDA_SUCCESS && d == i);
    CHECK(cuDeviceGetName(name, sizeof(name), d) == CUDA_SUCCESS);
    CHECK(cuDeviceGetName(cut, sizeof(cut), d) == CUDA_SUCCESS);
    CHECK(strncmp(cut, name, sizeof(cut) - 1) == 0 && cut[4] == '\0');
    CHECK(cuDeviceGetName(NULL, 5, d) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuDeviceGetUuid_v2(&uuid, d) == CUDA_SUCCESS);
    CHECK(cuDeviceTotalMem(&bytes, d) == CUDA_SUCCESS);
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               d) == CUDA_SUCCESS);
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                               d) == CUDA_SUCCESS);
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               d) == CUDA_SUCCESS);
    CHECK(cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d) ==
          CUDA_SUCCESS);
    CHECK(cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d) ==
          CUDA_ERROR_INVALID_VALUE);
    char bus_id[32], short_id[4];
    CUdevice again = -1;
    CUdevprop prop;
    size_t width = 0;
    int affinity = -1;
    CHECK(cuDeviceGetPCIBusId(bus_id, sizeof(bus_id), d) == CUDA_SUCCESS);
    /* A bus id that does not fit is refused, and written cut all the
     * same (driver 580). */
    CHECK(cuDeviceGetPCIBusId(short_id, sizeof(short_id), d) ==
              CUDA_ERROR_INVALID_VALUE &&
          strlen(short_id) == 3);
    CHECK(cuDeviceGetByPCIBusId(&again, bus_id) == CUDA_SUCCESS && again == d);
    CHECK(cuDeviceGetByPCIBusId(&again, "not a bus id") ==
          CUDA_ERROR_INVALID_VALUE);
    /* Deprecated, and still called by programs. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(cuDeviceGetProperties(&prop, d) == CUDA_SUCCESS);
#pragma GCC diagnostic pop
    CHECK(cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 4,
                                             d) == CUDA_SUCCESS);
    CHECK(cuDeviceGetExecAffinitySupport(
              &affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT, d) == CUDA_SUCCESS);
    printf("device %d: %s, %zu bytes, sm_%d%d, %d SMs, PCI bus %d (%s), uuid ",
           (int)d, name, bytes, major, minor, sms, bus, bus_id);
    for (int b = 0; b < 16; b++)
        printf("%02x", (unsigned char)uuid.bytes[b]);
    printf("\n  %d threads per block, SIMD %d, clock %d kHz, 1D linear "
           "texture width %zu, SM-count affinity %d\n",
           prop.maxThreadsPerBlock, prop.SIMDWidth, prop.clockRate, width,
           affinity);
    if (mock) {
        char want[64];
        snprintf(want, sizeof(want), "gvs mock GPU %d", (int)d);
        CHECK(strcmp(name, want) == 0);
        CHECK(bytes == (size_t)80 << 30 && major == 9 && minor == 0);
        CHECK(sms == 132 && bus == 0x18 + (int)d);
        CHECK((unsigned char)uuid.bytes[0] == 0xa0 + 16 * (unsigned)d);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int mock = argc > 1 && strcmp(argv[1], "--mock") == 0;
    int n = -1, v = 0;
    CUdevice d;
    /* The driver's version is known before cuInit; nothing else is. */
    CHECK(cuDriverGetVersion(&v) == CUDA_SUCCESS && v >= 13000);
    CHECK(cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuInit(0) == CUDA_SUCCESS);
    CHECK(cuDeviceGetCount(&n) == CUDA_SUCCESS && n > 0);
    CHECK(cuDeviceGetCount(NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuDeviceGet(&d, n) == CUDA_ERROR_INVALID_DEVICE);
    CHECK(cuDeviceGet(&d, -1) == CUDA_ERROR_INVALID_DEVICE);
    printf("driver API %d, %d device(s)\n", v, n);
    for (int i = 0; i < n; i++)
        if (device(i, mock) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int can = -1, rank = -1;
            CHECK(cuDeviceCanAccessPeer(&can, i, j) == CUDA_SUCCESS);
            CUresult r = cuDeviceGetP2PAttribute(
                &rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, i, j);
            printf("peer %d -> %d: access %d, rank %d (%d)\n", i, j, can,
                   rank, (int)r);
        }
    if (mock) {
        CHECK(v == 13000 && n == 2);
        printf("ok\n");
    }
    return 0;
}
