/* The parent's view of its workers through the session table
 * (server/stats.c, server/workers.c): a worker that has left its slot,
 * and is still exiting when the slot goes to the next session, counts
 * as neither a session nor a handshake, and is never killed for the new
 * session's handshake. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stats.h"
#include "test.h"
#include "workers.h"

TEST_IMPL(server_slot_reused)
{
    ASSERT_EQ(gvsd_stats_create(1, 0), 0);
    struct gvsd_workers ws;
    ASSERT_EQ(gvsd_workers_init(&ws, 4), 0);
    /* Session 7's worker: forked, in its handshake, then gone from its
     * slot (gvsd_stats_leave: released as the parent would find it). */
    pid_t old = fork();
    ASSERT_GE(old, 0);
    if (old == 0) {
        pause();
        _exit(0);
    }
    int slot = gvsd_stats_claim(7);
    ASSERT_EQ(slot, 0);
    gvsd_workers_add(&ws, old, 7, slot, "uid=0");
    ASSERT_EQ(gvsd_stats_state(slot, 7), GVSD_SLOT_STARTING);
    struct gvsd_load load;
    gvsd_workers_load(&ws, "uid=0", &load);
    ASSERT_EQ(load.handshakes, 1);
    ASSERT_EQ(gvsd_stats_release(slot, 7), GVSD_SLOT_STARTING);
    /* The slot is session 8's while 7's worker still runs. */
    ASSERT_EQ(gvsd_stats_claim(8), slot);
    ASSERT_EQ(gvsd_stats_state(slot, 7), GVSD_SLOT_FREE);
    ASSERT_EQ(gvsd_stats_state(slot, 8), GVSD_SLOT_STARTING);
    gvsd_workers_load(&ws, "uid=0", &load);
    ASSERT_EQ(load.handshakes, 0);
    ASSERT_EQ(load.sessions, 0);
    /* Past any handshake limit: 7's worker is not in a handshake. */
    usleep(2000);
    ASSERT_EQ(gvsd_workers_expire(&ws, 1), -1);
    ASSERT_EQ(ws.w[0].killed, 0);
    ASSERT_EQ(waitpid(old, NULL, WNOHANG), 0);
    kill(old, SIGKILL);
    ASSERT_EQ(waitpid(old, NULL, 0), old);
    gvsd_workers_free(&ws);
    gvsd_stats_destroy();
    return 0;
}
