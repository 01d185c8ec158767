#include "fe.h"
#include "shared.h"

#include <pthread.h>
#include <stdatomic.h>

#include "cudart_ops.h"
#include "devices.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

static const struct gvs_client_plugin plugin = {
    .id = CUDART_PLUGIN_ID,
    .name = CUDART_PLUGIN_NAME,
    .table_hash = CUDART_TABLE_HASH,
};

/* Failure code of the connection once it is known dead (sticky, like the
 * real runtime's initialization errors); cudaSuccess while usable. */
static _Atomic int dead_code = cudaSuccess;
static _Atomic int connected;
/* Whether this session's runtime initialization has run, and the device
 * count it found (-1 until then). */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int init_done;
static _Atomic int device_count = -1;

/* Registered after the client's own fork handlers, so these locks are
 * taken before the client's, in the order the frontend nests them. */
static void fork_prepare(void)
{
    fe_modules_fork_lock();
    fe_mem_fork_lock();
}

static void fork_parent(void)
{
    fe_mem_fork_unlock();
    fe_modules_fork_unlock();
}

/* The client reconnects in a forked child: a new session that knows none
 * of the parent's allocations or modules. */
static void fork_child(void)
{
    atomic_store(&connected, 0);
    atomic_store(&init_done, 0);
    fe_device_forget_session();
    fe_mem_fork_child();
    fe_modules_fork_child();
}

__attribute__((constructor)) static void fe_register(void)
{
    /* The only failure is a full plugin table: every call then fails at
     * the handshake, which reports it. */
    (void)gvs_client_register(&plugin);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

cudaError_t fe_dead_code(void)
{
    return (cudaError_t)atomic_load(&dead_code);
}

int fe_connected(void)
{
    return atomic_load(&connected) && fe_dead_code() == cudaSuccess;
}

cudaError_t fe_transport_error(int rc)
{
    cudaError_t e = atomic_load(&connected) ? cudaErrorDevicesUnavailable
                                             : cudaErrorInsufficientDriver;
    int expected = cudaSuccess;
    (void)rc;
    atomic_compare_exchange_strong(&dead_code, &expected, (int)e);
    return fe_dead_code();
}

/* The backend's device count query stands for the real runtime's
 * initialization: when it fails (no driver, no device), every later call
 * fails with its code, as natively. */
static cudaError_t runtime_init(struct gvs_client *cl)
{
    struct gvs_buf *rep = gvs_buf_new(2 * sizeof(int32_t));
    int32_t result, count;
    if (rep == NULL)
        return cudaErrorMemoryAllocation;
    /* Ahead of the first CUDA call, so that the backend narrows its
     * devices before CUDA starts. */
    gvs_client_lock(cl);
    int rc = fe_visible_devices_post_locked(cl);
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_call(cl, CUDART_PLUGIN_ID,
                             CUDART_OP_cudaGetDeviceCount, NULL, 0, rep);
    if (rc < 0) {
        gvs_buf_free(rep);
        return fe_transport_error(rc);
    }
    cudaError_t e = cudaErrorUnknown;
    if (gvs_buf_get_i32(rep, &result) == 0) {
        if (result != cudaSuccess && gvs_buf_expect_end(rep) == 0)
            e = (cudaError_t)result;
        else if (gvs_buf_get_i32(rep, &count) == 0 && count >= 0 &&
                 gvs_buf_expect_end(rep) == 0) {
            atomic_store(&device_count, count);
            e = cudaSuccess;
        }
    }
    gvs_buf_free(rep);
    return e;
}

int fe_device_count(void)
{
    return atomic_load(&device_count);
}

cudaError_t fe_client(struct gvs_client **out)
{
    int rc = gvs_client_get(out);
    if (rc < 0)
        return fe_transport_error(rc);
    atomic_store(&connected, 1);
    if (!atomic_load(&init_done)) {
        pthread_mutex_lock(&init_lock);
        if (!atomic_load(&init_done)) {
            cudaError_t e = runtime_init(*out);
            int expected = cudaSuccess;
            if (e != cudaSuccess)
                atomic_compare_exchange_strong(&dead_code, &expected, (int)e);
            atomic_store(&init_done, 1);
        }
        pthread_mutex_unlock(&init_lock);
    }
    return fe_dead_code();
}

int fe_send_locked(struct gvs_client *cl, uint16_t op, unsigned flags,
                   int noreply, const struct iovec *iov, int n,
                   uint64_t *id)
{
    if (flags & APIGEN_DEVICE) {
        int rc = fe_device_sync_locked(cl);
        if (rc == 0)
            fe_staging_kick_locked(cl);
        /* Device work must see what the host wrote to managed memory. */
        if (rc == 0)
            rc = fe_managed_push_locked(cl);
        if (rc < 0)
            return rc;
    }
    return gvs_client_send_locked(cl, CUDART_PLUGIN_ID, op,
                                  noreply ? GVS_F_NOREPLY : 0, iov, n, id);
}

/* Request and reply buffers of the generated calls, one pair per thread,
 * kept between calls. */
static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;

struct fe_bufs {
    struct gvs_buf *req;
    struct gvs_buf *rep;
};

static void bufs_free(void *p)
{
    struct fe_bufs *b = p;
    gvs_buf_free(b->req);
    gvs_buf_free(b->rep);
    gvs_free(b);
}

static void bufs_init(void)
{
    (void)pthread_key_create(&bufs_key, bufs_free);
}

static struct fe_bufs *thread_bufs(void)
{
    pthread_once(&bufs_once, bufs_init);
    struct fe_bufs *b = pthread_getspecific(bufs_key);
    if (b != NULL)
        return b;
    b = gvs_calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    /* Storage grows on demand: a large maximum costs nothing, and a
     * reply over the maximum would break the connection. */
    b->req = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    b->rep = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    if (b->req == NULL || b->rep == NULL ||
        pthread_setspecific(bufs_key, b) != 0) {
        bufs_free(b);
        return NULL;
    }
    return b;
}

cudaError_t cudart_fe_begin(struct apigen_call *c)
{
    struct gvs_client *cl;
    c->put = c->get = NULL;
    c->rc = 0;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct fe_bufs *b = thread_bufs();
    if (b == NULL)
        return cudaErrorMemoryAllocation;
    gvs_buf_reset(b->req);
    gvs_buf_reset(b->rep);
    c->put = b->req;
    c->get = b->rep;
    return cudaSuccess;
}

static cudaError_t encode_error(int rc)
{
    return rc == GVS_E_NOMEM ? cudaErrorMemoryAllocation : cudaErrorUnknown;
}

cudaError_t cudart_fe_run(struct apigen_call *c, uint16_t op,
                          unsigned flags)
{
    struct gvs_client *cl;
    struct gvs_buf *reply = c->get;
    uint64_t id;
    /* Until a reply has arrived there is nothing for end to check. */
    c->get = NULL;
    if (c->rc < 0)
        return encode_error(c->rc);
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct iovec iov = {(void *)gvs_buf_ptr(c->put), gvs_buf_len(c->put)};
    gvs_client_lock(cl);
    int rc = fe_send_locked(cl, op, flags, 0, &iov, 1, &id);
    gvs_client_unlock(cl);
    if (rc == 0)
        rc = gvs_client_wait(cl, id, reply);
    if (rc < 0)
        return fe_transport_error(rc);
    c->get = reply;
    e = fe_reply_result(c);
    /* After a synchronization the host may read managed memory. */
    if (e == cudaSuccess)
        e = fe_managed_synced(op);
    return e;
}

cudaError_t cudart_fe_post(struct apigen_call *c, uint16_t op,
                           unsigned flags)
{
    struct gvs_client *cl;
    if (c->rc < 0)
        return encode_error(c->rc);
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct iovec iov = {(void *)gvs_buf_ptr(c->put), gvs_buf_len(c->put)};
    gvs_client_lock(cl);
    int rc = fe_send_locked(cl, op, flags, 1, &iov, 1, NULL);
    gvs_client_unlock(cl);
    return rc < 0 ? fe_transport_error(rc) : cudaSuccess;
}

cudaError_t fe_reply_result(struct apigen_call *c)
{
    int32_t r;
    apigen_get_i32(c, &r);
    if (c->rc < 0)
        return cudaErrorUnknown;
    return (cudaError_t)r;
}

cudaError_t cudart_fe_end(struct apigen_call *c, cudaError_t r)
{
    if (c->get == NULL)
        return r;
    if (apigen_end(c) < 0)
        return cudaErrorUnknown;
    return r;
}

cudaError_t fe_reply_result_only(struct gvs_buf *rep)
{
    struct apigen_call c = {NULL, rep, 0};
    cudaError_t e = fe_reply_result(&c);
    return apigen_end(&c) < 0 ? cudaErrorUnknown : e;
}
