/* Kernel launches (cuda.api, LAUNCH): the parameters come packed by the
 * kernel's layout, which the backend knows from the load, and each one
 * is handed to the driver from where it lies in an aligned copy. */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"

#define FORM_PARAMS 0
#define FORM_EXTRA 1
#define ATTR_VALUE_LEN 64u
/* More attributes than CUDA defines is malformed. */
#define ATTRS_MAX 32u

_Static_assert(sizeof(CUlaunchAttributeValue) == ATTR_VALUE_LEN,
               "a launch attribute's value is 64 bytes on the wire");

CUresult cuda_be_get_launch_attrs(struct apigen_call *c,
                                  CUlaunchAttribute *a, uint32_t n)
{
    CUresult r = CUDA_SUCCESS;
    for (uint32_t i = 0; i < n && c->rc == 0; i++) {
        uint32_t id;
        memset(&a[i], 0, sizeof(a[i]));
        apigen_get_u32(c, &id);
        if (c->rc == 0)
            c->rc = gvs_buf_get_bytes(c->get, &a[i].value, ATTR_VALUE_LEN);
        if (c->rc < 0)
            break;
        a[i].id = (CUlaunchAttributeID)id;
        if (r != CUDA_SUCCESS)
            continue;
        switch (id) {
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
            r = cuda_be_event((uint64_t)(uintptr_t)a[i].value.programmaticEvent.event,
                              &a[i].value.programmaticEvent.event);
            break;
        case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
            r = cuda_be_event((uint64_t)(uintptr_t)a[i].value.launchCompletionEvent.event,
                              &a[i].value.launchCompletionEvent.event);
            break;
        case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
            r = CUDA_ERROR_NOT_SUPPORTED;
            break;
        default:
            break;
        }
    }
    return r;
}

/* A launch configuration (cuda.api, LAUNCH) up to its attributes, into
 * cfg; the stream's wire value in *swire. */
static void get_config(struct apigen_call *c, CUlaunchConfig *cfg,
                       uint64_t *swire)
{
    memset(cfg, 0, sizeof(*cfg));
    apigen_get_u32(c, &cfg->gridDimX);
    apigen_get_u32(c, &cfg->gridDimY);
    apigen_get_u32(c, &cfg->gridDimZ);
    apigen_get_u32(c, &cfg->blockDimX);
    apigen_get_u32(c, &cfg->blockDimY);
    apigen_get_u32(c, &cfg->blockDimZ);
    apigen_get_u32(c, &cfg->sharedMemBytes);
    apigen_get_u64(c, swire);
}

/* Request: see cuda.api.  Reply: i32. */
int cuda_be_launch(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id, swire;
    uint32_t nattrs;
    uint8_t form;
    const uint8_t *params;
    size_t plen;
    CUlaunchAttribute attrs[ATTRS_MAX];
    CUlaunchConfig cfg;
    apigen_get_u64(&c, &id);
    get_config(&c, &cfg, &swire);
    apigen_get_u8(&c, &form);
    apigen_get_blob(&c, &params, &plen);
    apigen_get_u32(&c, &nattrs);
    if (c.rc == 0 && (form > FORM_EXTRA || plen > CUDA_BE_PARAM_MAX ||
                      nattrs > ATTRS_MAX))
        c.rc = GVS_E_RANGE;
    CUresult r = c.rc == 0 ? cuda_be_get_launch_attrs(&c, attrs, nattrs)
                            : CUDA_SUCCESS;
    if (apigen_end(&c) < 0)
        return c.rc;
    CUstream s = NULL;
    struct cuda_be_kernel *k = cuda_be_kernel_get(0, id);
    if (k == NULL)
        k = cuda_be_kernel_get(1, id);
    if (r == CUDA_SUCCESS)
        r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, swire, &s);
    if (r == CUDA_SUCCESS && k == NULL)
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && form == FORM_PARAMS && k->status != CUDA_SUCCESS)
        r = k->status;
    if (r == CUDA_SUCCESS && form == FORM_PARAMS && plen != k->param_bytes)
        return GVS_E_PROTO;
    if (r != CUDA_SUCCESS) {
        apigen_put_i32(&c, r);
        return c.rc;
    }
    /* Aligned for any parameter type. */
    _Alignas(16) uint8_t block[CUDA_BE_PARAM_MAX + 1];
    void **args = gvs_malloc((k->nparams + 1) * sizeof(void *));
    size_t size = plen;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, block,
                     CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    if (args == NULL)
        return GVS_E_NOMEM;
    memcpy(block, params, plen);
    if (form == FORM_PARAMS)
        for (uint32_t i = 0; i < k->nparams; i++)
            args[i] = block + k->params[i].offset;
    void **kp = form == FORM_PARAMS ? args : NULL;
    void **ex = form == FORM_EXTRA ? extra : NULL;
    if (nattrs == 0) {
        r = CUDA_DRV(cuLaunchKernel)((CUfunction)k->handle, cfg.gridDimX,
                                     cfg.gridDimY, cfg.gridDimZ,
                                     cfg.blockDimX, cfg.blockDimY,
                                     cfg.blockDimZ, cfg.sharedMemBytes, s,
                                     kp, ex);
    } else {
        cfg.hStream = s;
        cfg.attrs = attrs;
        cfg.numAttrs = nattrs;
        r = CUDA_DRV(cuLaunchKernelEx)(&cfg, (CUfunction)k->handle, kp, ex);
    }
    gvs_free(args);
    if (call->noreply && r != CUDA_SUCCESS)
        cuda_be_remote->latch(call, CUDA_PLUGIN_ID, r);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u8 which, u64 function, the configuration.  Reply: i32, i32. */
int cuda_be_occupancy_clusters(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    uint64_t id, swire;
    uint32_t nattrs;
    CUlaunchAttribute attrs[ATTRS_MAX];
    CUlaunchConfig cfg;
    CUfunction f = NULL;
    int v = 0;
    apigen_get_u8(&c, &which);
    apigen_get_u64(&c, &id);
    get_config(&c, &cfg, &swire);
    apigen_get_u32(&c, &nattrs);
    if (c.rc == 0 && (which > 1 || nattrs > ATTRS_MAX))
        c.rc = GVS_E_RANGE;
    CUresult r = c.rc == 0 ? cuda_be_get_launch_attrs(&c, attrs, nattrs)
                            : CUDA_SUCCESS;
    if (apigen_end(&c) < 0)
        return c.rc;
    if (r == CUDA_SUCCESS)
        r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = cuda_be_stream(call, swire, &cfg.hStream);
    if (r == CUDA_SUCCESS)
        r = cuda_be_func(id, &f);
    cfg.attrs = attrs;
    cfg.numAttrs = nattrs;
    if (r == CUDA_SUCCESS)
        r = which ? CUDA_DRV(cuOccupancyMaxPotentialClusterSize)(&v, f, &cfg)
                  : CUDA_DRV(cuOccupancyMaxActiveClusters)(&v, f, &cfg);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        apigen_put_i32(&c, v);
    return c.rc;
}
