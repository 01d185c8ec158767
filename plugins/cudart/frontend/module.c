/*
 * Module registration.  nvcc's start-up code registers each translation
 * unit's fat binary, kernels and globals; we only record them.  A module
 * is uploaded on the first use of one of its kernels or globals, in one
 * MODULE_LOAD round trip whose reply carries every kernel's parameter
 * layout and every global's address (docs/cudart.md).
 */
#include "fe.h"
#include "gvs_remote.h"

#include <pthread.h>
#include <string.h>

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "rdc.h"

/* fatbinary_section.h and the fatbin header nvcc embeds. */
#define FATBINC_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xba55ed50u
#define FATBIN_HDR_MIN 16u

/* Names longer than this are not kernels nvcc emitted. */
#define NAME_MAX_LEN 65536u

struct fe_var {
    const void *host;
    char *name;
    /* Valid on vars_dev once the module is uploaded. */
    cudaError_t status;
    uint64_t addr;
    uint64_t size;
};

struct fe_module {
    struct fe_module *next;
    uint8_t *image; /* copy of the fat binary; NULL if unusable */
    size_t image_len;
    struct fe_func **funcs; /* stable addresses: they are handles */
    uint32_t nfuncs, cap_funcs;
    struct fe_var *vars;
    uint32_t nvars, cap_vars;
    int uploaded;
    uint32_t remote_id;
    int vars_dev; /* device the global addresses belong to, -1: stale */
    struct fe_link *link; /* an -rdc program's units (rdc.h), or NULL */
    int library; /* loaded through the library API (library.c) */
};

/* Guards the module list and every module; held across an upload so
 * that concurrent first launches upload once. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fe_module *modules;

/* Registration ------------------------------------------------------------ */

static uint8_t *copy_fatbin(const void *wrapper, size_t *len)
{
    struct {
        int32_t magic;
        int32_t version;
        const void *data;
    } w;
    uint32_t magic;
    uint16_t hdr_size;
    uint64_t fat_size;
    memcpy(&w, wrapper, sizeof(w));
    if ((uint32_t)w.magic != FATBINC_MAGIC || w.data == NULL)
        return NULL;
    const uint8_t *d = w.data;
    memcpy(&magic, d, 4);
    memcpy(&hdr_size, d + 6, 2);
    memcpy(&fat_size, d + 8, 8);
    if (magic != FATBIN_MAGIC || hdr_size < FATBIN_HDR_MIN ||
        fat_size > GVS_BUF_MAX_CEILING)
        return NULL;
    *len = hdr_size + (size_t)fat_size;
    uint8_t *copy = gvs_malloc(*len);
    if (copy != NULL)
        memcpy(copy, d, *len);
    return copy;
}

void **__cudaRegisterFatBinary(void *fatCubin)
{
    struct fe_module *m = gvs_calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    if (fatCubin != NULL) {
        m->image = copy_fatbin(fatCubin, &m->image_len);
        m->link = fe_link_capture(fatCubin);
    }
    m->vars_dev = -1;
    pthread_mutex_lock(&reg_lock);
    m->next = modules;
    modules = m;
    pthread_mutex_unlock(&reg_lock);
    return (void **)m;
}

void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

void __cudaRegisterFunction(void **handle, const char *hostFun,
                            char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize)
{
    struct fe_module *m = (struct fe_module *)handle;
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim,
        (void)gDim, (void)wSize;
    if (m == NULL || deviceName == NULL ||
        strnlen(deviceName, NAME_MAX_LEN + 1) > NAME_MAX_LEN)
        return;
    struct fe_func *f = gvs_calloc(1, sizeof(*f));
    char *name = gvs_strdup(deviceName);
    pthread_mutex_lock(&reg_lock);
    if (f != NULL && name != NULL && m->nfuncs == m->cap_funcs) {
        uint32_t cap = m->cap_funcs ? m->cap_funcs * 2 : 8;
        struct fe_func **a = gvs_realloc(m->funcs, cap * sizeof(*a));
        if (a != NULL) {
            m->funcs = a;
            m->cap_funcs = cap;
        }
    }
    /* A kernel that could not be recorded is simply unknown: launching it
     * fails as for any function that is no kernel. */
    if (f != NULL && name != NULL && m->nfuncs < m->cap_funcs) {
        f->index = m->nfuncs;
        f->mod = m;
        f->host = hostFun;
        f->name = name;
        m->funcs[m->nfuncs++] = f;
        f = NULL;
        name = NULL;
    }
    pthread_mutex_unlock(&reg_lock);
    gvs_free(f);
    gvs_free(name);
}

void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size,
                       int constant, int global)
{
    struct fe_module *m = (struct fe_module *)handle;
    (void)deviceAddress, (void)ext, (void)size, (void)constant, (void)global;
    if (m == NULL || deviceName == NULL ||
        strnlen(deviceName, NAME_MAX_LEN + 1) > NAME_MAX_LEN)
        return;
    char *name = gvs_strdup(deviceName);
    if (name == NULL)
        return;
    pthread_mutex_lock(&reg_lock);
    if (m->nvars == m->cap_vars) {
        uint32_t cap = m->cap_vars ? m->cap_vars * 2 : 8;
        struct fe_var *a = gvs_realloc(m->vars, cap * sizeof(*a));
        if (a != NULL) {
            m->vars = a;
            m->cap_vars = cap;
        }
    }
    if (m->nvars < m->cap_vars) {
        m->vars[m->nvars++] = (struct fe_var){.host = hostVar, .name = name};
        name = NULL;
    }
    pthread_mutex_unlock(&reg_lock);
    gvs_free(name);
}

/* A managed global gets its host shadow when the module is initialized
 * (managed.c): nvcc's host code calls __cudaInitModule before its first
 * access through *hostVarPtrAddress. */
void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress,
                              char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)constant, (void)global;
    fe_managed_var_register(handle, hostVarPtrAddress, deviceName, size);
}

void __cudaRegisterHostVar(void **handle, const char *deviceName,
                           char *hostVar, size_t size)
{
    (void)handle, (void)deviceName, (void)hostVar, (void)size;
}

static void module_free(struct fe_module *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        gvs_free(m->funcs[i]->name);
        gvs_free(m->funcs[i]->params);
        gvs_free(m->funcs[i]);
    }
    for (uint32_t i = 0; i < m->nvars; i++)
        gvs_free(m->vars[i].name);
    gvs_free(m->funcs);
    gvs_free(m->vars);
    gvs_free(m->image);
    fe_link_free(m->link);
    gvs_free(m);
}

static void post_unload(uint32_t id)
{
    struct gvs_client *cl;
    struct gvs_buf *b = gvs_buf_new(8);
    if (b != NULL && gvs_buf_put_u32(b, id) == 0 && fe_client(&cl) == 0) {
        struct iovec iov = {(void *)gvs_buf_ptr(b), gvs_buf_len(b)};
        (void)gvs_client_post(cl, CUDART_PLUGIN_ID, CUDART_OP_MODULE_UNLOAD,
                              &iov, 1);
    }
    gvs_buf_free(b);
}

/* Runs from the program's atexit handler too: it never connects and never
 * waits for a reply. */
void __cudaUnregisterFatBinary(void **handle)
{
    struct fe_module *m = (struct fe_module *)handle;
    if (m == NULL)
        return;
    pthread_mutex_lock(&reg_lock);
    struct fe_module **pp = &modules;
    while (*pp != NULL && *pp != m)
        pp = &(*pp)->next;
    if (*pp == m)
        *pp = m->next;
    pthread_mutex_unlock(&reg_lock);
    if (m->uploaded && fe_connected())
        post_unload(m->remote_id);
    module_free(m);
}

/* Lookups (callers hold reg_lock) ----------------------------------------- */

static struct fe_func *func_find_locked(const void *p)
{
    for (struct fe_module *m = modules; m != NULL; m = m->next)
        for (uint32_t i = 0; i < m->nfuncs; i++)
            if (m->funcs[i]->host == p || (const void *)m->funcs[i] == p)
                return m->funcs[i];
    return NULL;
}

static struct fe_var *var_find_locked(const void *host,
                                      struct fe_module **mod)
{
    for (struct fe_module *m = modules; m != NULL; m = m->next)
        for (uint32_t i = 0; i < m->nvars; i++)
            if (m->vars[i].host == host) {
                *mod = m;
                return &m->vars[i];
            }
    return NULL;
}

struct fe_func *fe_func_lookup(const void *p)
{
    pthread_mutex_lock(&reg_lock);
    struct fe_func *f = p != NULL ? func_find_locked(p) : NULL;
    pthread_mutex_unlock(&reg_lock);
    return f;
}

struct fe_func *fe_func_remote(uint32_t module, uint32_t index)
{
    struct fe_func *f = NULL;
    pthread_mutex_lock(&reg_lock);
    for (struct fe_module *m = modules; m != NULL && f == NULL; m = m->next)
        for (uint32_t i = 0; m->uploaded && m->remote_id == module &&
                             i < m->nfuncs && f == NULL;
             i++)
            if (m->funcs[i]->index == index)
                f = m->funcs[i];
    pthread_mutex_unlock(&reg_lock);
    return f;
}

/* Upload ------------------------------------------------------------------ */

static int put_names(struct gvs_buf *b, struct fe_module *m)
{
    int rc = gvs_buf_put_u32(b, m->nfuncs);
    for (uint32_t i = 0; rc == 0 && i < m->nfuncs; i++)
        rc = gvs_buf_put_str(b, m->funcs[i]->name);
    if (rc == 0)
        rc = gvs_buf_put_u32(b, m->nvars);
    for (uint32_t i = 0; rc == 0 && i < m->nvars; i++)
        rc = gvs_buf_put_str(b, m->vars[i].name);
    return rc;
}

int fe_stage_locked(struct gvs_client *cl, const uint8_t *image,
                    size_t image_len)
{
    return gvs_remote_stage_locked(cl, image, image_len);
}

/* Sends MODULE_LOAD, after the units' images when link is set, and
 * receives its reply into rep. */
static int load_exchange(struct gvs_client *cl, struct fe_module *m,
                         int link, struct gvs_buf *rep)
{
    struct gvs_buf *hdr = gvs_buf_new(16);
    struct gvs_buf *names = gvs_buf_new(GVS_BULK_CHUNK);
    int rc = hdr != NULL && names != NULL ? put_names(names, m) : GVS_E_NOMEM;
    int staged = m->image_len + gvs_buf_len(names) + 64 > GVS_BULK_CHUNK;
    uint64_t id;
    if (rc == 0)
        rc = gvs_buf_put_u8(hdr, staged);
    if (rc == 0 && !staged)
        rc = gvs_buf_put_u32(hdr, (uint32_t)m->image_len);
    if (rc == 0) {
        struct iovec iov[3] = {
            {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
            {m->image, staged ? 0 : m->image_len},
            {(void *)gvs_buf_ptr(names), gvs_buf_len(names)},
        };
        gvs_client_lock(cl);
        if (link)
            rc = fe_link_post_locked(cl, m->link);
        if (rc == 0 && staged)
            rc = fe_stage_locked(cl, m->image, m->image_len);
        if (rc == 0)
            rc = fe_send_locked(cl, CUDART_OP_MODULE_LOAD, APIGEN_DEVICE, 0,
                                iov, 3, &id);
        gvs_client_unlock(cl);
        if (rc == 0)
            rc = gvs_client_wait(cl, id, rep);
    }
    gvs_buf_free(hdr);
    gvs_buf_free(names);
    return rc;
}

/* Decodes one kernel's layout; the caller owns *params on success. */
static int decode_layout(struct apigen_call *c, struct fe_func *out)
{
    int32_t status;
    uint32_t n;
    apigen_get_i32(c, &status);
    apigen_get_u32(c, &n);
    if (c->rc < 0 || n > FE_PARAM_MAX || (size_t)n * 8 > gvs_buf_len(c->get))
        return -1;
    struct fe_param *p = n ? gvs_calloc(n, sizeof(*p)) : NULL;
    if (n && p == NULL)
        return -1;
    uint32_t end = 0;
    for (uint32_t i = 0; i < n; i++) {
        apigen_get_u32(c, &p[i].offset);
        apigen_get_u32(c, &p[i].size);
        if (c->rc < 0 || p[i].size == 0 ||
            (uint64_t)p[i].offset + p[i].size > FE_PARAM_MAX) {
            gvs_free(p);
            return -1;
        }
        if (p[i].offset + p[i].size > end)
            end = p[i].offset + p[i].size;
    }
    *out = (struct fe_func){.status = (cudaError_t)status,
                            .nparams = n,
                            .param_bytes = end,
                            .params = p};
    return 0;
}

/* Reads every global's (status, address, size) into vars; count first. */
static int decode_globals(struct apigen_call *c, struct fe_module *m,
                          struct fe_var *vars)
{
    uint32_t n;
    apigen_get_u32(c, &n);
    if (c->rc < 0 || n != m->nvars)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        int32_t status;
        apigen_get_i32(c, &status);
        apigen_get_u64(c, &vars[i].addr);
        apigen_get_u64(c, &vars[i].size);
        vars[i].status = (cudaError_t)status;
        if (c->rc == 0 && status == cudaSuccess &&
            vars[i].addr + vars[i].size < vars[i].addr)
            return -1;
    }
    return c->rc < 0 ? -1 : 0;
}

static void commit_globals(struct fe_module *m, const struct fe_var *vars)
{
    for (uint32_t i = 0; i < m->nvars; i++) {
        m->vars[i].status = vars[i].status;
        m->vars[i].addr = vars[i].addr;
        m->vars[i].size = vars[i].size;
    }
    m->vars_dev = fe_thread_device();
}

/* The whole reply is decoded before anything is kept: a malformed one
 * leaves the module as it was. */
static cudaError_t decode_load(struct fe_module *m, struct gvs_buf *rep)
{
    struct apigen_call c = {NULL, rep, 0};
    uint32_t id, nf;
    cudaError_t e = fe_reply_result(&c);
    if (e != cudaSuccess)
        return apigen_end(&c) < 0 ? cudaErrorUnknown : e;
    apigen_get_u32(&c, &id);
    apigen_get_u32(&c, &nf);
    if (c.rc < 0 || nf != m->nfuncs)
        return cudaErrorUnknown;
    struct fe_func *lay = gvs_calloc(nf ? nf : 1, sizeof(*lay));
    struct fe_var *vars = gvs_calloc(m->nvars ? m->nvars : 1, sizeof(*vars));
    uint32_t got = 0;
    e = lay != NULL && vars != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
    while (e == cudaSuccess && got < nf)
        if (decode_layout(&c, &lay[got++]) < 0)
            e = cudaErrorUnknown;
    if (e == cudaSuccess &&
        (decode_globals(&c, m, vars) < 0 || apigen_end(&c) < 0))
        e = cudaErrorUnknown;
    for (uint32_t i = 0; i < got; i++) {
        struct fe_func *f = m->funcs[i];
        if (e == cudaSuccess) {
            gvs_free(f->params);
            f->status = lay[i].status;
            f->nparams = lay[i].nparams;
            f->param_bytes = lay[i].param_bytes;
            f->params = lay[i].params;
        } else {
            gvs_free(lay[i].params);
        }
    }
    if (e == cudaSuccess) {
        commit_globals(m, vars);
        m->remote_id = id;
        m->uploaded = 1;
    }
    gvs_free(lay);
    gvs_free(vars);
    return e;
}

/* Whether the loaded module's code is missing for the GPU: with lazy
 * loading its kernels and globals say so, not the load. */
static int lacks_code(const struct fe_module *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i]->status == cudaErrorNoKernelImageForDevice)
            return 1;
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].status == cudaErrorNoKernelImageForDevice)
            return 1;
    return 0;
}

static cudaError_t upload_locked(struct fe_module *m)
{
    struct gvs_client *cl;
    if (m->uploaded)
        return cudaSuccess;
    if (m->image == NULL)
        return cudaErrorInvalidKernelImage;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct gvs_buf *rep = gvs_buf_new(GVS_FRAME_MAX_DEFAULT);
    if (rep == NULL)
        return cudaErrorMemoryAllocation;
    /* An -rdc program's linked image may hold no code for this GPU: the
     * backend then links the units' images, as CUDA does. */
    for (int link = 0; link <= (m->link != NULL); link++) {
        int rc = load_exchange(cl, m, link, rep);
        if (rc == GVS_E_NOMEM || rc == GVS_E_TOOBIG)
            e = cudaErrorMemoryAllocation;
        else if (rc < 0)
            e = fe_transport_error(rc);
        else
            e = decode_load(m, rep);
        if (rc < 0 || (e == cudaSuccess && !lacks_code(m)))
            break;
        if (e == cudaSuccess && m->link != NULL && !link) {
            post_unload(m->remote_id);
            m->uploaded = 0;
        }
    }
    gvs_buf_free(rep);
    return e;
}

cudaError_t fe_module_ready(struct fe_module *m, uint32_t *id)
{
    pthread_mutex_lock(&reg_lock);
    cudaError_t e = upload_locked(m);
    *id = m->remote_id;
    pthread_mutex_unlock(&reg_lock);
    return e;
}

char __cudaInitModule(void **handle)
{
    uint32_t id;
    if (handle == NULL)
        return 0;
    cudaError_t e = fe_module_ready((struct fe_module *)handle, &id);
    /* The host code reaches __managed__ variables once this succeeds. */
    if (e == cudaSuccess)
        e = fe_managed_vars_ready(handle, id);
    return e == cudaSuccess;
}

/* Libraries (library.c) ---------------------------------------------------- */

cudaError_t fe_library_decode(struct apigen_call *c, struct fe_module **out)
{
    uint32_t id, n;
    apigen_get_u32(c, &id);
    apigen_get_u32(c, &n);
    if (c->rc < 0 || n > FE_LIBRARY_MAX_KERNELS ||
        (size_t)n * 8 > gvs_buf_len(c->get))
        return cudaErrorUnknown;
    struct fe_module *m = gvs_calloc(1, sizeof(*m));
    struct fe_func **funcs = gvs_calloc(n ? n : 1, sizeof(*funcs));
    cudaError_t e = m != NULL && funcs != NULL ? cudaSuccess
                                               : cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        m->funcs = funcs;
        m->cap_funcs = n;
        m->vars_dev = -1;
        m->library = 1;
        m->uploaded = 1;
        m->remote_id = id;
    } else {
        gvs_free(funcs);
    }
    for (uint32_t i = 0; e == cudaSuccess && i < n; i++) {
        struct fe_func *f = gvs_calloc(1, sizeof(*f));
        if (f == NULL) {
            e = cudaErrorMemoryAllocation;
        } else if (decode_layout(c, f) < 0) {
            gvs_free(f);
            e = cudaErrorUnknown;
        } else {
            f->index = i;
            f->mod = m;
            m->funcs[m->nfuncs++] = f;
        }
    }
    if (e == cudaSuccess && apigen_end(c) < 0)
        e = cudaErrorUnknown;
    if (e != cudaSuccess) {
        if (m != NULL)
            module_free(m);
        return e;
    }
    pthread_mutex_lock(&reg_lock);
    m->next = modules;
    modules = m;
    pthread_mutex_unlock(&reg_lock);
    *out = m;
    return cudaSuccess;
}

/* Caller holds reg_lock. */
static int library_live_locked(const struct fe_module *lib)
{
    for (const struct fe_module *m = modules; m != NULL; m = m->next)
        if (m == lib)
            return m->library;
    return 0;
}

int fe_library_info(const struct fe_module *lib, uint32_t *id,
                    uint32_t *nkernels)
{
    pthread_mutex_lock(&reg_lock);
    int live = lib != NULL && library_live_locked(lib) && lib->uploaded;
    if (live) {
        *id = lib->remote_id;
        *nkernels = lib->nfuncs;
    }
    pthread_mutex_unlock(&reg_lock);
    return live;
}

struct fe_func *fe_library_kernel(struct fe_module *lib, uint32_t index)
{
    pthread_mutex_lock(&reg_lock);
    struct fe_func *f = lib != NULL && library_live_locked(lib) &&
                                index < lib->nfuncs
                            ? lib->funcs[index]
                            : NULL;
    pthread_mutex_unlock(&reg_lock);
    return f;
}

void fe_library_note_global(struct fe_module *lib, uint64_t addr,
                            uint64_t size)
{
    pthread_mutex_lock(&reg_lock);
    if (lib != NULL && library_live_locked(lib) &&
        lib->nvars == lib->cap_vars) {
        uint32_t cap = lib->cap_vars ? lib->cap_vars * 2 : 8;
        struct fe_var *a = gvs_realloc(lib->vars, cap * sizeof(*a));
        if (a != NULL) {
            lib->vars = a;
            lib->cap_vars = cap;
        }
    }
    /* Unrecorded, the global is merely not seen by cudaMemcpyDefault. */
    if (lib != NULL && library_live_locked(lib) &&
        lib->nvars < lib->cap_vars) {
        lib->vars[lib->nvars++] = (struct fe_var){
            .status = cudaSuccess, .addr = addr, .size = size};
        lib->vars_dev = fe_thread_device();
    }
    pthread_mutex_unlock(&reg_lock);
}

int fe_library_remove(struct fe_module *lib, uint32_t *id)
{
    pthread_mutex_lock(&reg_lock);
    struct fe_module **pp = &modules;
    while (*pp != NULL && *pp != lib)
        pp = &(*pp)->next;
    int found = *pp != NULL && lib->library;
    if (found)
        *pp = lib->next;
    pthread_mutex_unlock(&reg_lock);
    if (!found)
        return 0;
    *id = lib->remote_id;
    int uploaded = lib->uploaded;
    module_free(lib);
    return uploaded ? 1 : -1;
}

/* Globals ----------------------------------------------------------------- */

static cudaError_t refresh_globals_locked(struct fe_module *m)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u32(&c, m->remote_id);
    e = cudart_fe_run(&c, CUDART_OP_MODULE_GLOBALS, APIGEN_DEVICE);
    if (e != cudaSuccess)
        return cudart_fe_end(&c, e);
    struct fe_var *vars = gvs_calloc(m->nvars ? m->nvars : 1, sizeof(*vars));
    if (vars == NULL)
        return cudaErrorMemoryAllocation;
    if (decode_globals(&c, m, vars) < 0 || apigen_end(&c) < 0)
        e = cudaErrorUnknown;
    else
        commit_globals(m, vars);
    gvs_free(vars);
    return e;
}

cudaError_t fe_symbol_resolve(const void *symbol, struct fe_symbol *out)
{
    struct fe_module *m = NULL;
    pthread_mutex_lock(&reg_lock);
    struct fe_var *v = symbol != NULL ? var_find_locked(symbol, &m) : NULL;
    cudaError_t e = v != NULL ? upload_locked(m) : cudaErrorInvalidSymbol;
    if (e == cudaSuccess && m->vars_dev != fe_thread_device())
        e = refresh_globals_locked(m);
    if (e == cudaSuccess)
        e = v->status;
    if (e == cudaSuccess)
        *out = (struct fe_symbol){v->addr, v->size};
    pthread_mutex_unlock(&reg_lock);
    return e;
}

int fe_symbol_contains(const void *p)
{
    uint64_t u = (uint64_t)(uintptr_t)p;
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (struct fe_module *m = modules; m != NULL && !found; m = m->next) {
        if (m->vars_dev < 0)
            continue;
        for (uint32_t i = 0; i < m->nvars && !found; i++) {
            const struct fe_var *v = &m->vars[i];
            found = v->status == cudaSuccess && u >= v->addr &&
                    u - v->addr < v->size;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

void fe_modules_forget_device(int dev)
{
    pthread_mutex_lock(&reg_lock);
    for (struct fe_module *m = modules; m != NULL; m = m->next) {
        if (m->vars_dev == dev)
            m->vars_dev = -1;
        for (uint32_t i = 0; i < m->nfuncs; i++)
            fe_kernel_forget_config(m->funcs[i]);
    }
    pthread_mutex_unlock(&reg_lock);
}

void fe_modules_fork_lock(void)
{
    pthread_mutex_lock(&reg_lock);
}

void fe_modules_fork_unlock(void)
{
    pthread_mutex_unlock(&reg_lock);
}

void fe_modules_fork_child(void)
{
    for (struct fe_module *m = modules; m != NULL; m = m->next) {
        m->uploaded = 0;
        m->vars_dev = -1;
    }
    pthread_mutex_unlock(&reg_lock);
}
