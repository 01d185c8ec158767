// cudaMemcpy of 1 B to 256 MiB in every direction, content checked.
#include "check.h"
#include <cstdint>
#include <cstring>
#include <vector>

static void fill(std::vector<uint8_t> &v, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < v.size(); i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (uint8_t)(x >> 24);
    }
}

static void round_trip(size_t size, cudaMemcpyKind up, cudaMemcpyKind across,
                       cudaMemcpyKind down, const char *label)
{
    std::vector<uint8_t> src(size), dst(size, 0);
    fill(src, (uint32_t)size);
    uint8_t *d1, *d2;
    CHECK(cudaMalloc(&d1, size));
    CHECK(cudaMalloc(&d2, size));
    CHECK(cudaMemcpy(d1, src.data(), size, up));
    CHECK(cudaMemcpy(d2, d1, size, across));
    CHECK(cudaMemcpy(dst.data(), d2, size, down));
    EXPECT(memcmp(src.data(), dst.data(), size) == 0);
    // An offset inside an allocation must classify as device memory too.
    if (size > 2) {
        std::vector<uint8_t> part(size - 2, 0);
        CHECK(cudaMemcpy(part.data(), d2 + 1, size - 2, down));
        EXPECT(memcmp(part.data(), src.data() + 1, size - 2) == 0);
    }
    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    printf("%-8s %10zu bytes ok\n", label, size);
}

int main()
{
    const size_t sizes[] = {1, 3, 4096, (1u << 20) + 7, 16u << 20,
                            (64u << 20) + 1, 256u << 20};
    for (size_t s : sizes) {
        round_trip(s, cudaMemcpyHostToDevice, cudaMemcpyDeviceToDevice,
                   cudaMemcpyDeviceToHost, "explicit");
        round_trip(s, cudaMemcpyDefault, cudaMemcpyDefault, cudaMemcpyDefault,
                   "default");
    }
    std::vector<uint8_t> a(1000), b(1000, 0);
    fill(a, 7);
    CHECK(cudaMemcpy(b.data(), a.data(), a.size(), cudaMemcpyHostToHost));
    EXPECT(memcmp(a.data(), b.data(), a.size()) == 0);
    std::fill(b.begin(), b.end(), 0);
    CHECK(cudaMemcpy(b.data(), a.data(), a.size(), cudaMemcpyDefault));
    EXPECT(memcmp(a.data(), b.data(), a.size()) == 0);
    printf("host-to-host ok\n");

    uint8_t *d;
    CHECK(cudaMalloc(&d, 1 << 20));
    CHECK(cudaMemset(d, 0xab, 1 << 20));
    CHECK(cudaMemset(d + 100, 0x01, 17));
    std::vector<uint8_t> m(1 << 20);
    CHECK(cudaMemcpy(m.data(), d, m.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < m.size(); i++)
        EXPECT(m[i] == ((i >= 100 && i < 117) ? 0x01 : 0xab));
    CHECK(cudaFree(d));
    printf("memset ok\n");
    return 0;
}
