// gpu.security.reclaim (reclaim.py): the GPU memory of a client killed
// with SIGKILL comes back.  Two roles:
//   reclaim hog      allocates 4 GiB in 256 MiB pieces, touching each,
//                    prints "ready", then copies between the pieces until
//                    it is killed;
//   reclaim watch    prints "baseline BYTES" (free memory before the hog
//                    starts); on the line "held" prints "held BYTES" and
//                    checks that the hog's memory is gone from the
//                    device; on "killed" polls cudaMemGetInfo until free
//                    memory is within TOLERANCE of the baseline again
//                    (10 s at most), printing "reclaimed MS".
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "../check.h"
#include "roles.h"

static const size_t MiB = (size_t)1 << 20;
static const size_t PIECE = 256 * MiB;
static const int PIECES = 16; // 4 GiB
// Other tenants, the contexts' own memory, the allocator's granularity.
static const size_t TOLERANCE = 512 * MiB;

static size_t free_now()
{
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t));
    return f;
}

static int hog()
{
    void *p[PIECES];
    for (int i = 0; i < PIECES; i++) {
        CHECK(cudaMalloc(&p[i], PIECE));
        CHECK(cudaMemset(p[i], i, PIECE));
    }
    CHECK(cudaDeviceSynchronize());
    tell_driver("ready");
    for (unsigned long n = 0;; n++)
        CHECK(cudaMemcpy(p[n % PIECES], p[(n + 1) % PIECES], PIECE,
                         cudaMemcpyDeviceToDevice));
}

static int watch()
{
    size_t base = free_now();
    printf("baseline %zu\n", base);
    fflush(stdout);
    if (expect_line("held") != 0)
        return 1;
    size_t held = free_now();
    printf("held %zu\n", held);
    fflush(stdout);
    // Else the hog's memory never showed and the test proves nothing.
    EXPECT(held + PIECES * PIECE - TOLERANCE <= base);
    if (expect_line("killed") != 0)
        return 1;
    auto start = std::chrono::steady_clock::now();
    for (;;) {
        size_t f = free_now();
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
        if (f + TOLERANCE >= base) {
            printf("reclaimed %lld ms\n", (long long)ms);
            return 0;
        }
        if (ms > 10000) {
            printf("FAIL: free %zu MiB after 10 s, baseline %zu MiB\n",
                   f / MiB, base / MiB);
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

int main(int argc, char **argv)
{
    static const role roles[] = {{"hog", hog}, {"watch", watch}};
    return run_role(argc, argv, roles);
}
