#include <stdio.h>
#include <stdlib.h>

#include "gvs/comm.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_core.h"

/* Polls time out on a quiet connection and return at once on data. */
TEST_IMPL(spin_readable)
{
    char uri[128];
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    test_unix_uri(uri, sizeof(uri), NULL, 0, "spin");
    ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
    long long t = gvs_now_ns();
    ASSERT_EQ(gvs_conn_spin_readable(b, 2000000), 0);
    ASSERT_GE(gvs_now_ns() - t, 2000000);
    ASSERT_EQ(gvs_conn_spin_readable(b, 0), 0);
    ASSERT_EQ(gvs_conn_send(a, "x", 1), 0);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000000), 1);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* shm connections are polled through their rings, not a descriptor. */
TEST_IMPL(spin_readable_shm)
{
    char uri[128], path[108];
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    test_unix_uri(uri, sizeof(uri), path, sizeof(path), "spinshm");
    snprintf(uri, sizeof(uri), "shm://%s", path);
    ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
    long long t = gvs_now_ns();
    ASSERT_EQ(gvs_conn_spin_readable(b, 2000000), 0);
    ASSERT_GE(gvs_now_ns() - t, 2000000);
    ASSERT_EQ(gvs_conn_send(a, "x", 1), 0);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000000), 1);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* GVS_SPIN_US overrides the machine-size default; 0 disables. */
TEST_IMPL(spin_setting)
{
    setenv("GVS_SPIN_US", "75", 1);
    ASSERT_EQ(gvs_spin_ns(), 75000);
    return 0;
}

/* Small machines do not poll by default, unless their server is away;
 * GVS_SPIN_US still decides alone when set. */
TEST_IMPL(spin_peer_away)
{
    ASSERT_EQ(gvs_spin_default_ns(1, 0), 0);
    ASSERT_EQ(gvs_spin_default_ns(3, 0), 0);
    ASSERT_EQ(gvs_spin_default_ns(4, 0), 50000);
    ASSERT_EQ(gvs_spin_default_ns(64, 0), 50000);
    ASSERT_EQ(gvs_spin_default_ns(1, 1), 50000);
    ASSERT_EQ(gvs_spin_default_ns(2, 1), 50000);
    ASSERT_EQ(gvs_spin_default_ns(64, 1), 50000);
    setenv("GVS_SPIN_US", "0", 1);
    gvs_spin_peer_away();
    ASSERT_EQ(gvs_spin_ns(), 0);
    return 0;
}

/* The host's load as /proc/loadavg gives it: the fourth field's runnable
 * count against the CPUs; anything else unreadable. */
TEST_IMPL(spin_load)
{
    ASSERT_EQ(gvs_spin_load_busy("0.50 0.40 0.30 3/200 1234\n", 4), 0);
    ASSERT_EQ(gvs_spin_load_busy("0.50 0.40 0.30 4/200 1234\n", 4), 0);
    ASSERT_EQ(gvs_spin_load_busy("17.01 16.2 9.00 17/950 99\n", 16), 1);
    ASSERT_EQ(gvs_spin_load_busy("0.00 0.00 0.00 1/1 1", 1), 0);
    ASSERT_EQ(gvs_spin_load_busy("0.50 0.40 0.30 x/200 1234\n", 4), -1);
    ASSERT_EQ(gvs_spin_load_busy("0.50 0.40 0.30 3 1234\n", 4), -1);
    ASSERT_EQ(gvs_spin_load_busy("0.50 0.40 0.30", 4), -1);
    ASSERT_EQ(gvs_spin_load_busy("", 4), -1);
    ASSERT_EQ(gvs_spin_load_busy("0.50 0.40 0.30 -2/200 1\n", 4), -1);
    return 0;
}

/* The horizon: twice the quiet time that just ended, fading by a
 * sixteenth per event, capped, and reset by a quiet time beyond the
 * cap. */
TEST_IMPL(spin_hot_horizon)
{
    ASSERT_EQ(gvs_spin_hot_next(0, 0), 0);
    ASSERT_EQ(gvs_spin_hot_next(0, -5), 0);
    ASSERT_EQ(gvs_spin_hot_next(0, 1000000), 2000000);
    ASSERT_EQ(gvs_spin_hot_next(0, 600000), 1200000);
    ASSERT_EQ(gvs_spin_hot_next(1600000, 1000), 1500000);
    ASSERT_EQ(gvs_spin_hot_next(1200000, 1500000), 2000000);
    ASSERT_EQ(gvs_spin_hot_next(2000000, GVS_SPIN_HOT_MAX_NS), 2000000);
    ASSERT_EQ(gvs_spin_hot_next(2000000, GVS_SPIN_HOT_MAX_NS + 1), 0);
    ASSERT_EQ(gvs_spin_hot_next(15, 0), 15);
    /* A loop of a call after a millisecond of host work and one right
     * after it keeps the horizon above the millisecond. */
    long long h = 0;
    for (int i = 0; i < 100; i++)
        h = gvs_spin_hot_next(gvs_spin_hot_next(h, 1000000), 2000);
    ASSERT_GT(h, 1000000);
    /* Calls back to back let it fade away. */
    for (int i = 0; i < 400; i++)
        h = gvs_spin_hot_next(h, 1000);
    ASSERT_LT(h, 50000);
    return 0;
}
