/*
 * The checks of the driver API test programs (launch.c, graphs.c): a
 * failed one prints the line and what failed, and exits 1.
 */
#ifndef CUDA_TESTS_DRIVER_CHECK_H
#define CUDA_TESTS_DRIVER_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        CUresult r_ = (call);                                                \
        if (r_ != CUDA_SUCCESS) {                                            \
            printf("FAIL line %d: %s: %d\n", __LINE__, #call, (int)r_);      \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                   \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#endif
