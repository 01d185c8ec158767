/*
 * Private contracts between the files of the remoting layer's frontend,
 * libgvs-remote.so.0 (docs/remoting.md): one copy per process, loaded as
 * a dependency of every API frontend (libcudart.so.13, libcuda.so.1), so
 * that the layer's state is one for all of them.
 */
#ifndef REMOTE_FE_H
#define REMOTE_FE_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gvs/u64map.h"
#include "gvs_remote.h"

/* records.c: a table of records of the program's (gvs_malloc'd, owned
 * by the table), by ids from 1 up, never reused in the session; a forked
 * child's tables are empty.  Thread-safe.  Define one with
 * REMOTE_RECORDS_INIT. */
struct remote_records {
    pthread_mutex_t lock;
    struct gvs_u64map map;
    uint64_t last_id;
    int listed;
    struct remote_records *next;
};
#define REMOTE_RECORDS_INIT {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, NULL}
/* Takes rec (freed on failure); its id, 0 when out of memory or rec is
 * NULL. */
uint64_t remote_records_add(struct remote_records *t, void *rec);
/* Removes id's record and hands it to the caller; NULL when none. */
void *remote_records_take(struct remote_records *t, uint64_t id);
/* Copies id's record, size bytes, into out: 0, or -1 when none. */
int remote_records_copy(struct remote_records *t, uint64_t id, void *out,
                        size_t size);

/* output.c: device printf and assert output reaches the program's
 * stdout and stderr.  0 or a negative GVS_E_* code. */
int remote_fe_output_init(void);

/* callbacks.c: the backend's CALLBACK_RUN runs the program's host
 * callbacks on the notify thread.  0 or a negative GVS_E_* code. */
int remote_fe_callbacks_init(void);

/* posted.c: posted device-to-host copies (gvs_remote.h).  init registers
 * the D2H_BYTES handler (0 or a negative GVS_E_* code).  posted_copy
 * takes a stream-ordered copy of len bytes from dev into host when host
 * lies in page-locked memory the program allocated or registered and no
 * capture is under way: 1 with the API's result in *result, else 0 (the
 * caller copies the ordinary way).  proven: the API's tables prove the
 * copy valid (GVS_REMOTE_SHARED_PROVEN), so that its pieces are posted
 * without a reply, none waiting for the bytes of the one before;
 * otherwise each piece's reply says at once whether it was taken.
 * posted_pending says whether a posted
 * copy still writes into [host, host + len), posted_wait returns once
 * none does, posted_forget drops what is still to come for it. */
int remote_fe_posted_init(void);
int remote_fe_posted_copy(const struct gvs_remote_shared *sh, uint64_t stream,
                          uint64_t dev, void *host, size_t len, int proven,
                          int32_t *result);
int remote_fe_posted_pending(const void *host, size_t len);
void remote_fe_posted_wait(const void *host, size_t len);
void remote_fe_posted_forget(const void *host, size_t len);

/* call.c: this thread's request (reply 0) or reply buffer of the
 * copies of shared memory, emptied; kept between copies (a copy
 * allocates nothing), NULL when out of memory.  A copy's request may be
 * reused once it was sent; its reply once its result was read. */
struct gvs_buf *remote_fe_copy_buf(int reply);

/* call.c: the same for the bulk copies (bulk.c), a pair of their own,
 * bounded by what a piece's request holds without its bytes (an API's
 * header, two sides of an array copy and a box fit many times over) and
 * by what its reply holds without them (a result, or a bad reply): a
 * copy of a few KiB costs no allocation, which took a quarter of the
 * client's instructions of a 4 KiB stream-ordered pageable copy. */
#define REMOTE_FE_BULK_REQUEST_MAX 512u
#define REMOTE_FE_BULK_REPLY_MAX ((size_t)64 << 10)
struct gvs_buf *remote_fe_bulk_buf(int reply);

/* shared.c: one request of sh's API with req as its body, its reply a
 * result only: the API's result. */
int32_t remote_fe_round_trip(const struct gvs_remote_shared *sh, uint16_t op,
                             const struct gvs_buf *req);
/* The same request posted (no reply): the API's result of sending it. */
int32_t remote_fe_post(const struct gvs_remote_shared *sh, uint16_t op,
                       const struct gvs_buf *req);
/* Waits for request id's reply, a result only: the API's result. */
int32_t remote_fe_result(const struct gvs_remote_shared *sh,
                         struct gvs_client *cl, uint64_t id);

/* area.c: the connection's data area (GVS_CONN_CAP_AREA), in extents of
 * whole pages.  take: len bytes of it, zeroed, at *p (offset *off in the
 * area); GVS_E_NOTSUP without an area, GVS_E_NOMEM when no gap holds
 * len.  give: returns the extent at p; 0 if p is not one. */
int remote_fe_area_take(struct gvs_client *cl, size_t len, void **p,
                        uint64_t *off);
int remote_fe_area_give(const void *p);

/* shared.c: shared host memory (gvs_remote.h).  Whether the session's
 * connection can share memory (by descriptor or in its data area). */
int remote_fe_shared_possible(const struct gvs_remote_shared *sh);
/* Maps size bytes of fresh zeroed memory here and in the backend (a
 * memfd, or an extent of the connection's data area): *p
 * (page-aligned), *dev the device address of the backend's pinned
 * mapping (0 when CUDA gave none).  The API's result: sh->notsup when
 * the connection cannot share memory. */
int32_t remote_fe_shared_map(const struct gvs_remote_shared *sh, size_t size,
                             void **p, uint64_t *dev);
/* The same in two steps, for a caller that holds the client lock (and
 * has sent what goes ahead of a device op): start sends the request,
 * finish (without the lock) collects its reply. */
struct remote_fe_shared_pending {
    const struct gvs_remote_shared *sh;
    uint64_t id;
    void *p;
    size_t len;
};
int32_t remote_fe_shared_start_locked(const struct gvs_remote_shared *sh,
                                      struct gvs_client *cl, size_t size,
                                      struct remote_fe_shared_pending *out);
int32_t remote_fe_shared_finish(struct gvs_client *cl,
                                const struct remote_fe_shared_pending *s,
                                void **p, uint64_t *dev);
/* Unshares (the backend first waits for the device) and unmaps a region
 * of remote_fe_shared_map; the backend's result. */
int32_t remote_fe_shared_unmap(const struct gvs_remote_shared *sh, void *p,
                               size_t size);
/* One copy between device memory and shared memory (MEMCPY_SHARED with
 * flags), waited for: the API's result.  Of no bytes with WAIT, the
 * worker's wait for the stream (ON_STREAM) or the device; host, in a
 * shared region, only names the region then. */
int32_t remote_fe_shared_copy(const struct gvs_remote_shared *sh,
                              uint64_t stream, unsigned flags, int h2d,
                              uint64_t dev, const void *host, size_t len);
/* Encodes one copy request (remote_be.h's wire form) into req, reset
 * first; host lies in shared memory.  0 or GVS_E_NOMEM. */
int remote_fe_shared_copy_request(struct gvs_buf *req, uint64_t stream,
                                  unsigned flags, int h2d, uint64_t dev,
                                  const void *host, size_t len);

/* session.c: a value naming the calling thread's lane as the backend
 * last heard of it, its device (runtime) or context (driver) included:
 * another thread's, or this one's after a device or context was sent,
 * differs.  Stream-ordered copies under one value, on one stream, are
 * ordered in the worker as sent. */
uint64_t remote_fe_lane_epoch(void);
/* The calling thread's lane is being sent another device or context. */
void remote_fe_lane_moved(void);

/* staging.c: a copy between device memory and pageable memory through
 * the staging region, flags as the wire's (0: synchronous; ON_STREAM |
 * WAIT: ordered on stream, returning once done, or for a host-to-device
 * copy with GVS_REMOTE_SHARED_PROVEN once its bytes are staged and sent,
 * as CUDA's staging of pageable memory does, and when sync once the
 * stream's earlier work is done as well).
 * sh->notsup when it cannot be used (no sharing, a copy too small to
 * gain, the region busy with another thread's copy). */
int32_t remote_fe_staged_copy(const struct gvs_remote_shared *sh,
                              uint64_t stream, unsigned flags, int sync,
                              int h2d, uint64_t dev, void *host, size_t len);
/* The staging region's words that staging leaves to signal.c: the first
 * of REMOTE_FE_SPARE_WORDS, REMOTE_FE_SIGNAL_STRIDE bytes apart, or NULL
 * while the region is not there (collecting the reply that says it is,
 * when no copy is using the region). */
#define REMOTE_FE_SIGNAL_STRIDE 64u
#define REMOTE_FE_SPARE_WORDS 60u
_Atomic uint32_t *remote_fe_staging_words(const struct gvs_remote_shared *sh);

/* signal.c: words the GPU writes after posted copies (remote_be.h,
 * SIGNAL), or the worker (or the GPU) after synchronous ones (STORE).
 * value: a fresh value for one, the top three bits clear, never 0.
 * wait: polls w until it holds value (with or without SIGNAL_ASK),
 * spinning for spin_ns, then napping REMOTE_FE_SIGNAL_NAP_NS between
 * looks until poll_ns: what w holds then, or 0 when value did not
 * come. */
#define REMOTE_FE_SIGNAL_NAP_NS 50000L
uint32_t remote_fe_signal_value(void);
uint32_t remote_fe_signal_wait(_Atomic uint32_t *w, uint32_t value,
                               long long spin_ns, long long poll_ns);
/* The outcome of STORE request id of sh's API, sent on cl for stream
 * with word w to take value: 1 with the API's result in *result when no
 * reply comes (the word said success, or the GPU's write of it was
 * marked to come but did not while the caller polled: the worker's wait
 * for the stream answers); 0 when the reply answers, which the caller
 * then waits for: the word asks, or it did not come while the caller
 * polled (gvs_spin_busy_ns()) and the worker was told so
 * (SIGNAL_GAVE_UP). */
int remote_fe_stored(const struct gvs_remote_shared *sh,
                     struct gvs_client *cl, uint64_t id, uint64_t stream,
                     _Atomic uint32_t *w, uint32_t value, int32_t *result);
/* A synchronous copy between the device and len bytes of shared memory
 * at host, on stream, which the API's tables proved valid: posted with
 * a word, which it then waits for (signal.c's comment).  1 with the
 * API's result in *result; 0 when it cannot be made so (no polling on
 * this host, no word free, the staging region not there): the caller
 * then makes it with a round trip. */
int remote_fe_signalled_copy(const struct gvs_remote_shared *sh,
                             uint64_t stream, int h2d, uint64_t dev,
                             const void *host, size_t len, int32_t *result);
/* The same in two steps, so that the caller works between the request
 * and the wait: begin sends it (0 as above; 1 when sent, or when the
 * send failed, which end then returns), end waits for the word or the
 * reply: the API's result. */
struct remote_fe_signalled {
    struct gvs_client *cl;
    uint64_t stream, id;
    _Atomic uint32_t *w;
    uint32_t value;
    int word; /* the spare word taken, -1 when none */
    int32_t result;
};
int remote_fe_signalled_begin(const struct gvs_remote_shared *sh,
                              uint64_t stream, int h2d, uint64_t dev,
                              const void *host, size_t len,
                              struct remote_fe_signalled *s);
int32_t remote_fe_signalled_end(const struct gvs_remote_shared *sh,
                                struct remote_fe_signalled *s);

#endif
