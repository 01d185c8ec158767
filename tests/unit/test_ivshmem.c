/* The ivshmem:// communicator on the host: the region file gvsd makes,
 * slots claimed and freed, polled waits, heartbeats, hostile regions. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/comm_impl.h"
#include "../../core/ivshmem.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_core.h"

static void ivs_uri(char *out, size_t outlen, char *path, size_t pathlen,
                    const char *tag)
{
    char p[108];
    snprintf(p, sizeof(p), "/tmp/gvs-test-%ld-%s.ivshmem", (long)getpid(),
             tag);
    snprintf(out, outlen, "ivshmem://%s", p);
    if (path != NULL)
        snprintf(path, pathlen, "%s", p);
}


/* The region as a client maps it, for the hostile tests. */
static uint8_t *map_region(const char *path, size_t *len)
{
    int fd = open(path, O_RDWR);
    off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    void *p = size > 0 ? mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
                              MAP_SHARED, fd, 0)
                       : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    *len = (size_t)size;
    return p == MAP_FAILED ? NULL : p;
}

/* A client and gvsd's side of it, on a listener already open. */
static int pair_on(struct gvs_listener *l, const char *uri,
                   struct gvs_conn **client, struct gvs_conn **server)
{
    struct test_connector k;
    ASSERT_EQ(test_connector_start(&k, uri), 0);
    int rc = gvs_accept(l, server);
    test_connector_join(&k);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(k.rc, 0);
    *client = k.conn;
    return 0;
}

static struct gvs_ivs_slot *slot_of(uint8_t *region, uint32_t i)
{
    const struct gvs_ivs_header *h = (const void *)region;
    return (struct gvs_ivs_slot *)(region + GVS_IVS_PAGE + i * h->stride);
}

/* A 32 MiB frame each way through 2 MiB rings, between processes; the
 * peer is the region and the slot. */
TEST_IMPL(ivshmem_transfer)
{
    char uri[160], path[108], peer[128], want[160];
    struct gvs_listener *l;
    ivs_uri(uri, sizeof(uri), path, sizeof(path), "big");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_STR_EQ(gvs_listener_uri(l), uri);
    ASSERT_EQ(test_transfer(l, uri, (size_t)32 << 20, peer, sizeof(peer)), 0);
    snprintf(want, sizeof(want), "%s:0", path);
    ASSERT_STR_EQ(peer, want);
    gvs_listener_close(l, 0);
    ASSERT_EQ(access(path, F_OK), -1);
    return 0;
}

/* Small frames back and forth, every wait a polled one. */
TEST_IMPL(ivshmem_ping_pong)
{
    char uri[160];
    long long ns;
    ivs_uri(uri, sizeof(uri), NULL, 0, "pp");
    ASSERT_EQ(test_ping_pong(uri, 2000, 0, &ns), 0);
    /* Each wait at most a few 1 ms steps, even on a loaded machine. */
    ASSERT_LT(ns, 20000000000LL);
    return 0;
}

/* An orderly close: what was sent, then the end, soon. */
TEST_IMPL(ivshmem_peer_closed)
{
    char uri[160], got[3];
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ivs_uri(uri, sizeof(uri), NULL, 0, "close");
    ASSERT_EQ(test_conn_pair(uri, &l, &a, &b), 0);
    ASSERT_EQ(gvs_conn_send(a, "bye", 3), 0);
    gvs_conn_close(a);
    ASSERT_EQ(gvs_conn_recv(b, got, 3), 0);
    ASSERT_MEM_EQ(got, "bye", 3);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_recv(b, got, 1), GVS_E_CLOSED);
    ASSERT_LT(test_now_ms() - t0, 150);
    ASSERT_EQ(gvs_conn_send(b, "x", 1), GVS_E_CLOSED);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* A process that exits without closing its connection (as programs
 * leave the client library's) ends it at exit: gvsd's side hears at
 * once, not after the heartbeat's time. */
TEST_IMPL(ivshmem_exit_unclosed)
{
    char uri[160], got[2];
    struct gvs_listener *l;
    struct gvs_conn *c;
    ivs_uri(uri, sizeof(uri), NULL, 0, "exit");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (gvs_connect(uri, &c) != 0 || gvs_conn_send(c, "hi", 2) != 0)
            _exit(1);
        exit(0);
    }
    ASSERT_EQ(gvs_accept(l, &c), 0);
    ASSERT_EQ(gvs_conn_recv(c, got, 2), 0);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_recv(c, got, 1), GVS_E_CLOSED);
    ASSERT_LT(test_now_ms() - t0, 1000);
    ASSERT_EQ(test_reaped_ok(pid), 0);
    gvs_conn_close(c);
    gvs_listener_close(l, 0);
    return 0;
}

/* A client killed without closing: gvsd's side hears of it from the
 * stopped heartbeat, and the listener frees the slot. */
TEST_IMPL(ivshmem_peer_killed)
{
    char uri[160], path[108], got[4];
    struct gvs_listener *l;
    struct gvs_conn *c;
    size_t len;
    ivs_uri(uri, sizeof(uri), path, sizeof(path), "kill");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (gvs_connect(uri, &c) != 0 || gvs_conn_send(c, "last", 4) != 0)
            _exit(1);
        usleep(100000);
        raise(SIGKILL);
        _exit(3);
    }
    ASSERT_EQ(gvs_accept(l, &c), 0);
    ASSERT_EQ(gvs_conn_recv(c, got, 4), 0);
    ASSERT_MEM_EQ(got, "last", 4);
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_conn_recv(c, got, 1), GVS_E_CLOSED);
    long long dt = test_now_ms() - t0;
    ASSERT_GE(dt, GVS_IVS_DEAD_MS - 200);
    ASSERT_LT(dt, GVS_IVS_DEAD_MS + 2500);
    ASSERT_EQ(waitpid(pid, NULL, 0), pid);
    gvs_conn_close(c);
    uint8_t *region = map_region(path, &len);
    ASSERT(region != NULL);
    ASSERT_EQ(gvs_listener_fd(l) >= 0, 1);
    /* The listener's next look frees it. */
    ASSERT_EQ(fcntl(gvs_listener_fd(l), F_SETFL, O_NONBLOCK), 0);
    t0 = test_now_ms();
    while (atomic_load(&slot_of(region, 0)->state) != GVS_IVS_FREE &&
           test_now_ms() - t0 < 5000) {
        ASSERT_EQ(gvs_accept(l, &c), GVS_E_TIMEOUT);
        usleep(10000);
    }
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->state), GVS_IVS_FREE);
    munmap(region, len);
    gvs_listener_close(l, 0);
    return 0;
}

/* Every slot taken: the next client waits for one by the connect
 * timeout, then fails naming the cause; a slot whose two sides closed is
 * free again at the listener's next look. */
TEST_IMPL(ivshmem_slots)
{
    char uri[160];
    struct gvs_listener *l;
    struct gvs_conn *client[GVS_IVS_SLOTS_MAX], *server[GVS_IVS_SLOTS_MAX];
    ivs_uri(uri, sizeof(uri), NULL, 0, "slots");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    uint32_t n = GVS_IVS_SLOTS_DEFAULT;
    for (uint32_t i = 0; i < n; i++) {
        struct test_connector k;
        ASSERT_EQ(test_connector_start(&k, uri), 0);
        ASSERT_EQ(gvs_accept(l, &server[i]), 0);
        test_connector_join(&k);
        ASSERT_EQ(k.rc, 0);
        client[i] = k.conn;
    }
    setenv("GVS_CONNECT_TIMEOUT_MS", "300", 1);
    struct gvs_conn *extra;
    long long t0 = test_now_ms();
    ASSERT_EQ(gvs_connect(uri, &extra), GVS_E_CONNECT);
    ASSERT_GE(test_now_ms() - t0, 290);
    ASSERT(strstr(gvs_comm_why(), "slots in use") != NULL);
    gvs_conn_close(client[3]);
    gvs_conn_close(server[3]);
    unsetenv("GVS_CONNECT_TIMEOUT_MS");
    struct test_connector k;
    ASSERT_EQ(test_connector_start(&k, uri), 0);
    struct gvs_conn *again;
    ASSERT_EQ(gvs_accept(l, &again), 0);
    test_connector_join(&k);
    ASSERT_EQ(k.rc, 0);
    ASSERT_EQ(gvs_conn_send(k.conn, "hi", 2), 0);
    char got[2];
    ASSERT_EQ(gvs_conn_recv(again, got, 2), 0);
    ASSERT_MEM_EQ(got, "hi", 2);
    char want[160];
    snprintf(want, sizeof(want), "%s:3", uri + strlen("ivshmem://"));
    ASSERT_STR_EQ(gvs_conn_peer(again), want);
    gvs_conn_close(k.conn);
    gvs_conn_close(again);
    for (uint32_t i = 0; i < n; i++)
        if (i != 3) {
            gvs_conn_close(client[i]);
            gvs_conn_close(server[i]);
        }
    gvs_listener_close(l, 0);
    return 0;
}

/* The polled wait's step: a 32nd of the quiet time, from 20 us to 25
 * ms, never longer than that share (a wait ends at most 3% late). */
TEST_IMPL(ivshmem_poll_step)
{
    ASSERT_EQ(gvs_ivs_poll_step_ns(0), 20000LL);
    ASSERT_EQ(gvs_ivs_poll_step_ns(640000LL), 20000LL);
    ASSERT_EQ(gvs_ivs_poll_step_ns(3200000LL), 100000LL);
    ASSERT_EQ(gvs_ivs_poll_step_ns(32000000LL), 1000000LL);
    ASSERT_EQ(gvs_ivs_poll_step_ns(800000000LL), 25000000LL);
    ASSERT_EQ(gvs_ivs_poll_step_ns(3600000000000LL), 25000000LL);
    for (long long q = 0; q < 2000000000LL; q = q * 5 / 4 + 1000) {
        long long st = gvs_ivs_poll_step_ns(q);
        ASSERT_GE(st, 20000LL);
        ASSERT_LE(st, 25000000LL);
        if (q / 32 >= 20000LL)
            ASSERT_LE(st, q / 32);
    }
    return 0;
}

struct late_peer {
    struct gvs_conn *c;
    long long delay_ns;
    int rounds;
    long long sent_ns[16];
};

/* gvsd's side: on each request, waits delay_ns, then answers. */
static void *late_answer(void *arg)
{
    struct late_peer *p = arg;
    for (int i = 0; i < p->rounds; i++) {
        char b;
        if (gvs_conn_recv(p->c, &b, 1) < 0)
            break;
        long long until = gvs_now_ns() + p->delay_ns;
        while (gvs_now_ns() < until)
            ;
        p->sent_ns[i] = gvs_now_ns();
        if (gvs_conn_send(p->c, &b, 1) < 0)
            break;
    }
    return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* A request sent after a second's pause, answered 700 us later: the
 * reply is seen within a fraction of that (the median of 9 rounds, a
 * bound loose enough for a loaded machine), not at the next step of a
 * wait that doubled its sleeps past the answer (1,260 us). */
TEST_IMPL(ivshmem_wait_late)
{
    char uri[160];
    struct gvs_listener *l;
    struct gvs_conn *c, *g;
    struct late_peer p = {.delay_ns = 700000LL, .rounds = 9};
    long long late[9];
    pthread_t th;
    ivs_uri(uri, sizeof(uri), NULL, 0, "late");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_EQ(pair_on(l, uri, &c, &g), 0);
    p.c = g;
    ASSERT_EQ(pthread_create(&th, NULL, late_answer, &p), 0);
    for (int i = 0; i < p.rounds; i++) {
        char b = (char)i;
        if (i == 0)
            usleep(1000000);
        ASSERT_EQ(gvs_conn_send(c, &b, 1), 0);
        ASSERT_EQ(gvs_conn_recv(c, &b, 1), 0);
        late[i] = gvs_now_ns();
    }
    pthread_join(th, NULL);
    for (int i = 0; i < p.rounds; i++)
        late[i] -= p.sent_ns[i];
    qsort(late, (size_t)p.rounds, sizeof(late[0]), cmp_ll);
    ASSERT_LT(late[p.rounds / 2], 350000LL);
    gvs_conn_close(c);
    gvs_conn_close(g);
    gvs_listener_close(l, 0);
    return 0;
}

/* gvsd's loop: a look at the slots every tick, until stopped.  While it
 * runs the listener does not block, and pair_on must not be called. */
struct looker {
    struct gvs_listener *l;
    pthread_t th;
    atomic_int stop;
};

static void *look(void *arg)
{
    struct looker *k = arg;
    struct gvs_conn *c;
    while (!atomic_load(&k->stop)) {
        if (gvs_accept(k->l, &c) == 0)
            gvs_conn_close(c);
        usleep(20000);
    }
    return NULL;
}

static int looker_start(struct looker *k, struct gvs_listener *l)
{
    k->l = l;
    atomic_store(&k->stop, 0);
    ASSERT_EQ(fcntl(gvs_listener_fd(l), F_SETFL, O_NONBLOCK), 0);
    ASSERT_EQ(pthread_create(&k->th, NULL, look, k), 0);
    return 0;
}

static int looker_stop(struct looker *k)
{
    atomic_store(&k->stop, 1);
    pthread_join(k->th, NULL);
    ASSERT_EQ(fcntl(gvs_listener_fd(k->l), F_SETFL, 0), 0);
    return 0;
}

static int pause_then(struct test_receiver *w, struct gvs_conn *g,
                      struct gvs_conn *c, uint8_t *region, int dozes)
{
    ASSERT_EQ(test_receiver_start(w, g), 0);
    usleep(1500000);
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->dozing), (uint32_t)dozes);
    long long sent = gvs_now_ns();
    ASSERT_EQ(gvs_conn_send(c, "x", 1), 0);
    test_receiver_join(w);
    ASSERT_EQ(w->rc, 0);
    ASSERT_LT(w->at_ns - sent, 100000000LL);
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->dozing), 0u);
    return 0;
}

/* An idle gvsd side dozes on its slot's futex while the listener looks,
 * and the look that finds the client's request wakes it within a tick
 * or so; it does not doze while no look comes (it would sleep its whole
 * slice), and its own shutdown or the client's close wakes it too. */
TEST_IMPL(ivshmem_doze)
{
    char uri[160], path[108];
    struct gvs_listener *l;
    struct gvs_conn *c, *g;
    struct looker k;
    size_t len;
    ivs_uri(uri, sizeof(uri), path, sizeof(path), "doze");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_EQ(pair_on(l, uri, &c, &g), 0);
    uint8_t *region = map_region(path, &len);
    ASSERT(region != NULL);
    ASSERT_EQ(looker_start(&k, l), 0);
    struct test_receiver w;
    ASSERT_EQ(pause_then(&w, g, c, region, 1), 0);

    /* Its own shutdown, from another thread. */
    ASSERT_EQ(test_receiver_start(&w, g), 0);
    usleep(1500000);
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->dozing), 1u);
    long long t0 = gvs_now_ns();
    gvs_conn_shutdown(g);
    test_receiver_join(&w);
    ASSERT_EQ(w.rc, GVS_E_CLOSED);
    ASSERT_LT(w.at_ns - t0, 100000000LL);
    gvs_conn_close(g);
    gvs_conn_close(c);

    /* The client's close. */
    ASSERT_EQ(looker_stop(&k), 0);
    ASSERT_EQ(pair_on(l, uri, &c, &g), 0);
    ASSERT_EQ(looker_start(&k, l), 0);
    ASSERT_EQ(test_receiver_start(&w, g), 0);
    usleep(1500000);
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->dozing), 1u);
    t0 = gvs_now_ns();
    gvs_conn_close(c);
    test_receiver_join(&w);
    ASSERT_EQ(w.rc, GVS_E_CLOSED);
    ASSERT_LT(w.at_ns - t0, 100000000LL);
    gvs_conn_close(g);

    /* No look: polled waits, as before there was a listener to wake. */
    ASSERT_EQ(looker_stop(&k), 0);
    ASSERT_EQ(pair_on(l, uri, &c, &g), 0);
    ASSERT_EQ(pause_then(&w, g, c, region, 0), 0);
    gvs_conn_close(c);
    gvs_conn_close(g);
    munmap(region, len);
    gvs_listener_close(l, 0);
    return 0;
}

/* No gvsd looks at the region (its listener never accepts): the client
 * withdraws its claim at the connect timeout. */
TEST_IMPL(ivshmem_no_answer)
{
    char uri[160], path[108];
    struct gvs_listener *l;
    struct gvs_conn *c;
    size_t len;
    ivs_uri(uri, sizeof(uri), path, sizeof(path), "mute");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    setenv("GVS_CONNECT_TIMEOUT_MS", "200", 1);
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_CONNECT);
    unsetenv("GVS_CONNECT_TIMEOUT_MS");
    ASSERT(strstr(gvs_comm_why(), "no gvsd answers") != NULL);
    uint8_t *region = map_region(path, &len);
    ASSERT(region != NULL);
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->state), GVS_IVS_FREE);
    munmap(region, len);
    gvs_listener_close(l, 0);
    return 0;
}

/* The data areas: each connection has its own, the same bytes on both
 * sides, page-aligned, as large as the layout makes them; layouts past
 * the largest region are refused. */
TEST_IMPL(ivshmem_area)
{
    char uri[160];
    struct gvs_listener *l;
    struct gvs_conn *a, *b, *c, *d;
    struct gvs_ivs_header h;
    ASSERT_EQ(gvs_ivshmem_set_layout(0, 0), GVS_E_INVAL);
    ASSERT_EQ(gvs_ivshmem_set_layout(GVS_IVSHMEM_SLOTS_MAX + 1, 0),
              GVS_E_INVAL);
    ASSERT_EQ(gvs_ivshmem_set_layout(64, 2ull << 30), GVS_E_INVAL);
    ASSERT_EQ(gvs_ivs_layout(2, GVS_IVS_RING_DEFAULT, 1 << 20, &h), 0);
    ASSERT_EQ(h.size, 16u << 20);
    ASSERT_GE(h.area, 1u << 20);
    ASSERT_EQ(h.area % GVS_IVS_PAGE, 0);
    ASSERT_LE(GVS_IVS_PAGE + 2 * h.stride, h.size);
    ASSERT_GT(GVS_IVS_PAGE + 2 * (h.stride + GVS_IVS_PAGE), h.size);
    ASSERT_EQ(gvs_ivshmem_set_layout(2, 1 << 20), 0);
    ivs_uri(uri, sizeof(uri), NULL, 0, "area");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_EQ(pair_on(l, uri, &a, &b), 0);
    ASSERT_EQ(pair_on(l, uri, &c, &d), 0);
    void *pa, *pb, *pc, *pd;
    size_t na, nb, nc, nd;
    ASSERT(gvs_conn_caps(a) & GVS_CONN_CAP_AREA);
    ASSERT(gvs_conn_caps(b) & GVS_CONN_CAP_AREA);
    /* A region file: client and gvsd are on one host. */
    ASSERT_EQ(gvs_conn_caps(a) & GVS_CONN_CAP_PEER_AWAY, 0);
    ASSERT_EQ(gvs_conn_caps(b) & GVS_CONN_CAP_PEER_AWAY, 0);
    ASSERT_EQ(gvs_conn_area(a, &pa, &na), 0);
    ASSERT_EQ(gvs_conn_area(b, &pb, &nb), 0);
    ASSERT_EQ(gvs_conn_area(c, &pc, &nc), 0);
    ASSERT_EQ(gvs_conn_area(d, &pd, &nd), 0);
    ASSERT_EQ(na, h.area);
    ASSERT_EQ(nb, na);
    ASSERT_EQ(nc, na);
    ASSERT_EQ(nd, na);
    ASSERT_EQ((uintptr_t)pa % GVS_IVS_PAGE, 0);
    ASSERT_EQ((uintptr_t)pb % GVS_IVS_PAGE, 0);
    /* Both sides see the other's bytes, at both ends of the area; the
     * other connection's area is not touched. */
    uint8_t *ua = pa, *ub = pb, *uc = pc, *ud = pd;
    memset(ua, 0x5a, 4096);
    ua[na - 1] = 0x33;
    ub[8192] = 0x77;
    ASSERT_EQ(ub[0], 0x5a);
    ASSERT_EQ(ub[4095], 0x5a);
    ASSERT_EQ(ub[nb - 1], 0x33);
    ASSERT_EQ(ua[8192], 0x77);
    ASSERT_EQ(uc[0], 0);
    ASSERT_EQ(ud[nd - 1], 0);
    /* Connections without an area say so. */
    char uuri[160];
    struct gvs_listener *ul;
    struct gvs_conn *plain[2];
    test_unix_uri(uuri, sizeof(uuri), NULL, 0, "noarea");
    ASSERT_EQ(test_conn_pair(uuri, &ul, &plain[0], &plain[1]), 0);
    ASSERT_EQ(gvs_conn_caps(plain[0]) & GVS_CONN_CAP_AREA, 0);
    ASSERT_EQ(gvs_conn_area(plain[0], &pa, &na), GVS_E_NOTSUP);
    ASSERT(pa == NULL);
    gvs_conn_close(plain[0]);
    gvs_conn_close(plain[1]);
    gvs_listener_close(ul, 0);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_conn_close(c);
    gvs_conn_close(d);
    gvs_listener_close(l, 0);
    return 0;
}

/* What a guest may write: a header that lies, a state word gvsd does
 * not know, a ring counter past the ring; a file left at the path; and
 * a second gvsd on the same path.  Each fails alone; the listener goes
 * on. */
TEST_IMPL(ivshmem_hostile)
{
    char uri[160], path[108];
    struct gvs_listener *l, *l2;
    struct gvs_conn *a, *b, *c;
    size_t len;
    ivs_uri(uri, sizeof(uri), path, sizeof(path), "hostile");
    /* A file left at the path, junk where slots go: taken over and
     * zeroed. */
    uint8_t junk[8192];
    test_fill(junk, sizeof(junk), 9);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
    close(fd);
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_EQ(gvs_listen(uri, &l2), GVS_E_INUSE);
    uint8_t *region = map_region(path, &len);
    ASSERT(region != NULL);
    struct gvs_ivs_header *h = (struct gvs_ivs_header *)region;
    struct gvs_ivs_header keep = *h;

    /* Headers a client must refuse before it claims anything. */
    const struct {
        size_t off;
        uint64_t v;
        int wide;
    } lies[] = {
        {offsetof(struct gvs_ivs_header, magic), 0x12345678, 0},
        {offsetof(struct gvs_ivs_header, version), 1, 0},
        {offsetof(struct gvs_ivs_header, slots), 0, 0},
        {offsetof(struct gvs_ivs_header, slots), 1000, 0},
        {offsetof(struct gvs_ivs_header, ring_size), 3000, 0},
        {offsetof(struct gvs_ivs_header, stride), 4096, 1},
        {offsetof(struct gvs_ivs_header, size), (uint64_t)len * 2, 1},
        {offsetof(struct gvs_ivs_header, area), keep.area + 1, 1},
        {offsetof(struct gvs_ivs_header, area), keep.area + 4096, 1},
        {offsetof(struct gvs_ivs_header, area), (uint64_t)len * 4, 1},
    };
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        *h = keep;
        if (lies[i].wide)
            memcpy(region + lies[i].off, &lies[i].v, 8);
        else
            memcpy(region + lies[i].off, &(uint32_t){(uint32_t)lies[i].v}, 4);
        ASSERT_EQ(gvs_connect(uri, &c), GVS_E_PROTO);
    }
    *h = keep;
    for (uint32_t i = 0; i < keep.slots; i++)
        ASSERT_EQ(atomic_load(&slot_of(region, i)->state), GVS_IVS_FREE);

    /* A slot in a state of no meaning is freed at the next look. */
    atomic_store(&slot_of(region, 0)->state, 77);
    ASSERT_EQ(fcntl(gvs_listener_fd(l), F_SETFL, O_NONBLOCK), 0);
    ASSERT_EQ(gvs_accept(l, &c), GVS_E_TIMEOUT);
    ASSERT_EQ(atomic_load(&slot_of(region, 0)->state), GVS_IVS_FREE);
    ASSERT_EQ(fcntl(gvs_listener_fd(l), F_SETFL, 0), 0);

    /* A producer counter past the ring: gvsd's side refuses the stream
     * and ends the connection; the listener serves the next client. */
    ASSERT_EQ(pair_on(l, uri, &a, &b), 0);
    struct gvs_shm_ctl *ctl =
        (struct gvs_shm_ctl *)((uint8_t *)slot_of(region, 0) + GVS_IVS_PAGE);
    atomic_store(&ctl->ring[GVS_SHM_C2S].head, keep.ring_size + 5);
    char got[4];
    ASSERT_EQ(gvs_conn_recv(b, got, 1), GVS_E_PROTO);
    ASSERT_EQ(gvs_conn_recv(a, got, 1), GVS_E_CLOSED);
    gvs_conn_close(a);
    gvs_conn_close(b);
    ASSERT_EQ(pair_on(l, uri, &a, &b), 0);
    ASSERT_EQ(gvs_conn_send(a, "fine", 4), 0);
    ASSERT_EQ(gvs_conn_recv(b, got, 4), 0);
    ASSERT_MEM_EQ(got, "fine", 4);
    gvs_conn_close(a);
    gvs_conn_close(b);
    munmap(region, len);
    gvs_listener_close(l, 0);

    /* Not a region at all, and a file too short for a header. */
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_PROTO);
    ASSERT_EQ(ftruncate(fd, 100), 0);
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_PROTO);
    close(fd);
    unlink(path);
    ASSERT_EQ(gvs_connect(uri, &c), GVS_E_CONNECT);
    return 0;
}
