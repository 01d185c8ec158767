/* Arrays and mipmapped arrays (cuda.api, ARRAY_*): ids of the session's
 * table, kept by the layer for both APIs (remote_be.h, "Arrays"), so
 * that an array the runtime made is one here.  Each counts against the
 * session's quota. */
#include "be.h"

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "remote_box.h"

CUresult cuda_be_array(uint64_t wire, CUarray *out)
{
    *out = cuda_be_remote->array_get(GVS_RH_ARRAY, wire, NULL);
    return *out != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuda_be_mipmap(uint64_t wire, CUmipmappedArray *out)
{
    *out = cuda_be_remote->array_get(GVS_RH_MIPMAPPED_ARRAY, wire, NULL);
    return *out != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Bytes of one channel of a format; 16, more than any element of one
 * channel holds, for the formats that are not a channel a value
 * (block-compressed, planar video): the quota's bound only. */
static uint64_t channel_bytes(uint32_t format)
{
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4;
    default:
        return 16;
    }
}

/* What the driver says the array (mipmapped: m) holds on the lane's
 * device, where it says; else bound. */
static uint64_t array_bytes(CUarray a, CUmipmappedArray m, int dev,
                            uint64_t bound)
{
    CUDA_ARRAY_MEMORY_REQUIREMENTS r;
    CUresult e =
        a != NULL ? CUDA_DRV(cuArrayGetMemoryRequirements)(&r, a, dev)
                  : CUDA_DRV(cuMipmappedArrayGetMemoryRequirements)(&r, m,
                                                                   dev);
    return e == CUDA_SUCCESS && r.size > 0 ? r.size : bound;
}

/* The driver's call for which: 0 cuArrayCreate, 1 cuArray3DCreate, 2
 * cuMipmappedArrayCreate; *handle the new object. */
static CUresult create(uint8_t which, const CUDA_ARRAY3D_DESCRIPTOR *d,
                       uint32_t levels, void **handle)
{
    if (which == 0) {
        CUDA_ARRAY_DESCRIPTOR d2 = {d->Width, d->Height, d->Format,
                                    d->NumChannels};
        return CUDA_DRV(cuArrayCreate_v2)((CUarray *)handle, &d2);
    }
    if (which == 1)
        return CUDA_DRV(cuArray3DCreate_v2)((CUarray *)handle, d);
    return CUDA_DRV(cuMipmappedArrayCreate)((CUmipmappedArray *)handle, d,
                                            levels);
}

static CUresult destroy(uint16_t type, void *handle)
{
    return type == GVS_RH_ARRAY
               ? CUDA_DRV(cuArrayDestroy)(handle)
               : CUDA_DRV(cuMipmappedArrayDestroy)(handle);
}

/* Request: u8 which, u64 width, height, depth, u32 format, u32 channels,
 * u32 flags, u32 levels.  Reply: i32, u64 id. */
int cuda_be_array_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    uint64_t w, h, dp;
    uint32_t format, channels, flags, levels;
    apigen_get_u8(&c, &which);
    apigen_get_u64(&c, &w);
    apigen_get_u64(&c, &h);
    apigen_get_u64(&c, &dp);
    apigen_get_u32(&c, &format);
    apigen_get_u32(&c, &channels);
    apigen_get_u32(&c, &flags);
    apigen_get_u32(&c, &levels);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 2)
        return GVS_E_PROTO;
    CUDA_ARRAY3D_DESCRIPTOR d = {(size_t)w, (size_t)h, (size_t)dp,
                                 (CUarray_format)format, channels, flags};
    uint16_t type = which == 2 ? GVS_RH_MIPMAPPED_ARRAY : GVS_RH_ARRAY;
    enum gvs_remote_quota_kind kind =
        which == 2 ? GVS_RQ_MIPMAP : GVS_RQ_ARRAY;
    uint64_t elem = channels <= 4 ? channel_bytes(format) * channels : 0;
    uint64_t bound = gvs_remote_array_bound(elem, w, h, which ? dp : 0,
                                            which == 2 ? levels : 1);
    uint64_t id = 0;
    void *handle = NULL;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && (elem == 0 || bound == UINT64_MAX))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && cuda_be_remote->quota_take(bound) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_SUCCESS) {
        uint64_t bytes = 0;
        int dev = cuda_be_quota_device();
        r = create(which, &d, levels, &handle);
        if (r == CUDA_SUCCESS) {
            bytes = array_bytes(which == 2 ? NULL : handle,
                                which == 2 ? handle : NULL, dev, bound);
            if (cuda_be_remote->array_add(type, handle, &id) < 0) {
                (void)destroy(type, handle);
                r = CUDA_ERROR_OUT_OF_MEMORY;
            }
        }
        cuda_be_remote->quota_settle(r == CUDA_SUCCESS, kind, id, dev, 0,
                                     bound, bytes);
    }
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u8 which (0 array, 1 mipmapped array), u64 id.  Reply: i32.
 * A level or plane goes with its parent alone. */
int cuda_be_array_destroy(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    uint64_t id;
    int sub = 0;
    apigen_get_u8(&c, &which);
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 1)
        return GVS_E_PROTO;
    uint16_t type = which ? GVS_RH_MIPMAPPED_ARRAY : GVS_RH_ARRAY;
    CUresult r = cuda_be_enter(call);
    void *handle = cuda_be_remote->array_get(type, id, &sub);
    if (r == CUDA_SUCCESS && (handle == NULL || sub))
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = destroy(type, handle);
    if (r == CUDA_SUCCESS && cuda_be_remote->array_remove(type, id) == 0)
        cuda_be_remote->quota_release(which ? GVS_RQ_MIPMAP : GVS_RQ_ARRAY,
                                      id);
    apigen_put_i32(&c, r);
    return c.rc;
}

static int32_t get_level(void *parent, uint32_t level, void **sub)
{
    return CUDA_DRV(cuMipmappedArrayGetLevel)((CUarray *)sub, parent, level);
}

static int32_t get_plane(void *parent, uint32_t plane, void **sub)
{
    return CUDA_DRV(cuArrayGetPlane)((CUarray *)sub, parent, plane);
}

/* Request: u8 which (0 level, 1 plane), u64 parent id, u32 key.  Reply:
 * i32, u64 id. */
int cuda_be_array_sub(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t which;
    uint64_t parent, id = 0;
    uint32_t key;
    apigen_get_u8(&c, &which);
    apigen_get_u64(&c, &parent);
    apigen_get_u32(&c, &key);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (which > 1)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = (CUresult)cuda_be_remote->array_sub(
            which ? GVS_RH_ARRAY : GVS_RH_MIPMAPPED_ARRAY, parent, key,
            which ? get_plane : get_level, CUDA_ERROR_INVALID_HANDLE,
            CUDA_ERROR_OUT_OF_MEMORY, &id);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}
