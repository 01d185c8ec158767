/* Device output capture (output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "remote_ops.h"
#include "gvs/buf.h"
#include "gvs/err.h"

/* Bytes per notification. */
#define CHUNK ((size_t)64 << 10)
/* Pipe room asked for, so that a large printf flush rarely waits. */
#define PIPE_ROOM (1 << 20)

enum { OUT, ERR, NSTREAMS };

static struct {
    const struct gvs_host_api *host;
    struct gvs_session *session;
    int rd[NSTREAMS];  /* read ends, non-blocking */
    FILE *files[NSTREAMS];
    FILE *saved[NSTREAMS]; /* the worker's stdout and stderr before */
    int wr[NSTREAMS];  /* write ends, behind files[] */
    int stop[2];       /* written to end the thread */
    pthread_t thread;
    int running;
    /* One reader at a time, so that a stream's bytes keep their order. */
    pthread_mutex_t lock;
    struct gvs_buf *body; /* under lock */
    uint8_t buf[CHUNK];   /* under lock */
    /* dirty: set after each write into a pipe, cleared by a flush before
     * it reads the pipes; draining: a drain holds bytes not yet sent.  A
     * blocking op's flush, which comes after every synchronization, costs
     * no system call when neither is set (the common case). */
    atomic_int dirty;
    atomic_int draining;
    _Atomic uint64_t writes; /* by CUDA, to either stream */
} cap = {
    .rd = {-1, -1},
    .wr = {-1, -1},
    .stop = {-1, -1},
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Caller holds cap.lock.  Moves one read's worth of stream i to the
 * client; returns the read's result (0 at end of file, -1 with errno
 * EAGAIN once empty).  If the client has gone the bytes are dropped. */
static ssize_t pump_locked(int i)
{
    ssize_t n;
    do
        n = read(cap.rd[i], cap.buf, sizeof(cap.buf));
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return n;
    gvs_buf_reset(cap.body);
    if (gvs_buf_put_u8(cap.body, i == OUT ? 1 : 2) == 0 &&
        gvs_buf_put_blob(cap.body, cap.buf, (size_t)n) == 0)
        (void)cap.host->notify(cap.session, REMOTE_PLUGIN_ID,
                               REMOTE_OP_DEVICE_OUTPUT,
                               gvs_buf_ptr(cap.body), gvs_buf_len(cap.body));
    return n;
}

static void drain(int i)
{
    pthread_mutex_lock(&cap.lock);
    atomic_store(&cap.draining, 1);
    while (pump_locked(i) > 0)
        ;
    atomic_store(&cap.draining, 0);
    pthread_mutex_unlock(&cap.lock);
}

static void *forward_main(void *arg)
{
    (void)arg;
    struct pollfd p[NSTREAMS + 1] = {
        {.fd = cap.rd[OUT], .events = POLLIN},
        {.fd = cap.rd[ERR], .events = POLLIN},
        {.fd = cap.stop[0], .events = POLLIN},
    };
    for (;;) {
        if (poll(p, NSTREAMS + 1, -1) < 0 && errno != EINTR)
            return NULL;
        if (p[NSTREAMS].revents != 0)
            return NULL;
        for (int i = 0; i < NSTREAMS; i++)
            if (p[i].revents != 0)
                drain(i);
    }
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The streams' write function: into the pipe, then marked dirty. */
static ssize_t stream_write(void *cookie, const char *p, size_t n)
{
    int fd = *(int *)cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (done > 0) {
        atomic_fetch_add(&cap.writes, 1);
        atomic_store(&cap.dirty, 1);
    }
    return done > 0 ? (ssize_t)done : -1;
}

static int stream_close(void *cookie)
{
    int *fd = cookie;
    int r = close(*fd);
    *fd = -1;
    return r;
}

/* A pipe whose write end becomes an unbuffered stream. */
static int make_stream(int i)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return GVS_E_IO;
    (void)fcntl(fds[1], F_SETPIPE_SZ, PIPE_ROOM);
    cap.wr[i] = fds[1];
    cookie_io_functions_t io = {
        .read = NULL, .write = stream_write, .seek = NULL, .close = stream_close,
    };
    cap.files[i] = fopencookie(&cap.wr[i], "w", io);
    if (cap.files[i] == NULL ||
        fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0 ||
        setvbuf(cap.files[i], NULL, _IONBF, 0) != 0) {
        if (cap.files[i] != NULL)
            fclose(cap.files[i]);
        else
            close(fds[1]);
        cap.files[i] = NULL;
        cap.wr[i] = -1;
        close(fds[0]);
        return GVS_E_IO;
    }
    cap.rd[i] = fds[0];
    return 0;
}

static void release(void)
{
    for (int i = 0; i < NSTREAMS; i++) {
        if (cap.files[i] != NULL)
            fclose(cap.files[i]);
        cap.files[i] = NULL;
        close_fd(&cap.rd[i]);
    }
    close_fd(&cap.stop[0]);
    close_fd(&cap.stop[1]);
    gvs_buf_free(cap.body);
    cap.body = NULL;
}

int remote_be_output_open(const struct gvs_host_api *host,
                   struct gvs_session *session)
{
    if (host->notify == NULL)
        return 0; /* a host with no client to send output to */
    if (cap.running)
        return GVS_E_INVAL;
    cap.host = host;
    cap.session = session;
    cap.body = gvs_buf_new(CHUNK + 16);
    int rc = cap.body != NULL ? 0 : GVS_E_NOMEM;
    if (rc == 0)
        rc = make_stream(OUT);
    if (rc == 0)
        rc = make_stream(ERR);
    if (rc == 0 && pipe2(cap.stop, O_CLOEXEC) < 0)
        rc = GVS_E_IO;
    if (rc == 0 && pthread_create(&cap.thread, NULL, forward_main, NULL) != 0)
        rc = GVS_E_NOMEM;
    if (rc < 0) {
        release();
        return rc;
    }
    fflush(stdout);
    fflush(stderr);
    cap.saved[OUT] = stdout;
    cap.saved[ERR] = stderr;
    stdout = cap.files[OUT];
    stderr = cap.files[ERR];
    cap.running = 1;
    return 0;
}

void remote_be_output_flush(void)
{
    /* Bytes written before this call are in a pipe while dirty is set,
     * or in a drain under way: draining is set before dirty is cleared,
     * and the lock waits for that drain to send them. */
    if (!cap.running ||
        (!atomic_load(&cap.dirty) && !atomic_load(&cap.draining)))
        return;
    pthread_mutex_lock(&cap.lock);
    atomic_store(&cap.draining, 1);
    atomic_store(&cap.dirty, 0);
    for (int i = 0; i < NSTREAMS; i++)
        while (pump_locked(i) > 0)
            ;
    atomic_store(&cap.draining, 0);
    pthread_mutex_unlock(&cap.lock);
}

uint64_t remote_be_output_writes(void)
{
    return atomic_load(&cap.writes);
}

void remote_be_output_close(void)
{
    if (!cap.running)
        return;
    remote_be_output_flush();
    stdout = cap.saved[OUT];
    stderr = cap.saved[ERR];
    ssize_t w;
    do
        w = write(cap.stop[1], "", 1);
    while (w < 0 && errno == EINTR);
    pthread_join(cap.thread, NULL);
    cap.running = 0;
    release();
}
