/* Linking an -rdc program's units (rdc.h). */
#include "rdc.h"

#include <cudaTypedefs.h>
#include <pthread.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

enum { LINK_NEW_LIST = 1, LINK_NEW_IMAGE = 2 };
/* More units than this are not a program nvcc linked. */
#define MAX_UNITS 4096u

/* The units staged by one lane for its next MODULE_LOAD.  The frontend
 * uploads one module at a time, so one list serves the session. */
static struct {
    pthread_mutex_t lock;
    uint32_t lane;
    uint32_t n;
    uint8_t *image[MAX_UNITS];
    size_t len[MAX_UNITS];
    size_t total;
} staged = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Caller holds staged.lock. */
static void drop_locked(void)
{
    for (uint32_t i = 0; i < staged.n; i++)
        gvs_free(staged.image[i]);
    staged.n = 0;
    staged.total = 0;
}

void be_link_free(void)
{
    pthread_mutex_lock(&staged.lock);
    drop_locked();
    pthread_mutex_unlock(&staged.lock);
}

/* Caller holds staged.lock. */
static int append_locked(uint8_t flags, const uint8_t *piece, size_t len)
{
    if (flags & LINK_NEW_IMAGE) {
        if (staged.n == MAX_UNITS)
            return GVS_E_RANGE;
        staged.image[staged.n] = NULL;
        staged.len[staged.n++] = 0;
    } else if (staged.n == 0) {
        return GVS_E_PROTO;
    }
    if (len > GVS_BUF_MAX_CEILING - staged.total)
        return GVS_E_TOOBIG;
    uint32_t i = staged.n - 1;
    uint8_t *p = gvs_realloc(staged.image[i], staged.len[i] + len + 1);
    if (p == NULL)
        return GVS_E_NOMEM;
    memcpy(p + staged.len[i], piece, len);
    staged.image[i] = p;
    staged.len[i] += len;
    staged.total += len;
    return 0;
}

/* Request: u8 flags (LINK_NEW_LIST starts the lane's list over,
 * LINK_NEW_IMAGE starts an image), blob piece.  Posted. */
int cudart_be_module_link_stage(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    const uint8_t *piece;
    size_t len;
    uint8_t flags;
    apigen_get_u8(&c, &flags);
    apigen_get_blob(&c, &piece, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (flags & ~(LINK_NEW_LIST | LINK_NEW_IMAGE) ||
        ((flags & LINK_NEW_LIST) && !(flags & LINK_NEW_IMAGE)))
        return GVS_E_PROTO;
    pthread_mutex_lock(&staged.lock);
    if (flags & LINK_NEW_LIST) {
        drop_locked();
        staged.lane = call->lane;
    }
    int rc = staged.lane == call->lane ? append_locked(flags, piece, len)
                                       : GVS_E_PROTO;
    pthread_mutex_unlock(&staged.lock);
    if (rc < 0)
        return rc;
    apigen_put_i32(&c, cudaSuccess);
    return c.rc;
}

struct linker {
    PFN_cuLinkCreate_v6050 create;
    PFN_cuLinkAddData_v6050 add;
    PFN_cuLinkComplete_v5050 complete;
    PFN_cuLinkDestroy_v5050 destroy;
};

/* The driver's linker, through the runtime: the backend never links
 * libcuda itself. */
static int find_linker(struct linker *l)
{
    static const char *const names[] = {"cuLinkCreate", "cuLinkAddData",
                                        "cuLinkComplete", "cuLinkDestroy"};
    void *fn[4];
    for (int i = 0; i < 4; i++) {
        if (be_driver_entry(names[i], 12000, &fn[i]) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
    }
    *(void **)&l->create = fn[0];
    *(void **)&l->add = fn[1];
    *(void **)&l->complete = fn[2];
    *(void **)&l->destroy = fn[3];
    return 1;
}

/* Caller holds staged.lock.  Links the staged units for the current
 * device into a copy of the resulting image; NULL (and a warning: the
 * program then fails as CUDA would not have it fail) when that fails. */
static void *link_locked(const struct gvs_host_api *host, size_t *len)
{
    struct linker l;
    CUlinkState state;
    void *out = NULL, *image = NULL;
    size_t size = 0;
    if (!find_linker(&l)) {
        host->log(GVS_LOG_WARN, "no JIT linker for an -rdc program's units");
        return NULL;
    }
    /* The JIT linker works in the current context. */
    CUresult r = cudaFree(NULL) == cudaSuccess
                     ? l.create(0, NULL, NULL, &state)
                     : CUDA_ERROR_INVALID_CONTEXT;
    if (r != CUDA_SUCCESS) {
        host->log(GVS_LOG_WARN, "cuLinkCreate: CUresult %d", (int)r);
        return NULL;
    }
    uint32_t i = 0;
    for (; r == CUDA_SUCCESS && i < staged.n; i++)
        r = l.add(state, CU_JIT_INPUT_FATBINARY, staged.image[i],
                  staged.len[i], "unit", 0, NULL, NULL);
    if (r != CUDA_SUCCESS)
        host->log(GVS_LOG_WARN, "cuLinkAddData of unit %u of %u: CUresult %d",
                  i, staged.n, (int)r);
    if (r == CUDA_SUCCESS && (r = l.complete(state, &out, &size)) !=
                                 CUDA_SUCCESS)
        host->log(GVS_LOG_WARN, "cuLinkComplete: CUresult %d", (int)r);
    if (r == CUDA_SUCCESS && size > 0 && (image = gvs_malloc(size)) != NULL) {
        memcpy(image, out, size);
        *len = size;
    }
    l.destroy(state);
    return image;
}

static cudaError_t load(cudaLibrary_t *lib, const void *image)
{
    return cudaLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL, 0);
}

cudaError_t be_library_load(struct gvs_call *call, cudaLibrary_t *lib,
                            void **image, size_t *len)
{
    pthread_mutex_lock(&staged.lock);
    int mine = staged.n > 0 && staged.lane == call->lane;
    void *linked = NULL;
    size_t linked_len = 0;
    if (mine) {
        const struct be_session *s = call->state;
        linked = link_locked(s->host, &linked_len);
        drop_locked();
    }
    pthread_mutex_unlock(&staged.lock);
    if (linked != NULL && load(lib, linked) == cudaSuccess) {
        gvs_free(*image);
        *image = linked;
        *len = linked_len;
        return cudaSuccess;
    }
    gvs_free(linked);
    return load(lib, *image);
}
