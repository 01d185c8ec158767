/*
 * User objects.  CUDA holds the references on the backend; the
 * destructor is the program's, so each object carries the id of a record
 * here, and when the last reference goes the backend sends
 * USER_OBJECT_DESTROY with it: the notify thread runs the destructor and
 * drops the record.  As natively (cudaUserObjectNoDestructorSync), no
 * call waits for a destructor, which must not call CUDA.
 */
#include "graphs.h"

#include <pthread.h>

#include "cudart_fe_gen.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

struct destructor {
    cudaHostFn_t fn;
    void *ptr;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map records;
static uint64_t last_id;

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

__attribute__((constructor)) static void user_objects_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static struct destructor *take(uint64_t id)
{
    pthread_mutex_lock(&lock);
    struct destructor *d = gvs_u64map_remove(&records, id);
    pthread_mutex_unlock(&lock);
    return d;
}

static cudaError_t create(cudaUserObject_t *out, void *ptr,
                          cudaHostFn_t destroy, unsigned refs, unsigned flags)
{
    if (out == NULL || destroy == NULL)
        return cudaErrorInvalidValue;
    struct destructor *d = gvs_malloc(sizeof(*d));
    uint64_t id = 0;
    unsigned long long object = 0;
    if (d == NULL)
        return cudaErrorMemoryAllocation;
    *d = (struct destructor){destroy, ptr};
    /* In the table before the request leaves: the object may be gone
     * (and the notification on its way) before the reply is read. */
    pthread_mutex_lock(&lock);
    if (gvs_u64map_put(&records, last_id + 1, d) == 0)
        id = ++last_id;
    pthread_mutex_unlock(&lock);
    if (id == 0) {
        gvs_free(d);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t e = cudart_rpc_USER_OBJECT_CREATE(&object, id, refs, flags);
    if (e != cudaSuccess) {
        gvs_free(take(id));
        return e;
    }
    *out = (cudaUserObject_t)(uintptr_t)object;
    return cudaSuccess;
}

cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr,
                                 cudaHostFn_t destroy,
                                 unsigned int initialRefcount,
                                 unsigned int flags)
{
    return cudart_fe_ret(
        create(object_out, ptr, destroy, initialRefcount, flags));
}

cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count)
{
    return cudart_fe_ret(
        cudart_rpc_USER_OBJECT_REF(fe_handle_wire(object), count, 0));
}

cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
    return cudart_fe_ret(
        cudart_rpc_USER_OBJECT_REF(fe_handle_wire(object), count, 1));
}

cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph,
                                      cudaUserObject_t object,
                                      unsigned int count, unsigned int flags)
{
    return cudart_fe_ret(cudart_rpc_GRAPH_USER_OBJECT(
        fe_handle_wire(graph), fe_handle_wire(object), count, flags, 0));
}

cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph,
                                       cudaUserObject_t object,
                                       unsigned int count)
{
    return cudart_fe_ret(cudart_rpc_GRAPH_USER_OBJECT(
        fe_handle_wire(graph), fe_handle_wire(object), count, 0, 1));
}

void fe_user_object_destroy(struct gvs_buf *body)
{
    uint64_t id;
    if (gvs_buf_get_u64(body, &id) < 0 || gvs_buf_expect_end(body) < 0)
        return;
    struct destructor *d = take(id);
    if (d != NULL)
        d->fn(d->ptr);
    gvs_free(d);
}
