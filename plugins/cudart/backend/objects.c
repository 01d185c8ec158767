#include "be.h"
#include "objects.h"

#include "apigen_rt.h"

struct gvs_handles *be_handles(void)
{
    return be_remote->handles();
}

void be_reply_u64(struct apigen_call *c, cudaError_t e, uint64_t v)
{
    apigen_put_i32(c, e);
    if (e == cudaSuccess)
        apigen_put_u64(c, v);
}
