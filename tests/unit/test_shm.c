/* The shm:// communicator: rings, waits, peer death, hostile setups. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/comm_impl.h"
#include "../../core/shm_ring.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs/spin.h"
#include "test.h"
#include "test_core.h"

#define PING_PONGS 50000 /* round trips: 100k frames */
#define STREAM_FRAMES 400
#define FAKE_RING (64u << 10)

static void shm_uri(char *out, size_t outlen, char *path, size_t pathlen,
                    const char *tag)
{
    char unix_uri[160];
    test_unix_uri(unix_uri, sizeof(unix_uri), path, pathlen, tag);
    snprintf(out, outlen, "shm://%s", unix_uri + strlen("unix://"));
}

static int shm_pair(const char *tag, struct gvs_listener **l,
                    struct gvs_conn **client, struct gvs_conn **server)
{
    char uri[160];
    shm_uri(uri, sizeof(uri), NULL, 0, tag);
    return test_conn_pair(uri, l, client, server);
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

static long long now_ms(void)
{
    return gvs_now_ns() / 1000000;
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

/* A 32 MiB frame each way through 8 MiB rings, between processes. */
TEST_IMPL(shm_transfer)
{
    char uri[160], peer[128], want[64];
    struct gvs_listener *l;
    shm_uri(uri, sizeof(uri), NULL, 0, "big");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    ASSERT_STR_EQ(gvs_listener_uri(l), uri);
    ASSERT_EQ(test_transfer(l, uri, (size_t)32 << 20, peer, sizeof(peer)), 0);
    snprintf(want, sizeof(want), "uid=%u gid=%u pid=", (unsigned)getuid(),
             (unsigned)getgid());
    ASSERT(strncmp(peer, want, strlen(want)) == 0);
    gvs_listener_close(l, 0);
    return 0;
}

/* Small frames back and forth: the path of every CUDA call.  Timed
 * without spinning, every wait a futex sleep and wake-up: the slowest
 * path, and the only one that stays fast when the test shares its CPUs
 * (spinners then hold a CPU their peer needs). */
TEST_IMPL(shm_ping_pong)
{
    char uri[160];
    long long ns;
    shm_uri(uri, sizeof(uri), NULL, 0, "pp");
    ASSERT_EQ(test_ping_pong(uri, PING_PONGS, 0, &ns), 0);
    /* 60 us a round trip: far above a futex wake-up's cost, which an idle
     * machine shows (about 10 us), so a loaded CI machine passes, and far
     * below a wake-up that waits for a timeout. */
    ASSERT_LT(ns, 3000000000LL);
    ASSERT_EQ(test_ping_pong(uri, PING_PONGS / 10, 20000, &ns), 0);
    return 0;
}

struct streamer {
    struct gvs_conn *c;
    uint32_t seed;
    int rc;
};

static size_t stream_len(uint32_t seed, int i)
{
    return (size_t)((seed * 7919u + (uint32_t)i * 104729u) % (300u << 10));
}

static void *send_stream(void *arg)
{
    struct streamer *s = arg;
    uint8_t *p = malloc(300 << 10);
    for (int i = 0; i < STREAM_FRAMES && s->rc == 0 && p != NULL; i++) {
        size_t len = stream_len(s->seed, i);
        fill(p, len, s->seed + (uint32_t)i);
        struct gvs_frame_hdr h = {.plugin = 1, .op = 1, .id = (uint64_t)i};
        struct iovec iov = {p, len};
        s->rc = gvs_frame_sendv(s->c, &h, &iov, 1);
    }
    free(p);
    return NULL;
}

static void *recv_stream(void *arg)
{
    struct streamer *s = arg;
    uint8_t *want = malloc(300 << 10);
    struct gvs_buf *b = gvs_buf_new(300 << 10);
    struct gvs_frame_hdr h;
    for (int i = 0; i < STREAM_FRAMES && s->rc == 0; i++) {
        size_t len = stream_len(s->seed, i);
        fill(want, len, s->seed + (uint32_t)i);
        s->rc = gvs_frame_recv(s->c, 300 << 10, &h, b);
        if (s->rc == 0 && (h.id != (uint64_t)i || gvs_buf_len(b) != len ||
                           memcmp(gvs_buf_ptr(b), want, len) != 0))
            s->rc = GVS_E_PROTO;
    }
    free(want);
    gvs_buf_free(b);
    return NULL;
}

/* Both directions at once, each end with a sending and a receiving
 * thread, about 60 MiB each way through 8 MiB rings. */
TEST_IMPL(shm_concurrent)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    ASSERT_EQ(shm_pair("conc", &l, &a, &b), 0);
    struct streamer s[4] = {{a, 1, 0}, {b, 1, 0}, {b, 2, 0}, {a, 2, 0}};
    void *(*fn[4])(void *) = {send_stream, recv_stream, send_stream,
                              recv_stream};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(pthread_create(&t[i], NULL, fn[i], &s[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ASSERT_EQ(s[i].rc, 0);
    }
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* An orderly close delivers what was sent before it, then the end, to a
 * receiver already asleep; a shutdown wakes this process's own sleeper. */
TEST_IMPL(shm_peer_closed)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    char got[3];
    ASSERT_EQ(shm_pair("close", &l, &a, &b), 0);
    ASSERT_EQ(gvs_conn_send(a, "bye", 3), 0);
    gvs_conn_close(a);
    ASSERT_EQ(gvs_conn_recv(b, got, 3), 0);
    ASSERT_MEM_EQ(got, "bye", 3);
    ASSERT_EQ(gvs_conn_recv(b, got, 1), GVS_E_CLOSED);
    ASSERT_EQ(gvs_conn_send(b, "x", 1), GVS_E_CLOSED);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000), 1);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);

    /* The peer's close wakes a receiver asleep on the ring. */
    ASSERT_EQ(shm_pair("close2", &l, &a, &b), 0);
    struct test_receiver k;
    ASSERT_EQ(test_receiver_start(&k, b), 0);
    usleep(50000);
    long long closed_at = gvs_now_ns();
    gvs_conn_close(a);
    test_receiver_join(&k);
    ASSERT_EQ(k.rc, GVS_E_CLOSED);
    ASSERT_LT(k.at_ns - closed_at, 150000000LL);

    /* gvs_conn_shutdown from another thread: our sleeper returns. */
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    ASSERT_EQ(shm_pair("close3", &l, &a, &b), 0);
    ASSERT_EQ(test_receiver_start(&k, b), 0);
    usleep(50000);
    closed_at = gvs_now_ns();
    gvs_conn_shutdown(b);
    test_receiver_join(&k);
    ASSERT_EQ(k.rc, GVS_E_CLOSED);
    ASSERT_LT(k.at_ns - closed_at, 150000000LL);
    ASSERT_EQ(gvs_conn_recv(a, got, 1), GVS_E_CLOSED);
    gvs_conn_close(b);
    gvs_conn_close(a);
    gvs_listener_close(l, 0);

    /* Closing a copy (a forked process's) tells the peer nothing. */
    ASSERT_EQ(shm_pair("copy", &l, &a, &b), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        gvs_conn_close_copy(a);
        gvs_conn_close_copy(b);
        _exit(0);
    }
    ASSERT_EQ(waitpid(pid, NULL, 0), pid);
    ASSERT_EQ(gvs_conn_send(a, "ok", 2), 0);
    ASSERT_EQ(gvs_conn_recv(b, got, 2), 0);
    ASSERT_MEM_EQ(got, "ok", 2);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* A child connects, sends "last", sleeps ms milliseconds and SIGKILLs
 * itself: no close, no flag; only its socket ends. */
static pid_t doomed_peer(const char *uri, unsigned ms)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    struct gvs_conn *c;
    if (gvs_connect(uri, &c) != 0)
        _exit(1);
    if (gvs_conn_send(c, "last", 4) != 0)
        _exit(2);
    usleep(ms * 1000);
    raise(SIGKILL);
    _exit(3);
}

TEST_IMPL(shm_peer_killed)
{
    char uri[160];
    struct gvs_listener *l;
    struct gvs_conn *c;
    char got[4];
    shm_uri(uri, sizeof(uri), NULL, 0, "kill");
    ASSERT_EQ(gvs_listen(uri, &l), 0);

    /* A receiver: the bytes sent before the death, then the end. */
    pid_t pid = doomed_peer(uri, 100);
    ASSERT_GE(pid, 0);
    ASSERT_EQ(gvs_accept(l, &c), 0);
    ASSERT_EQ(gvs_conn_recv(c, got, 4), 0);
    ASSERT_MEM_EQ(got, "last", 4);
    long long t0 = now_ms();
    ASSERT_EQ(gvs_conn_recv(c, got, 1), GVS_E_CLOSED);
    ASSERT_LT(now_ms() - t0, 1000);
    ASSERT_EQ(waitpid(pid, NULL, 0), pid);
    gvs_conn_close(c);

    /* A sender waiting for room the dead peer will never make. */
    pid = doomed_peer(uri, 100);
    ASSERT_GE(pid, 0);
    ASSERT_EQ(gvs_accept(l, &c), 0);
    size_t big = (size_t)32 << 20;
    uint8_t *p = calloc(1, big);
    ASSERT(p != NULL);
    t0 = now_ms();
    ASSERT_EQ(gvs_conn_send(c, p, big), GVS_E_CLOSED);
    ASSERT_LT(now_ms() - t0, 1000);
    ASSERT_EQ(gvs_conn_send(c, p, 1), GVS_E_CLOSED);
    ASSERT_EQ(waitpid(pid, NULL, 0), pid);
    gvs_conn_close(c);
    free(p);
    gvs_listener_close(l, 0);
    return 0;
}

/* Threads of this process named name. */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof(comm), f) != NULL &&
            strncmp(comm, name, strlen(name)) == 0 && comm[strlen(name)] == '\n')
            n++;
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* A peer killed after 3 s of quiet: the receiver's sleeps have grown
 * long by then (shm_conn.c), and the watcher of the socket wakes it at
 * once, not at the end of a sleep (3.5 s after the start, where the
 * sleeps stopped at 1 s).  The lower bound only says the receiver did
 * not return before the death (a late start of the clock moves it). */
TEST_IMPL(shm_idle_peer_killed)
{
    char uri[160], got[4];
    struct gvs_listener *l;
    struct gvs_conn *c;
    shm_uri(uri, sizeof(uri), NULL, 0, "idlekill");
    ASSERT_EQ(gvs_listen(uri, &l), 0);
    pid_t pid = doomed_peer(uri, 3000);
    ASSERT_GE(pid, 0);
    ASSERT_EQ(gvs_accept(l, &c), 0);
    ASSERT_EQ(gvs_conn_recv(c, got, 4), 0);
    ASSERT_MEM_EQ(got, "last", 4);
    long long t0 = now_ms();
    /* The first sleep that ends with nothing starts the watcher. */
    ASSERT_EQ(threads_named("gvs-shm-watch"), 0);
    ASSERT_EQ(gvs_conn_set_timeout(c, 500), 0);
    ASSERT_EQ(gvs_conn_recv(c, got, 1), GVS_E_TIMEOUT);
    ASSERT_EQ(threads_named("gvs-shm-watch"), 1);
    ASSERT_EQ(gvs_conn_set_timeout(c, 0), 0);
    ASSERT_EQ(gvs_conn_recv(c, got, 1), GVS_E_CLOSED);
    long long dt = now_ms() - t0;
    ASSERT_GE(dt, 2000);
    ASSERT_LT(dt, 3300);
    ASSERT_EQ(waitpid(pid, NULL, 0), pid);
    gvs_conn_close(c);
    ASSERT_EQ(threads_named("gvs-shm-watch"), 0);
    gvs_listener_close(l, 0);
    return 0;
}

TEST_IMPL(shm_recv_timeout)
{
    struct gvs_listener *l;
    struct gvs_conn *a, *b;
    char buf[8];
    ASSERT_EQ(shm_pair("tmo", &l, &a, &b), 0);
    ASSERT_EQ(gvs_conn_set_timeout(b, 150), 0);
    long long t0 = now_ms();
    ASSERT_EQ(gvs_conn_recv(b, buf, sizeof(buf)), GVS_E_TIMEOUT);
    long long dt = now_ms() - t0;
    ASSERT_GE(dt, 140);
    ASSERT_LT(dt, 5000);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 0);
    ASSERT_EQ(gvs_conn_set_timeout(b, 0), 0);
    ASSERT_EQ(gvs_conn_send(a, "12345678", 8), 0);
    ASSERT_EQ(gvs_conn_spin_readable(b, 1000000), 1);
    ASSERT_EQ(gvs_conn_recv(b, buf, 8), 0);
    ASSERT_MEM_EQ(buf, "12345678", 8);
    gvs_conn_close(a);
    gvs_conn_close(b);
    gvs_listener_close(l, 0);
    return 0;
}

/* A hand-made server: a plain unix listener at the path a client
 * reaches as shm://, so the test chooses what the setup carries. */
struct fake {
    struct gvs_listener *l;
    struct gvs_conn *server; /* the accepted socket */
    char uri[160];
    pthread_t t;
    struct gvs_conn *client;
    int client_rc;
};

static void *fake_connect(void *arg)
{
    struct fake *f = arg;
    f->client_rc = gvs_connect(f->uri, &f->client);
    return NULL;
}

static int fake_start(struct fake *f, const char *tag)
{
    char unix_uri[160];
    memset(f, 0, sizeof(*f));
    test_unix_uri(unix_uri, sizeof(unix_uri), NULL, 0, tag);
    snprintf(f->uri, sizeof(f->uri), "shm://%s",
             unix_uri + strlen("unix://"));
    ASSERT_EQ(gvs_listen(unix_uri, &f->l), 0);
    ASSERT_EQ(pthread_create(&f->t, NULL, fake_connect, f), 0);
    /* Accepted as a plain socket: unix://'s own setup is not sent. */
    int sock = accept4(gvs_listener_fd(f->l), NULL, NULL, SOCK_CLOEXEC);
    ASSERT(sock >= 0);
    ASSERT_EQ(gvs_fd_conn_new(sock, &f->server), 0);
    return 0;
}

/* Joins the client; returns its gvs_connect result. */
static int fake_finish(struct fake *f)
{
    pthread_join(f->t, NULL);
    gvs_conn_close(f->server);
    gvs_listener_close(f->l, 0);
    return f->client_rc;
}

static int send_setup(struct fake *f, const struct gvs_shm_setup *m,
                      const int *fds, int nfds)
{
    struct iovec iov = {(void *)m, sizeof(*m)};
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        msg.msg_control = u.buf;
        msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
    }
    return sendmsg(gvs_conn_fd(f->server), &msg, MSG_NOSIGNAL) ==
                   (ssize_t)sizeof(*m)
               ? 0
               : -1;
}

static int region_fd(size_t len, int seal)
{
    int fd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
        return -1;
    if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
        return -1;
    return fd;
}

/* One malformed setup: the client must refuse it with want. */
static int bad_setup(const char *tag, struct gvs_shm_setup m, size_t len,
                     int seal, int nfds, int want)
{
    struct fake f;
    int fds[2] = {region_fd(len, seal), region_fd(len, seal)};
    ASSERT(fds[0] >= 0 && fds[1] >= 0);
    ASSERT_EQ(fake_start(&f, tag), 0);
    ASSERT_EQ(send_setup(&f, &m, fds, nfds), 0);
    close(fds[0]);
    close(fds[1]);
    ASSERT_EQ(fake_finish(&f), want);
    ASSERT(f.client == NULL);
    return 0;
}

TEST_IMPL(shm_bad_setup)
{
    const struct gvs_shm_setup good = {GVS_SHM_MAGIC, GVS_SHM_VERSION,
                                       FAKE_RING, 0};
    const size_t len = gvs_shm_region_size(FAKE_RING);
    struct gvs_shm_setup m;
    int before = open_fds();

    m = good;
    m.magic ^= 1;
    ASSERT_EQ(bad_setup("magic", m, len, 1, 1, GVS_E_PROTO), 0);
    m = good;
    m.version++;
    ASSERT_EQ(bad_setup("version", m, len, 1, 1, GVS_E_PROTO), 0);
    /* The ring size must match the region it came with. */
    m = good;
    m.ring_size = FAKE_RING * 2;
    ASSERT_EQ(bad_setup("size", m, len, 1, 1, GVS_E_PROTO), 0);
    m = good;
    m.ring_size = FAKE_RING + 4096;
    ASSERT_EQ(bad_setup("pow2", m, gvs_shm_region_size(m.ring_size), 1, 1,
                        GVS_E_PROTO),
              0);
    m = good;
    m.ring_size = 0;
    ASSERT_EQ(bad_setup("zero", m, GVS_SHM_CTL_SIZE, 1, 1, GVS_E_PROTO), 0);
    /* A region the server could still shrink under us. */
    ASSERT_EQ(bad_setup("unsealed", good, len, 0, 1, GVS_E_PROTO), 0);
    ASSERT_EQ(bad_setup("nofd", good, len, 1, 0, GVS_E_PROTO), 0);
    ASSERT_EQ(bad_setup("twofds", good, len, 1, 2, GVS_E_PROTO), 0);

    /* A server that says nothing and hangs up. */
    struct fake f;
    ASSERT_EQ(fake_start(&f, "silent"), 0);
    gvs_conn_close(f.server);
    f.server = NULL;
    ASSERT_EQ(fake_finish(&f), GVS_E_CONNECT);

    /* A plain unix server (speaking frames, not setups). */
    ASSERT_EQ(fake_start(&f, "frames"), 0);
    struct gvs_frame_hdr h = {.id = 0, .flags = GVS_F_REPLY};
    ASSERT_EQ(gvs_frame_send(f.server, &h, NULL), 0);
    ASSERT_EQ(fake_finish(&f), GVS_E_PROTO);

    /* Every descriptor received was closed. */
    ASSERT_EQ(open_fds(), before);
    return 0;
}

/* A fake server with a good region it keeps mapped, to corrupt. */
static int fake_region(struct fake *f, const char *tag,
                       struct gvs_shm_ctl **ctl)
{
    const struct gvs_shm_setup m = {GVS_SHM_MAGIC, GVS_SHM_VERSION,
                                    FAKE_RING, 0};
    size_t len = gvs_shm_region_size(FAKE_RING);
    int fd = region_fd(len, 1);
    ASSERT_GE(fd, 0);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT(p != MAP_FAILED);
    *ctl = p;
    ASSERT_EQ(fake_start(f, tag), 0);
    ASSERT_EQ(send_setup(f, &m, &fd, 1), 0);
    close(fd);
    pthread_join(f->t, NULL);
    ASSERT_EQ(f->client_rc, 0);
    return 0;
}

static void fake_end(struct fake *f, struct gvs_shm_ctl *ctl)
{
    gvs_conn_close(f->client);
    gvs_conn_close(f->server);
    gvs_listener_close(f->l, 0);
    munmap(ctl, gvs_shm_region_size(FAKE_RING));
}

TEST_IMPL(shm_bad_counter)
{
    struct fake f;
    struct gvs_shm_ctl *ctl;
    char buf[16];

    /* A producer counter more than a ring ahead. */
    ASSERT_EQ(fake_region(&f, "head", &ctl), 0);
    atomic_store(&ctl->ring[GVS_SHM_S2C].head, 3 * FAKE_RING);
    ASSERT_EQ(gvs_conn_spin_readable(f.client, 1000000), 1);
    ASSERT_EQ(gvs_conn_recv(f.client, buf, 1), GVS_E_PROTO);
    ASSERT_EQ(gvs_conn_recv(f.client, buf, 1), GVS_E_CLOSED);
    /* The client told us it stopped. */
    ASSERT_EQ(atomic_load(&ctl->closed[GVS_SHM_C2S]), 1);
    fake_end(&f, ctl);

    /* Behind us: as bad. */
    ASSERT_EQ(fake_region(&f, "back", &ctl), 0);
    atomic_store(&ctl->ring[GVS_SHM_S2C].head, (uint32_t)-5);
    ASSERT_EQ(gvs_conn_recv(f.client, buf, 1), GVS_E_PROTO);
    fake_end(&f, ctl);

    /* A consumer counter ahead of what the client produced: read (and
     * refused) once the room the client saw last is used up. */
    ASSERT_EQ(fake_region(&f, "tail", &ctl), 0);
    ASSERT_EQ(gvs_conn_send(f.client, "abc", 3), 0);
    atomic_store(&ctl->ring[GVS_SHM_C2S].tail, 100);
    ASSERT_EQ(gvs_conn_send(f.client, "d", 1), 0);
    static char rest[FAKE_RING];
    ASSERT_EQ(gvs_conn_send(f.client, rest, FAKE_RING - 3), GVS_E_PROTO);
    ASSERT_EQ(gvs_conn_send(f.client, "d", 1), GVS_E_CLOSED);
    fake_end(&f, ctl);

    /* Within bounds, a hostile peer only garbles its own stream. */
    ASSERT_EQ(fake_region(&f, "junk", &ctl), 0);
    uint8_t *data = (uint8_t *)ctl + GVS_SHM_CTL_SIZE + FAKE_RING;
    memset(data, 0xee, FAKE_RING);
    atomic_store(&ctl->ring[GVS_SHM_S2C].head, FAKE_RING);
    struct gvs_frame_hdr h;
    struct gvs_buf *b = gvs_buf_new(16);
    ASSERT_EQ(gvs_frame_recv(f.client, 16, &h, b), GVS_E_PROTO);
    gvs_buf_free(b);
    fake_end(&f, ctl);
    return 0;
}

/* A region of len bytes (FAKE_RING rings) in this process, and both
 * ends of its server-to-client ring; NULL on failure. */
static uint8_t *ring_ends(size_t len, struct gvs_shm_ring *prod,
                          struct gvs_shm_ring *cons)
{
    uint8_t *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    gvs_shm_ring_init(prod, base, FAKE_RING, GVS_SHM_S2C, 1);
    gvs_shm_ring_init(cons, base, FAKE_RING, GVS_SHM_S2C, 0);
    return base;
}

/* Two threads of one side asleep on a ring (a reader short of a frame's
 * end, and the client's receiver waiting for the next frame): the one
 * that wakes first must not take the other's "asleep" with it, or the
 * producer's next publish wakes nobody. */
struct unread_sleeper {
    struct gvs_shm_ring *r;
    long long slept_ns;
};

static void *sleep_unread(void *arg)
{
    struct unread_sleeper *u = arg;
    long long t = gvs_now_ns();
    while (!gvs_shm_ring_unread(u->r) && gvs_now_ns() - t < 5000000000LL)
        (void)gvs_shm_ring_sleep_unread(u->r, 5000000000LL);
    u->slept_ns = gvs_now_ns() - t;
    return NULL;
}

static void *sleep_briefly(void *arg)
{
    (void)gvs_shm_ring_sleep(arg, 10000000LL);
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

TEST_IMPL(shm_ring_two_sleepers)
{
    size_t len = gvs_shm_region_size(FAKE_RING);
    struct gvs_shm_ring prod, cons;
    uint8_t *base = ring_ends(len, &prod, &cons);
    ASSERT(base != NULL);
    struct unread_sleeper u = {&cons, 0};
    pthread_t waiter, brief;
    ASSERT_EQ(pthread_create(&waiter, NULL, sleep_unread, &u), 0);
    pause_ms(5);
    ASSERT_EQ(pthread_create(&brief, NULL, sleep_briefly, &cons), 0);
    pthread_join(brief, NULL);
    pause_ms(10);
    ASSERT_EQ(gvs_shm_ring_unread(&cons), 0);
    size_t put, got;
    ASSERT_EQ(gvs_shm_ring_put(&prod, "x", 1, &put), 0);
    gvs_shm_ring_publish(&prod);
    pthread_join(waiter, NULL);
    ASSERT_LT(u.slept_ns, 1000000000LL);
    ASSERT_EQ(gvs_shm_ring_unread(&cons), 1);
    char c;
    ASSERT_EQ(gvs_shm_ring_read(&cons, &c, 1, &got), 0);
    ASSERT_EQ(got, 1);
    ASSERT_EQ(gvs_shm_ring_unread(&cons), 0);
    munmap(base, len);
    return 0;
}

/* A producer that found the ring full sleeps until the room it wants
 * (an eighth of the ring, however few bytes it has to put) is free,
 * woken once for it, not by every read of the consumer: with a full
 * ring, a wake-up per frame is a system call per frame on both sides. */
struct room_waiter {
    struct gvs_shm_ring *r;
    size_t len;
    _Atomic int done;
};

static void *wait_for_room(void *arg)
{
    struct room_waiter *w = arg;
    long long t = gvs_now_ns();
    gvs_shm_ring_want(w->r, w->len);
    while (!gvs_shm_ring_has_room(w->r) && gvs_now_ns() - t < 5000000000LL)
        (void)gvs_shm_ring_sleep(w->r, 5000000000LL);
    gvs_shm_ring_want(w->r, 0);
    atomic_store(&w->done, 1);
    return NULL;
}

static int room_wanted(size_t want)
{
    size_t len = gvs_shm_region_size(FAKE_RING);
    struct gvs_shm_ring prod, cons;
    uint8_t *base = ring_ends(len, &prod, &cons);
    ASSERT(base != NULL);
    static uint8_t bytes[FAKE_RING];
    size_t put, got;
    ASSERT_EQ(gvs_shm_ring_put(&prod, bytes, FAKE_RING, &put), 0);
    ASSERT_EQ(put, FAKE_RING);
    gvs_shm_ring_publish(&prod);
    struct room_waiter w = {&prod, want, 0};
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, wait_for_room, &w), 0);
    pause_ms(10);
    ASSERT_EQ(gvs_shm_ring_read(&cons, bytes, FAKE_RING / 16, &got), 0);
    ASSERT_EQ(got, FAKE_RING / 16);
    pause_ms(50);
    int early = atomic_load(&w.done);
    ASSERT_EQ(early, 0);
    long long t = gvs_now_ns();
    ASSERT_EQ(gvs_shm_ring_read(&cons, bytes, FAKE_RING / 16, &got), 0);
    pthread_join(th, NULL);
    int done = atomic_load(&w.done);
    ASSERT_EQ(done, 1);
    ASSERT_LT(gvs_now_ns() - t, 1000000000LL);
    ASSERT_EQ(gvs_shm_ring_put(&prod, bytes, FAKE_RING, &put), 0);
    ASSERT_EQ(put, FAKE_RING / 8);
    munmap(base, len);
    return 0;
}

TEST_IMPL(shm_ring_room_wanted)
{
    ASSERT_EQ(room_wanted(FAKE_RING), 0);
    /* A small frame's producer too. */
    return room_wanted(64);
}
