#include <stdint.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "test.h"

static int vals[1000];

TEST_IMPL(u64map_basic)
{
    struct gvs_u64map m = {0};
    ASSERT(gvs_u64map_get(&m, 5) == NULL);
    ASSERT(gvs_u64map_floor(&m, 5, NULL) == NULL);
    ASSERT(gvs_u64map_remove(&m, 5) == NULL);
    /* Inserted out of order; kept sorted. */
    for (int i = 999; i >= 0; i -= 2)
        ASSERT_EQ(gvs_u64map_put(&m, (uint64_t)i * 10, &vals[i]), 0);
    for (int i = 0; i < 999; i += 2)
        ASSERT_EQ(gvs_u64map_put(&m, (uint64_t)i * 10, &vals[i]), 0);
    ASSERT_EQ(gvs_u64map_put(&m, 20, &vals[0]), GVS_E_INVAL);
    ASSERT_EQ(gvs_u64map_put(&m, 21, NULL), GVS_E_INVAL);
    for (int i = 0; i < 1000; i++) {
        ASSERT(gvs_u64map_get(&m, (uint64_t)i * 10) == &vals[i]);
        ASSERT(gvs_u64map_get(&m, (uint64_t)i * 10 + 1) == NULL);
    }
    uint64_t k = 0;
    ASSERT(gvs_u64map_floor(&m, 37, &k) == &vals[3]);
    ASSERT_U64_EQ(k, 30);
    ASSERT(gvs_u64map_floor(&m, UINT64_MAX, &k) == &vals[999]);
    ASSERT_U64_EQ(k, 9990);
    ASSERT(gvs_u64map_remove(&m, 30) == &vals[3]);
    ASSERT(gvs_u64map_remove(&m, 30) == NULL);
    ASSERT(gvs_u64map_floor(&m, 37, &k) == &vals[2]);
    ASSERT_U64_EQ(k, 20);
    ASSERT(gvs_u64map_remove(&m, 0) == &vals[0]);
    ASSERT(gvs_u64map_floor(&m, 5, NULL) == NULL);
    gvs_u64map_clear(&m);
    ASSERT(gvs_u64map_get(&m, 40) == NULL);
    return 0;
}

/* A failed growth leaves the map as it was. */
TEST_IMPL(u64map_nomem)
{
    struct gvs_u64map m = {0};
    gvs_mem_fail_after(0);
    ASSERT_EQ(gvs_u64map_put(&m, 1, &vals[1]), GVS_E_NOMEM);
    gvs_mem_fail_after(-1);
    ASSERT(gvs_u64map_get(&m, 1) == NULL);
    ASSERT_EQ(gvs_u64map_put(&m, 1, &vals[1]), 0);
    ASSERT(gvs_u64map_get(&m, 1) == &vals[1]);
    gvs_u64map_clear(&m);
    return 0;
}
