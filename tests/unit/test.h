/*
 * Minimal test harness.  Each test is a function `int test_NAME(void)`
 * registered once in test-list.h; the runner executes each in its own
 * process with a timeout.  A test returns 0 on success; the ASSERT
 * macros print both values and the location, then return 1.
 */
#ifndef GVS_TEST_H
#define GVS_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TEST_IMPL(name) int test_##name(void)

#define TEST_FAIL_AT(fmt, ...)                                               \
    do {                                                                     \
        fprintf(stderr, "%s:%d: " fmt "\n", __FILE__, __LINE__,              \
                __VA_ARGS__);                                                \
        return 1;                                                            \
    } while (0)

#define ASSERT(expr)                                                         \
    do {                                                                     \
        if (!(expr))                                                         \
            TEST_FAIL_AT("assertion failed: %s", #expr);                     \
    } while (0)

#define ASSERT_INT_OP(a, op, b)                                              \
    do {                                                                     \
        long long va_ = (long long)(a), vb_ = (long long)(b);                \
        if (!(va_ op vb_))                                                   \
            TEST_FAIL_AT("%s %s %s: %lld vs %lld", #a, #op, #b, va_, vb_);   \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT_INT_OP(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_INT_OP(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_INT_OP(a, <, b)
#define ASSERT_LE(a, b) ASSERT_INT_OP(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_INT_OP(a, >, b)
#define ASSERT_GE(a, b) ASSERT_INT_OP(a, >=, b)

#define ASSERT_U64_EQ(a, b)                                                  \
    do {                                                                     \
        uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);                   \
        if (va_ != vb_)                                                      \
            TEST_FAIL_AT("%s == %s: %" PRIu64 " vs %" PRIu64, #a, #b, va_,   \
                         vb_);                                               \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                  \
    do {                                                                     \
        const char *va_ = (a), *vb_ = (b);                                   \
        if (va_ == NULL || vb_ == NULL || strcmp(va_, vb_) != 0)             \
            TEST_FAIL_AT("%s == %s: \"%s\" vs \"%s\"", #a, #b,               \
                         va_ ? va_ : "(null)", vb_ ? vb_ : "(null)");        \
    } while (0)

#define ASSERT_MEM_EQ(a, b, n)                                               \
    do {                                                                     \
        if (memcmp((a), (b), (n)) != 0)                                      \
            TEST_FAIL_AT("%s and %s differ in their first %zu bytes", #a,    \
                         #b, (size_t)(n));                                   \
    } while (0)

/* Directory holding built binaries (gvsd, plugins, frontend), from the
 * GVS_BUILD_DIR environment variable that CTest sets. */
const char *test_build_dir(void);

#endif
