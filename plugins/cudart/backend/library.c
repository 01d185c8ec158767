/*
 * The library API (api/80-misc.api, docs/cudart.md "Libraries").  A
 * library the client loads is a module of the session's table: every
 * kernel is enumerated and its parameter layout learnt at load, so the
 * launch paths find it by (module id, index) as a registered module's,
 * and the table's kernels never change once published (launches read
 * them without a lock).
 *
 * The image is any form cudaLibraryLoadData takes (fat binary, cubin,
 * PTX); a NUL is appended so that PTX text ends, and a fat binary's
 * header must account for exactly its bytes.  The worker parses the rest
 * as CUDA would in the client's own process: a malformed image harms
 * only the session that sent it.
 */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

#define FATBIN_MAGIC 0xba55ed50u
#define FATBIN_HDR_MIN 16u
/* More JIT options than this are no program's. */
#define MAX_JIT_OPTIONS 64u
/* A library with more kernels than this is refused (BE_MAX_NAMES). */
#define MAX_KERNELS BE_MAX_NAMES

static int image_ok(const uint8_t *p, size_t len)
{
    uint32_t magic;
    uint16_t hdr_size;
    uint64_t fat_size;
    if (len < 4)
        return 0;
    memcpy(&magic, p, 4);
    if (magic != FATBIN_MAGIC)
        return 1;
    if (len < FATBIN_HDR_MIN)
        return 0;
    memcpy(&hdr_size, p + 6, 2);
    memcpy(&fat_size, p + 8, 8);
    return hdr_size >= FATBIN_HDR_MIN && fat_size == len - hdr_size;
}

/* Only options whose value is a number the JIT reads: the others point
 * at the client's buffers or hand values back. */
static int jit_option_ok(uint32_t o)
{
    switch (o) {
    case cudaJitMaxRegisters:
    case cudaJitOptimizationLevel:
    case cudaJitFallbackStrategy:
    case cudaJitGenerateDebugInfo:
    case cudaJitLogVerbose:
    case cudaJitGenerateLineInfo:
    case cudaJitCacheMode:
    case cudaJitPositionIndependentCode:
    case cudaJitMinCtaPerSm:
    case cudaJitMaxThreadsPerBlock:
    case cudaJitOverrideDirectiveValues:
        return 1;
    default:
        return 0;
    }
}

struct jit {
    uint32_t n;
    enum cudaJitOption opt[MAX_JIT_OPTIONS];
    void *val[MAX_JIT_OPTIONS];
};

static int get_jit(struct apigen_call *c, struct jit *j)
{
    apigen_get_u32(c, &j->n);
    if (c->rc == 0 && j->n > MAX_JIT_OPTIONS)
        c->rc = GVS_E_RANGE;
    for (uint32_t i = 0; c->rc == 0 && i < j->n; i++) {
        uint32_t o;
        uint64_t v;
        apigen_get_u32(c, &o);
        apigen_get_u64(c, &v);
        j->opt[i] = (enum cudaJitOption)o;
        j->val[i] = (void *)(uintptr_t)v;
    }
    return c->rc;
}

/* The image of the request, NUL-terminated, in memory of our own. */
static int take_image(struct gvs_call *call, struct apigen_call *c,
                      uint8_t staged, uint8_t **img, size_t *len)
{
    const uint8_t *blob = NULL;
    if (!staged) {
        apigen_get_blob(c, &blob, len);
        if (c->rc < 0)
            return c->rc;
        *img = gvs_malloc(*len + 1);
        if (*img == NULL)
            return GVS_E_NOMEM;
        memcpy(*img, blob, *len);
        (*img)[*len] = 0;
        return 0;
    }
    return be_remote->take_stage(call, img, len);
}

/* Every kernel of m->lib, in the order CUDA enumerates them. */
static cudaError_t learn_all(struct be_module *m)
{
    unsigned n = 0;
    cudaError_t e = cudaLibraryGetKernelCount(&n, m->lib);
    if (e == cudaSuccess && n > MAX_KERNELS)
        e = cudaErrorInvalidKernelImage;
    cudaKernel_t *k = e == cudaSuccess ? gvs_calloc(n ? n : 1, sizeof(*k))
                                       : NULL;
    if (e == cudaSuccess && k == NULL)
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess && n > 0)
        e = cudaLibraryEnumerateKernels(k, n, m->lib);
    if (e == cudaSuccess && n > 0) {
        m->funcs = gvs_calloc(n, sizeof(*m->funcs));
        if (m->funcs == NULL)
            e = cudaErrorMemoryAllocation;
    }
    for (unsigned i = 0; e == cudaSuccess && i < n; i++) {
        m->funcs[i].kernel = k[i];
        be_learn_params(&m->funcs[i]);
        m->nfuncs = i + 1;
    }
    gvs_free(k);
    return e;
}

int cudart_be_library_load(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct be_module m;
    struct jit j;
    uint8_t staged;
    size_t len = 0;
    memset(&m, 0, sizeof(m));
    apigen_get_u8(&c, &staged);
    if (c.rc == 0 && staged > 1)
        c.rc = GVS_E_PROTO;
    uint8_t *img = NULL;
    int rc = c.rc == 0 ? take_image(call, &c, staged, &img, &len) : c.rc;
    if (rc == 0)
        rc = get_jit(&c, &j);
    if (rc == 0)
        rc = apigen_end(&c);
    if (rc < 0) {
        gvs_free(img);
        return rc;
    }
    m.image = img;
    cudaError_t e = image_ok(img, len) ? cudart_be_enter(call)
                                       : cudaErrorInvalidKernelImage;
    for (uint32_t i = 0; e == cudaSuccess && i < j.n; i++)
        if (!jit_option_ok(j.opt[i]))
            e = cudaErrorNotSupported;
    if (e == cudaSuccess)
        e = cudaLibraryLoadData(&m.lib, img, j.n ? j.opt : NULL,
                                j.n ? j.val : NULL, j.n, NULL, NULL, 0);
    if (e == cudaSuccess)
        e = learn_all(&m);
    uint32_t id = 0;
    if (e == cudaSuccess && be_module_add(call->state, &m, &id) < 0)
        e = cudaErrorMemoryAllocation;
    apigen_put_i32(&c, e);
    if (e != cudaSuccess) {
        be_module_release(&m);
        return c.rc;
    }
    apigen_put_u32(&c, id);
    apigen_put_u32(&c, m.nfuncs);
    for (uint32_t i = 0; i < m.nfuncs; i++)
        be_put_layout(&c, &m.funcs[i]);
    return c.rc;
}

/* Decodes u32 module id, [u8 kind,] str name; finds the module. */
static int get_named(struct gvs_call *call, struct apigen_call *c,
                     uint8_t *kind, struct be_module **m, char **name)
{
    uint32_t id;
    *name = NULL;
    apigen_get_u32(c, &id);
    if (kind != NULL)
        apigen_get_u8(c, kind);
    if (c->rc == 0)
        c->rc = gvs_buf_get_str(c->get, BE_NAME_MAX_LEN, name);
    if (apigen_end(c) < 0 || (kind != NULL && *kind > 1)) {
        gvs_free(*name);
        return c->rc < 0 ? c->rc : GVS_E_PROTO;
    }
    *m = be_module_get(call->state, id);
    if (*m == NULL) {
        gvs_free(*name);
        return GVS_E_RANGE;
    }
    return 0;
}

int cudart_be_library_kernel(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct be_module *m;
    char *name;
    int rc = get_named(call, &c, NULL, &m, &name);
    if (rc < 0)
        return rc;
    cudaKernel_t k = NULL;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = cudaLibraryGetKernel(&k, m->lib, name);
    gvs_free(name);
    uint32_t i = 0;
    while (e == cudaSuccess && i < m->nfuncs && m->funcs[i].kernel != k)
        i++;
    /* A kernel of a registered module is not named by its index here. */
    if (e == cudaSuccess && i == m->nfuncs)
        e = cudaErrorSymbolNotFound;
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u32(&c, i);
    return c.rc;
}

int cudart_be_library_symbol(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    struct be_module *m;
    char *name;
    uint8_t kind;
    int rc = get_named(call, &c, &kind, &m, &name);
    if (rc < 0)
        return rc;
    void *p = NULL;
    size_t size = 0;
    cudaError_t e = cudart_be_enter(call);
    if (e == cudaSuccess && kind == 0)
        e = cudaLibraryGetGlobal(&p, &size, m->lib, name);
    else if (e == cudaSuccess)
        e = cudaLibraryGetUnifiedFunction(&p, m->lib, name);
    gvs_free(name);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, (uint64_t)(uintptr_t)p);
        apigen_put_u64(&c, size);
    }
    return c.rc;
}
