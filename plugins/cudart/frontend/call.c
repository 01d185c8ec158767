#include "fe.h"
#include "shared.h"

#include <pthread.h>
#include <stdatomic.h>

#include "cudart_ops.h"
#include "devices.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs_remote.h"

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
    int rc = gvs_remote_session_start(cl);
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

/* What must leave before a device request: the lane's device in line,
 * the staging region asked for, the host's writes to managed memory. */
static int before_send_locked(struct gvs_client *cl, unsigned flags)
{
    if (!(flags & APIGEN_DEVICE))
        return 0;
    int rc = fe_device_sync_locked(cl);
    if (rc == 0)
        gvs_remote_staging_kick_locked(&fe_shared, cl);
    return rc == 0 ? fe_managed_push_locked(cl) : rc;
}

static int32_t client_code(struct gvs_client **out)
{
    return fe_client(out);
}

static int32_t transport_code(int rc)
{
    return fe_transport_error(rc);
}

const struct gvs_remote_api fe_remote_api = {
    .plugin = CUDART_PLUGIN_ID,
    .success = cudaSuccess,
    .nomem = cudaErrorMemoryAllocation,
    .unknown = cudaErrorUnknown,
    .invalid = cudaErrorInvalidValue,
    .client = client_code,
    .transport_error = transport_code,
    .before_send_locked = before_send_locked,
};

int fe_send_locked(struct gvs_client *cl, uint16_t op, unsigned flags,
                   int noreply, const struct iovec *iov, int n,
                   uint64_t *id)
{
    return gvs_remote_send_locked(&fe_remote_api, cl, op, flags,
                                  noreply ? GVS_F_NOREPLY : 0, iov, n, id);
}

cudaError_t cudart_fe_begin(struct apigen_call *c)
{
    return (cudaError_t)gvs_remote_begin(&fe_remote_api, c);
}

cudaError_t cudart_fe_run(struct apigen_call *c, uint16_t op,
                          unsigned flags)
{
    cudaError_t e =
        (cudaError_t)gvs_remote_run(&fe_remote_api, c, op, flags);
    /* After a synchronization the host may read managed memory. */
    if (e == cudaSuccess)
        e = fe_managed_synced(op);
    return e;
}

cudaError_t cudart_fe_post(struct apigen_call *c, uint16_t op,
                           unsigned flags)
{
    return (cudaError_t)gvs_remote_post(&fe_remote_api, c, op, flags);
}

cudaError_t fe_reply_result(struct apigen_call *c)
{
    return (cudaError_t)gvs_remote_reply_result(&fe_remote_api, c);
}

cudaError_t cudart_fe_end(struct apigen_call *c, cudaError_t r)
{
    return (cudaError_t)gvs_remote_end(&fe_remote_api, c, r);
}

cudaError_t fe_reply_result_only(struct gvs_buf *rep)
{
    struct apigen_call c = {NULL, rep, 0};
    cudaError_t e = fe_reply_result(&c);
    return apigen_end(&c) < 0 ? cudaErrorUnknown : e;
}
