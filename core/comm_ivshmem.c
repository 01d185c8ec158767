/*
 * ivshmem:///path: shm://'s rings (shm_conn.h) in slots of one region
 * that crosses a VM boundary (ivshmem.h).  gvsd listens by creating the
 * region as a file at the path; QEMU maps the file into a guest as an
 * ivshmem-plain device; a client in the guest connects by naming the
 * device's BAR (`ivshmem:///sys/bus/pci/devices/0000:00:04.0/resource2`),
 * a client on the host by naming the file.
 *
 * Nothing but the shared bytes crosses the boundary: no socket, no futex,
 * no descriptor.  So a side waits by polling the peer's counter, after
 * its callers' spin, sleeping between looks a 32nd of how long the
 * connection has been quiet (gvs_ivs_poll_step_ns): a wait ends at most
 * about 3% late, whatever it waits for, while an idle session's looks
 * thin out to one every 25 ms; the listener's descriptor is a timer
 * on which gvsd's loop looks for claimed slots every TICK_NS.  gvsd's
 * side, on the host as its listener is, dozes instead once its looks
 * would come no more often than the listener's: it sleeps on a futex of
 * its slot, which the listener's look wakes when the client's counters
 * moved (an idle session costs gvsd a wake-up a second, where its looks
 * cost 3-4% of a core for 15 sessions on the project's VMs; the first
 * request after a pause waits up to a tick, as it waited up to a look);
 * and each side learns of the other's death from a heartbeat
 * (GVS_IVS_BEAT_MS, GVS_IVS_DEAD_MS), beaten by a thread of the process
 * that uses the connection.  Memory is not shared by descriptor (no GVS_CONN_CAP_FDS)
 * but placed in the slot's data area (GVS_CONN_CAP_AREA), which both
 * sides map.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "comm_impl.h"
#include "gvs/err.h"
#include "gvs/farmap.h"
#include "gvs/mem.h"
#include "gvs/spin.h"
#include "ivshmem.h"
#include "shm_conn.h"

#define TICK_NS 20000000LL
/* How recently the listener must have looked for gvsd's side to doze. */
#define DOZE_LOOKS_NS (5 * TICK_NS)
#define STEP_MIN_NS 20000LL
#define STEP_MAX_NS 25000000LL
#define STEP_SHARE 32
/* How often a connecting client looks whether gvsd accepted its slot
 * (gvsd's loop looks for claimed slots every TICK_NS). */
#define ACCEPT_STEP_NS 1000000LL

/* gvs_ivshmem_set_layout's. */
static uint32_t layout_slots = GVS_IVS_SLOTS_DEFAULT;
static uint64_t layout_area = GVS_IVS_AREA_DEFAULT;

int gvs_ivs_layout(uint32_t slots, uint32_t ring_size, uint64_t area,
                   struct gvs_ivs_header *out)
{
    if (slots == 0 || slots > GVS_IVS_SLOTS_MAX ||
        area > GVS_IVSHMEM_REGION_MAX || !gvs_shm_ring_size_ok(ring_size))
        return GVS_E_INVAL;
    area = (area + GVS_IVS_PAGE - 1) / GVS_IVS_PAGE * GVS_IVS_PAGE;
    uint64_t need = GVS_IVS_PAGE + slots * gvs_ivs_stride(ring_size, area);
    uint64_t size = GVS_IVS_PAGE;
    while (size < need && size <= GVS_IVSHMEM_REGION_MAX / 2)
        size *= 2;
    if (size < need)
        return GVS_E_INVAL;
    /* What the power of two leaves over goes to the areas. */
    uint64_t per_slot = (size - GVS_IVS_PAGE) / slots;
    area = (per_slot - gvs_ivs_area_off(ring_size)) / GVS_IVS_PAGE *
           GVS_IVS_PAGE;
    *out = (struct gvs_ivs_header){
        .magic = GVS_IVS_MAGIC,
        .version = GVS_IVS_VERSION,
        .slots = slots,
        .ring_size = ring_size,
        .stride = gvs_ivs_stride(ring_size, area),
        .size = size,
        .area = area,
    };
    return 0;
}

int gvs_ivshmem_set_layout(unsigned slots, uint64_t area)
{
    struct gvs_ivs_header h;
    int rc = gvs_ivs_layout(slots, GVS_IVS_RING_DEFAULT, area, &h);
    if (rc == 0) {
        layout_slots = slots;
        layout_area = area;
    }
    return rc;
}

/* The kernel lets a normal thread's timers run late by its timer slack,
 * 50 us by default: a 20-us look would take 70.  The polling threads ask
 * for a slack of a microsecond, once each. */
#define SLACK_NS 1000

static void sleep_ns(long long ns)
{
    static _Thread_local int slack_set;
    if (!slack_set) {
        (void)prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0);
        slack_set = 1;
    }
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    nanosleep(&ts, NULL);
}

static struct gvs_ivs_slot *slot_at(uint8_t *region, uint64_t stride,
                                    uint32_t i)
{
    return (struct gvs_ivs_slot *)(region + GVS_IVS_PAGE + i * stride);
}

/* The heartbeat of one side of a connection. -------------------------- */

struct beat {
    _Atomic uint32_t *word;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    pid_t owner; /* the process whose thread beats; 0: none yet */
    int stop;
};

static void *beat_main(void *arg)
{
    struct beat *b = arg;
    pthread_mutex_lock(&b->lock);
    while (!b->stop) {
        atomic_fetch_add(b->word, 1);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)GVS_IVS_BEAT_MS * 1000000;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&b->cond, &b->lock, &ts);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

static int beat_init(struct beat *b, _Atomic uint32_t *word)
{
    pthread_condattr_t a;
    b->word = word;
    if (pthread_condattr_init(&a) != 0)
        return GVS_E_NOMEM;
    int rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0 &&
                     pthread_cond_init(&b->cond, &a) == 0
                 ? 0
                 : GVS_E_NOMEM;
    pthread_condattr_destroy(&a);
    if (rc == 0 && pthread_mutex_init(&b->lock, NULL) != 0) {
        pthread_cond_destroy(&b->cond);
        rc = GVS_E_NOMEM;
    }
    return rc;
}

/* Started by the first use of the connection in the process that serves
 * it: gvsd accepts in its parent and serves in a forked worker, where
 * the parent's threads are not. */
static void beat_start(struct beat *b)
{
    pid_t me = getpid();
    pthread_mutex_lock(&b->lock);
    if (b->owner != me && pthread_create(&b->thread, NULL, beat_main, b) == 0)
        b->owner = me;
    pthread_mutex_unlock(&b->lock);
}

static void beat_stop(struct beat *b)
{
    /* A forked child's copy: the thread that beats is not in this
     * process, and its lock and condition are as the fork caught them
     * (held, waited on), so neither is touched. */
    if (b->owner != 0 && b->owner != getpid())
        return;
    pthread_mutex_lock(&b->lock);
    int mine = b->owner == getpid();
    b->stop = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (mine)
        pthread_join(b->thread, NULL);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
}

/* A connection. ---------------------------------------------------- */

struct ivs_conn {
    struct shm_conn s;
    struct ivs_conn *next; /* in `live` */
    struct gvs_ivs_slot *slot;
    uint8_t *area; /* the slot's data area in this process's mapping */
    size_t area_len;
    struct beat beat;
    atomic_int beating; /* beat_start ran in this process */
    pid_t beating_pid;
    pthread_mutex_t seen_lock;
    uint32_t peer_beat;
    long long peer_seen_ns; /* when peer_beat last moved */
    /* Per ring (0 in, 1 out), kept by its one waiting thread: the peer's
     * counter of it and ours of the other ring as last seen, and since
     * when both stood still, which sets how long the polled wait sleeps
     * between looks. */
    uint32_t quiet_peer[2];
    uint32_t quiet_own[2];
    long long quiet_since[2];
    /* The listener's count of looks as last seen, and when it moved. */
    _Atomic uint32_t looked;
    _Atomic long long looked_ns;
};

static struct ivs_conn *ivs_of(struct gvs_conn *c)
{
    return c->priv;
}

/* The process's open connections.  A process that exits without closing
 * one (most programs: the client library keeps its connection to the
 * end) ends those it beats for at the very end of its exit, so that gvsd
 * frees the slot at once instead of waiting for the heartbeat to stop:
 * a guest may start processes faster than GVS_IVS_DEAD_MS frees slots.
 * gvs_core's destructor runs after the client library's own (its last
 * posts written) and before its statistics line. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ivs_conn *live;

static void live_prepare(void)
{
    pthread_mutex_lock(&live_lock);
}

static void live_release(void)
{
    pthread_mutex_unlock(&live_lock);
}

__attribute__((constructor)) static void live_init(void)
{
    pthread_atfork(live_prepare, live_release, live_release);
}

static void live_add(struct ivs_conn *v)
{
    pthread_mutex_lock(&live_lock);
    v->next = live;
    live = v;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(struct ivs_conn *v)
{
    pthread_mutex_lock(&live_lock);
    for (struct ivs_conn **p = &live; *p != NULL; p = &(*p)->next)
        if (*p == v) {
            *p = v->next;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}

__attribute__((destructor(102))) static void end_at_exit(void)
{
    pid_t me = getpid();
    pthread_mutex_lock(&live_lock);
    /* Only the flag gvsd reads: this process's threads go on as they
     * were until the exit ends them. */
    for (struct ivs_conn *v = live; v != NULL; v = v->next)
        if (v->beating_pid == me)
            atomic_store(&v->s.ctl->closed[v->s.side], 1);
    pthread_mutex_unlock(&live_lock);
}

static void ensure_beating(struct gvs_conn *c)
{
    struct ivs_conn *v = ivs_of(c);
    if (atomic_load_explicit(&v->beating, memory_order_acquire) &&
        v->beating_pid == getpid())
        return;
    beat_start(&v->beat);
    v->beating_pid = getpid();
    atomic_store_explicit(&v->beating, 1, memory_order_release);
}

/* Whether the wait on r is over: the peer moved its counter (or broke
 * it), or either side has closed. */
static int wait_over(struct shm_conn *s, struct gvs_shm_ring *r)
{
    uint32_t n;
    if (atomic_load(&s->down) || atomic_load(&s->ctl->closed[0]) ||
        atomic_load(&s->ctl->closed[1]))
        return 1;
    if (r->producer)
        return gvs_shm_ring_has_room(r);
    return gvs_shm_ring_avail(r, &n) < 0 || n > 0;
}

long long gvs_ivs_poll_step_ns(long long quiet_ns)
{
    long long step = quiet_ns / STEP_SHARE;
    return step < STEP_MIN_NS ? STEP_MIN_NS
           : step > STEP_MAX_NS ? STEP_MAX_NS
                                : step;
}

/* How long the connection has been quiet as seen from ring r: neither
 * the peer's counter of r nor ours of the other ring moved.  Ours
 * counts: a client that has just sent a request after a pause waits
 * for a reply due in microseconds, not for an idle peer. */
static long long quiet_for(struct shm_conn *s, struct gvs_shm_ring *r,
                           long long now)
{
    struct ivs_conn *v = (struct ivs_conn *)s; /* its first member */
    int i = r != &s->in;
    struct gvs_shm_ring *o = i ? &s->in : &s->out;
    uint32_t peer = atomic_load(r->producer ? &r->ctl->tail : &r->ctl->head);
    uint32_t own = atomic_load(o->producer ? &o->ctl->head : &o->ctl->tail);
    if (peer != v->quiet_peer[i] || own != v->quiet_own[i] ||
        v->quiet_since[i] == 0) {
        v->quiet_peer[i] = peer;
        v->quiet_own[i] = own;
        v->quiet_since[i] = now;
    }
    return now - v->quiet_since[i];
}

/* Whether gvsd's listener has looked at the slots lately: a side that
 * dozes needs its look to be woken. */
static int listener_looks(struct ivs_conn *v, long long now)
{
    uint32_t n = atomic_load_explicit(&v->slot->looked, memory_order_relaxed);
    if (n != atomic_load_explicit(&v->looked, memory_order_relaxed)) {
        atomic_store_explicit(&v->looked, n, memory_order_relaxed);
        atomic_store_explicit(&v->looked_ns, now, memory_order_relaxed);
        return 1;
    }
    return now - atomic_load_explicit(&v->looked_ns, memory_order_relaxed) <
           DOZE_LOOKS_NS;
}

/* gvsd's side asleep until the listener's look finds that the client
 * moved, or ns.  Counted in `dozing` before the last look at the ring
 * (seq_cst): a move the look missed comes after the count, where the
 * listener's next look finds both. */
static void doze(struct ivs_conn *v, struct gvs_shm_ring *r, long long ns)
{
    uint32_t seq = atomic_load(&v->slot->doze);
    atomic_fetch_add(&v->slot->dozing, 1);
    if (!wait_over(&v->s, r))
        gvs_shm_futex_wait(&v->slot->doze, seq, ns);
    atomic_fetch_sub(&v->slot->dozing, 1);
}

static int polled_sleep(struct shm_conn *s, struct gvs_shm_ring *r,
                        long long timeout_ns)
{
    struct ivs_conn *v = (struct ivs_conn *)s; /* its first member */
    long long start = gvs_now_ns();
    for (;;) {
        if (wait_over(s, r))
            return 0;
        long long now = gvs_now_ns(), left = start + timeout_ns - now;
        if (left <= 0)
            return GVS_E_TIMEOUT;
        long long step = gvs_ivs_poll_step_ns(quiet_for(s, r, now));
        if (s->side == GVS_SHM_S2C && step >= TICK_NS &&
            listener_looks(v, now))
            doze(v, r, left);
        else
            sleep_ns(step < left ? step : left);
    }
}

static int check_beat(struct gvs_conn *c, struct shm_conn *s)
{
    struct ivs_conn *v = ivs_of(c);
    uint32_t b = atomic_load(&v->slot->beat[!s->side]);
    long long now = gvs_now_ns();
    pthread_mutex_lock(&v->seen_lock);
    if (b != v->peer_beat) {
        v->peer_beat = b;
        v->peer_seen_ns = now;
    } else if (now - v->peer_seen_ns >= (long long)GVS_IVS_DEAD_MS * 1000000) {
        atomic_store(&s->peer_gone, 1);
    }
    pthread_mutex_unlock(&v->seen_lock);
    return 0;
}

static const struct shm_conn_waits ivs_waits = {
    .sleep = polled_sleep,
    .check_peer = check_beat,
};

static int ivs_sendv(struct gvs_conn *c, const struct iovec *iov, int iovcnt)
{
    ensure_beating(c);
    return gvs_shmconn_sendv(c, iov, iovcnt);
}

static int ivs_recv_some(struct gvs_conn *c, void *p, size_t len, size_t *got)
{
    ensure_beating(c);
    return gvs_shmconn_recv_some(c, p, len, got);
}

/* Ends our side; wakes our own threads that doze (gvsd's side: the
 * client cannot reach a futex). */
static void end_side(struct ivs_conn *v)
{
    gvs_shmconn_end(&v->s);
    if (v->s.side == GVS_SHM_S2C) {
        atomic_fetch_add(&v->slot->doze, 1);
        gvs_shm_futex_wake(&v->slot->doze);
    }
}

static void ivs_shutdown(struct gvs_conn *c)
{
    end_side(ivs_of(c));
}

/* The slot is freed by gvsd's listener once both sides have ended.  A
 * forked client's copy keeps the mapping: the program's page-locked
 * memory of the parent's session lies in its area, and stays the
 * child's memory, as a memfd's mapping does over shm://. */
static void ivs_close(struct gvs_conn *c, int copy)
{
    struct ivs_conn *v = ivs_of(c);
    live_remove(v);
    if (!copy)
        end_side(v);
    beat_stop(&v->beat);
    pthread_mutex_destroy(&v->seen_lock);
    if (!copy || v->s.side != GVS_SHM_C2S)
        munmap(v->s.base, v->s.len);
    gvs_free(v);
}

static int ivs_area(struct gvs_conn *c, void **base, size_t *len)
{
    struct ivs_conn *v = ivs_of(c);
    if (v->area_len == 0)
        return GVS_E_NOTSUP;
    *base = v->area;
    *len = v->area_len;
    return 0;
}

static const struct gvs_conn_ops ivs_ops = {
    .sendv = ivs_sendv,
    .recv_some = ivs_recv_some,
    .set_timeout = gvs_shmconn_set_timeout,
    .readable = gvs_shmconn_readable,
    .shutdown = ivs_shutdown,
    .caps = GVS_CONN_CAP_CHEAP_WRITES,
    .area = ivs_area,
    .close = ivs_close,
};

/* Takes the mapping (released on failure), which holds the slot and
 * its area of h->area bytes.  peer_beat: the peer's beat now, from which
 * its liveness is judged. */
static int conn_new(uint8_t *map, size_t len, struct gvs_ivs_slot *slot,
                    const struct gvs_ivs_header *h, int side,
                    const char *peer, struct gvs_conn **out)
{
    uint32_t ring_size = h->ring_size;
    struct gvs_conn *c = gvs_conn_alloc(&ivs_ops);
    struct ivs_conn *v = gvs_calloc(1, sizeof(*v));
    if (c == NULL || v == NULL || beat_init(&v->beat, &slot->beat[side]) < 0) {
        gvs_free(c);
        gvs_free(v);
        munmap(map, len);
        return GVS_E_NOMEM;
    }
    pthread_mutex_init(&v->seen_lock, NULL);
    gvs_shmconn_init(&v->s, map, len, (uint8_t *)slot + GVS_IVS_PAGE,
                     ring_size, side, &ivs_waits);
    v->slot = slot;
    v->area = (uint8_t *)slot + gvs_ivs_area_off(ring_size);
    v->area_len = h->area;
    v->peer_beat = atomic_load(&slot->beat[!side]);
    v->peer_seen_ns = gvs_now_ns();
    /* No doze until a look of the listener is seen. */
    atomic_init(&v->looked, atomic_load(&slot->looked));
    atomic_init(&v->looked_ns, -DOZE_LOOKS_NS);
    c->priv = v;
    snprintf(c->peer, sizeof(c->peer), "%s", peer);
    live_add(v);
    *out = c;
    return 0;
}

/* Server side. ------------------------------------------------------ */

struct ivs_listener {
    int file;
    uint8_t *region;
    struct gvs_ivs_header h; /* ours: never read back from the region */
    struct {
        uint32_t beat[2];
        long long seen_ns[2];
        uint32_t client[3]; /* its counters and closed flag, last look */
    } track[GVS_IVS_SLOTS_MAX];
    char path[sizeof(((struct gvs_uri *)0)->path)];
};

/* A side whose beat stood still for GVS_IVS_DEAD_MS; each look records
 * what it saw. */
static int stale(struct ivs_listener *v, uint32_t i, int side, long long now)
{
    uint32_t b = atomic_load(&slot_at(v->region, v->h.stride, i)->beat[side]);
    if (b != v->track[i].beat[side]) {
        v->track[i].beat[side] = b;
        v->track[i].seen_ns[side] = now;
        return 0;
    }
    return now - v->track[i].seen_ns[side] >=
           (long long)GVS_IVS_DEAD_MS * 1000000;
}

static struct gvs_shm_ctl *ctl_of(struct ivs_listener *v, uint32_t i)
{
    return (struct gvs_shm_ctl *)((uint8_t *)slot_at(v->region, v->h.stride,
                                                      i) +
                                  GVS_IVS_PAGE);
}

/* Wakes gvsd's side of slot i where it dozes and the client moved since
 * the last look: sent (the head of its ring), read (the tail of ours),
 * or closed.  Each look is counted, for the side that would doze. */
static void rouse(struct ivs_listener *v, uint32_t i)
{
    struct gvs_ivs_slot *slot = slot_at(v->region, v->h.stride, i);
    struct gvs_shm_ctl *ctl = ctl_of(v, i);
    uint32_t now[3] = {atomic_load(&ctl->ring[GVS_SHM_C2S].head),
                       atomic_load(&ctl->ring[GVS_SHM_S2C].tail),
                       atomic_load(&ctl->closed[GVS_SHM_C2S])};
    int moved = memcmp(now, v->track[i].client, sizeof(now)) != 0;
    memcpy(v->track[i].client, now, sizeof(now));
    atomic_fetch_add(&slot->looked, 1);
    if (moved && atomic_load(&slot->dozing) != 0) {
        atomic_fetch_add(&slot->doze, 1);
        gvs_shm_futex_wake(&slot->doze);
    }
}

/* An accepted slot whose two sides have ended (closed, or stopped
 * beating) is free again; a gvsd side that died without closing is
 * closed here, so that its client hears of it. */
static void reap(struct ivs_listener *v, uint32_t i, long long now)
{
    struct gvs_ivs_slot *slot = slot_at(v->region, v->h.stride, i);
    struct gvs_shm_ctl *ctl = ctl_of(v, i);
    int server_dead = stale(v, i, GVS_SHM_S2C, now);
    int client_dead = stale(v, i, GVS_SHM_C2S, now);
    if (server_dead && !atomic_load(&ctl->closed[GVS_SHM_S2C]))
        atomic_store(&ctl->closed[GVS_SHM_S2C], 1);
    if ((atomic_load(&ctl->closed[GVS_SHM_S2C]) || server_dead) &&
        (atomic_load(&ctl->closed[GVS_SHM_C2S]) || client_dead))
        atomic_store(&slot->state, GVS_IVS_FREE);
}

/* The first claimed slot, accepted (its rings zeroed before the client
 * may use them), or -1; every other slot looked after on the way. */
static int scan(struct ivs_listener *v)
{
    long long now = gvs_now_ns();
    for (uint32_t i = 0; i < v->h.slots; i++) {
        struct gvs_ivs_slot *slot = slot_at(v->region, v->h.stride, i);
        uint32_t st = atomic_load(&slot->state);
        if (st == GVS_IVS_CLAIMED) {
            memset(ctl_of(v, i), 0, sizeof(struct gvs_shm_ctl));
            memset(v->track[i].client, 0, sizeof(v->track[i].client));
            atomic_store(&slot->dozing, 0);
            for (int side = 0; side < 2; side++) {
                v->track[i].beat[side] = atomic_load(&slot->beat[side]);
                v->track[i].seen_ns[side] = now;
            }
            uint32_t want = GVS_IVS_CLAIMED;
            if (atomic_compare_exchange_strong(&slot->state, &want,
                                               GVS_IVS_ACCEPTED))
                return (int)i;
        } else if (st == GVS_IVS_ACCEPTED) {
            rouse(v, i);
            reap(v, i, now);
        } else if (st != GVS_IVS_FREE) {
            atomic_store(&slot->state, GVS_IVS_FREE);
        }
    }
    return -1;
}

static int accept_slot(struct gvs_listener *l, uint32_t i,
                       struct gvs_conn **out)
{
    struct ivs_listener *v = l->priv;
    off_t off = (off_t)(GVS_IVS_PAGE + i * v->h.stride);
    void *map = mmap(NULL, v->h.stride, PROT_READ | PROT_WRITE, MAP_SHARED,
                     v->file, off);
    if (map == MAP_FAILED)
        return GVS_E_IO;
    /* The peer key (daemon.c) is what precedes the last colon: the
     * region, that is the guest. */
    char peer[GVS_PEER_MAX];
    snprintf(peer, sizeof(peer), "%s:%u", v->path, i);
    return conn_new(map, v->h.stride, map, &v->h, GVS_SHM_S2C, peer, out);
}

static int ivs_accept(struct gvs_listener *l, struct gvs_conn **out)
{
    struct ivs_listener *v = l->priv;
    int blocking = !(fcntl(l->fd, F_GETFL) & O_NONBLOCK);
    uint64_t ticks;
    for (;;) {
        /* A blocking listener waits for the next tick; gvsd's, polled,
         * only takes the tick that woke it. */
        if (read(l->fd, &ticks, sizeof(ticks)) < 0 && errno == EINTR)
            return GVS_E_TIMEOUT;
        int i = scan(v);
        if (i >= 0)
            return accept_slot(l, (uint32_t)i, out);
        if (!blocking)
            return GVS_E_TIMEOUT;
    }
}

static void ivs_listener_close(struct gvs_listener *l, int keep_path)
{
    struct ivs_listener *v = l->priv;
    if (!keep_path)
        unlink(v->path);
    munmap(v->region, v->h.size);
    close(v->file);
    close(l->fd);
    gvs_free(v);
}

/* Zeroes the region without touching its pages: holes read as zeros
 * and hold no memory until written (an area is mostly never used).
 * Where the file system cannot punch holes, written over. */
static void zero_region(struct ivs_listener *v)
{
    if (fallocate(v->file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                  (off_t)v->h.size) < 0)
        memset(v->region, 0, v->h.size);
}

/* The region: created at the path (or taken over), sized and zeroed
 * (every slot free), its header written last; locked, so that a second
 * gvsd on the same path is refused rather than reformatting the first
 * one's. */
static int make_region(struct ivs_listener *v, const char *uri)
{
    v->file = open(v->path, O_RDWR | O_CREAT | O_CLOEXEC, 0660);
    if (v->file < 0)
        return gvs_comm_fail(GVS_E_IO, errno, "%s: cannot create %s", uri,
                             v->path);
    if (flock(v->file, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        close(v->file);
        return gvs_comm_fail(e == EWOULDBLOCK ? GVS_E_INUSE : GVS_E_IO,
                             e == EWOULDBLOCK ? 0 : e,
                             "%s: %s is served by another gvsd", uri,
                             v->path);
    }
    if (gvs_ivs_layout(layout_slots, GVS_IVS_RING_DEFAULT, layout_area,
                       &v->h) < 0) {
        close(v->file);
        return gvs_comm_fail(GVS_E_INVAL, 0, "%s: no region holds %u slots",
                             uri, layout_slots);
    }
    /* Sized, never cut first: a guest of an earlier gvsd may still map
     * the file, and QEMU would fault on pages a truncation took away.
     * Zeroed below instead, which ends whatever that guest had open. */
    void *p = MAP_FAILED;
    int e = 0;
    if (ftruncate(v->file, (off_t)v->h.size) < 0)
        e = errno;
    else if ((p = mmap(NULL, v->h.size, PROT_READ | PROT_WRITE, MAP_SHARED,
                       v->file, 0)) == MAP_FAILED)
        e = errno;
    if (p == MAP_FAILED) {
        close(v->file);
        return gvs_comm_fail(GVS_E_IO, e, "%s: cannot size and map %s", uri,
                             v->path);
    }
    v->region = p;
    zero_region(v);
    memcpy(v->region, &v->h, sizeof(v->h));
    atomic_thread_fence(memory_order_release);
    return 0;
}

static int ivs_listen(const struct gvs_uri *u, struct gvs_listener **out)
{
    char uri[GVS_URI_TEXT_MAX];
    gvs_uri_format(u, uri, sizeof(uri));
    struct gvs_listener *l = gvs_listener_alloc(&gvs_transport_ivshmem);
    struct ivs_listener *v = gvs_calloc(1, sizeof(*v));
    if (l == NULL || v == NULL) {
        gvs_free(l);
        gvs_free(v);
        return GVS_E_NOMEM;
    }
    snprintf(v->path, sizeof(v->path), "%s", u->path);
    int rc = make_region(v, uri);
    if (rc < 0) {
        gvs_free(l);
        gvs_free(v);
        return rc;
    }
    const struct itimerspec tick = {{0, TICK_NS}, {0, TICK_NS}};
    l->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (l->fd < 0 || timerfd_settime(l->fd, 0, &tick, NULL) < 0) {
        rc = gvs_comm_fail(GVS_E_IO, errno, "%s: timerfd", uri);
        if (l->fd >= 0)
            close(l->fd);
        munmap(v->region, v->h.size);
        close(v->file);
        unlink(v->path);
        gvs_free(l);
        gvs_free(v);
        return rc;
    }
    l->priv = v;
    l->close = ivs_listener_close;
    snprintf(l->uri, sizeof(l->uri), "%s", uri);
    *out = l;
    return 0;
}

/* Client side. ------------------------------------------------------ */

/* The header checked against the mapping's size, once. */
static int check_header(const uint8_t *map, size_t len,
                        struct gvs_ivs_header *h)
{
    memcpy(h, map, sizeof(*h));
    if (h->magic != GVS_IVS_MAGIC || h->version != GVS_IVS_VERSION ||
        !gvs_shm_ring_size_ok(h->ring_size) || h->slots == 0 ||
        h->slots > GVS_IVS_SLOTS_MAX || h->area % GVS_IVS_PAGE != 0 ||
        h->size > len || h->area > h->size ||
        h->stride != gvs_ivs_stride(h->ring_size, h->area) ||
        GVS_IVS_PAGE + (uint64_t)h->slots * h->stride > h->size)
        return GVS_E_PROTO;
    return 0;
}

static int claim(uint8_t *map, const struct gvs_ivs_header *h, uint32_t *i)
{
    for (*i = 0; *i < h->slots; (*i)++) {
        uint32_t want = GVS_IVS_FREE;
        if (atomic_compare_exchange_strong(&slot_at(map, h->stride, *i)->state,
                                           &want, GVS_IVS_CLAIMED))
            return 0;
    }
    return -1;
}

/* Claims a slot and waits, beating, for gvsd to accept it, both by the
 * connect timeout. */
static int open_slot(const char *uri, uint8_t *map, size_t len,
                     const struct gvs_ivs_header *h, struct gvs_conn **out)
{
    long long deadline =
        gvs_now_ns() + (long long)gvs_connect_timeout_ms() * 1000000;
    uint32_t i;
    while (claim(map, h, &i) < 0) {
        if (gvs_now_ns() >= deadline) {
            munmap(map, len);
            return gvs_comm_fail(GVS_E_CONNECT, 0,
                                 "connect %s: all %u slots in use", uri,
                                 h->slots);
        }
        sleep_ns(TICK_NS / 2);
    }
    struct gvs_ivs_slot *slot = slot_at(map, h->stride, i);
    char peer[GVS_PEER_MAX];
    snprintf(peer, sizeof(peer), "gvsd:%u", i);
    struct gvs_conn *c;
    int rc = conn_new(map, len, slot, h, GVS_SHM_C2S, peer, &c);
    if (rc < 0)
        return rc;
    ensure_beating(c);
    for (;;) {
        uint32_t st = atomic_load(&slot->state);
        if (st == GVS_IVS_ACCEPTED)
            break;
        if (st != GVS_IVS_CLAIMED) {
            gvs_conn_close_copy(c);
            return gvs_comm_fail(GVS_E_CONNECT, 0,
                                 "connect %s: slot %u was taken back", uri,
                                 i);
        }
        /* Withdrawn unless gvsd accepts it at this very moment. */
        if (gvs_now_ns() >= deadline &&
            atomic_compare_exchange_strong(&slot->state, &st, GVS_IVS_FREE)) {
            gvs_conn_close_copy(c);
            return gvs_comm_fail(GVS_E_CONNECT, 0,
                                 "connect %s: no gvsd answers on it", uri);
        }
        sleep_ns(ACCEPT_STEP_NS);
    }
    *out = c;
    return 0;
}

static int ivs_connect(const struct gvs_uri *u, struct gvs_conn **out)
{
    char uri[GVS_URI_TEXT_MAX];
    struct stat st;
    struct gvs_ivs_header h;
    gvs_uri_format(u, uri, sizeof(uri));
    int fd = open(u->path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return gvs_comm_fail(GVS_E_CONNECT, errno, "connect %s", uri);
    /* A PCI device's BAR, as sysfs shows it: this client is a guest and
     * gvsd is on its host. */
    struct statfs fs;
    int away = fstatfs(fd, &fs) == 0 && fs.f_type == SYSFS_MAGIC;
    void *map = MAP_FAILED;
    int e = 0;
    if (fstat(fd, &st) < 0)
        e = errno;
    else if (st.st_size >= (off_t)GVS_IVS_PAGE &&
             (uint64_t)st.st_size <= GVS_IVSHMEM_REGION_MAX &&
             (map = gvs_mmap_far((size_t)st.st_size, PROT_READ | PROT_WRITE,
                                 MAP_SHARED, fd, 0)) == MAP_FAILED)
        e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return gvs_comm_fail(e != 0 ? GVS_E_CONNECT : GVS_E_PROTO, e,
                             "connect %s: cannot map it", uri);
    size_t len = (size_t)st.st_size;
    if (check_header(map, len, &h) < 0) {
        munmap(map, len);
        return gvs_comm_fail(GVS_E_PROTO, 0,
                             "connect %s: not a gvs ivshmem region", uri);
    }
    int rc = open_slot(uri, map, len, &h, out);
    if (rc == 0 && away)
        (*out)->caps |= GVS_CONN_CAP_PEER_AWAY;
    return rc;
}

const struct gvs_transport gvs_transport_ivshmem = {
    .scheme = "ivshmem",
    .listen = ivs_listen,
    .accept = ivs_accept,
    .connect = ivs_connect,
};
