#include <stdint.h>

#include "gvs/err.h"
#include "gvs/handles.h"
#include "gvs/mem.h"
#include "test.h"

static int released;

static void count_release(uint16_t type, void *obj, void *arg)
{
    (void)type;
    (void)obj;
    (void)arg;
    released++;
}

TEST_IMPL(handles_basic)
{
    struct gvs_handles *t = gvs_handles_new();
    ASSERT(t != NULL);
    int a, b;
    uint64_t ia, ib;
    ASSERT_EQ(gvs_handles_add(t, 1, &a, &ia), 0);
    ASSERT_EQ(gvs_handles_add(t, 2, &b, &ib), 0);
    ASSERT(ia != ib);
    ASSERT(ia >= GVS_HANDLE_MIN);
    ASSERT(ib >= GVS_HANDLE_MIN);
    ASSERT(gvs_handles_get(t, 1, ia) == &a);
    ASSERT(gvs_handles_get(t, 2, ib) == &b);
    /* The right id under another type is not found. */
    ASSERT(gvs_handles_get(t, 2, ia) == NULL);
    ASSERT(gvs_handles_remove(t, 2, ia) == NULL);
    ASSERT(gvs_handles_get(t, 1, 0) == NULL);
    ASSERT(gvs_handles_get(t, 1, ia + 1) == NULL);
    ASSERT_U64_EQ(gvs_handles_count(t), 2);
    ASSERT(gvs_handles_remove(t, 1, ia) == &a);
    ASSERT(gvs_handles_get(t, 1, ia) == NULL);
    ASSERT(gvs_handles_remove(t, 1, ia) == NULL);
    ASSERT_EQ(gvs_handles_add(t, 1, NULL, &ia), GVS_E_INVAL);
    released = 0;
    gvs_handles_free(t, count_release, NULL);
    ASSERT_EQ(released, 1);
    return 0;
}

/* Many entries force growth; ids stay unique and every one is found. */
TEST_IMPL(handles_many)
{
    enum { N = 20000 };
    static uint64_t ids[N];
    static char objs[N];
    struct gvs_handles *t = gvs_handles_new();
    ASSERT(t != NULL);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(gvs_handles_add(t, 7, &objs[i], &ids[i]), 0);
    for (int i = 0; i < N; i++)
        ASSERT(gvs_handles_get(t, 7, ids[i]) == &objs[i]);
    for (int i = 0; i < N; i += 2)
        ASSERT(gvs_handles_remove(t, 7, ids[i]) == &objs[i]);
    ASSERT_U64_EQ(gvs_handles_count(t), N / 2);
    /* An id is never given out again. */
    uint64_t again;
    ASSERT_EQ(gvs_handles_add(t, 7, &objs[0], &again), 0);
    for (int i = 0; i < N; i++)
        ASSERT(again != ids[i]);
    released = 0;
    gvs_handles_free(t, count_release, NULL);
    ASSERT_EQ(released, N / 2 + 1);
    return 0;
}

/* Two tables (two sessions) do not know each other's ids. */
TEST_IMPL(handles_foreign)
{
    struct gvs_handles *t1 = gvs_handles_new(), *t2 = gvs_handles_new();
    int x;
    uint64_t id1, id2;
    ASSERT_EQ(gvs_handles_add(t1, 1, &x, &id1), 0);
    ASSERT_EQ(gvs_handles_add(t2, 1, &x, &id2), 0);
    ASSERT(id1 != id2);
    ASSERT(gvs_handles_get(t2, 1, id1) == NULL);
    ASSERT(gvs_handles_get(t1, 1, id2) == NULL);
    gvs_handles_free(t1, NULL, NULL);
    gvs_handles_free(t2, NULL, NULL);
    return 0;
}

TEST_IMPL(handles_nomem)
{
    struct gvs_handles *t = gvs_handles_new();
    int x;
    uint64_t id = 1;
    gvs_mem_fail_after(0);
    ASSERT_EQ(gvs_handles_add(t, 1, &x, &id), GVS_E_NOMEM);
    ASSERT_U64_EQ(id, 0);
    ASSERT_U64_EQ(gvs_handles_count(t), 0);
    gvs_mem_fail_after(-1);
    gvs_handles_free(t, NULL, NULL);
    return 0;
}
