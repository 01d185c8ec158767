// What the CUDA test programs check beside CUDA's own calls (check.h,
// driver_check.h): a failure prints its line on stdout and exits 1.
#pragma once
#include <cstdio>
#include <cstdlib>

// A call of one of NVIDIA's libraries, which answer their own status
// types: exits naming the call and the status unless it is ok.
#define CHECK_LIB(call, ok, lib)                                             \
    do {                                                                     \
        auto s_ = (call);                                                    \
        if (s_ != (ok)) {                                                    \
            printf("FAIL %s: %s status %d\n", #call, lib, (int)s_);          \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
