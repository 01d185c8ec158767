/* cudaLaunchKernelExC and cudaLaunchCooperativeKernel: the frontend's
 * launchex.c.  The same runtime entry point as the program called checks
 * the configuration, so the codes are CUDA's own. */
#include "kernels.h"

#include <string.h>

#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "objects.h"

enum { ENTRY_EXC = 0, ENTRY_COOPERATIVE = 1 };

static cudaError_t launch(uint8_t entry, const struct be_func *f,
                          const cudaLaunchConfig_t *cfg, const uint8_t *blob,
                          size_t len)
{
    /* An aligned copy: CUDA reads each argument through argv[i]. */
    uint64_t params[(BE_PARAM_MAX + 7) / 8];
    void *stack[BE_ARGV_ON_STACK];
    memcpy(params, blob, len);
    void **argv = be_kernel_argv(f, params, stack);
    if (argv == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t e =
        entry == ENTRY_EXC
            ? cudaLaunchKernelExC(cfg, (const void *)f->kernel, argv)
            : cudaLaunchCooperativeKernel((const void *)f->kernel,
                                          cfg->gridDim, cfg->blockDim, argv,
                                          cfg->dynamicSmemBytes, cfg->stream);
    be_kernel_argv_free(argv, stack);
    return e;
}

/* Request: u8 entry (0 cudaLaunchKernelExC, 1 cudaLaunchCooperativeKernel,
 * which takes no attributes), u32 module, u32 index, launch
 * configuration, blob parameter block of exactly the kernel's parameter
 * size.  Reply: i32 result. */
int cudart_be_launch_ex(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    cudaLaunchAttribute attrs[BE_MAX_LAUNCH_ATTRS];
    cudaLaunchConfig_t cfg;
    const struct be_func *f = NULL;
    cudaError_t e = cudaSuccess;
    const uint8_t *blob;
    uint64_t stream;
    uint8_t entry;
    size_t len;
    apigen_get_u8(&c, &entry);
    int rc = c.rc == 0 ? be_get_kernel(call, &c, &f) : c.rc;
    if (rc == 0)
        rc = be_get_launch_config(&c, &cfg, attrs, &stream, &e);
    if (rc < 0)
        return rc;
    apigen_get_blob(&c, &blob, &len);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (entry > ENTRY_COOPERATIVE ||
        (entry == ENTRY_COOPERATIVE && cfg.numAttrs != 0))
        return GVS_E_PROTO;
    if (f->status == cudaSuccess && len != f->param_bytes)
        return GVS_E_PROTO;
    if (e == cudaSuccess)
        e = f->status;
    if (e == cudaSuccess)
        e = cudart_be_enter(call);
    if (e == cudaSuccess)
        e = be_stream(call, stream, &cfg.stream);
    if (e == cudaSuccess)
        e = launch(entry, f, &cfg, blob, len);
    apigen_put_i32(&c, e);
    return c.rc;
}
