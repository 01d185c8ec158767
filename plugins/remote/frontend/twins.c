/* The client side of ops both API frontends carry in the same wire form
 * (gvs_remote.h): the runtime's and the driver's are the same query. */
#include "gvs_remote.h"

#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* As the backend bounds them (backend/twins.c). */
#define MAX_ATOMIC_OPS 1024u

EXPORT int32_t gvs_remote_atomic_caps(const struct gvs_remote_api *api,
                                      uint16_t op, unsigned int *caps,
                                      const int32_t *ops, unsigned int count,
                                      int dev, int peer)
{
    struct apigen_call c;
    if (caps == NULL || ops == NULL || count > MAX_ATOMIC_OPS)
        return api->invalid;
    int32_t r = gvs_remote_begin(api, &c);
    if (r != api->success)
        return r;
    apigen_put_u32(&c, count);
    for (unsigned int i = 0; i < count; i++)
        apigen_put_i32(&c, ops[i]);
    apigen_put_i32(&c, dev);
    apigen_put_i32(&c, peer);
    r = gvs_remote_run(api, &c, op, 0);
    for (unsigned int i = 0; r == api->success && i < count; i++) {
        uint32_t v = 0;
        apigen_get_u32(&c, &v);
        caps[i] = v;
    }
    return gvs_remote_end(api, &c, r);
}

EXPORT int32_t gvs_remote_logs_dump(const struct gvs_remote_api *api,
                                    uint16_t op, unsigned int *it, char *buf,
                                    size_t cap, size_t *len,
                                    unsigned int flags)
{
    struct apigen_call c;
    int32_t r = gvs_remote_begin(api, &c);
    if (r != api->success)
        return r;
    apigen_put_u8(&c, it != NULL);
    apigen_put_u64(&c, it != NULL ? *it : 0);
    apigen_put_u64(&c, cap);
    apigen_put_u32(&c, flags);
    r = gvs_remote_run(api, &c, op, 0);
    if (r == api->success) {
        uint64_t next = 0, size = 0;
        const uint8_t *text = NULL;
        size_t n = 0;
        apigen_get_u64(&c, &next);
        apigen_get_u64(&c, &size);
        apigen_get_blob(&c, &text, &n);
        if (c.rc == 0 && (n != size || (cap > 0 && n >= cap) ||
                          next > UINT32_MAX))
            return api->unknown;
        if (c.rc == 0) {
            memcpy(buf, text, n);
            if (cap > 0)
                buf[n] = 0;
            *len = n;
            if (it != NULL)
                *it = (unsigned int)next;
        }
    }
    return gvs_remote_end(api, &c, r);
}
