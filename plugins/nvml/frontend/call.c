/* The round trips of the generated calls (nvml_fe_gen.c), on the
 * remoting layer's (gvs_remote.h), and NVML's initialization: nvmlInit
 * counts, nvmlShutdown counts down, and the library serves calls while
 * the count is above zero, as NVIDIA's does. */
#include "fe.h"

#include <pthread.h>
#include <stdatomic.h>

#include "gvs_remote.h"
#include "nvml_fe_gen.h"
#include "nvml_ops.h"
#include "nvml_wire.h"

static const struct gvs_client_plugin plugin = {
    .id = NVML_PLUGIN_ID,
    .name = NVML_PLUGIN_NAME,
    .table_hash = NVML_TABLE_HASH,
};

static _Atomic int connected;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count; /* under init_lock */
static _Atomic int ready;

__attribute__((constructor)) static void nvml_fe_register(void)
{
    /* The only failure is a full plugin table: every call then fails at
     * the handshake, which reports it. */
    (void)gvs_client_register(&plugin);
}

/* No server is a host without NVIDIA's driver, as NVML says it; a
 * server lost mid-session, a GPU that went away. */
static int32_t transport_code(int rc)
{
    (void)rc;
    return atomic_load(&connected) ? NVML_ERROR_GPU_IS_LOST
                                   : NVML_ERROR_DRIVER_NOT_LOADED;
}

static int32_t client_code(struct gvs_client **out)
{
    int rc = gvs_client_get(out);
    /* Ahead of the session's first call, so that the backend narrows its
     * GPUs to CUDA_VISIBLE_DEVICES before it lists them. */
    if (rc == 0)
        rc = gvs_remote_session_start(*out);
    if (rc < 0)
        return transport_code(rc);
    atomic_store(&connected, 1);
    return NVML_SUCCESS;
}

static const struct gvs_remote_api api = {
    .plugin = NVML_PLUGIN_ID,
    .success = NVML_SUCCESS,
    .nomem = NVML_ERROR_MEMORY,
    .unknown = NVML_ERROR_UNKNOWN,
    .invalid = NVML_ERROR_INVALID_ARGUMENT,
    .client = client_code,
    .transport_error = transport_code,
};

nvmlReturn_t nvml_fe_ready(void)
{
    return atomic_load(&ready) ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

nvmlReturn_t nvml_fe_begin(struct apigen_call *c)
{
    return (nvmlReturn_t)gvs_remote_begin(&api, c);
}

nvmlReturn_t nvml_fe_run(struct apigen_call *c, uint16_t op, unsigned flags)
{
    if (op != NVML_OP_INIT && !atomic_load(&ready)) {
        c->get = NULL; /* no reply for end to check */
        return NVML_ERROR_UNINITIALIZED;
    }
    return (nvmlReturn_t)gvs_remote_run(&api, c, op, flags);
}

/* nvml.api has no posted op. */
nvmlReturn_t nvml_fe_post(struct apigen_call *c, uint16_t op, unsigned flags)
{
    return (nvmlReturn_t)gvs_remote_post(&api, c, op, flags);
}

nvmlReturn_t nvml_fe_end(struct apigen_call *c, nvmlReturn_t r)
{
    return (nvmlReturn_t)gvs_remote_end(&api, c, r);
}

/* NVML keeps no last error. */
nvmlReturn_t nvml_fe_ret(nvmlReturn_t r)
{
    return r;
}

/* The backend loads its NVML and lists the session's GPUs once per
 * session; each nvmlInit asks again, as NVIDIA's counts the GPUs at each
 * (a forked child's session has its own worker). */
static nvmlReturn_t init(void)
{
    struct apigen_call c;
    nvmlReturn_t r = nvml_fe_begin(&c);
    if (r != NVML_SUCCESS)
        return r;
    uint32_t count = 0;
    r = nvml_fe_run(&c, NVML_OP_INIT, 0);
    if (r == NVML_SUCCESS)
        apigen_get_u32(&c, &count);
    r = nvml_fe_end(&c, r);
    if (r != NVML_SUCCESS)
        return r;
    if (count > NVML_DEVICES_MAX)
        return NVML_ERROR_UNKNOWN;
    pthread_mutex_lock(&init_lock);
    nvml_fe_devices_set(count);
    init_count++;
    atomic_store(&ready, 1);
    pthread_mutex_unlock(&init_lock);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    return init();
}

nvmlReturn_t nvmlInit(void)
{
    return init();
}

/* The flags say what a host without GPUs may still do: the session's
 * backend answers the same either way. */
nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return init();
}

nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t r = NVML_SUCCESS;
    pthread_mutex_lock(&init_lock);
    if (init_count == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else if (--init_count == 0)
        atomic_store(&ready, 0);
    pthread_mutex_unlock(&init_lock);
    return r;
}
