/*
 * User objects (remote_be.h, "User objects"): the destructor is the
 * client's.  Each object is a record in the handle table with the
 * client's id of its destructor, and when CUDA drops the last reference
 * (on whatever thread it likes) the record's destructor forgets the id
 * and notifies the client, whose notify thread runs the program's
 * destructor.  Nothing waits for it: CUDA requires
 * CU_USER_OBJECT_NO_DESTRUCTOR_SYNC.  Once the session closes,
 * destructors send nothing: the client has gone.
 */
#include <pthread.h>

#include "gvs/buf.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "state.h"

struct record {
    void *object; /* CUuserObject */
    uint64_t id;
    uint64_t callback; /* the client's */
    uint16_t plugin, op;
};

static const struct gvs_host_api *host;
static struct gvs_session *session;

/* notifying counts destructors inside host->notify, which must not
 * outlive the session. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int notifying;
static int stopped;

void remote_be_user_objects_open(const struct gvs_host_api *h,
                                 struct gvs_session *s)
{
    pthread_mutex_lock(&lock);
    host = h;
    session = s;
    stopped = h->notify == NULL;
    pthread_mutex_unlock(&lock);
}

void remote_be_notify_stop(void)
{
    pthread_mutex_lock(&lock);
    stopped = 1;
    while (notifying > 0)
        pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}

int remote_be_notify(uint16_t plugin, uint16_t op, const void *body,
                     size_t len)
{
    struct iovec v = {(void *)(uintptr_t)body, len};
    return remote_be_notify_many(plugin, op, &v, 1);
}

int remote_be_notify_many(uint16_t plugin, uint16_t op,
                          const struct iovec *bodies, int n)
{
    int rc = GVS_E_CLOSED;
    pthread_mutex_lock(&lock);
    if (!stopped) {
        notifying++;
        pthread_mutex_unlock(&lock);
        if (n > 1 && host->notify_many != NULL) {
            rc = host->notify_many(session, plugin, op, bodies, n);
        } else {
            /* A host without notify_many (a test's) gets them one by
             * one, each tried whatever the one before gave. */
            rc = 0;
            for (int i = 0; i < n; i++) {
                int r = host->notify(session, plugin, op, bodies[i].iov_base,
                                     bodies[i].iov_len);
                rc = rc < 0 ? rc : r;
            }
        }
        pthread_mutex_lock(&lock);
        if (--notifying == 0)
            pthread_cond_broadcast(&idle);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static void notify(const struct record *r)
{
    struct gvs_buf *b = gvs_buf_new(8);
    if (b != NULL && gvs_buf_put_u64(b, r->callback) == 0)
        (void)remote_be_notify(r->plugin, r->op, gvs_buf_ptr(b),
                               gvs_buf_len(b));
    gvs_buf_free(b);
}

void *remote_be_user_object_new(uint16_t plugin, uint16_t op,
                                uint64_t callback, uint64_t *id)
{
    struct record *r = gvs_calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    *r = (struct record){NULL, 0, callback, plugin, op};
    /* In the table before CUDA has it: the destructor removes it. */
    if (gvs_handles_add(remote_be_handles(), GVS_RH_USER_OBJECT, r,
                        &r->id) < 0) {
        gvs_free(r);
        return NULL;
    }
    *id = r->id;
    return r;
}

void remote_be_user_object_set(void *record, void *object)
{
    ((struct record *)record)->object = object;
}

void remote_be_user_object_drop(void *record)
{
    struct record *r = record;
    gvs_handles_remove(remote_be_handles(), GVS_RH_USER_OBJECT, r->id);
    gvs_free(r);
}

void remote_be_user_object_destructor(void *record)
{
    struct record *r = record;
    gvs_handles_remove(remote_be_handles(), GVS_RH_USER_OBJECT, r->id);
    notify(r);
    gvs_free(r);
}

void *remote_be_user_object_get(uint64_t id)
{
    struct record *r =
        gvs_handles_get(remote_be_handles(), GVS_RH_USER_OBJECT, id);
    return r != NULL ? r->object : NULL;
}
