/* The units' relocatable images of an -rdc program (rdc.h). */
#include "rdc.h"

#include <string.h>

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* fatbinary_section.h: a version 2 wrapper's last field lists the units'
 * fat binaries, NULL-terminated. */
#define FATBINC_MAGIC 0x466243b1u
#define FATBINC_LINKED 2
#define FATBIN_MAGIC 0xba55ed50u
#define FATBIN_HDR_MIN 16u
/* More units than this are not a program nvcc linked. */
#define MAX_UNITS 4096u

struct fe_link {
    uint32_t n;
    uint8_t **image;
    size_t *len;
};

/* The length of the fat binary at p by its header, 0 if it is none. */
static size_t fatbin_len(const uint8_t *p)
{
    uint32_t magic;
    uint16_t hdr;
    uint64_t size;
    memcpy(&magic, p, 4);
    memcpy(&hdr, p + 6, 2);
    memcpy(&size, p + 8, 8);
    if (magic != FATBIN_MAGIC || hdr < FATBIN_HDR_MIN ||
        size > GVS_BUF_MAX_CEILING)
        return 0;
    return hdr + (size_t)size;
}

struct fe_link *fe_link_capture(const void *wrapper)
{
    struct {
        int32_t magic;
        int32_t version;
        const void *data;
        const void *const *units;
    } w;
    memcpy(&w, wrapper, sizeof(w));
    if ((uint32_t)w.magic != FATBINC_MAGIC || w.version != FATBINC_LINKED ||
        w.units == NULL)
        return NULL;
    uint32_t n = 0;
    while (n < MAX_UNITS && w.units[n] != NULL)
        n++;
    if (n == 0 || n == MAX_UNITS)
        return NULL;
    struct fe_link *l = gvs_calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->image = gvs_calloc(n, sizeof(*l->image));
    l->len = gvs_calloc(n, sizeof(*l->len));
    for (uint32_t i = 0; l->image != NULL && l->len != NULL && i < n; i++) {
        size_t len = fatbin_len(w.units[i]);
        uint8_t *copy = len > 0 ? gvs_malloc(len) : NULL;
        if (copy == NULL)
            break;
        memcpy(copy, w.units[i], len);
        l->image[l->n] = copy;
        l->len[l->n++] = len;
    }
    if (l->n != n) {
        fe_link_free(l);
        return NULL;
    }
    return l;
}

void fe_link_free(struct fe_link *l)
{
    if (l == NULL)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        gvs_free(l->image[i]);
    gvs_free(l->image);
    gvs_free(l->len);
    gvs_free(l);
}

/* Request: u8 flags (LINK_NEW_LIST: the first piece of the first image,
 * LINK_NEW_IMAGE: the first piece of an image), blob piece (at most
 * GVS_BULK_CHUNK). */
enum { LINK_NEW_LIST = 1, LINK_NEW_IMAGE = 2 };

int fe_link_post_locked(struct gvs_client *cl, const struct fe_link *l)
{
    struct gvs_buf *hdr = gvs_buf_new(16);
    int rc = hdr != NULL ? 0 : GVS_E_NOMEM;
    for (uint32_t i = 0; rc == 0 && i < l->n; i++)
        for (size_t off = 0; rc == 0 && off < l->len[i];
             off += GVS_BULK_CHUNK) {
            size_t len = l->len[i] - off < GVS_BULK_CHUNK ? l->len[i] - off
                                                          : GVS_BULK_CHUNK;
            gvs_buf_reset(hdr);
            rc = gvs_buf_put_u8(
                hdr, (uint8_t)((i == 0 && off == 0 ? LINK_NEW_LIST : 0) |
                               (off == 0 ? LINK_NEW_IMAGE : 0)));
            /* The blob's length; its bytes follow in the second piece. */
            if (rc == 0)
                rc = gvs_buf_put_u32(hdr, (uint32_t)len);
            struct iovec iov[2] = {
                {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
                {l->image[i] + off, len},
            };
            if (rc == 0)
                rc = fe_send_locked(cl, CUDART_OP_MODULE_LINK_STAGE, 0, 1,
                                    iov, 2, NULL);
        }
    gvs_buf_free(hdr);
    return rc;
}
