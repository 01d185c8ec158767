/*
 * One client session, served in its own worker process: the handshake,
 * then requests dispatched to the plugins the handshake named.
 *
 * Threads of a session (docs/protocol.md, "Lanes"): one executor thread
 * and lane threads.  One lane thread at a time is the reader: it reads
 * every frame, runs GVS_OP_INLINE ops at once and queues the rest for
 * the executor, which runs them in arrival order except GVS_OP_BLOCKING
 * ops: those go to a lane thread serving that lane, and the lane's later
 * requests follow them there, so each lane keeps its order.  A request
 * that may run at once on a free lane thread runs on the reader, which
 * first passes the reading on to an idle lane thread (leader/follower):
 * no hand-off between threads before it runs; one that cannot block,
 * while no idle thread polls, runs on the reader, which then reads on
 * (no wake-up of another thread on the way).  The thread that runs
 * gvsd_session_run waits for the reading to end.  Replies and
 * notifications are written under one send lock.
 */
#ifndef GVSD_SESSION_H
#define GVSD_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gvs/comm.h"
#include "gvs/config.h"
#include "gvs/plugin.h"
#include "gvs/proto.h"
#include "plugins.h"
#include "reasons.h"

/* Lane threads a session may create; a blocking op that finds them all
 * busy waits for one. */
#define GVSD_LANE_THREADS 64
/* Bytes of requests read but not yet served (each counted with a fixed
 * overhead) beyond which the reader stops reading: the client then feels
 * the socket's back-pressure. */
#define GVSD_QUEUE_BYTES_MAX ((size_t)64 << 20)
#define GVSD_JOB_OVERHEAD 256u
/* Descriptors passed ahead of their requests and kept for them
 * (host->recv_fd), and how long a request waits for its own. */
#define GVSD_FD_STASH 8
#define GVSD_FD_WAIT_MS 2000u

/* How long the end of a session waits for ops still running; past it the
 * worker exits without closing the plugins' sessions. */
#define GVSD_DRAIN_MS 5000

struct gvsd_session_opts {
    uint32_t id;
    size_t max_frame;
    unsigned handshake_timeout_ms;
    long long accepted_ns; /* gvs_now_ns() when the connection was taken */
    /* gvsd's settings: tokens, quota, idle timeout (docs/security.md). */
    const struct gvs_config *cfg;
};

/* One request read and not yet served. */
struct gvsd_job {
    struct gvsd_job *next;
    struct gvs_frame_hdr h;
    struct gvs_buf *in;
    int slot;                /* in open[]; -1 for a control op */
    const struct gvs_op *op; /* NULL for a control op (PING) */
    size_t cost;             /* counted in outstanding while queued */
    long long read_ns;       /* when its frame had been read */
    int ordered;             /* on a lane thread, ahead of any blocking job
                              * there that its client waits for: other
                              * lanes' requests wait for it */
    struct gvsd_lane_thread *held; /* such a blocking job, in this lane
                                    * thread's count until its reply is
                                    * on its way */
    int next_same; /* gvs_call.next_same */
};

struct gvsd_jobs {
    struct gvsd_job *head, *tail;
};

/* A lane thread; while busy it serves lane `lane` alone: first the
 * request it was given, then the lane's requests that arrived
 * meanwhile, in order. */
struct gvsd_lane_thread {
    struct gvs_session *s;
    pthread_cond_t wake;
    int busy;
    int reader;         /* it reads the session's frames */
    int reading;        /* it has started to (until then another thread
                         * may take the reading back: want_reading) */
    int warm;           /* it has served `lane` last: that lane's state
                         * is in its core's caches */
    _Atomic int kicked; /* set with busy or reader, read without the lock
                         * by the thread's spin */
    int spinning;       /* idle and polling for work, not asleep: work
                         * given to it starts within a microsecond */
    uint32_t lane;
    int blocking; /* its GVS_OP_BLOCKING jobs that the client waits for,
                   * queued or running, whose replies have not been sent */
    int ordered;  /* its jobs that no other lane's request may pass: all
                   * but the blocking ones waited for and those behind
                   * them */
    struct gvsd_jobs jobs;
    const struct gvsd_job *serving; /* taken from jobs, being served */
    struct gvs_buf *out;
};

struct gvs_session {
    const struct gvsd_session_opts *opts;
    struct gvs_conn *conn;
    const struct gvsd_plugins *plugins;
    /* The plugins named by the handshake, whose session_open succeeded,
     * and their per-session state. */
    const struct gvsd_plugin *open[GVS_MAX_PLUGINS];
    void *state[GVS_MAX_PLUGINS];
    int nopen;
    struct gvs_session_info info; /* set by the handshake (host API) */
    _Atomic uint64_t memory_used; /* the plugins' last report */
    struct gvs_buf *in;  /* the handshake's frame */
    struct gvs_buf *out; /* replies of inline ops */
    _Atomic uint64_t calls;

    /* Descriptors the client passed, taken but not yet claimed by their
     * requests; under fd_lock, which also makes one thread at a time
     * read them. */
    pthread_mutex_t fd_lock;
    struct {
        uint64_t tag;
        int fd;
    } fds[GVSD_FD_STASH];
    int nfds;

    /* Writing to the client. */
    pthread_mutex_t send_lock;
    int closed; /* nothing more goes to the client */
    uint64_t notify_id;

    /* Scheduling, all under lock. */
    pthread_mutex_t lock;
    pthread_cond_t work;    /* the executor: a job was queued, or the end */
    pthread_cond_t room;    /* the reader: outstanding bytes went down */
    pthread_cond_t idle;    /* the executor: a lane thread became free */
    pthread_cond_t stopped; /* the end: a thread has exited */
    pthread_cond_t drained; /* the executor: a lane thread served its last
                             * ordered job */
    int executor_busy;      /* the executor has a job in hand */
    struct gvsd_jobs queue; /* for the executor */
    _Atomic int queued;     /* jobs in queue, read without the lock by the
                             * executor's spin */
    _Atomic int inflight;   /* jobs queued or running, read without the
                             * lock by the reader's spin */
    size_t outstanding;     /* bytes read and not yet served */
    struct gvsd_job *spare; /* served jobs kept for reuse, large ones */
    int nspare;
    struct gvsd_job *spare_small; /* and small ones, latest first */
    size_t spare_small_bytes;
    struct gvsd_lane_thread lanes[GVSD_LANE_THREADS];
    int nlanes;
    int executor_running;
    int lanes_running;
    /* An idle lane thread that asks for the reading, so that the
     * requests it is warm for run where they are read; reader_wanted is
     * set with it, read without the lock by the reader's spin. */
    struct gvsd_lane_thread *want;
    _Atomic int reader_wanted;
    long long hot_ns; /* the reader's polling horizon
                       * (gvs_spin_hot_next), the reader's alone */
    /* The reader while it serves a request itself (serve_reading), when
     * no thread reads. */
    struct gvsd_lane_thread *serving_reader;
    int awaiting; /* threads waiting for an answer of the client
                   * (gvsd_await_client): the reader serves nothing */
    int reading_orphan; /* the reading was taken from a serving reader
                         * with no free thread to take it: the next
                         * thread to go idle does */
    /* A request read ahead (gvsd_read_ahead) and what reading it gave,
     * taken by the next gvsd_read; the reader's alone. */
    struct gvsd_job *ahead;
    int ahead_rc;
    int ahead_set;
    int reading_over; /* the reader saw the end: read_rc says how */
    int read_rc;      /* gvsd_read's end */
    int reading_done; /* the reader has stopped: the executor ends once
                       * its queue is empty */
    int executor_done; /* idle lane threads end */
    /* Closing on an error: queued jobs are dropped.  Set under lock,
     * after fail_rc; atomic so that the reader can look at it for each
     * request without taking the lock, which the serving thread would
     * otherwise wait for. */
    atomic_int failed;
    /* The client said it is exiting (GVS_CTL_LEAVING): the end of its
     * connection is an end, not a vanishing.  The reader's, as is when
     * it last looked for a hang-up (session.c). */
    int leaving;
    long long hangup_look_ns;
    int fail_rc;
    int ended;         /* end_reason is set */
    enum gvsd_end end_reason; /* why the session ends, the first given */
    /* liveness.c: the thread watching a tcp or tls peer; watch_stop
     * under lock. */
    pthread_t watch;
    pthread_cond_t watch_wake;
    int watching;
    int watch_stop;
};

/* Serves c until the session ends, then closes it.  Returns 0 when the
 * client ended it (BYE, or a close between frames), else a negative
 * GVS_E_* code; every abnormal end has been logged. */
int gvsd_session_run(struct gvs_conn *c, const struct gvsd_plugins *ps,
                     const struct gvsd_session_opts *o);

/* handshake.c: receives and checks the HELLO (bounded by the handshake
 * timeout), opens the plugins it names and answers it.  On failure the
 * client has been told why (when it sent a frame) and it is logged. */
int gvsd_handshake(struct gvs_session *s);

/* Sends a HELLO reply; also used by the parent to refuse a connection. */
int gvsd_hello_reply(struct gvs_conn *c, uint64_t id, int32_t status,
                     const char *message, uint32_t session);

/* Calls session_close for every plugin opened, last first. */
void gvsd_session_close_plugins(struct gvs_session *s);

/* dispatch.c ----------------------------------------------------------- */

/* session.c: reads requests until one is to be routed, *jp, and returns
 * 1; serves GVS_OP_INLINE ops on the way, with out as the reply buffer.
 * Returns GVSD_READ_PASS when, between two frames, another thread asked
 * for the reading (reader_wanted).  Else returns how the reading ends: 0
 * when the client ended the session, or a negative GVS_E_* code
 * (logged). */
#define GVSD_READ_PASS 2
int gvsd_read(struct gvs_session *s, struct gvs_buf *out,
              struct gvsd_job **jp);
/* The reader's look at what comes after a request it is about to serve:
 * when a frame is already there, reads requests as gvsd_read does,
 * without polling, and keeps the one to route (or the end) for the next
 * gvsd_read, which returns it at once; *jp is that request, else NULL
 * (none there yet, or the end).  Nothing is served out of order: only
 * GVS_OP_INLINE ops, which run on arrival anyway. */
void gvsd_read_ahead(struct gvs_session *s, struct gvs_buf *out,
                     struct gvsd_job **jp);

/* Checks a received request and finds what serves it (j->slot, j->op).
 * Returns 0, GVSD_SESSION_END for a BYE, or a negative GVS_E_* code
 * (logged) when the session must be closed. */
#define GVSD_SESSION_END 1
int gvsd_classify(struct gvs_session *s, struct gvsd_job *j);

/* Serves a classified request on the calling thread with out as the
 * reply buffer, and sends the reply.  A malformed request fails the
 * session (gvsd_session_fail). */
void gvsd_serve(struct gvs_session *s, struct gvsd_job *j,
                struct gvs_buf *out);

/* Called by gvsd_serve just before j's reply is sent: a blocking job
 * leaves its lane thread's count then, not once the thread is back,
 * since the client may follow the reply with a request of the same lane
 * at once, and that request is ordered before what other lanes send
 * after it (executor.c lane_give). */
void gvsd_job_replying(struct gvs_session *s, struct gvsd_job *j);

/* The session must close on error rc for reason why (the first of each
 * is kept), which the caller has logged with the particulars: queued
 * requests are dropped and the connection is shut down, which ends the
 * reader. */
void gvsd_session_fail(struct gvs_session *s, enum gvsd_end why, int rc);
/* Records why the session ends, unless a reason was given before: it is
 * counted and logged with the session's end. */
void gvsd_session_why(struct gvs_session *s, enum gvsd_end why);

/* Host API notify and notify_many (include/gvs/plugin.h). */
int gvsd_notify(struct gvs_session *s, uint16_t plugin, uint16_t op,
                const void *body, size_t len);
int gvsd_notify_many(struct gvs_session *s, uint16_t plugin, uint16_t op,
                     const struct iovec *bodies, int n);

/* host.c: host API session_info, report_memory, peer, report_gpu_memory
 * and report_gpu_uuid. */
void gvsd_session_info(struct gvs_session *s, struct gvs_session_info *out);
void gvsd_report_memory(struct gvs_session *s, uint64_t bytes);
void gvsd_report_gpu_memory(struct gvs_session *s, int device,
                            uint64_t bytes);
void gvsd_report_gpu_uuid(struct gvs_session *s, int device,
                          const uint8_t uuid[16]);
const void *gvsd_session_peer(struct gvs_session *s, const char *name);

/* fds.c: host API recv_fd, and the release of what is left at the end. */
int gvsd_recv_fd(struct gvs_session *s, uint64_t tag, int *fd);
/* host API area: the connection's data area (gvs_conn_area). */
int gvsd_area(struct gvs_session *s, void **base, size_t *len);
void gvsd_fds_close(struct gvs_session *s);

/* liveness.c ------------------------------------------------------------
 * A tcp or tls peer whose host died or whose network dropped, without a
 * FIN, is let go: the kernel's keepalive (set by the parent on accept)
 * ends a connection idle on both sides, and this watch one whose data
 * the peer leaves unacknowledged (gvs_conn_unanswered) for
 * tcp_ack_timeout_ms.  Either ends the session as GVSD_END_LOST, and the
 * worker's exit frees what it held. */

/* Starts the watch when the peer is tcp or tls and tcp_ack_timeout_ms is
 * not 0.  0 or GVS_E_NOMEM. */
int gvsd_watch_start(struct gvs_session *s);
/* Stops it (nothing when it was not started). */
void gvsd_watch_stop(struct gvs_session *s);

/* executor.c ------------------------------------------------------------ */

/* Starts the executor.  0 or GVS_E_NOMEM. */
int gvsd_executor_start(struct gvs_session *s);
/* Starts the first lane thread as the reader.  0 or GVS_E_NOMEM. */
int gvsd_reading_start(struct gvs_session *s);
/* Waits for the reading to end; returns gvsd_read's end. */
int gvsd_reading_wait(struct gvs_session *s);
/* The host API's await_client (gvs/plugin.h): while a thread waits for
 * the client's answer, the reader serves no request itself, since the
 * request may wait for that thread (a graph launch running the callback,
 * a launch behind it in a full queue) and the answer would go unread.
 * A reader serving one when the wait begins passes the reading to a free
 * lane thread (none: to the next that goes idle) and, once served,
 * becomes that request's lane's thread. */
void gvsd_await_client(struct gvs_session *s, int begin);
/* The host API's next_queued (include/gvs/plugin.h). */
int gvsd_next_queued(const struct gvs_call *call);
/* A job to read a request of len body bytes into (reused, with storage
 * that fits it when a spare one has such, or new), NULL when out of
 * memory; waits first while too many bytes are outstanding. */
struct gvsd_job *gvsd_job_get(struct gvs_session *s, size_t len);
/* Keeps one spare job whose buffer holds a bulk chunk, its pages
 * touched: a session's first large copy then faults in nothing. */
void gvsd_jobs_prepare(struct gvs_session *s);
/* Returns a job that was never queued (an inline op, a bad frame). */
void gvsd_job_put(struct gvs_session *s, struct gvsd_job *j);
/* After the reading has ended: lets the executor and lane threads serve
 * what is queued (nothing after a failure) and end.  Returns 0 once all
 * have ended, GVS_E_TIMEOUT if some still run after GVSD_DRAIN_MS. */
int gvsd_executor_stop(struct gvs_session *s);
/* Frees what the threads left; only after gvsd_executor_stop returned 0. */
void gvsd_executor_free(struct gvs_session *s);
/* The pthread_cond_timedwait deadline (CLOCK_REALTIME) ms from now. */
void gvsd_wait_until(struct timespec *until, unsigned ms);

#endif
