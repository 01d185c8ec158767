#include <stdint.h>

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
