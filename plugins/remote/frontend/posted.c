/*
 * Posted device-to-host copies, the client's side (gvs_remote.h,
 * remote_be.h d2h_posted).  Over a connection that shares no memory, a
 * stream-ordered copy into page-locked memory the program allocated or
 * registered returns once the backend has put it on the stream; its
 * bytes come later as D2H_BYTES, which the receiver reads straight into
 * place before it reads the next frame, so before any reply that can
 * show the copy done.  What the program itself does with the memory in
 * between is its own race, as natively.  What gvs reads of it, the bytes
 * of a later host-to-device copy, waits for the bytes first
 * (remote_fe_posted_wait).  Memory freed or unregistered meanwhile is
 * forgotten (remote_fe_posted_forget): bytes still to come for it are
 * dropped, rather than the release waiting for a stream that a sticky
 * error may have stopped for good.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "gvs/client.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "remote_fe.h"
#include "remote_ops.h"

#define EXPORT __attribute__((visibility("default")))

struct pending {
    struct pending *next;
    uint64_t token;
    uint8_t *dst;
    size_t len;
    int landing; /* its bytes are being received into dst */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t landed;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct pending *pending;
static uint64_t last_token;

static void init_cond(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&landed, &a);
    pthread_condattr_destroy(&a);
}

static struct pending **find_token(uint64_t token)
{
    struct pending **pp = &pending;
    while (*pp != NULL && (*pp)->token != token)
        pp = &(*pp)->next;
    return pp;
}

/* D2H_BYTES: u64 token, then exactly the bytes the copy asked for,
 * received straight into the program's memory; any other length, or a
 * token not awaited, is dropped.  The token alone says that a posted
 * piece failed (its failure latched in the backend): no bytes come for
 * it.  While its bytes come the piece is landing: forgetting its memory
 * waits for them. */
static void *place(uint16_t op, const void *head, size_t tail_len, void *arg)
{
    (void)op, (void)arg;
    const uint8_t *h = head;
    uint64_t token = 0;
    for (unsigned i = 0; i < 8; i++)
        token |= (uint64_t)h[i] << (8 * i);
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    struct pending **pp = find_token(token), *p = *pp;
    void *dst = NULL;
    if (p != NULL && p->len == tail_len) {
        p->landing = 1;
        dst = p->dst;
    } else if (p != NULL) {
        *pp = p->next;
        gvs_free(p);
        pthread_cond_broadcast(&landed);
    }
    pthread_mutex_unlock(&lock);
    return dst;
}

static void on_landed(uint16_t op, void *dst, int ok, void *arg)
{
    (void)op, (void)ok, (void)arg;
    pthread_mutex_lock(&lock);
    struct pending **pp = &pending;
    while (*pp != NULL && !((*pp)->landing && (*pp)->dst == dst))
        pp = &(*pp)->next;
    struct pending *p = *pp;
    if (p != NULL) {
        *pp = p->next;
        gvs_free(p);
    }
    pthread_cond_broadcast(&landed);
    pthread_mutex_unlock(&lock);
}

static const struct gvs_notify_into d2h_bytes = {8, place, on_landed};

int remote_fe_posted_init(void)
{
    return gvs_client_on_notify_into(REMOTE_PLUGIN_ID, REMOTE_OP_D2H_BYTES,
                                     &d2h_bytes, NULL);
}

static int overlaps(const struct pending *p, const uint8_t *a, size_t len)
{
    return a < p->dst + p->len && p->dst < a + len;
}

static void forget_all_locked(void)
{
    while (pending != NULL) {
        struct pending *p = pending;
        pending = p->next;
        gvs_free(p);
    }
    pthread_cond_broadcast(&landed);
}

int remote_fe_posted_pending(const void *host, size_t len)
{
    pthread_mutex_lock(&lock);
    const struct pending *p = pending;
    while (p != NULL && !overlaps(p, host, len))
        p = p->next;
    pthread_mutex_unlock(&lock);
    return p != NULL;
}

void remote_fe_posted_wait(const void *host, size_t len)
{
    const uint8_t *a = host;
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    for (;;) {
        const struct pending *p = pending;
        while (p != NULL && !overlaps(p, a, len))
            p = p->next;
        if (p == NULL)
            break;
        /* The bytes come when the stream reaches the copy; a connection
         * that broke brings none. */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_nsec += 100000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        struct gvs_client *cl;
        if (pthread_cond_timedwait(&landed, &lock, &t) != 0 &&
            gvs_client_get(&cl) < 0)
            forget_all_locked();
    }
    pthread_mutex_unlock(&lock);
}

/* Bytes already coming into the memory are waited for: the receiver
 * writes there until they are in.  They come, or the connection breaks
 * and the receiver stops. */
void remote_fe_posted_forget(const void *host, size_t len)
{
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    for (;;) {
        const struct pending *p = pending;
        while (p != NULL && !(p->landing && overlaps(p, host, len)))
            p = p->next;
        if (p == NULL)
            break;
        pthread_cond_wait(&landed, &lock);
    }
    struct pending **pp = &pending;
    while (*pp != NULL) {
        struct pending *p = *pp;
        if (overlaps(p, host, len)) {
            *pp = p->next;
            gvs_free(p);
        } else {
            pp = &p->next;
        }
    }
    pthread_cond_broadcast(&landed);
    pthread_mutex_unlock(&lock);
}

/* One piece: awaited before its request leaves (its bytes may come back
 * before the reply), forgotten when the backend refuses it or it could
 * not be sent.  Posted (no reply), it is never refused: were each piece
 * to wait for its reply, that reply would come behind the bytes of the
 * piece before, a whole piece's time on a socket. */
static int32_t post_piece(const struct gvs_remote_shared *sh, uint64_t stream,
                          uint64_t dev, uint8_t *dst, size_t len, int posted)
{
    const struct gvs_remote_api *api = sh->api;
    struct pending *p = gvs_malloc(sizeof(*p));
    if (p == NULL)
        return api->nomem;
    pthread_mutex_lock(&lock);
    *p = (struct pending){pending, ++last_token, dst, len, 0};
    pending = p;
    uint64_t token = p->token;
    pthread_mutex_unlock(&lock);
    struct gvs_buf *req = gvs_buf_new(32);
    int32_t e = api->nomem;
    if (req != NULL && gvs_buf_put_u64(req, stream) == 0 &&
        gvs_buf_put_u64(req, dev) == 0 && gvs_buf_put_u64(req, len) == 0 &&
        gvs_buf_put_u64(req, token) == 0)
        e = posted ? remote_fe_post(sh, sh->posted, req)
                   : remote_fe_round_trip(sh, sh->posted, req);
    gvs_buf_free(req);
    if (e != api->success) {
        pthread_mutex_lock(&lock);
        struct pending **pp = find_token(token), *q = *pp;
        if (q != NULL && !q->landing) {
            *pp = q->next;
            gvs_free(q);
        }
        pthread_mutex_unlock(&lock);
    }
    return e;
}

/* Pieces of at most GVS_REMOTE_PIECE when posted (proven), which gvsd
 * sends while the GPU copies the next, else of GVS_BULK_CHUNK, each a
 * round trip: 1 with the API's result in *result, or 0 when the backend
 * refused the first (no pinned memory free there): nothing is then under
 * way. */
static int post(const struct gvs_remote_shared *sh, uint64_t stream,
                uint64_t dev, uint8_t *dst, size_t len, int proven,
                int32_t *result)
{
    pthread_once(&once, init_cond);
    int32_t e = sh->api->success;
    size_t done = 0;
    /* A refused piece (no pinned memory free in the worker) leaves the
     * whole copy to the ordinary way, which the stream orders after the
     * pieces posted: their bytes land first, the same bytes again after. */
    size_t most = proven ? GVS_REMOTE_PIECE : GVS_BULK_CHUNK;
    while (done < len && e == sh->api->success) {
        size_t n = len - done < most ? len - done : most;
        e = post_piece(sh, stream, dev + done, dst + done, n, proven);
        if (e == sh->notsup)
            return 0;
        done += n;
    }
    *result = e;
    return 1;
}

int remote_fe_posted_copy(const struct gvs_remote_shared *sh, uint64_t stream,
                          uint64_t dev, void *host, size_t len, int proven,
                          int32_t *result)
{
    struct gvs_remote_host rec;
    uint64_t base;
    if (sh->posted == 0 || len == 0 || gvs_remote_capturing() ||
        !gvs_remote_host_find(host, &base, &rec) ||
        (uint64_t)(uintptr_t)host - base > rec.size ||
        len > rec.size - ((uint64_t)(uintptr_t)host - base))
        return 0;
    return post(sh, stream, dev, host, len, proven, result);
}

EXPORT int gvs_remote_posted_d2h(const struct gvs_remote_shared *sh,
                                 uint64_t stream, uint64_t dev, void *host,
                                 size_t len, int32_t *result)
{
    if (sh->posted == 0 || len == 0 || gvs_remote_capturing())
        return 0;
    return post(sh, stream, dev, host, len, 0, result);
}
