/* Finding a kernel by its wire name, and argument vectors over a
 * parameter block, for the launch, attribute and occupancy handlers. */
#include "kernels.h"

#include "gvs/err.h"
#include "gvs/mem.h"

int be_get_kernel(struct gvs_call *call, struct apigen_call *c,
                  const struct be_func **out)
{
    uint32_t module, index;
    apigen_get_u32(c, &module);
    apigen_get_u32(c, &index);
    if (c->rc < 0)
        return c->rc;
    struct be_module *m = be_module_get(call->state, module);
    if (m == NULL || index >= m->nfuncs)
        return GVS_E_RANGE;
    *out = &m->funcs[index];
    return 0;
}

void **be_kernel_argv(const struct be_func *f, void *params,
                      void *stack[BE_ARGV_ON_STACK])
{
    void **argv = f->nparams <= BE_ARGV_ON_STACK
                      ? stack
                      : gvs_calloc(f->nparams, sizeof(*argv));
    for (uint32_t i = 0; argv != NULL && i < f->nparams; i++)
        argv[i] = (uint8_t *)params + f->params[i].offset;
    return argv;
}

void be_kernel_argv_free(void **argv, void *stack[BE_ARGV_ON_STACK])
{
    if (argv != stack)
        gvs_free(argv);
}
