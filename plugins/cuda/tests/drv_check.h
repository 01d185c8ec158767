/*
 * CHECK and EXPECT for the driver API test programs: print the failing
 * line and exit 1.
 */
#ifndef CUDA_TESTS_DRV_CHECK_H
#define CUDA_TESTS_DRV_CHECK_H

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
