/* What the layer sends once per session, ahead of any API's first call
 * (gvs_remote.h): whichever frontend of the process connects first. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs_remote.h"
#include "remote_fe.h"
#include "remote_ops.h"

#define EXPORT __attribute__((visibility("default")))

/* Longer values are no device list; they are sent empty, which shows no
 * device, as CUDA shows none for a list it cannot read. */
#define VISIBLE_MAX 4096u

/* Sent in this process's session; a forked child's is a new session. */
static atomic_int started;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* The device gvs's runtime frontend last used on this thread; -1 where
 * it has used none.  runtime_used: on any thread of the session. */
static _Thread_local int runtime_device = -1;
static atomic_int runtime_used;
/* remote_fe_lane_epoch's: 0 until the thread's first, or after its lane
 * moved to another device or context. */
static _Thread_local uint64_t lane_epoch;
static atomic_uint_least64_t epochs;

static void fork_child(void)
{
    atomic_store(&started, 0);
    atomic_store(&runtime_used, 0);
    runtime_device = -1;
}

static void atfork_init(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

static int post_visible_locked(struct gvs_client *cl)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    struct gvs_buf *b = gvs_buf_new(VISIBLE_MAX + 16);
    if (b == NULL)
        return GVS_E_NOMEM;
    int rc = gvs_buf_put_u8(b, v != NULL);
    if (rc == 0)
        rc = gvs_buf_put_str(b, v != NULL && strlen(v) <= VISIBLE_MAX ? v : "");
    struct iovec iov = {(void *)gvs_buf_ptr(b), gvs_buf_len(b)};
    if (rc == 0)
        rc = gvs_client_send_locked(cl, REMOTE_PLUGIN_ID,
                                    REMOTE_OP_VISIBLE_DEVICES, GVS_F_NOREPLY,
                                    &iov, 1, NULL);
    gvs_buf_free(b);
    return rc;
}

EXPORT int gvs_remote_session_start(struct gvs_client *cl)
{
    pthread_once(&atfork_once, atfork_init);
    if (atomic_load(&started))
        return 0;
    int rc = 0;
    gvs_client_lock(cl);
    /* Under the lock: one thread sends it, the others wait for it. */
    if (!atomic_load(&started)) {
        rc = post_visible_locked(cl);
        if (rc == 0)
            atomic_store(&started, 1);
    }
    gvs_client_unlock(cl);
    return rc;
}

uint64_t remote_fe_lane_epoch(void)
{
    if (lane_epoch == 0)
        lane_epoch = atomic_fetch_add(&epochs, 1) + 1;
    return lane_epoch;
}

void remote_fe_lane_moved(void)
{
    lane_epoch = 0;
}

EXPORT void gvs_remote_runtime_device_set(int dev)
{
    pthread_once(&atfork_once, atfork_init);
    if (dev != runtime_device)
        remote_fe_lane_moved();
    runtime_device = dev;
    atomic_store(&runtime_used, 1);
}

EXPORT int gvs_remote_runtime_device(void)
{
    return runtime_device;
}

EXPORT int gvs_remote_runtime_used(void)
{
    return atomic_load(&runtime_used);
}
