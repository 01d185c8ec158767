/* Pointer attributes (cuda.api, POINTER_ATTRS): everything the driver
 * says of a pointer, in one round trip the client caches per
 * allocation.  The driver writes each attribute in its own width (a
 * bool, an int, a pointer), which no header states: each is asked twice,
 * into bytes of 0x00 and of 0xff, and the bytes it wrote are those that
 * changed in either. */
#include "be.h"

#include <string.h>

#include "apigen_rt.h"
#include "cuda_ops.h"

/* The scalar attributes; P2P_TOKENS is a structure, not sent. */
static const CUpointer_attribute attrs[] = {
    CU_POINTER_ATTRIBUTE_CONTEXT,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
    CU_POINTER_ATTRIBUTE_HOST_POINTER,
    CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
    CU_POINTER_ATTRIBUTE_BUFFER_ID,
    CU_POINTER_ATTRIBUTE_IS_MANAGED,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    CU_POINTER_ATTRIBUTE_MAPPED,
    CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
    CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
    CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
    CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
    CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR,
    CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID,
    CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE,
};
#define NATTRS (sizeof(attrs) / sizeof(attrs[0]))

/* One attribute: its result, the bytes written and their value. */
static CUresult one(CUpointer_attribute a, CUdeviceptr p, uint8_t *size,
                    uint64_t *value)
{
    uint8_t lo[8], hi[8];
    memset(lo, 0, sizeof(lo));
    memset(hi, 0xff, sizeof(hi));
    CUresult r = CUDA_DRV(cuPointerGetAttribute)(lo, a, p);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuPointerGetAttribute)(hi, a, p);
    *size = 0;
    *value = 0;
    if (r != CUDA_SUCCESS)
        return r;
    for (uint8_t i = 0; i < 8; i++)
        if (lo[i] != 0 || hi[i] != 0xff)
            *size = (uint8_t)(i + 1);
    memcpy(value, lo, *size);
    return CUDA_SUCCESS;
}

/* Request: u64 pointer.  Reply: i32, u32 count, the attributes. */
int cuda_be_pointer_attrs(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p;
    unsigned int type = 0;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuPointerGetAttribute)(
            &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
    apigen_put_i32(&c, r);
    if (r != CUDA_SUCCESS)
        return c.rc;
    apigen_put_u32(&c, NATTRS);
    for (size_t i = 0; i < NATTRS; i++) {
        uint8_t size;
        uint64_t v;
        CUresult ar = one(attrs[i], (CUdeviceptr)p, &size, &v);
        /* Handles are the session's ids: a context the session knows, a
         * pool (the layer's id of it). */
        if (ar == CUDA_SUCCESS && attrs[i] == CU_POINTER_ATTRIBUTE_CONTEXT)
            v = cuda_be_ctx_id_of((CUcontext)(uintptr_t)v);
        if (ar == CUDA_SUCCESS &&
            attrs[i] == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE && v != 0 &&
            cuda_be_remote->handle_intern(GVS_RH_MEMPOOL,
                                          (void *)(uintptr_t)v, &v) < 0)
            v = 0;
        apigen_put_u32(&c, (uint32_t)attrs[i]);
        apigen_put_i32(&c, ar);
        apigen_put_u8(&c, size);
        apigen_put_u64(&c, v);
    }
    return c.rc;
}
