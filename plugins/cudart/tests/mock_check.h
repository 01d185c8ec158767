// What the cudart mock end-to-end programs (mock_*.cu) share: their
// checks and the client's counters.  Each program is built alone by
// run_mock_e2e.py (nvcc -cudart shared -o EXE SOURCE), which finds this
// header next to the source: #include "mock_check.h".
#ifndef GVS_CUDART_MOCK_CHECK_H
#define GVS_CUDART_MOCK_CHECK_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Where CHECK and OK say what failed: stdout unless the program defines
// it before the include (mock_kernels.cu, which captures its own stdout,
// defines it as stderr).
#ifndef MOCK_CHECK_OUT
#define MOCK_CHECK_OUT stdout
#endif

// CHECK(cond): cond must hold; if it does not, prints "FAIL line N: cond"
// and exits with status 1.
#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(MOCK_CHECK_OUT, "FAIL line %d: %s\n", __LINE__, #cond);  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// CHECK_EQ(a, b): as CHECK(a == b), printing both values when they differ.
#define CHECK_EQ(a, b)                                                       \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (a_ != b_) {                                                      \
            fprintf(MOCK_CHECK_OUT, "FAIL line %d: %s == %s (%lld, %lld)\n", \
                    __LINE__, #a, #b, a_, b_);                               \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// OK(call): call, a CUDA runtime call, must return cudaSuccess; if not,
// prints "FAIL line N: call: cudaErrorName" and exits with status 1.
#define OK(call)                                                             \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            fprintf(MOCK_CHECK_OUT, "FAIL line %d: %s: %s\n", __LINE__,     \
                    #call, cudaGetErrorName(e_));                            \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// The client library's counters, looked up with dlsym since the program
// links against nothing of gvs but libcudart.so.13.  struct stats begins
// like the library's struct gvs_client_stats (include/gvs/client.h);
// more[8] is room for the fields later versions add, so the library never
// writes past it.
struct stats {
    uint64_t round_trips, posts, bytes_sent, bytes_received, more[8];
};
static void (*get_stats)(struct stats *);

// Looks up gvs_client_get_stats; the program fails if the library it runs
// on has none.  Call it before now().
static inline void stats_init()
{
    *(void **)&get_stats = dlsym(RTLD_DEFAULT, "gvs_client_get_stats");
    CHECK(get_stats != NULL);
}

// The counters as they are now.
static inline struct stats now()
{
    struct stats s;
    get_stats(&s);
    return s;
}

// The pieces a copy of n bytes goes in, either way, when its bytes
// travel (frontend/bulk.c): 1 MiB ones, the last one the rest.
static inline size_t pieces(size_t n)
{
    const size_t piece = (size_t)1 << 20;
    return (n + piece - 1) / piece;
}

// What kernel k of the mock backend, one that writes a counter of the
// worker's into its argument, reports now, read back through the
// device word word.  (The copy back waits, and settles the launch.)
static inline unsigned long long mock_counter(void (*k)(unsigned long long *),
                                              unsigned long long *word)
{
    unsigned long long v = 0;
    k<<<1, 1>>>(word);
    OK(cudaMemcpy(&v, word, sizeof(v), cudaMemcpyDeviceToHost));
    return v;
}

#endif
