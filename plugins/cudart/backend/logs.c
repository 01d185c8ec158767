/*
 * The driver's log buffer (api/80-misc.api LOGS_CURRENT, LOGS_DUMP): the
 * worker's logs are the session's, dumped into memory here and handed to
 * the client, which writes a file itself for cudaLogsDumpToFile.
 */
#include "be.h"

#include "apigen_rt.h"
#include "cudart_be_gen.h"
#include "gvs/err.h"
#include "gvs/mem.h"

int cudart_be_logs_current(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t flags;
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    cudaLogIterator it = 0;
    cudaError_t e = cudaLogsCurrent(&it, flags);
    apigen_put_i32(&c, e);
    if (e == cudaSuccess)
        apigen_put_u64(&c, it);
    return c.rc;
}

static int32_t dump(struct gvs_call *call, unsigned int *it, char *buf,
                    size_t *size, unsigned int flags)
{
    (void)call;
    return cudaLogsDumpToMemory(it, buf, size, flags);
}

/* The layer's LOGS_DUMP body (remote_be.h) over the runtime's dump. */
int cudart_be_logs_dump(struct gvs_call *call)
{
    return be_remote->logs_dump(call, dump);
}
