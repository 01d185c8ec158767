/*
 * The 2D/3D copy engine (mem3d.h).  A box of rows is cut into pieces of
 * at most GVS_BULK_CHUNK bytes: whole slices when a slice fits, else
 * whole rows of one slice, else pieces of one row.  Host rows of a piece
 * are packed into one blob (or sent in place when they are contiguous);
 * device-to-device and array copies are one request.
 */
#include "mem3d.h"

#include <string.h>

#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"

/* FROM piece requests in flight at once, as for MEMCPY_D2H. */
#define FROM_WINDOW 4u

void fe_put_side(struct apigen_call *c, const struct fe_side *s)
{
    apigen_put_u8(c, (uint8_t)s->kind);
    apigen_put_u64(c, s->addr);
    apigen_put_u64(c, s->pitch);
    apigen_put_u64(c, s->ysize);
    apigen_put_u64(c, s->x);
    apigen_put_u64(c, s->y);
    apigen_put_u64(c, s->z);
}

void fe_put_box(struct apigen_call *c, const struct fe_box *b)
{
    apigen_put_u64(c, b->w);
    apigen_put_u64(c, b->h);
    apigen_put_u64(c, b->d);
}

int fe_kind_valid(enum cudaMemcpyKind kind)
{
    return (unsigned)kind <= (unsigned)cudaMemcpyDefault;
}

enum fe_side_kind fe_ptr_side(const void *p, enum cudaMemcpyKind kind,
                              int is_dst)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return is_dst ? FE_SIDE_DEVICE : FE_SIDE_HOST;
    case cudaMemcpyDeviceToHost:
        return is_dst ? FE_SIDE_HOST : FE_SIDE_DEVICE;
    case cudaMemcpyDeviceToDevice:
        return FE_SIDE_DEVICE;
    case cudaMemcpyDefault:
        return fe_is_device_ptr(p) ? FE_SIDE_DEVICE : FE_SIDE_HOST;
    default:
        return FE_SIDE_HOST;
    }
}

/* Pieces ------------------------------------------------------------------ */

/* How a box is cut: n pieces, each of `per` slices (mode 0), `per` rows
 * (mode 1) or `per` bytes of a row (mode 2). */
struct cut {
    int mode;
    uint64_t per, n, across; /* across: pieces per slice or per row */
};

struct piece {
    uint64_t x, y, z; /* offset in the box */
    struct fe_box b;
};

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

static struct cut cut_box(const struct fe_box *box)
{
    const uint64_t chunk = GVS_BULK_CHUNK;
    struct cut c;
    if (box->w * box->h <= chunk) {
        c = (struct cut){0, chunk / (box->w * box->h), 0, 0};
        c.n = div_up(box->d, c.per);
    } else if (box->w <= chunk) {
        c = (struct cut){1, chunk / box->w, 0, 0};
        c.across = div_up(box->h, c.per);
        c.n = c.across * box->d;
    } else {
        c = (struct cut){2, chunk, 0, div_up(box->w, chunk)};
        c.n = c.across * box->h * box->d;
    }
    return c;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static struct piece piece_at(const struct fe_box *box, const struct cut *c,
                             uint64_t i)
{
    struct piece p = {0, 0, 0, *box};
    switch (c->mode) {
    case 0:
        p.z = i * c->per;
        p.b.d = min_u64(c->per, box->d - p.z);
        break;
    case 1:
        p.z = i / c->across;
        p.y = i % c->across * c->per;
        p.b.h = min_u64(c->per, box->h - p.y);
        p.b.d = 1;
        break;
    default:
        p.z = i / (c->across * box->h);
        p.y = i / c->across % box->h;
        p.x = i % c->across * c->per;
        p.b.w = min_u64(c->per, box->w - p.x);
        p.b.h = 1;
        p.b.d = 1;
        break;
    }
    return p;
}

static struct fe_side side_at(const struct fe_side *s, const struct piece *p)
{
    struct fe_side r = *s;
    r.x += p->x;
    r.y += p->y;
    r.z += p->z;
    return r;
}

/* Host address of row (y, z) of a piece. */
static uint8_t *host_row(const struct fe_side *s, const struct piece *p,
                         uint64_t y, uint64_t z)
{
    uint64_t off = (s->z + p->z + z) * s->ysize * s->pitch +
                   (s->y + p->y + y) * s->pitch + s->x + p->x;
    return (uint8_t *)(uintptr_t)(s->addr + off);
}

/* Whether a piece's host rows lie back to back. */
static int host_contiguous(const struct fe_side *s, const struct piece *p)
{
    if (p->b.h * p->b.d == 1)
        return 1;
    return s->pitch == p->b.w && (p->b.d == 1 || s->ysize == p->b.h);
}

static void pack(uint8_t *dst, const struct fe_side *s, const struct piece *p)
{
    for (uint64_t z = 0; z < p->b.d; z++)
        for (uint64_t y = 0; y < p->b.h; y++) {
            memcpy(dst, host_row(s, p, y, z), p->b.w);
            dst += p->b.w;
        }
}

static void unpack(const struct fe_side *s, const struct piece *p,
                   const uint8_t *src)
{
    for (uint64_t z = 0; z < p->b.d; z++)
        for (uint64_t y = 0; y < p->b.h; y++) {
            memcpy(host_row(s, p, y, z), src, p->b.w);
            src += p->b.w;
        }
}

/* Host to device or array ---------------------------------------------- */

static int to_send(struct gvs_client *cl, struct gvs_buf *hdr,
                   const struct fe_side *dst, const struct piece *p,
                   int async, uint64_t stream, const uint8_t *data,
                   int last, uint64_t *id)
{
    struct apigen_call c = {hdr, NULL, 0};
    struct fe_side d = side_at(dst, p);
    size_t len = (size_t)(p->b.w * p->b.h * p->b.d);
    gvs_buf_reset(hdr);
    fe_put_side(&c, &d);
    fe_put_box(&c, &p->b);
    apigen_put_u8(&c, (uint8_t)async);
    apigen_put_u64(&c, stream);
    apigen_put_u32(&c, (uint32_t)len);
    if (c.rc < 0)
        return c.rc;
    struct iovec iov[2] = {
        {(void *)gvs_buf_ptr(hdr), gvs_buf_len(hdr)},
        {(void *)data, len},
    };
    return fe_send_locked(cl, CUDART_OP_MEMCPY3D_TO, APIGEN_DEVICE, !last,
                          iov, 2, id);
}

/* Every piece but the last is posted; the last one's reply carries the
 * first failure of the copy, latched by the backend. */
static cudaError_t copy_to(const struct fe_side *dst, const struct fe_side *src,
                           const struct fe_box *box, int async,
                           uint64_t stream)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct cut cut = cut_box(box);
    uint64_t packed = min_u64(box->w * box->h * box->d, GVS_BULK_CHUNK);
    struct gvs_buf *hdr = gvs_buf_new(128);
    struct gvs_buf *rep = gvs_buf_new(FE_SMALL_REPLY_MAX);
    uint8_t *stage = gvs_malloc((size_t)packed);
    int rc = hdr != NULL && rep != NULL && stage != NULL ? 0 : GVS_E_NOMEM;
    uint64_t id = 0;
    if (rc == 0) {
        gvs_client_lock(cl);
        for (uint64_t i = 0; i < cut.n && rc == 0; i++) {
            struct piece p = piece_at(box, &cut, i);
            const uint8_t *data = stage;
            if (host_contiguous(src, &p))
                data = host_row(src, &p, 0, 0);
            else
                pack(stage, src, &p);
            rc = to_send(cl, hdr, dst, &p, async, stream, data, i + 1 == cut.n,
                         &id);
        }
        gvs_client_unlock(cl);
        if (rc == 0)
            rc = gvs_client_wait(cl, id, rep);
    }
    if (rc == GVS_E_NOMEM) {
        e = cudaErrorMemoryAllocation;
    } else if (rc < 0) {
        e = fe_transport_error(rc);
    } else {
        struct apigen_call c = {NULL, rep, 0};
        e = fe_reply_result(&c);
        if (apigen_end(&c) < 0)
            e = cudaErrorUnknown;
    }
    gvs_free(stage);
    gvs_buf_free(hdr);
    gvs_buf_free(rep);
    return e;
}

/* Device or array to host ------------------------------------------------ */

static int from_send(struct gvs_client *cl, struct gvs_buf *req,
                     const struct fe_side *src, const struct piece *p,
                     int async, uint64_t stream, uint64_t *id)
{
    struct apigen_call c = {req, NULL, 0};
    struct fe_side s = side_at(src, p);
    gvs_buf_reset(req);
    fe_put_side(&c, &s);
    fe_put_box(&c, &p->b);
    apigen_put_u8(&c, (uint8_t)async);
    apigen_put_u64(&c, stream);
    if (c.rc < 0)
        return c.rc;
    struct iovec iov = {(void *)gvs_buf_ptr(req), gvs_buf_len(req)};
    return fe_send_locked(cl, CUDART_OP_MEMCPY3D_FROM, APIGEN_DEVICE, 0, &iov,
                          1, id);
}

/* One piece's reply: its result and, on success, exactly its bytes,
 * which go to their rows. */
static cudaError_t from_take(struct gvs_buf *rep, const struct fe_side *dst,
                             const struct piece *p)
{
    struct apigen_call c = {NULL, rep, 0};
    const uint8_t *data;
    size_t n;
    cudaError_t e = fe_reply_result(&c);
    if (e == cudaSuccess) {
        apigen_get_blob(&c, &data, &n);
        if (c.rc == 0 && n != p->b.w * p->b.h * p->b.d)
            return cudaErrorUnknown;
    }
    if (apigen_end(&c) < 0)
        return cudaErrorUnknown;
    if (e == cudaSuccess)
        unpack(dst, p, data);
    return e;
}

/* Piece requests are pipelined; every reply is read, also after a
 * failure, so that none is left behind. */
static cudaError_t copy_from(const struct fe_side *dst,
                             const struct fe_side *src,
                             const struct fe_box *box, int async,
                             uint64_t stream)
{
    struct gvs_client *cl;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    struct cut cut = cut_box(box);
    struct gvs_buf *req = gvs_buf_new(128);
    struct gvs_buf *rep = gvs_buf_new(GVS_BULK_CHUNK + 64);
    if (req == NULL || rep == NULL) {
        gvs_buf_free(req);
        gvs_buf_free(rep);
        return cudaErrorMemoryAllocation;
    }
    uint64_t ids[FROM_WINDOW];
    uint64_t sent = 0, done = 0;
    int rc = 0;
    while (done < sent || (sent < cut.n && rc == 0)) {
        gvs_client_lock(cl);
        while (rc == 0 && sent < cut.n && sent - done < FROM_WINDOW) {
            struct piece p = piece_at(box, &cut, sent);
            rc = from_send(cl, req, src, &p, async, stream,
                           &ids[sent % FROM_WINDOW]);
            if (rc == 0)
                sent++;
        }
        gvs_client_unlock(cl);
        if (done == sent)
            break;
        int wrc = gvs_client_wait(cl, ids[done % FROM_WINDOW], rep);
        if (wrc == 0) {
            struct piece p = piece_at(box, &cut, done);
            cudaError_t pe = from_take(rep, dst, &p);
            if (e == cudaSuccess)
                e = pe;
        } else if (rc == 0) {
            rc = wrc;
        }
        done++;
    }
    if (rc == GVS_E_NOMEM)
        e = cudaErrorMemoryAllocation;
    else if (rc < 0)
        e = fe_transport_error(rc);
    gvs_buf_free(req);
    gvs_buf_free(rep);
    return e;
}

/* Device and array on both sides: one request. */
static cudaError_t copy_dev(const struct fe_side *dst,
                            const struct fe_side *src,
                            const struct fe_box *box, int async,
                            uint64_t stream)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    fe_put_side(&c, dst);
    fe_put_side(&c, src);
    fe_put_box(&c, box);
    apigen_put_u8(&c, (uint8_t)async);
    apigen_put_u64(&c, stream);
    e = cudart_fe_run(&c, CUDART_OP_MEMCPY3D_DEV, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

static cudaError_t copy_host(const struct fe_side *dst,
                             const struct fe_side *src,
                             const struct fe_box *box)
{
    struct piece p = {0, 0, 0, *box};
    for (uint64_t z = 0; z < box->d; z++)
        for (uint64_t y = 0; y < box->h; y++)
            memmove(host_row(dst, &p, y, z), host_row(src, &p, y, z), box->w);
    return cudaSuccess;
}

/* Pitches must hold a row and, for several slices, slices must hold
 * their rows; the box's bytes, and every address the rows reach, must be
 * representable. */
static cudaError_t check_side(const struct fe_side *s, const struct fe_box *b)
{
    uint64_t span, end;
    if (s->kind == FE_SIDE_ARRAY)
        return cudaSuccess;
    if ((b->h > 1 || b->d > 1) && s->pitch < b->w)
        return cudaErrorInvalidPitchValue;
    if (b->d > 1 && s->ysize < b->h)
        return cudaErrorInvalidValue;
    if (__builtin_mul_overflow(s->z + b->d - 1, s->ysize, &span) ||
        __builtin_add_overflow(span, s->y + b->h - 1, &span) ||
        __builtin_mul_overflow(span, s->pitch, &span) ||
        __builtin_add_overflow(span, s->x + b->w, &end) ||
        __builtin_add_overflow(end, s->addr, &end))
        return cudaErrorInvalidValue;
    return s->kind == FE_SIDE_HOST && s->addr == 0 ? cudaErrorInvalidValue
                                                  : cudaSuccess;
}

cudaError_t fe_copy3d(const struct fe_side *dst, const struct fe_side *src,
                      const struct fe_box *box, int async, uint64_t stream)
{
    struct gvs_client *cl;
    uint64_t bytes;
    cudaError_t e = fe_client(&cl);
    if (e != cudaSuccess)
        return e;
    if (box->w == 0 || box->h == 0 || box->d == 0)
        return cudaSuccess;
    if (__builtin_mul_overflow(box->w, box->h, &bytes) ||
        __builtin_mul_overflow(bytes, box->d, &bytes))
        return cudaErrorInvalidValue;
    e = check_side(dst, box);
    if (e == cudaSuccess)
        e = check_side(src, box);
    if (e != cudaSuccess)
        return e;
    int dh = dst->kind == FE_SIDE_HOST, sh = src->kind == FE_SIDE_HOST;
    if (dh && sh)
        return copy_host(dst, src, box);
    if (sh)
        return copy_to(dst, src, box, async, stream);
    if (dh)
        return copy_from(dst, src, box, async, stream);
    return copy_dev(dst, src, box, async, stream);
}
