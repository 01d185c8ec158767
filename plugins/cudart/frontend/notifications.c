/*
 * Async notifications (cudaDeviceRegisterAsyncNotification) and log
 * callbacks (cudaLogsRegisterCallback): the worker's runtime calls the
 * backend's function, which sends the program's callback id and CUDA's
 * arguments in a NOTIFY frame (api/80-misc.api, ops 824..829); the
 * notify thread runs the program's function.  The handle the program
 * gets is the backend's id of the registration, which the notification
 * carries, so it is right even before the registration's reply is read.
 */
#include "devices.h"

#include <pthread.h>
#include <string.h>

#include "cudart_fe_gen.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

/* As the backend bounds them (backend/notifications.c). */
#define LOG_MESSAGE_MAX 4096u

_Static_assert(sizeof(((cudaAsyncNotificationInfo_t *)0)->info) ==
                   sizeof(uint64_t),
               "ASYNC_NOTIFICATION carries the info union as a u64");

struct record {
    cudaAsyncCallback async; /* one of the two */
    cudaLogsCallback_t log;
    void *user;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map records;
static uint64_t last_id;

/* As natively, an async notification's function may not register or
 * unregister one. */
static _Thread_local int in_async_callback;

/* A forked child has a new session, where none of these will run. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (size_t i = 0; i < records.n; i++)
        gvs_free(records.e[i].val);
    gvs_u64map_clear(&records);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void notifications_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The record's id, or 0 when out of memory.  In the table before the
 * request leaves: the first notification may come before the reply. */
static uint64_t add(struct record r)
{
    struct record *p = gvs_malloc(sizeof(*p));
    uint64_t id = 0;
    if (p == NULL)
        return 0;
    *p = r;
    pthread_mutex_lock(&lock);
    if (gvs_u64map_put(&records, last_id + 1, p) == 0)
        id = ++last_id;
    pthread_mutex_unlock(&lock);
    if (id == 0)
        gvs_free(p);
    return id;
}

static void drop(uint64_t id)
{
    pthread_mutex_lock(&lock);
    gvs_free(gvs_u64map_remove(&records, id));
    pthread_mutex_unlock(&lock);
}

/* A copy of the record of id: 0, or -1 when there is none. */
static int find(uint64_t id, struct record *out)
{
    pthread_mutex_lock(&lock);
    struct record *p = gvs_u64map_get(&records, id);
    if (p != NULL)
        *out = *p;
    pthread_mutex_unlock(&lock);
    return p != NULL ? 0 : -1;
}

static cudaError_t async_register(int device, cudaAsyncCallback fn,
                                  void *user, cudaAsyncCallbackHandle_t *out)
{
    unsigned long long handle = 0;
    if (in_async_callback)
        return cudaErrorNotPermitted;
    if (fn == NULL || out == NULL)
        return cudaErrorInvalidValue;
    uint64_t id = add((struct record){.async = fn, .user = user});
    if (id == 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudart_rpc_ASYNC_NOTIFY_REGISTER(device, id, &handle);
    if (e != cudaSuccess) {
        drop(id);
        return e;
    }
    *out = (cudaAsyncCallbackHandle_t)(uintptr_t)handle;
    return cudaSuccess;
}

cudaError_t cudaDeviceRegisterAsyncNotification(
    int device, cudaAsyncCallback callbackFunc, void *userData,
    cudaAsyncCallbackHandle_t *callback)
{
    return cudart_fe_ret(
        async_register(device, callbackFunc, userData, callback));
}

static cudaError_t async_unregister(int device,
                                    cudaAsyncCallbackHandle_t handle)
{
    unsigned long long id = 0;
    if (in_async_callback)
        return cudaErrorNotPermitted;
    cudaError_t e = cudart_rpc_ASYNC_NOTIFY_UNREGISTER(
        device, (uint64_t)(uintptr_t)handle, &id);
    if (e == cudaSuccess)
        drop(id);
    return e;
}

cudaError_t cudaDeviceUnregisterAsyncNotification(
    int device, cudaAsyncCallbackHandle_t callback)
{
    return cudart_fe_ret(async_unregister(device, callback));
}

static cudaError_t logs_register(cudaLogsCallback_t fn, void *user,
                                 cudaLogsCallbackHandle *out)
{
    unsigned long long handle = 0;
    if (fn == NULL)
        return cudaErrorInvalidValue;
    uint64_t id = add((struct record){.log = fn, .user = user});
    if (id == 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudart_rpc_LOGS_REGISTER(id, &handle);
    if (e != cudaSuccess) {
        drop(id);
        return e;
    }
    if (out != NULL)
        *out = (cudaLogsCallbackHandle)(uintptr_t)handle;
    return cudaSuccess;
}

cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callbackFunc,
                                     void *userData,
                                     cudaLogsCallbackHandle *callback_out)
{
    return cudart_fe_ret(logs_register(callbackFunc, userData, callback_out));
}

cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback)
{
    unsigned long long id = 0;
    cudaError_t e =
        cudart_rpc_LOGS_UNREGISTER((uint64_t)(uintptr_t)callback, &id);
    if (e == cudaSuccess)
        drop(id);
    return cudart_fe_ret(e);
}

void fe_async_notification(struct gvs_buf *body)
{
    uint64_t id, handle, bits;
    int32_t type;
    struct record r;
    if (gvs_buf_get_u64(body, &id) < 0 || gvs_buf_get_u64(body, &handle) < 0 ||
        gvs_buf_get_i32(body, &type) < 0 || gvs_buf_get_u64(body, &bits) < 0 ||
        gvs_buf_expect_end(body) < 0 || find(id, &r) < 0 || r.async == NULL)
        return;
    cudaAsyncNotificationInfo_t info;
    memset(&info, 0, sizeof(info));
    info.type = (cudaAsyncNotificationType)type;
    memcpy(&info.info, &bits, sizeof(bits));
    in_async_callback = 1;
    r.async(&info, r.user, (cudaAsyncCallbackHandle_t)(uintptr_t)handle);
    in_async_callback = 0;
}

void fe_logs_message(struct gvs_buf *body)
{
    uint64_t id;
    int32_t level;
    const uint8_t *text;
    size_t len;
    struct record r;
    char message[LOG_MESSAGE_MAX + 1];
    if (gvs_buf_get_u64(body, &id) < 0 || gvs_buf_get_i32(body, &level) < 0 ||
        gvs_buf_get_blob(body, &text, &len) < 0 ||
        gvs_buf_expect_end(body) < 0 || len > LOG_MESSAGE_MAX ||
        find(id, &r) < 0 || r.log == NULL)
        return;
    /* The program gets a NUL-terminated copy it may write into. */
    memcpy(message, text, len);
    message[len] = 0;
    r.log(r.user, (cudaLogLevel)level, message, len);
}
