/*
 * What the driver API mock end-to-end programs (launch.c, arrays.c,
 * callbacks.c, managed.c, pools.c) share: their checks and the client's
 * counters.  A failure prints its line on stdout (which run_mock_e2e.py
 * shows) and exits 1.
 */
#ifndef GVS_CUDA_DRIVER_CHECK_H
#define GVS_CUDA_DRIVER_CHECK_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* CHECK(call): a driver call that must succeed; else prints "FAIL line
 * N: call: code" and exits with status 1. */
#define CHECK(call)                                                          \
    do {                                                                     \
        CUresult r_ = (call);                                                \
        if (r_ != CUDA_SUCCESS) {                                            \
            printf("FAIL line %d: %s: %d\n", __LINE__, #call, (int)r_);      \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
/* EXPECT(cond): cond must hold; else prints "FAIL line N: cond" and
 * exits with status 1. */
#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                   \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* EXPECT_EQ(a, b): as EXPECT(a == b) for counts, printing both values
 * when they differ. */
#define EXPECT_EQ(a, b)                                                      \
    do {                                                                     \
        unsigned long long a_ = (a), b_ = (b);                               \
        if (a_ != b_) {                                                      \
            printf("FAIL line %d: %s == %s (%llu, %llu)\n", __LINE__, #a, #b, \
                   a_, b_);                                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* The client library's counters (include/gvs/client.h), looked up: the
 * program links nothing of gvs.  more[] is room for later fields. */
struct stats {
    uint64_t round_trips, posts, bytes_sent, bytes_received, more[8];
};
static void (*get_stats)(struct stats *);

/* Looks up gvs_client_get_stats; call it before now(). */
static inline void stats_init(void)
{
    *(void **)&get_stats = dlsym(RTLD_DEFAULT, "gvs_client_get_stats");
    EXPECT(get_stats != NULL);
}

static inline struct stats now(void)
{
    struct stats s;
    get_stats(&s);
    return s;
}

#endif
