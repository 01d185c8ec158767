/* JIT linking (cuda.api, LINK_*; docs/driver.md "JIT linking"): the
 * link state is the backend's, the program's CUlinkState its id.  The
 * driver keeps the program's option arrays until cuLinkDestroy and
 * writes its outputs there; so does this file, from each step's report:
 * the log buffers get the backend's logs, the output options the values
 * the backend's driver wrote.  cuLinkComplete's image is held here until
 * cuLinkDestroy, as the driver holds its own. */
#include "call.h"
#include "jit.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/u64map.h"
#include "gvs_remote.h"

/* The longest input name the backend takes (cuda.api, LINK_ADD). */
#define NAME_MAX_LEN 4096u

struct fe_link {
    struct cuda_fe_jit jit; /* the program's options, until cuLinkDestroy */
    uint8_t *image;
    size_t len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map links;

static uint64_t id_of(CUlinkState state)
{
    return (uint64_t)(uintptr_t)state;
}

static int known(uint64_t id)
{
    pthread_mutex_lock(&lock);
    int k = id != 0 && gvs_u64map_get(&links, id) != NULL;
    pthread_mutex_unlock(&lock);
    return k;
}

static void link_free(struct fe_link *l)
{
    if (l != NULL)
        gvs_free(l->image);
    gvs_free(l);
}

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
                         void **optionValues, CUlinkState *stateOut)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (stateOut == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct fe_link *l = gvs_calloc(1, sizeof(*l));
    if (l == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = cuda_fe_begin(&c);
    if (r == CUDA_SUCCESS) {
        r = cuda_fe_jit_put(&c, numOptions, options, optionValues);
        r = r == CUDA_SUCCESS ? cuda_fe_run(&c, CUDA_OP_LINK_CREATE,
                                            APIGEN_DEVICE)
                              : r;
        if (r == CUDA_SUCCESS)
            apigen_get_u64(&c, &id);
        r = cuda_fe_end(&c, r);
    }
    if (r == CUDA_SUCCESS) {
        cuda_fe_jit_init(&l->jit, numOptions, options, optionValues);
        pthread_mutex_lock(&lock);
        if (gvs_u64map_put(&links, id, l) < 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        pthread_mutex_unlock(&lock);
    }
    if (r != CUDA_SUCCESS) {
        link_free(l);
        return r;
    }
    *stateOut = (CUlinkState)(uintptr_t)id;
    return CUDA_SUCCESS;
}

/* Runs a step whose reply is i32 and a report, the report taken into
 * the program's buffers; a failure without a link state to report on
 * (an id the backend does not hold) has none. */
static CUresult run_step(struct apigen_call *c, uint16_t op, uint64_t id)
{
    CUresult r = cuda_fe_run(c, op, APIGEN_DEVICE);
    if (c->get != NULL && c->rc == 0 &&
        (r == CUDA_SUCCESS || gvs_buf_len(c->get) > 0)) {
        pthread_mutex_lock(&lock);
        struct fe_link *l = gvs_u64map_get(&links, id);
        cuda_fe_jit_take_report(c, l != NULL ? &l->jit : NULL);
        pthread_mutex_unlock(&lock);
    }
    return r;
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
                          size_t size, const char *name,
                          unsigned int numOptions, CUjit_option *options,
                          void **optionValues)
{
    struct apigen_call c;
    struct gvs_client *cl;
    uint64_t id = id_of(state);
    if (!known(id))
        return CUDA_ERROR_INVALID_HANDLE;
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    /* No size: the image's own header or text says it. */
    const uint8_t *start;
    if (size == 0 && ((size = gvs_remote_image_size(data, &start)) == 0 ||
                      start != data))
        return CUDA_ERROR_INVALID_VALUE;
    if (size >= GVS_BUF_MAX_CEILING)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = cuda_fe_begin(&c);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_client(&cl);
    if (r != CUDA_SUCCESS)
        return r;
    /* The name is the logs' only: a longer one goes cut. */
    char cut[NAME_MAX_LEN + 1];
    snprintf(cut, sizeof(cut), "%s", name != NULL ? name : "");
    apigen_put_u64(&c, id);
    apigen_put_u32(&c, (uint32_t)type);
    apigen_put_str(&c, cut);
    r = cuda_fe_jit_put(&c, numOptions, options, optionValues);
    if (r != CUDA_SUCCESS)
        return r;
    int staged = size + strlen(cut) + 64 + 12 * numOptions > GVS_BULK_CHUNK;
    apigen_put_u8(&c, (uint8_t)staged);
    if (staged) {
        gvs_client_lock(cl);
        int rc = gvs_remote_stage_locked(cl, data, size);
        gvs_client_unlock(cl);
        if (rc < 0)
            return cuda_fe_transport(rc);
    } else {
        apigen_put_blob(&c, data, size);
    }
    return cuda_fe_end(&c, run_step(&c, CUDA_OP_LINK_ADD, id));
}

/* The image from off on, in LINK_IMAGE pieces. */
static CUresult fetch_rest(uint64_t id, uint8_t *image, size_t off,
                           size_t len)
{
    while (off < len) {
        struct apigen_call c;
        const uint8_t *piece;
        size_t got = 0;
        CUresult r = cuda_fe_begin(&c);
        if (r != CUDA_SUCCESS)
            return r;
        apigen_put_u64(&c, id);
        apigen_put_u64(&c, off);
        r = cuda_fe_run(&c, CUDA_OP_LINK_IMAGE, APIGEN_DEVICE);
        if (r == CUDA_SUCCESS)
            apigen_get_blob(&c, &piece, &got);
        if (r == CUDA_SUCCESS && c.rc == 0 && (got == 0 || got > len - off))
            c.rc = GVS_E_PROTO;
        if (r == CUDA_SUCCESS && c.rc == 0)
            memcpy(image + off, piece, got);
        r = cuda_fe_end(&c, r);
        if (r != CUDA_SUCCESS)
            return r;
        off += got;
    }
    return CUDA_SUCCESS;
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    struct apigen_call c;
    uint64_t id = id_of(state), len = 0;
    const uint8_t *piece = NULL;
    size_t got = 0;
    uint8_t *image = NULL;
    if (!known(id))
        return CUDA_ERROR_INVALID_HANDLE;
    if (cubinOut == NULL || sizeOut == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, id);
    r = run_step(&c, CUDA_OP_LINK_COMPLETE, id);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &len);
        apigen_get_blob(&c, &piece, &got);
    }
    if (r == CUDA_SUCCESS && c.rc == 0 &&
        (len >= GVS_BUF_MAX_CEILING || got > len))
        c.rc = GVS_E_PROTO;
    if (r == CUDA_SUCCESS && c.rc == 0 &&
        (image = gvs_malloc(len > 0 ? len : 1)) == NULL)
        c.rc = GVS_E_NOMEM;
    if (image != NULL)
        memcpy(image, piece, got);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        r = fetch_rest(id, image, got, len);
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&lock);
        struct fe_link *l = gvs_u64map_get(&links, id);
        if (l != NULL) {
            gvs_free(l->image);
            l->image = image;
            l->len = len;
            image = NULL;
        }
        pthread_mutex_unlock(&lock);
        r = l != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
        if (l != NULL) {
            *cubinOut = l->image;
            *sizeOut = l->len;
        }
    }
    gvs_free(image);
    return r;
}

CUresult cuLinkDestroy(CUlinkState state)
{
    struct apigen_call c;
    uint64_t id = id_of(state);
    if (!known(id))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, id);
    r = cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_LINK_DESTROY, APIGEN_DEVICE));
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&lock);
        link_free(gvs_u64map_remove(&links, id));
        pthread_mutex_unlock(&lock);
    }
    return r;
}

/* The pre-6.5 exports take the same arguments. */
CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options,
                      void **optionValues, CUlinkState *stateOut)
{
    return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
                       size_t size, const char *name, unsigned int numOptions,
                       CUjit_option *options, void **optionValues)
{
    return cuLinkAddData_v2(state, type, data, size, name, numOptions,
                            options, optionValues);
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type,
                       const char *path, unsigned int numOptions,
                       CUjit_option *options, void **optionValues)
{
    return cuLinkAddFile_v2(state, type, path, numOptions, options,
                            optionValues);
}
