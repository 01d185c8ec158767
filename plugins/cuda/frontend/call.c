/* The round trips of the generated calls (cuda_fe_gen.c), on the
 * remoting layer's (gvs_remote.h), and the driver's initialization
 * state. */
#include "call.h"

#include <pthread.h>
#include <stdatomic.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs_remote.h"

static const struct gvs_client_plugin plugin = {
    .id = CUDA_PLUGIN_ID,
    .name = CUDA_PLUGIN_NAME,
    .table_hash = CUDA_TABLE_HASH,
};

/* The connection's failure once it is known dead (sticky, as the
 * driver's own initialization failures are); CUDA_SUCCESS while usable. */
static _Atomic int dead_code = CUDA_SUCCESS;
static _Atomic int connected;
/* cuInit succeeded in this process (this session, after a fork). */
static _Atomic int initialized;

/* A forked child's client makes a new session, whose driver has not been
 * initialized. */
static void fork_child(void)
{
    atomic_store(&connected, 0);
    atomic_store(&initialized, 0);
    cuda_fe_ctx_fork_child();
}

__attribute__((constructor)) static void cuda_fe_register(void)
{
    /* The only failure is a full plugin table: every call then fails at
     * the handshake, which reports it. */
    if (gvs_client_register(&plugin) == 0)
        (void)cuda_fe_notify_init();
    pthread_atfork(NULL, NULL, fork_child);
    gvs_remote_device_memory_lookup(CUDA_PLUGIN_ID, cuda_fe_mem_known);
}

void cuda_fe_set_initialized(void)
{
    atomic_store(&initialized, 1);
}

/* NVIDIA's runtime initializes the driver before its first device call:
 * once gvs's runtime frontend made one, so has the program. */
int cuda_fe_initialized(void)
{
    return atomic_load(&initialized) || gvs_remote_runtime_used();
}

/* No server is a machine with no device; a server lost mid-session, a
 * device that went away. */
static int32_t transport_code(int rc)
{
    (void)rc;
    int e = atomic_load(&connected) ? CUDA_ERROR_DEVICE_UNAVAILABLE
                                    : CUDA_ERROR_NO_DEVICE;
    int expected = CUDA_SUCCESS;
    atomic_compare_exchange_strong(&dead_code, &expected, e);
    return atomic_load(&dead_code);
}

static int32_t client_code(struct gvs_client **out)
{
    int rc = gvs_client_get(out);
    /* Ahead of the session's first call, so that the backend narrows its
     * devices to CUDA_VISIBLE_DEVICES before the driver starts. */
    if (rc == 0)
        rc = gvs_remote_session_start(*out);
    if (rc < 0)
        return transport_code(rc);
    atomic_store(&connected, 1);
    return atomic_load(&dead_code);
}

CUresult cuda_fe_client(struct gvs_client **out)
{
    return (CUresult)client_code(out);
}

CUresult cuda_fe_transport(int rc)
{
    return (CUresult)transport_code(rc);
}

/* A request that depends on the thread's context carries it, after the
 * host's writes to managed memory.  With a context current, the layer's
 * staging region is asked for ahead of the first such request
 * (gvs_remote_staging_kick_locked): the driver pins it in that context,
 * portable to the others. */
static int before_send_locked(struct gvs_client *cl, unsigned flags)
{
    if (!(flags & APIGEN_DEVICE))
        return 0;
    int rc = cuda_fe_ctx_sync_locked(cl);
    if (rc == 0 && cuda_fe_ctx_current_locked() != NULL)
        gvs_remote_staging_kick_locked(&cuda_fe_shared, cl);
    return rc == 0 ? cuda_fe_managed_push_locked(cl) : rc;
}

const struct gvs_remote_api cuda_fe_remote_api = {
    .plugin = CUDA_PLUGIN_ID,
    .success = CUDA_SUCCESS,
    .nomem = CUDA_ERROR_OUT_OF_MEMORY,
    .unknown = CUDA_ERROR_UNKNOWN,
    .invalid = CUDA_ERROR_INVALID_VALUE,
    .client = client_code,
    .transport_error = transport_code,
    .before_send_locked = before_send_locked,
};

const struct gvs_remote_shared cuda_fe_shared = {
    &cuda_fe_remote_api, CUDA_OP_HOSTMEM_SHARE, CUDA_OP_HOSTMEM_UNSHARE,
    CUDA_OP_MEMCPY_SHARED, CUDA_ERROR_NOT_SUPPORTED, CUDA_OP_MEMCPY_POSTED,
    CUDA_OP_MEMCPY_SHARED_POSTED};

/* Before cuInit the driver answers every call but these with
 * CUDA_ERROR_NOT_INITIALIZED. */
static int needs_init(uint16_t op)
{
    return op != CUDA_OP_cuInit && op != CUDA_OP_cuDriverGetVersion &&
           !cuda_fe_initialized();
}

CUresult cuda_fe_begin(struct apigen_call *c)
{
    /* The runtime's primary context learnt now, if it is to be, not
     * while this request is being built (cuda_fe_ctx_current). */
    (void)cuda_fe_ctx_current();
    return (CUresult)gvs_remote_begin(&cuda_fe_remote_api, c);
}

CUresult cuda_fe_run(struct apigen_call *c, uint16_t op, unsigned flags)
{
    if (needs_init(op)) {
        c->get = NULL; /* no reply for end to check */
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    CUresult r = (CUresult)gvs_remote_run(&cuda_fe_remote_api, c, op, flags);
    /* After a synchronization the host may read managed memory. */
    return r == CUDA_SUCCESS ? cuda_fe_managed_synced(op) : r;
}

CUresult cuda_fe_post(struct apigen_call *c, uint16_t op, unsigned flags)
{
    if (needs_init(op))
        return CUDA_ERROR_NOT_INITIALIZED;
    return (CUresult)gvs_remote_post(&cuda_fe_remote_api, c, op, flags);
}

CUresult cuda_fe_end(struct apigen_call *c, CUresult r)
{
    return (CUresult)gvs_remote_end(&cuda_fe_remote_api, c, r);
}

CUresult cuda_fe_run_u64(struct apigen_call *c, uint16_t op, uint64_t *out)
{
    uint64_t v = 0;
    CUresult r = cuda_fe_run(c, op, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS && out != NULL)
        apigen_get_u64(c, &v);
    r = cuda_fe_end(c, r);
    if (r == CUDA_SUCCESS && out != NULL)
        *out = v;
    return r;
}

CUresult cuda_fe_call_ids(uint16_t op, const uint64_t *in, int n,
                          uint64_t *out)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    for (int i = 0; i < n; i++)
        apigen_put_u64(&c, in[i]);
    return cuda_fe_run_u64(&c, op, out);
}

/* The driver keeps no last error. */
CUresult cuda_fe_ret(CUresult r)
{
    return r;
}
