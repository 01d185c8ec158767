/* JIT linking (cuda.api, LINK_*): the driver's link states, ids of the
 * session's table.  The options the driver keeps until cuLinkDestroy
 * and writes its outputs into are the link's own here, their log
 * buffers the backend's; a report of each step gives the client what
 * the driver wrote. */
#include "jit.h"

#include <pthread.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

#define NAME_MAX_LEN 4096u

struct cuda_be_link {
    uint64_t id;
    struct cuda_be_link *prev, *next; /* on the session's list */
    CUlinkState state;
    struct cuda_be_jit jit; /* the options, kept until cuLinkDestroy */
    void *image; /* the driver's, valid until cuLinkDestroy */
    size_t image_len;
};

/* Every link step holds the lock, and so does a link's destruction: a
 * destroy on another lane cannot free a link in use, and linking is
 * rare.  The session's links are on a list, for session_close. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cuda_be_link *links;

static void link_free(struct cuda_be_link *l)
{
    if (l == NULL)
        return;
    if (l->state != NULL)
        (void)CUDA_DRV(cuLinkDestroy)(l->state);
    cuda_be_jit_free(&l->jit);
    gvs_free(l);
}

/* Enters the lane and takes lock, which the caller lets go of: the
 * link of id, else NULL and the failure in *r. */
static struct cuda_be_link *enter_link(struct gvs_call *call, uint64_t id,
                                       CUresult *r)
{
    *r = cuda_be_enter(call);
    pthread_mutex_lock(&lock);
    struct cuda_be_link *l =
        *r == CUDA_SUCCESS
            ? gvs_handles_get(cuda_be_remote->handles(), GVS_RH_LINK, id)
            : NULL;
    if (*r == CUDA_SUCCESS && l == NULL)
        *r = CUDA_ERROR_INVALID_HANDLE;
    return l;
}

/* The report (cuda.api) of l, an empty one without. */
static void put_report(struct apigen_call *c, const struct cuda_be_link *l)
{
    /* No link state, no report: the bare failure, as every op's. */
    if (l != NULL)
        cuda_be_jit_put_report(c, &l->jit);
}

/* Request: options.  Reply: i32, u64 id. */
int cuda_be_link_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cuda_be_jit_request o;
    uint64_t id = 0;
    cuda_be_jit_get(&c, &o);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cuda_be_link *l = gvs_calloc(1, sizeof(*l));
    if (l == NULL)
        return GVS_E_NOMEM;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_jit_fill(&l->jit, &o);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuLinkCreate_v2)(l->jit.n, l->jit.opt, l->jit.val,
                                      &l->state);
    pthread_mutex_lock(&lock);
    if (r == CUDA_SUCCESS &&
        gvs_handles_add(cuda_be_remote->handles(), GVS_RH_LINK, l, &id) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        l->id = id;
        l->next = links;
        if (links != NULL)
            links->prev = l;
        links = l;
    }
    pthread_mutex_unlock(&lock);
    if (r != CUDA_SUCCESS)
        link_free(l);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u64 id, u32 type, str name, options, u8 staged, [blob data].
 * Reply: i32, the report. */
int cuda_be_link_add(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct cuda_be_jit_request o;
    uint64_t id;
    uint32_t type;
    uint8_t staged;
    char *name = NULL;
    const uint8_t *blob = NULL;
    uint8_t *data = NULL;
    size_t len = 0;
    apigen_get_u64(&c, &id);
    apigen_get_u32(&c, &type);
    if (c.rc == 0)
        c.rc = gvs_buf_get_str(c.get, NAME_MAX_LEN, &name);
    cuda_be_jit_get(&c, &o);
    apigen_get_u8(&c, &staged);
    if (c.rc == 0 && !staged)
        apigen_get_blob(&c, &blob, &len);
    if (apigen_end(&c) == 0 && staged > 1)
        c.rc = GVS_E_PROTO;
    if (c.rc == 0 && staged)
        c.rc = cuda_be_remote->take_stage(call, &data, &len);
    if (c.rc < 0) {
        gvs_free(name);
        return c.rc;
    }
    if (staged)
        blob = data;
    /* The input's own options: plain values only, the link's logs
     * being where the driver writes. */
    struct cuda_be_jit opts = {0};
    CUresult r;
    struct cuda_be_link *l = enter_link(call, id, &r);
    for (uint32_t i = 0; r == CUDA_SUCCESS && i < o.n; i++)
        if (cuda_be_jit_log_of(o.opt[i]) >= 0 ||
            o.opt[i] == CU_JIT_WALL_TIME ||
            o.opt[i] == CU_JIT_THREADS_PER_BLOCK)
            r = CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_SUCCESS)
        r = cuda_be_jit_fill(&opts, &o);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuLinkAddData_v2)(l->state, (CUjitInputType)type,
                                       (void *)(uintptr_t)blob, len, name,
                                       opts.n, opts.opt, opts.val);
    apigen_put_i32(&c, r);
    put_report(&c, l);
    pthread_mutex_unlock(&lock);
    gvs_free(data);
    gvs_free(name);
    return c.rc;
}

static size_t piece_len(const struct cuda_be_link *l, uint64_t offset)
{
    size_t left = l->image_len - (size_t)offset;
    return left < GVS_BULK_CHUNK ? left : GVS_BULK_CHUNK;
}

/* Request: u64 id.  Reply: i32, the report, [u64 size, blob piece]. */
int cuda_be_link_complete(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r;
    struct cuda_be_link *l = enter_link(call, id, &r);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuLinkComplete)(l->state, &l->image, &l->image_len);
    if (r == CUDA_SUCCESS && l->image == NULL)
        l->image_len = 0;
    apigen_put_i32(&c, r);
    put_report(&c, l);
    if (r == CUDA_SUCCESS) {
        apigen_put_u64(&c, l->image_len);
        apigen_put_blob(&c, l->image, piece_len(l, 0));
    }
    pthread_mutex_unlock(&lock);
    return c.rc;
}

/* Request: u64 id, u64 offset.  Reply: i32, blob piece. */
int cuda_be_link_image(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, offset;
    apigen_get_u64(&c, &id);
    apigen_get_u64(&c, &offset);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r;
    struct cuda_be_link *l = enter_link(call, id, &r);
    if (r == CUDA_SUCCESS && (l->image == NULL || offset > l->image_len))
        r = CUDA_ERROR_INVALID_VALUE;
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_blob(&c, (const uint8_t *)l->image + offset,
                        piece_len(l, offset));
    pthread_mutex_unlock(&lock);
    return c.rc;
}

/* Off the session's list and destroyed. */
static CUresult destroy_link(void *obj)
{
    struct cuda_be_link *l = obj;
    pthread_mutex_lock(&lock);
    if (l->prev != NULL)
        l->prev->next = l->next;
    else
        links = l->next;
    if (l->next != NULL)
        l->next->prev = l->prev;
    pthread_mutex_unlock(&lock);
    link_free(l);
    return CUDA_SUCCESS;
}

/* Request: u64 id.  Reply: i32. */
int cuda_be_link_destroy(struct gvs_call *call)
{
    return cuda_be_destroy_object(call, GVS_RH_LINK, destroy_link);
}

void cuda_be_links_free(void)
{
    struct gvs_handles *t = cuda_be_remote->handles();
    pthread_mutex_lock(&lock);
    while (links != NULL) {
        struct cuda_be_link *l = links;
        links = l->next;
        gvs_handles_remove(t, GVS_RH_LINK, l->id);
        link_free(l);
    }
    pthread_mutex_unlock(&lock);
}
