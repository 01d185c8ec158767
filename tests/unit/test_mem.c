#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "gvs/farmap.h"
#include "gvs/mem.h"
#include "test.h"

TEST_IMPL(mem_fail_after)
{
    void *p = gvs_malloc(8);
    ASSERT(p != NULL);
    gvs_free(p);
    gvs_mem_fail_after(2);
    void *a = gvs_malloc(1), *b = gvs_calloc(1, 1), *c = gvs_malloc(1);
    void *d = gvs_malloc(1);
    ASSERT(a != NULL && b != NULL && c == NULL && d != NULL);
    gvs_free(a);
    gvs_free(b);
    gvs_free(d);

    gvs_mem_fail_after(0);
    ASSERT(gvs_strdup("x") == NULL);
    char *s = gvs_strdup("xy");
    ASSERT_STR_EQ(s, "xy");
    gvs_mem_fail_after(0);
    ASSERT(gvs_realloc(s, 100) == NULL);
    s = gvs_realloc(s, 100);
    ASSERT(s != NULL);
    gvs_free(s);

    gvs_mem_fail_after(-1);
    ASSERT(gvs_calloc(SIZE_MAX / 2, 4) == NULL);
    ASSERT(gvs_calloc((size_t)1 << 33, (size_t)1 << 33) == NULL);
    p = gvs_calloc(0, 0);
    gvs_free(p);
    return 0;
}

/* Far from the kernel's default placement, each mapping apart from the
 * last, taken addresses skipped, the kernel's errors as mmap's. */
TEST_IMPL(mem_farmap)
{
    const int rw = PROT_READ | PROT_WRITE, anon = MAP_PRIVATE | MAP_ANONYMOUS;
    const uintptr_t step = (uintptr_t)2 << 20;
    uint8_t *p = gvs_mmap_far(4096, rw, anon, -1, 0);
    ASSERT(p != MAP_FAILED);
    if ((uintptr_t)p < GVS_FARMAP_BASE) {
        /* Only where this address space has no room up there. */
        void *at = mmap((void *)(uintptr_t)GVS_FARMAP_BASE, 4096, rw,
                        anon | MAP_FIXED_NOREPLACE, -1, 0);
        ASSERT(at == MAP_FAILED || at != (void *)(uintptr_t)GVS_FARMAP_BASE);
        munmap(p, 4096);
        return 0;
    }
    p[4095] = 1;
    uint8_t *q = gvs_mmap_far(3 << 20, rw, anon, -1, 0);
    ASSERT(q != MAP_FAILED);
    /* Rounded up to 2 MiB, one free step between. */
    ASSERT_EQ((uintptr_t)q, (uintptr_t)p + 2 * step);
    /* The next two places taken: the third one is used. */
    uint8_t *next = q + 3 * step;
    void *taken = mmap(next, 4 * step, PROT_NONE,
                       anon | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    ASSERT(taken == next);
    uint8_t *r = gvs_mmap_far(4096, rw, anon, -1, 0);
    ASSERT_EQ((uintptr_t)r, (uintptr_t)next + 4 * step);
    errno = 0;
    ASSERT(gvs_mmap_far(4096, rw, MAP_SHARED, -1, 0) == MAP_FAILED);
    ASSERT_EQ(errno, EBADF);
    errno = 0;
    ASSERT(gvs_mmap_far(0, rw, anon, -1, 0) == MAP_FAILED);
    ASSERT_EQ(errno, EINVAL);
    munmap(p, 4096);
    munmap(q, 3 << 20);
    munmap(taken, 4 * step);
    munmap(r, 4096);
    return 0;
}
