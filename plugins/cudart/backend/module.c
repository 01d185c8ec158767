#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "rdc.h"

#define FATBIN_MAGIC 0xba55ed50u
#define FATBIN_HDR_MIN 16u

struct be_module *be_module_get(struct be_session *s, uint32_t id)
{
    pthread_mutex_lock(&s->mods_lock);
    struct be_module *m = id < s->nmods ? s->mods[id] : NULL;
    if (m != NULL && m->lib == NULL)
        m = NULL;
    pthread_mutex_unlock(&s->mods_lock);
    return m;
}

void be_module_release(struct be_module *m)
{
    if (m->lib != NULL)
        (void)cudaLibraryUnload(m->lib);
    for (uint32_t i = 0; i < m->nfuncs; i++)
        gvs_free(m->funcs[i].params);
    for (uint32_t i = 0; i < m->nvars; i++)
        gvs_free(m->vars[i]);
    gvs_free(m->funcs);
    gvs_free(m->vars);
    gvs_free(m->image);
    memset(m, 0, sizeof(*m));
}

void be_modules_free(struct be_session *s)
{
    for (uint32_t i = 0; i < s->nmods; i++) {
        be_module_release(s->mods[i]);
        gvs_free(s->mods[i]);
    }
    gvs_free(s->mods);
    s->mods = NULL;
    s->nmods = s->cap_mods = 0;
}

/* Names of a MODULE_LOAD request: u32 count, count strs. */
static int get_names(struct apigen_call *c, uint32_t *n, char ***out)
{
    uint32_t count;
    apigen_get_u32(c, &count);
    if (c->rc < 0)
        return c->rc;
    /* Each name takes at least its 4-byte length. */
    if (count > BE_MAX_NAMES || (size_t)count * 4 > gvs_buf_len(c->get))
        return GVS_E_RANGE;
    *out = gvs_calloc(count ? count : 1, sizeof(**out));
    if (*out == NULL)
        return GVS_E_NOMEM;
    /* Set only now: the caller frees *n entries of *out on failure. */
    *n = count;
    for (uint32_t i = 0; i < *n && c->rc == 0; i++)
        c->rc = gvs_buf_get_str(c->get, BE_NAME_MAX_LEN, &(*out)[i]);
    return c->rc;
}

static void free_names(char **names, uint32_t n)
{
    if (names == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        gvs_free(names[i]);
    gvs_free(names);
}

/* A fat binary whose header does not account for exactly its bytes is
 * refused before CUDA parses it. */
static int fatbin_ok(const uint8_t *p, size_t len)
{
    uint32_t magic;
    uint16_t hdr_size;
    uint64_t fat_size;
    if (len < FATBIN_HDR_MIN)
        return 0;
    memcpy(&magic, p, 4);
    memcpy(&hdr_size, p + 6, 2);
    memcpy(&fat_size, p + 8, 8);
    return magic == FATBIN_MAGIC && hdr_size >= FATBIN_HDR_MIN &&
           fat_size == len - hdr_size;
}

/* Layout of one kernel: cudaFuncGetParamInfo answers index by index until
 * cudaErrorInvalidValue marks the end of the list. */
void be_learn_params(struct be_func *f)
{
    for (uint32_t i = 0; f->status == cudaSuccess && i <= BE_PARAM_MAX; i++) {
        size_t off, size;
        cudaError_t e = cudaFuncGetParamInfo((const void *)f->kernel, i, &off,
                                             &size);
        if (e == cudaErrorInvalidValue) {
            (void)cudaGetLastError();
            break;
        }
        if (e == cudaSuccess && (size == 0 || off > BE_PARAM_MAX ||
                                 size > BE_PARAM_MAX - off || i == BE_PARAM_MAX))
            e = cudaErrorInvalidKernelImage;
        if (e == cudaSuccess && f->nparams % 16 == 0) {
            struct be_param *p = gvs_realloc(
                f->params, (f->nparams + 16) * sizeof(*p));
            if (p == NULL)
                e = cudaErrorMemoryAllocation;
            else
                f->params = p;
        }
        if (e != cudaSuccess) {
            f->status = e;
            break;
        }
        f->params[f->nparams++] = (struct be_param){(uint32_t)off,
                                                    (uint32_t)size};
        if (off + size > f->param_bytes)
            f->param_bytes = (uint32_t)(off + size);
    }
    if (f->status != cudaSuccess)
        f->nparams = f->param_bytes = 0;
}

static void learn_kernel(struct be_func *f, cudaLibrary_t lib,
                         const char *name)
{
    f->status = cudaLibraryGetKernel(&f->kernel, lib, name);
    be_learn_params(f);
}

void be_put_layout(struct apigen_call *c, const struct be_func *f)
{
    apigen_put_i32(c, f->status);
    apigen_put_u32(c, f->nparams);
    for (uint32_t i = 0; i < f->nparams; i++) {
        apigen_put_u32(c, f->params[i].offset);
        apigen_put_u32(c, f->params[i].size);
    }
}

/* Every global's (status, address, size) on the current device. */
static void put_globals(struct apigen_call *c, const struct be_module *m)
{
    apigen_put_u32(c, m->nvars);
    for (uint32_t i = 0; i < m->nvars; i++) {
        void *p = NULL;
        size_t size = 0;
        cudaError_t e = cudaLibraryGetGlobal(&p, &size, m->lib, m->vars[i]);
        apigen_put_i32(c, e);
        apigen_put_u64(c, e == cudaSuccess ? (uint64_t)(uintptr_t)p : 0);
        apigen_put_u64(c, e == cudaSuccess ? size : 0);
    }
}

int be_module_add(struct be_session *s, const struct be_module *m,
                      uint32_t *id)
{
    struct be_module *copy = gvs_malloc(sizeof(*copy));
    if (copy == NULL)
        return GVS_E_NOMEM;
    *copy = *m;
    int rc = 0;
    pthread_mutex_lock(&s->mods_lock);
    if (s->nmods >= BE_MAX_MODULES) {
        rc = GVS_E_RANGE;
    } else if (s->nmods == s->cap_mods) {
        uint32_t cap = s->cap_mods ? s->cap_mods * 2 : 8;
        struct be_module **t = gvs_realloc(s->mods, cap * sizeof(*t));
        if (t == NULL) {
            rc = GVS_E_NOMEM;
        } else {
            s->mods = t;
            s->cap_mods = cap;
        }
    }
    if (rc == 0) {
        *id = s->nmods;
        s->mods[s->nmods++] = copy;
    }
    pthread_mutex_unlock(&s->mods_lock);
    if (rc < 0)
        gvs_free(copy);
    return rc;
}

/* Request: u8 staged, [blob fatbin unless staged], u32 nfuncs, names,
 * u32 nvars, names.  Reply: i32 result, and on success u32 module id,
 * u32 nfuncs, per kernel {i32 status, u32 nparams, nparams x {u32 offset,
 * u32 size}}, u32 nvars, per global {i32 status, u64 address, u64 size}. */
int cudart_be_module_load(struct gvs_call *call)
{
    struct be_session *s = call->state;
    struct apigen_call c = {call->out, call->in, 0};
    struct be_module m;
    uint8_t staged;
    const uint8_t *blob = NULL;
    size_t blob_len = 0;
    char **fnames = NULL;
    uint32_t nf = 0;
    int rc;

    memset(&m, 0, sizeof(m));
    apigen_get_u8(&c, &staged);
    if (c.rc == 0 && staged > 1)
        c.rc = GVS_E_PROTO;
    if (c.rc == 0 && !staged)
        apigen_get_blob(&c, &blob, &blob_len);
    rc = c.rc;
    if (rc == 0)
        rc = get_names(&c, &nf, &fnames);
    if (rc == 0)
        rc = get_names(&c, &m.nvars, &m.vars);
    if (rc == 0)
        rc = apigen_end(&c);
    if (rc == 0 && staged) {
        uint8_t *img;
        rc = be_remote->take_stage(call, &img, &blob_len);
        m.image = rc == 0 ? img : NULL;
    } else if (rc == 0) {
        m.image = gvs_malloc(blob_len ? blob_len : 1);
        if (m.image == NULL)
            rc = GVS_E_NOMEM;
        else
            memcpy(m.image, blob, blob_len);
    }
    if (rc == 0 && nf > 0) {
        m.funcs = gvs_calloc(nf, sizeof(*m.funcs));
        if (m.funcs == NULL)
            rc = GVS_E_NOMEM;
    }
    if (rc < 0) {
        free_names(fnames, nf);
        be_module_release(&m);
        return rc;
    }

    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = fatbin_ok(m.image, blob_len)
                ? be_library_load(call, &m.lib, &m.image, &blob_len)
                : cudaErrorInvalidKernelImage;
    if (e == cudaSuccess) {
        m.nfuncs = nf;
        for (uint32_t i = 0; i < nf; i++)
            learn_kernel(&m.funcs[i], m.lib, fnames[i]);
    }
    free_names(fnames, nf);
    apigen_put_i32(&c, e);
    if (e != cudaSuccess) {
        m.lib = NULL;
        be_module_release(&m);
        return c.rc;
    }
    uint32_t id;
    rc = be_module_add(s, &m, &id);
    if (rc < 0) {
        be_module_release(&m);
        return rc;
    }
    apigen_put_u32(&c, id);
    apigen_put_u32(&c, m.nfuncs);
    for (uint32_t i = 0; i < m.nfuncs; i++)
        be_put_layout(&c, &m.funcs[i]);
    put_globals(&c, &m);
    return c.rc;
}

/* Decodes a request that is only a module id, and finds the module in
 * the session's table. */
static int decode_module_id(struct gvs_call *call, struct apigen_call *c,
                            struct be_module **m)
{
    uint32_t id;
    *m = NULL;
    apigen_get_u32(c, &id);
    if (apigen_end(c) < 0)
        return c->rc;
    *m = be_module_get(call->state, id);
    return *m != NULL ? 0 : GVS_E_RANGE;
}

/* Request: u32 module id.  Reply: i32 result, then on success the
 * globals as in MODULE_LOAD's reply, for the lane's device. */
int cudart_be_module_globals(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct be_module *m;
    int rc = decode_module_id(call, &c, &m);
    if (rc < 0)
        return rc;
    cudaError_t e = cudart_be_enter(call);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        put_globals(&c, m);
    return c.rc;
}

/* Request: u32 module id.  Reply (when one is waited for): i32 result. */
int cudart_be_module_unload(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct be_module *m;
    int rc = decode_module_id(call, &c, &m);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&((struct be_session *)call->state)->mods_lock);
    cudaLibrary_t lib = m->lib;
    void *image = m->image;
    m->lib = NULL;
    m->image = NULL;
    pthread_mutex_unlock(&((struct be_session *)call->state)->mods_lock);
    cudaError_t e = lib != NULL ? cudaLibraryUnload(lib)
                                : cudaErrorInvalidResourceHandle;
    gvs_free(image);
    apigen_put_i32(&c, e);
    return c.rc;
}
