/* gvsd's threads of a session, spoken to in raw frames: lanes echoed,
 * blocking ops on their lane's thread while other lanes go on, each
 * lane's order kept, inline ops ahead of the queue, notifications. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../plugins/echo.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "test.h"
#include "test_server_harness.h"

#define BLOCK_MS 10000u

static int send_req(struct gvs_conn *c, uint16_t op, uint32_t flags,
                    uint32_t lane, uint64_t id, const void *body, size_t len)
{
    struct gvs_frame_hdr h = {.plugin = ECHO_PLUGIN_ID,
                              .op = op,
                              .flags = flags,
                              .lane = lane,
                              .id = id};
    struct iovec iov = {(void *)body, len};
    return gvs_frame_sendv(c, &h, &iov, 1);
}

static int send_u32(struct gvs_conn *c, uint16_t op, uint32_t flags,
                    uint32_t lane, uint64_t id, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                    (uint8_t)(v >> 24)};
    return send_req(c, op, flags, lane, id, b, sizeof(b));
}

/* Reads the next frame, which must be the reply to id on lane. */
static int expect_reply(struct gvs_conn *c, uint64_t id, uint32_t lane,
                        struct gvs_buf *body)
{
    struct gvs_frame_hdr h;
    ASSERT_EQ(gvs_frame_recv(c, GVS_FRAME_MAX_DEFAULT, &h, body), 0);
    ASSERT_EQ(h.flags, GVS_F_REPLY);
    ASSERT_U64_EQ(h.id, id);
    ASSERT_EQ(h.lane, lane);
    return 0;
}

static uint32_t get_u32(struct gvs_buf *b)
{
    uint32_t v = 0xffffffffu;
    gvs_buf_get_u32(b, &v);
    return v;
}

TEST_IMPL(server_lane_echoed)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    const uint32_t lanes[] = {0, 1, 7, 0xffffffffu};
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(send_req(c, ECHO_OP_PING_LANE, 0, lanes[i], 10 + i, NULL, 0),
                  0);
        ASSERT_EQ(expect_reply(c, 10 + i, lanes[i], body), 0);
        ASSERT_EQ(get_u32(body), lanes[i]);
    }
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* Lane 1 blocks; lane 1's next request waits behind it while lane 2 is
 * served; an inline RELEASE on lane 3 frees lane 1, whose replies then
 * come in order. */
TEST_IMPL(server_blocking_lane)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(send_u32(c, ECHO_OP_BLOCK, 0, 1, 1, BLOCK_MS), 0);
    ASSERT_EQ(send_u32(c, ECHO_OP_NOTE, GVS_F_NOREPLY, 1, 2, 5), 0);
    ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 1, 3, NULL, 0), 0);
    long long start = test_now_ms();
    for (uint64_t id = 4; id < 8; id++) {
        ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 2, id, NULL, 0), 0);
        ASSERT_EQ(expect_reply(c, id, 2, body), 0);
        uint64_t notes = 1;
        ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
        ASSERT_U64_EQ(notes, 0);
    }
    ASSERT_LT(test_now_ms() - start, BLOCK_MS / 2);
    ASSERT_EQ(send_req(c, ECHO_OP_RELEASE, GVS_F_NOREPLY, 3, 8, NULL, 0), 0);
    ASSERT_EQ(expect_reply(c, 1, 1, body), 0);
    ASSERT_EQ(get_u32(body), 1);
    ASSERT_EQ(expect_reply(c, 3, 1, body), 0);
    uint64_t notes = 0, sum = 0;
    ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
    ASSERT_EQ(gvs_buf_get_u64(body, &sum), 0);
    ASSERT_U64_EQ(notes, 1);
    ASSERT_U64_EQ(sum, 5);
    ASSERT_LT(test_now_ms() - start, BLOCK_MS / 2);
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A request a lane sends as soon as its blocking request is answered
 * comes after that answer, so before whatever another lane sends next:
 * lane 1's slow note, sent right after its COUNT_SYNC's reply, is
 * counted before lane 2's COUNT that follows it.  (The lane thread
 * serving lane 1 is still finishing the COUNT_SYNC when the note comes
 * in; the note was once taken for one sent before the answer, and
 * lane 2 passed it.) */
TEST_IMPL(server_order_after_blocking_reply)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    uint64_t id = 1;
    for (uint64_t i = 1; i <= 300; i++) {
        ASSERT_EQ(send_req(c, ECHO_OP_COUNT_SYNC, 0, 1, id, NULL, 0), 0);
        ASSERT_EQ(expect_reply(c, id++, 1, body), 0);
        ASSERT_EQ(send_u32(c, ECHO_OP_SLOW_NOTE, GVS_F_NOREPLY, 1, id++, 1),
                  0);
        ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 2, id, NULL, 0), 0);
        ASSERT_EQ(expect_reply(c, id++, 2, body), 0);
        uint64_t notes = 0;
        ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
        ASSERT_U64_EQ(notes, i);
    }
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A posted request of an op flagged blocking (an asynchronous copy, which
 * may wait for its stream) returned at once on the client, which may then
 * have another thread go on: lane 2's COUNT, sent after lane 1 posted the
 * slow note, sees it counted.  (Such a request was once passed by other
 * lanes as a synchronization is.) */
TEST_IMPL(server_posted_blocking_ordered)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    uint64_t id = 1;
    for (uint64_t i = 1; i <= 5; i++) {
        ASSERT_EQ(send_u32(c, ECHO_OP_SLOW_NOTE_BLOCKING, GVS_F_NOREPLY, 1,
                           id++, 50),
                  0);
        ASSERT_EQ(send_u32(c, ECHO_OP_NOTE, GVS_F_NOREPLY, 1, id++, 0), 0);
        ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 2, id, NULL, 0), 0);
        ASSERT_EQ(expect_reply(c, id++, 2, body), 0);
        uint64_t notes = 0;
        ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
        ASSERT_U64_EQ(notes, 2 * i);
    }
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* The times the threads of process pid have slept (voluntary context
 * switches, summed over the status files of /proc/PID/task), -1 if
 * unreadable. */
static long long sleeps_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    long long sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char file[sizeof(path) + sizeof(e->d_name) + 8], line[128];
        snprintf(file, sizeof(file), "%s/%s/status", path, e->d_name);
        FILE *f = fopen(file, "r");
        if (f == NULL)
            continue;
        long long v;
        while (fgets(line, sizeof(line), f) != NULL)
            if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1)
                sum += v;
        fclose(f);
    }
    closedir(d);
    return sum;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A session of a gvsd started with no thread polling (GVS_SPIN_US=0),
 * as on a host with more runnable threads than CPUs; NULL on failure. */
static struct gvs_conn *session_unpolled(struct test_gvsd *g)
{
    if (setenv("GVS_SPIN_US", "0", 1) != 0)
        return NULL;
    int rc = test_gvsd_start(g, NULL);
    unsetenv("GVS_SPIN_US");
    return rc == 0 ? test_session(g->unix_uri) : NULL;
}

/* Posted requests that come apart, each after the worker's threads have
 * gone to sleep (no polling: GVS_SPIN_US=0): the thread woken by one
 * serves it and reads on.  Handing the reading to another sleeping
 * thread first would take two wake-ups, one after the other, before the
 * next request is read.  Counted as the worker's threads' sleeps: one
 * per request, less than 1.5 required (two before). */
#define WAKE_NOTES 40
TEST_IMPL(server_posted_one_wakeup)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    struct gvs_conn *c = session_unpolled(&g);
    ASSERT(c != NULL);
    ASSERT_EQ(send_req(c, ECHO_OP_PID, 0, 1, 1, NULL, 0), 0);
    ASSERT_EQ(expect_reply(c, 1, 1, body), 0);
    pid_t worker = (pid_t)get_u32(body);
    sleep_ms(20);
    long long before = sleeps_of(worker);
    ASSERT_GE(before, 0);
    uint64_t id = 2;
    for (int i = 0; i < WAKE_NOTES; i++) {
        ASSERT_EQ(send_u32(c, ECHO_OP_NOTE, GVS_F_NOREPLY, 1, id++, 1), 0);
        sleep_ms(3);
    }
    sleep_ms(20);
    long long slept = sleeps_of(worker) - before;
    ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 1, id, NULL, 0), 0);
    ASSERT_EQ(expect_reply(c, id, 1, body), 0);
    uint64_t notes = 0;
    ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
    ASSERT_U64_EQ(notes, WAKE_NOTES);
    ASSERT_GE(slept, WAKE_NOTES / 2);
    ASSERT_LT(slept, WAKE_NOTES * 3 / 2);
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* CHAIN requests, n of them, in one write on lane 1 (on lanes 1 and 2
 * in turn when alternate), then CHAIN_COUNT's reply into out. */
#define CHAIN_RUN 24
static int chain_run(struct gvs_conn *c, int alternate, uint64_t out[3])
{
    struct gvs_frame_hdr h[CHAIN_RUN + 1];
    struct iovec v[CHAIN_RUN + 1];
    uint8_t b[CHAIN_RUN][4] = {{0}};
    for (int i = 0; i <= CHAIN_RUN; i++) {
        h[i] = (struct gvs_frame_hdr){.plugin = ECHO_PLUGIN_ID,
                                      .op = ECHO_OP_CHAIN,
                                      .flags = GVS_F_NOREPLY,
                                      .lane = alternate ? 1 + i % 2 : 1,
                                      .id = 1 + (uint64_t)i};
        v[i] = (struct iovec){b[i % CHAIN_RUN], 4};
    }
    h[CHAIN_RUN].op = ECHO_OP_CHAIN_COUNT;
    h[CHAIN_RUN].flags = 0;
    h[CHAIN_RUN].lane = 1;
    v[CHAIN_RUN].iov_len = 0;
    ASSERT_EQ(gvs_frames_sendv(c, h, v, CHAIN_RUN + 1), 0);
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT(body != NULL);
    ASSERT_EQ(expect_reply(c, 1 + CHAIN_RUN, 1, body), 0);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(gvs_buf_get_u64(body, &out[i]), 0);
    gvs_buf_free(body);
    return 0;
}

/* Posted requests of a GVS_OP_BATCH op that arrive together: before the
 * reader serves one it reads the next, and tells the handler that it is
 * another of its lane (gvs_call.next_same), which that thread then
 * serves next: a run of n makes n - 1 promises, every one kept (the
 * last, followed by CHAIN_COUNT, makes none).  A run of two lanes in
 * turn makes none: the next request is never the same lane's. */
TEST_IMPL(server_batch_read_ahead)
{
    struct test_gvsd g = {0};
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    const char *uris[] = {g.unix_uri, g.tcp_uri, g.shm_uri};
    for (int u = 0; u < 3; u++) {
        struct gvs_conn *c = test_session(uris[u]);
        ASSERT(c != NULL);
        uint64_t n[3], m[3];
        ASSERT_EQ(chain_run(c, 0, n), 0);
        ASSERT_U64_EQ(n[0], CHAIN_RUN);
        ASSERT_U64_EQ(n[1], CHAIN_RUN - 1);
        ASSERT_U64_EQ(n[2], CHAIN_RUN - 1);
        ASSERT_EQ(chain_run(c, 1, m), 0);
        ASSERT_U64_EQ(m[0], 2 * CHAIN_RUN);
        ASSERT_U64_EQ(m[1], CHAIN_RUN - 1);
        ASSERT_U64_EQ(m[2], CHAIN_RUN - 1);
        gvs_conn_close(c);
    }
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A request served on the reader (no thread polls: GVS_SPIN_US=0) that
 * waits for the client's answer to its notification, as a graph launch
 * whose host node runs a callback does: the answer (an inline RELEASE)
 * is read meanwhile, by another thread (host->await_client).  Without
 * it the reader waited for itself until AWAIT's time ran out (a graph
 * launch: for ever).  A note of AWAIT's lane sent behind it keeps its
 * place, and another lane's request does not pass it; the session goes
 * on as before after the hand-off. */
TEST_IMPL(server_await_client)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    struct gvs_conn *c = session_unpolled(&g);
    ASSERT(c != NULL);
    uint64_t id = 1;
    for (int round = 0; round < 3; round++) {
        long long start = test_now_ms();
        uint64_t await = id++, count = id++;
        ASSERT_EQ(send_u32(c, ECHO_OP_AWAIT, 0, 1, await, BLOCK_MS), 0);
        struct gvs_frame_hdr h;
        ASSERT_EQ(gvs_frame_recv(c, 64, &h, body), 0);
        ASSERT_EQ(h.flags, GVS_F_NOTIFY);
        ASSERT_EQ(h.op, ECHO_NOTE_AWAIT);
        ASSERT_EQ(send_u32(c, ECHO_OP_NOTE, GVS_F_NOREPLY, 1, id++, 1), 0);
        ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 2, count, NULL, 0), 0);
        ASSERT_EQ(send_req(c, ECHO_OP_RELEASE, GVS_F_NOREPLY, 3, id++, NULL,
                           0),
                  0);
        ASSERT_EQ(expect_reply(c, await, 1, body), 0);
        ASSERT_EQ(get_u32(body), 1);
        ASSERT_EQ(expect_reply(c, count, 2, body), 0);
        uint64_t notes = 0;
        ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
        ASSERT_U64_EQ(notes, (uint64_t)round + 1);
        ASSERT_LT(test_now_ms() - start, BLOCK_MS / 2);
    }
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* The thread that serves request id: TID sleeping v ms (v < 0:
 * TID_INLINE, served by the reading thread). */
static int tid_of(struct gvs_conn *c, int v, uint64_t id, uint32_t *tid,
                  struct gvs_buf *body)
{
    if (v < 0)
        ASSERT_EQ(send_req(c, ECHO_OP_TID_INLINE, 0, 1, id, NULL, 0), 0);
    else
        ASSERT_EQ(send_u32(c, ECHO_OP_TID, 0, 1, id, (uint32_t)v), 0);
    ASSERT_EQ(expect_reply(c, id, 1, body), 0);
    *tid = get_u32(body);
    return 0;
}

/* A blocking request that its plugin says will not wait this time
 * (gvs_plugin.may_wait: a synchronous copy the GPU answers) is served
 * where it was read, as any other, and the reading stays with that
 * thread; one that may wait (100 ms) is served by the thread that read
 * it while another takes the reading.  Polling off, where the reader
 * serves what it may itself. */
TEST_IMPL(server_blocking_no_wait)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    struct gvs_conn *c = session_unpolled(&g);
    ASSERT(c != NULL && body != NULL);
    uint32_t reader, tid;
    uint64_t id = 1;
    ASSERT_EQ(tid_of(c, -1, id++, &reader, body), 0);
    for (int i = 0; i < 50; i++) {
        ASSERT_EQ(tid_of(c, 0, id++, &tid, body), 0);
        ASSERT_EQ(tid, reader);
        ASSERT_EQ(tid_of(c, -1, id++, &tid, body), 0);
        ASSERT_EQ(tid, reader);
    }
    ASSERT_EQ(tid_of(c, 100, id++, &tid, body), 0);
    ASSERT_EQ(tid, reader);
    ASSERT_EQ(tid_of(c, -1, id++, &tid, body), 0);
    ASSERT(tid != reader);
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A request as large as a bulk piece, not blocking, is handed to a lane
 * thread rather than served where it was read, so that the reading goes
 * on while it is served (a socket's next piece read while the last is
 * copied).  Polling off, where the reader would otherwise serve it
 * itself: lane 1 waits in a BLOCK, lane 2 posts a 2-MiB BULK_NOTE that
 * sleeps BULK_MS, lane 3 posts a RELEASE, which runs as it is read:
 * the BLOCK must be released long before the note ends, which lane 2's
 * COUNT then sees counted. */
#define BULK_MS 2000u
TEST_IMPL(server_bulky_read_on)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    size_t len = (size_t)2 << 20;
    uint8_t *bulk = calloc(1, len);
    struct gvs_conn *c = session_unpolled(&g);
    ASSERT(c != NULL && bulk != NULL);
    uint32_t ms = BULK_MS;
    memcpy(bulk, (uint8_t[4]){(uint8_t)ms, (uint8_t)(ms >> 8),
                              (uint8_t)(ms >> 16), (uint8_t)(ms >> 24)},
           4);
    long long start = test_now_ms();
    ASSERT_EQ(send_u32(c, ECHO_OP_BLOCK, 0, 1, 1, BLOCK_MS), 0);
    ASSERT_EQ(send_req(c, ECHO_OP_BULK_NOTE, GVS_F_NOREPLY, 2, 2, bulk, len),
              0);
    ASSERT_EQ(send_req(c, ECHO_OP_RELEASE, GVS_F_NOREPLY, 3, 3, NULL, 0), 0);
    ASSERT_EQ(expect_reply(c, 1, 1, body), 0);
    ASSERT_EQ(get_u32(body), 1);
    ASSERT_LT(test_now_ms() - start, BULK_MS / 2);
    ASSERT_EQ(send_req(c, ECHO_OP_COUNT, 0, 2, 4, NULL, 0), 0);
    ASSERT_EQ(expect_reply(c, 4, 2, body), 0);
    uint64_t notes = 0;
    ASSERT_EQ(gvs_buf_get_u64(body, &notes), 0);
    ASSERT_U64_EQ(notes, 1);
    gvs_conn_close(c);
    gvs_buf_free(body);
    free(bulk);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* More blocked lanes than the session has lane threads: the extra ones
 * wait for a thread, none is lost. */
TEST_IMPL(server_many_blocked_lanes)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    enum { LANES = 80 };
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    for (uint32_t lane = 1; lane <= LANES; lane++)
        ASSERT_EQ(send_u32(c, ECHO_OP_BLOCK, 0, lane, lane, BLOCK_MS), 0);
    for (uint32_t i = 0; i < LANES; i++)
        ASSERT_EQ(send_req(c, ECHO_OP_RELEASE, GVS_F_NOREPLY, 1000, 1000 + i,
                           NULL, 0),
                  0);
    uint8_t seen[LANES + 1] = {0};
    for (int i = 0; i < LANES; i++) {
        struct gvs_frame_hdr h;
        ASSERT_EQ(gvs_frame_recv(c, 64, &h, body), 0);
        ASSERT(h.id >= 1 && h.id <= LANES && !seen[h.id]);
        ASSERT_EQ(h.lane, h.id);
        ASSERT_EQ(get_u32(body), 1);
        seen[h.id] = 1;
    }
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_notifications)
{
    struct test_gvsd g = {0};
    struct gvs_buf *body = gvs_buf_new(64);
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(send_u32(c, ECHO_OP_NOTIFY_ME, 0, 4, 1, 50), 0);
    uint64_t last_id = 0;
    for (uint32_t i = 0; i < 50; i++) {
        struct gvs_frame_hdr h;
        ASSERT_EQ(gvs_frame_recv(c, 64, &h, body), 0);
        ASSERT_EQ(h.flags, GVS_F_NOTIFY);
        ASSERT_EQ(h.plugin, ECHO_PLUGIN_ID);
        ASSERT_EQ(h.op, ECHO_NOTE_TICK);
        ASSERT(h.id > last_id);
        last_id = h.id;
        ASSERT_EQ(get_u32(body), i);
    }
    ASSERT_EQ(expect_reply(c, 1, 4, body), 0);
    gvs_conn_close(c);
    gvs_buf_free(body);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* The client leaves while an op blocks: the session still ends, after
 * the op, and closes the plugin's session.  A program exiting says so
 * first (LEAVING, in the stream and beside it): what it posted is
 * served; one killed does not: what was not started is dropped, as the
 * driver drops a killed process's work. */
static int end_while_blocked(int leaving)
{
    struct test_gvsd g = {0};
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(send_u32(c, ECHO_OP_BLOCK, 0, 1, 1, 300), 0);
    for (uint32_t v = 1; v <= 10; v++)
        ASSERT_EQ(send_u32(c, ECHO_OP_NOTE, GVS_F_NOREPLY, 1, 1 + v, v), 0);
    if (leaving) {
        struct gvs_frame_hdr h = {.op = GVS_CTL_LEAVING,
                                  .flags = GVS_F_NOREPLY,
                                  .id = 12};
        ASSERT_EQ(gvs_frame_send(c, &h, NULL), 0);
        gvs_conn_leaving(c);
    }
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "session 1: ended after", 5000));
    ASSERT(test_gvsd_log_has(&g, leaving ? ", 11 call(s): closed" : "vanished",
                             0));
    ASSERT(test_gvsd_log_has(&g, "session 1: worker", 5000));
    ASSERT(test_gvsd_log_has(&g, leaving ? "exited with status 0"
                                         : "exited with status 1",
                             0));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

TEST_IMPL(server_end_while_blocked)
{
    return end_while_blocked(1);
}

TEST_IMPL(server_vanished_while_blocked)
{
    return end_while_blocked(0);
}

/* A BYE read after the client hung up still ends the session in order
 * (gvs status's way: its reply read, BYE, close). */
TEST_IMPL(server_bye_after_hangup)
{
    struct test_gvsd g = {0};
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    struct gvs_frame_hdr h = {.op = GVS_CTL_BYE, .id = 1};
    ASSERT_EQ(gvs_frame_send(c, &h, NULL), 0);
    gvs_conn_close(c);
    ASSERT(test_gvsd_log_has(&g, "session 1: ended after", 5000));
    ASSERT(test_gvsd_log_has(&g, "0 call(s): bye", 0));
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}

/* A bad request closes the connection at once, even while an op of
 * another lane blocks. */
TEST_IMPL(server_error_while_blocked)
{
    struct test_gvsd g = {0};
    ASSERT_EQ(test_gvsd_start(&g, NULL), 0);
    struct gvs_conn *c = test_session(g.unix_uri);
    ASSERT(c != NULL);
    ASSERT_EQ(send_u32(c, ECHO_OP_BLOCK, 0, 1, 1, 2000), 0);
    ASSERT_EQ(send_req(c, 999, 0, 2, 2, NULL, 0), 0);
    long long start = test_now_ms();
    ASSERT(test_wait_closed(c, 5000));
    ASSERT_LT(test_now_ms() - start, 1000);
    ASSERT(test_gvsd_log_has(&g, "session 1: plugin echo has no op 999", 0));
    ASSERT(test_gvsd_log_has(&g, "session 1: ended after", 5000));
    ASSERT(test_gvsd_log_has(&g, "call(s): unknown_op", 0));
    gvs_conn_close(c);
    ASSERT_EQ(test_gvsd_stop(&g), 0);
    return 0;
}
