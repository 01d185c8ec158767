/*
 * Async notifications and log callbacks (api/80-misc.api, ops 824..829).
 * The program's function is the client's: each registration carries the
 * client's callback id, and the function we give CUDA sends it, with
 * what CUDA passed, in a NOTIFY frame that the client's notify thread
 * runs.
 *
 * CUDA gets the registration's id, not its address, as user data: it
 * calls back on threads of its own at any time, and a callback racing
 * with the registration's removal then finds no id instead of freed
 * memory.  A registration is busy while CUDA registers or unregisters
 * it, so a second unregistration of the same id is refused instead of
 * racing with the first.  Once the session closes, callbacks send
 * nothing.
 */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

/* Longer log messages are cut: the client gets their start. */
#define LOG_MESSAGE_MAX 4096u

_Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t),
               "registration ids travel as CUDA's user data");
_Static_assert(sizeof(((cudaAsyncNotificationInfo_t *)0)->info) ==
                   sizeof(uint64_t),
               "ASYNC_NOTIFICATION carries the info union as a u64");

struct registration {
    uint64_t callback; /* the client's */
    struct be_session *s;
    void *handle; /* CUDA's */
    int busy;
};

/* lock guards the registrations' fields; notifying counts the callbacks
 * inside host->notify, which must not outlive the session. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int notifying;
static int released;

void be_notifications_release(void)
{
    pthread_mutex_lock(&lock);
    released = 1;
    while (notifying > 0)
        pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}

/* 1 with the registration's session and callback id when a notification
 * for it may be sent; then notify_end once it was. */
static int notify_begin(uint16_t type, uint64_t id, struct be_session **s,
                        uint64_t *callback)
{
    pthread_mutex_lock(&lock);
    struct registration *r = gvs_handles_get(be_handles(), type, id);
    int go = r != NULL && !released;
    if (go) {
        *s = r->s;
        *callback = r->callback;
        notifying++;
    }
    pthread_mutex_unlock(&lock);
    return go;
}

static void notify_end(void)
{
    pthread_mutex_lock(&lock);
    if (--notifying == 0)
        pthread_cond_broadcast(&idle);
    pthread_mutex_unlock(&lock);
}

static void send(struct be_session *s, uint16_t op, struct apigen_call *c)
{
    if (c->rc == 0)
        (void)s->host->notify(s->session, CUDART_PLUGIN_ID, op,
                              gvs_buf_ptr(c->put), gvs_buf_len(c->put));
}

static void on_async(cudaAsyncNotificationInfo_t *info, void *user,
                     cudaAsyncCallbackHandle_t handle)
{
    uint64_t id = (uintptr_t)user, callback, bits;
    struct be_session *s;
    (void)handle;
    if (info == NULL || !notify_begin(BE_H_ASYNC_CALLBACK, id, &s, &callback))
        return;
    memcpy(&bits, &info->info, sizeof(bits));
    struct apigen_call c = {gvs_buf_new(28), NULL, 0};
    if (c.put == NULL)
        c.rc = GVS_E_NOMEM;
    apigen_put_u64(&c, callback);
    apigen_put_u64(&c, id);
    apigen_put_i32(&c, info->type);
    apigen_put_u64(&c, bits);
    send(s, CUDART_OP_ASYNC_NOTIFICATION, &c);
    gvs_buf_free(c.put);
    notify_end();
}

static void CUDART_CB on_log(void *user, cudaLogLevel level, char *message,
                             size_t length)
{
    uint64_t id = (uintptr_t)user, callback;
    struct be_session *s;
    if (!notify_begin(BE_H_LOGS_CALLBACK, id, &s, &callback))
        return;
    size_t n = message == NULL ? 0
               : strnlen(message, length < LOG_MESSAGE_MAX ? length
                                                           : LOG_MESSAGE_MAX);
    struct apigen_call c = {gvs_buf_new(16 + n), NULL, 0};
    if (c.put == NULL)
        c.rc = GVS_E_NOMEM;
    apigen_put_u64(&c, callback);
    apigen_put_i32(&c, level);
    apigen_put_blob(&c, message, n);
    send(s, CUDART_OP_LOGS_MESSAGE, &c);
    gvs_buf_free(c.put);
    notify_end();
}

/* A new registration, busy until settle(); NULL when out of memory. */
static struct registration *add(struct gvs_call *call, uint16_t type,
                                uint64_t callback, uint64_t *id)
{
    struct registration *r = gvs_calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    *r = (struct registration){callback, call->state, NULL, 1};
    if (gvs_handles_add(be_handles(), type, r, id) < 0) {
        gvs_free(r);
        return NULL;
    }
    return r;
}

/* The registration of id, made busy; NULL when there is none or it is
 * busy already. */
static struct registration *claim(uint16_t type, uint64_t id)
{
    pthread_mutex_lock(&lock);
    struct registration *r = gvs_handles_get(be_handles(), type, id);
    if (r != NULL && r->busy)
        r = NULL;
    else if (r != NULL)
        r->busy = 1;
    pthread_mutex_unlock(&lock);
    return r;
}

/* Ends a busy time: live, the registration is CUDA's handle's; else it
 * is removed and freed. */
static void settle(uint16_t type, uint64_t id, struct registration *r,
                   int live, void *handle)
{
    pthread_mutex_lock(&lock);
    if (live) {
        r->handle = handle;
        r->busy = 0;
    } else {
        gvs_handles_remove(be_handles(), type, id);
    }
    pthread_mutex_unlock(&lock);
    if (!live)
        gvs_free(r);
}

int cudart_be_async_notify_register(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t device;
    uint64_t callback, id = 0;
    apigen_get_i32(&c, &device);
    apigen_get_u64(&c, &callback);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct registration *r = add(call, BE_H_ASYNC_CALLBACK, callback, &id);
    cudaError_t e = cudaErrorMemoryAllocation;
    if (r != NULL) {
        cudaAsyncCallbackHandle_t h = NULL;
        e = cudaDeviceRegisterAsyncNotification(device, on_async,
                                                (void *)(uintptr_t)id, &h);
        settle(BE_H_ASYNC_CALLBACK, id, r, e == cudaSuccess, h);
    }
    be_reply_u64(&c, e, id);
    return c.rc;
}

int cudart_be_logs_register(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t callback, id = 0;
    apigen_get_u64(&c, &callback);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct registration *r = add(call, BE_H_LOGS_CALLBACK, callback, &id);
    cudaError_t e = cudaErrorMemoryAllocation;
    if (r != NULL) {
        cudaLogsCallbackHandle h = NULL;
        e = cudaLogsRegisterCallback(on_log, (void *)(uintptr_t)id, &h);
        settle(BE_H_LOGS_CALLBACK, id, r, e == cudaSuccess, h);
    }
    be_reply_u64(&c, e, id);
    return c.rc;
}

/* The reply of an unregistration: the client's callback id on success,
 * whose record it drops. */
static int put_unregistered(struct apigen_call *c, cudaError_t e,
                            uint64_t callback)
{
    apigen_put_i32(c, e);
    if (e == cudaSuccess)
        apigen_put_u64(c, callback);
    return c->rc;
}

int cudart_be_async_notify_unregister(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int32_t device;
    uint64_t id;
    apigen_get_i32(&c, &device);
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct registration *r = claim(BE_H_ASYNC_CALLBACK, id);
    if (r == NULL)
        return put_unregistered(&c, cudaErrorInvalidValue, 0);
    uint64_t callback = r->callback;
    cudaError_t e = cudaDeviceUnregisterAsyncNotification(
        device, (cudaAsyncCallbackHandle_t)r->handle);
    settle(BE_H_ASYNC_CALLBACK, id, r, e != cudaSuccess, r->handle);
    return put_unregistered(&c, e, callback);
}

int cudart_be_logs_unregister(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct registration *r = claim(BE_H_LOGS_CALLBACK, id);
    if (r == NULL)
        return put_unregistered(&c, cudaErrorInvalidValue, 0);
    uint64_t callback = r->callback;
    cudaError_t e =
        cudaLogsUnregisterCallback((cudaLogsCallbackHandle)r->handle);
    settle(BE_H_LOGS_CALLBACK, id, r, e != cudaSuccess, r->handle);
    return put_unregistered(&c, e, callback);
}
