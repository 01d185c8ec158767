#include <stdlib.h>
#include <string.h>

#include "gpus.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "reasons.h"
#include "stats.h"
#include "status.h"

/* Bytes of a listed session: the fixed fields and the identity's. */
#define SESSION_FIXED (4u + 4u + 4u + 6u * 8u)

static int put_gpus(struct gvs_buf *out)
{
    struct gvsd_gpu *gpus = gvs_calloc(GVSD_GPUS_MAX, sizeof(*gpus));
    char why[256] = "";
    if (gpus == NULL)
        return GVS_E_NOMEM;
    int n = gvsd_gpus_query(gpus, GVSD_GPUS_MAX, why, sizeof(why));
    int rc = gvs_buf_put_i32(out, n < 0 ? n : 0);
    if (rc == 0)
        rc = gvs_buf_put_str(out, why);
    if (rc == 0)
        rc = gvs_buf_put_u32(out, n < 0 ? 0 : (uint32_t)n);
    for (int i = 0; rc == 0 && i < n; i++) {
        rc = gvs_buf_put_str(out, gpus[i].name);
        if (rc == 0)
            rc = gvs_buf_put_str(out, gpus[i].uuid);
        if (rc == 0)
            rc = gvs_buf_put_u64(out, gpus[i].memory_total);
        if (rc == 0)
            rc = gvs_buf_put_u64(out, gpus[i].memory_used);
    }
    gvs_free(gpus);
    return rc;
}

static int put_session(struct gvs_buf *out, const struct gvsd_stats_view *v)
{
    int rc = gvs_buf_put_u32(out, v->session);
    if (rc == 0)
        rc = gvs_buf_put_u32(out, v->pid);
    if (rc == 0)
        rc = gvs_buf_put_str(out, v->identity);
    uint64_t vals[] = {v->uptime_ns / 1000000u, v->memory_used,
                       v->memory_quota,         v->calls,
                       v->bytes_in,             v->bytes_out};
    for (size_t i = 0; rc == 0 && i < sizeof(vals) / sizeof(vals[0]); i++)
        rc = gvs_buf_put_u64(out, vals[i]);
    return rc;
}

/* The part of an identity that names a tenant: a whole token identity,
 * the "uid=U" of a local peer; *len 0 when it names none (a tcp peer). */
static size_t tenant_key(const char *identity)
{
    if (strncmp(identity, "token ", 6) == 0)
        return strlen(identity);
    if (strncmp(identity, "uid=", 4) == 0)
        return strcspn(identity, " ");
    return 0;
}

static int same_tenant(const char *viewer, const char *identity)
{
    size_t n = tenant_key(viewer);
    return n > 0 && n == tenant_key(identity) &&
           memcmp(viewer, identity, n) == 0;
}

/* Keeps the snapshot's entries the viewer may see; returns how many. */
static int visible(struct gvsd_stats_view *v, int n, const char *viewer)
{
    if (viewer == NULL)
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (same_tenant(viewer, v[i].identity))
            v[kept++] = v[i];
    return kept;
}

/* What the counts by reason take at most: each of some 30 labels of up
 * to 24 characters, with its length and count. */
#define REASONS_ROOM 2048u

/* As many sessions as out has room for are listed; all are counted. */
static int put_sessions(struct gvs_buf *out, const char *viewer)
{
    int max = gvsd_stats_slots();
    struct gvsd_stats_view *v = gvs_calloc(max > 0 ? (size_t)max : 1,
                                           sizeof(*v));
    if (v == NULL)
        return GVS_E_NOMEM;
    int n = visible(v, gvsd_stats_snapshot(v, max), viewer);
    size_t room = gvs_buf_max(out) - gvs_buf_len(out);
    /* The two counts, then the reasons' section after the list. */
    room = room > 8 + REASONS_ROOM ? room - 8 - REASONS_ROOM : 0;
    int listed = 0;
    for (; listed < n; listed++) {
        size_t need = SESSION_FIXED + strlen(v[listed].identity);
        if (need > room)
            break;
        room -= need;
    }
    int rc = gvs_buf_put_u32(out, (uint32_t)n);
    if (rc == 0)
        rc = gvs_buf_put_u32(out, (uint32_t)listed);
    for (int i = 0; rc == 0 && i < listed; i++)
        rc = put_session(out, &v[i]);
    gvs_free(v);
    return rc;
}

/* n (label, count) pairs of a reasons.h set. */
static int put_counts(struct gvs_buf *out, int n,
                      const unsigned long long *counts,
                      const char *(*label)(int))
{
    int rc = gvs_buf_put_u32(out, (uint32_t)n);
    for (int i = 0; rc == 0 && i < n; i++) {
        rc = gvs_buf_put_str(out, label(i));
        if (rc == 0)
            rc = gvs_buf_put_u64(out, counts[i]);
    }
    return rc;
}

static const char *refusal_label(int i)
{
    return gvsd_refusal_label((enum gvsd_refusal)i);
}

static const char *end_label(int i)
{
    return gvsd_end_label((enum gvsd_end)i);
}

static int put_reasons(struct gvs_buf *out)
{
    unsigned long long refused[GVSD_REFUSALS_N], ended[GVSD_ENDS_N];
    gvsd_refusal_counts(refused);
    gvsd_end_counts(ended);
    int rc = put_counts(out, GVSD_REFUSALS_N, refused, refusal_label);
    return rc == 0 ? put_counts(out, GVSD_ENDS_N, ended, end_label) : rc;
}

int gvsd_status_encode(struct gvs_buf *out, const char *viewer)
{
    /* The workers' CUDA reads the devices gvsd narrowed (devices.h). */
    const char *devices = getenv("CUDA_VISIBLE_DEVICES");
    gvs_buf_reset(out);
    int rc = gvs_buf_put_u32(out, GVSD_STATUS_FORMAT);
    if (rc == 0)
        rc = gvs_buf_put_str(out, GVS_VERSION);
    if (rc == 0)
        rc = gvs_buf_put_u32(out, GVS_PROTO_VERSION);
    if (rc == 0)
        rc = gvs_buf_put_u64(out, gvsd_stats_uptime_ns() / 1000000u);
    if (rc == 0)
        rc = gvs_buf_put_u32(out, (uint32_t)gvsd_stats_max_sessions());
    if (rc == 0)
        rc = gvs_buf_put_str(out, devices != NULL ? devices : "");
    if (rc == 0)
        rc = put_gpus(out);
    if (rc == 0)
        rc = put_sessions(out, viewer);
    if (rc == 0)
        rc = put_reasons(out);
    return rc == GVS_E_TOOBIG ? GVS_E_NOMEM : rc;
}
