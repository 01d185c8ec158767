/*
 * User objects (40-graphs.api, ops 440..443).  The destructor is the
 * client's: each object carries the client's callback id, and when CUDA
 * drops the last reference (on whatever thread it likes) our destructor
 * forgets the object's id and sends USER_OBJECT_DESTROY, which the
 * client's notify thread runs.  Nothing waits for it: CUDA requires
 * cudaUserObjectNoDestructorSync, so no call waits for a destructor.
 * Once the session closes, destructors send nothing: the client has
 * gone.
 */
#include "graphs.h"

#include "cudart_be_gen.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "objects.h"

struct user_object {
    cudaUserObject_t o;
    uint64_t id;       /* ours, BE_H_USER_OBJECT */
    uint64_t callback; /* the client's */
    struct be_session *s;
};

/* notifying counts destructors inside host->notify, which must not
 * outlive the session. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int notifying;
static int released;

static void notify(struct user_object *u)
{
    struct gvs_buf *b = gvs_buf_new(8);
    if (b == NULL || gvs_buf_put_u64(b, u->callback) < 0) {
        gvs_buf_free(b);
        return;
    }
    pthread_mutex_lock(&lock);
    if (!released) {
        notifying++;
        pthread_mutex_unlock(&lock);
        (void)u->s->host->notify(u->s->session, CUDART_PLUGIN_ID,
                                 CUDART_OP_USER_OBJECT_DESTROY,
                                 gvs_buf_ptr(b), gvs_buf_len(b));
        pthread_mutex_lock(&lock);
        if (--notifying == 0)
            pthread_cond_broadcast(&idle);
    }
    pthread_mutex_unlock(&lock);
    gvs_buf_free(b);
}

static void CUDART_CB destroy(void *arg)
{
    struct user_object *u = arg;
    gvs_handles_remove(be_handles(), BE_H_USER_OBJECT, u->id);
    notify(u);
    gvs_free(u);
}

void be_user_objects_release(void)
{
    pthread_mutex_lock(&lock);
    released = 1;
    while (notifying > 0)
        pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}

int cudart_be_user_object_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t callback;
    uint32_t refs, flags;
    apigen_get_u64(&c, &callback);
    apigen_get_u32(&c, &refs);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct user_object *u = gvs_calloc(1, sizeof(*u));
    if (u == NULL)
        return GVS_E_NOMEM;
    u->callback = callback;
    u->s = call->state;
    /* In the table first: the destructor removes it. */
    cudaError_t e = gvs_handles_add(be_handles(), BE_H_USER_OBJECT, u,
                                    &u->id) == 0
                        ? cudaSuccess
                        : cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        e = cudaUserObjectCreate(&u->o, u, destroy, refs, flags);
        if (e != cudaSuccess)
            gvs_handles_remove(be_handles(), BE_H_USER_OBJECT, u->id);
    }
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, u->id);
    else
        gvs_free(u);
    return c.rc;
}

static cudaUserObject_t object_get(uint64_t id)
{
    struct user_object *u =
        gvs_handles_get(be_handles(), BE_H_USER_OBJECT, id);
    return u != NULL ? u->o : NULL;
}

int cudart_be_user_object_ref(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    uint32_t count, release;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &count);
    apigen_get_u32(&c, &release);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (release > 1)
        return GVS_E_PROTO;
    cudaUserObject_t o = object_get(id);
    cudaError_t e = o == NULL ? cudaErrorInvalidValue
                    : release ? cudaUserObjectRelease(o, count)
                              : cudaUserObjectRetain(o, count);
    apigen_put_i32(&c, e);
    return c.rc;
}

int cudart_be_graph_user_object(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t gid, id;
    uint32_t count, flags, release;
    apigen_get_u64(&c, &gid);
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &count);
    apigen_get_u32(&c, &flags);
    apigen_get_u32(&c, &release);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (release > 1)
        return GVS_E_PROTO;
    cudaUserObject_t o = object_get(id);
    be_remote->graphs_lock();
    struct gvs_remote_graph *g = be_remote->graph_get(gid);
    cudaError_t e = o == NULL || g == NULL ? cudaErrorInvalidValue
                    : release ? cudaGraphReleaseUserObject(g->g, o, count)
                              : cudaGraphRetainUserObject(g->g, o, count,
                                                          flags);
    be_remote->graphs_unlock();
    apigen_put_i32(&c, e);
    return c.rc;
}
