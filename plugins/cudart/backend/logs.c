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

/* The driver keeps at most 25600 bytes of logs; a larger buffer is
 * never filled. */
#define LOGS_MAX ((uint64_t)64 << 10)

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

/* Request: u8 has iterator, u64 iterator (ignored without), u64
 * capacity (the client's *size), u32 flags.  Reply: i32, u64 iterator,
 * u64 size, blob text (size bytes, without the NUL). */
int cudart_be_logs_dump(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t has;
    uint64_t it64, cap;
    uint32_t flags;
    apigen_get_u8(&c, &has);
    apigen_get_u64(&c, &it64);
    apigen_get_u64(&c, &cap);
    apigen_get_u32(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (has > 1 || it64 > UINT32_MAX)
        return GVS_E_PROTO;
    if (cap > LOGS_MAX)
        cap = LOGS_MAX;
    char *buf = gvs_malloc(cap ? (size_t)cap : 1);
    if (buf == NULL)
        return GVS_E_NOMEM;
    cudaLogIterator it = (cudaLogIterator)it64;
    size_t size = (size_t)cap;
    cudaError_t e = cudaLogsDumpToMemory(has ? &it : NULL, buf, &size, flags);
    /* The NUL the driver writes is not text. */
    if (e == cudaSuccess && size >= cap)
        size = cap > 0 ? (size_t)cap - 1 : 0;
    apigen_put_i32(&c, e);
    if (e == cudaSuccess) {
        apigen_put_u64(&c, it);
        apigen_put_u64(&c, size);
        apigen_put_blob(&c, buf, size);
    }
    gvs_free(buf);
    return c.rc;
}
