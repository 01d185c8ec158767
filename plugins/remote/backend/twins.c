/* Handler bodies of ops both API plugins carry in the same wire form,
 * over each plugin's own CUDA function (remote_be.h): the runtime's and
 * the driver's are the same query. */
#include "state.h"

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* More operations than this are more than CUDA defines. */
#define MAX_ATOMIC_OPS 1024u

int remote_be_atomic_caps(struct gvs_call *call,
                          int32_t (*caps)(struct gvs_call *call,
                                          unsigned int *out,
                                          const int32_t *ops,
                                          unsigned int n, int dev,
                                          int peer))
{
    struct apigen_call c = {call->out, call->in, 0};
    uint32_t n;
    int32_t dev, peer;
    apigen_get_u32(&c, &n);
    if (c.rc == 0 && n > MAX_ATOMIC_OPS)
        return GVS_E_RANGE;
    int32_t *ops = gvs_calloc(n ? n : 1, sizeof(*ops));
    unsigned int *out = gvs_calloc(n ? n : 1, sizeof(*out));
    if (ops == NULL || out == NULL) {
        gvs_free(ops);
        gvs_free(out);
        return GVS_E_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        apigen_get_i32(&c, &ops[i]);
    apigen_get_i32(&c, &dev);
    apigen_get_i32(&c, &peer);
    if (apigen_end(&c) == 0) {
        int32_t r = caps(call, out, ops, n, dev, peer);
        apigen_put_i32(&c, r);
        for (uint32_t i = 0; r == 0 && i < n; i++)
            apigen_put_u32(&c, out[i]);
    }
    gvs_free(ops);
    gvs_free(out);
    return c.rc;
}

/* The driver keeps at most 25600 bytes of logs; a larger buffer is
 * never filled. */
#define LOGS_MAX ((uint64_t)64 << 10)

int remote_be_logs_dump(struct gvs_call *call,
                        int32_t (*dump)(struct gvs_call *call,
                                        unsigned int *it, char *buf,
                                        size_t *size, unsigned int flags))
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
    unsigned int it = (unsigned int)it64;
    size_t size = (size_t)cap;
    int32_t r = dump(call, has ? &it : NULL, buf, &size, flags);
    /* The NUL the driver writes is not text. */
    if (r == 0 && size >= cap)
        size = cap > 0 ? (size_t)cap - 1 : 0;
    apigen_put_i32(&c, r);
    if (r == 0) {
        apigen_put_u64(&c, it);
        apigen_put_u64(&c, size);
        apigen_put_blob(&c, buf, size);
    }
    gvs_free(buf);
    return c.rc;
}
