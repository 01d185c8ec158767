/* Managed memory (cuda.api, docs/driver.md "Managed memory"):
 * cuMemAllocManaged and __managed__ variables (cuLibraryGetManaged,
 * modules.c) are shadowed in the client by the layer (gvs_remote.h, as
 * the runtime frontend's are); here are the driver's ops that move their
 * bytes, pushes before every device request (MANAGED_PUSH) and pulls
 * after a synchronization (MEMCPY_D2H), and the hints, prefetches and
 * range attributes, which the backend's driver answers. */
#include "call.h"

#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"
#include "gvs_remote.h"

/* MEMCPY_D2H: u64 stream 0, u8 4 (any context: NVIDIA's runtime finds
 * its __managed__ variables before it makes its context), u64 src, u64
 * pitch, u64 width, u64 1 row. */
static int pull_request(struct gvs_buf *req, uint64_t src, size_t n)
{
    int rc = gvs_buf_put_u64(req, 0);
    if (rc == 0)
        rc = gvs_buf_put_u8(req, 4);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, src);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, n);
    if (rc == 0)
        rc = gvs_buf_put_u64(req, n);
    return rc == 0 ? gvs_buf_put_u64(req, 1) : rc;
}

static const struct gvs_remote_managed_io io = {
    .api = &cuda_fe_remote_api,
    .push_op = CUDA_OP_MANAGED_PUSH,
    .pull_op = CUDA_OP_MEMCPY_D2H,
    .pull_request = pull_request,
};

int cuda_fe_managed_push_locked(struct gvs_client *cl)
{
    return gvs_remote_managed_push_locked(&io, cl);
}

CUresult cuda_fe_managed_synced(uint16_t op)
{
    if (!gvs_remote_managed_any())
        return CUDA_SUCCESS;
    switch (op) {
    case CUDA_OP_CTX_SYNCHRONIZE:
    case CUDA_OP_cuStreamSynchronize:
    case CUDA_OP_cuStreamQuery:
    case CUDA_OP_cuEventSynchronize:
    case CUDA_OP_cuEventQuery:
        return (CUresult)gvs_remote_managed_pull(&io, -1);
    default:
        return CUDA_SUCCESS;
    }
}

CUresult cuda_fe_managed_shadow(uint64_t p, uint64_t size, CUdevice dev)
{
    int slot = gvs_remote_managed_add(p, p + size);
    if (slot < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = (CUresult)gvs_remote_managed_pull(&io, slot);
    if (r != CUDA_SUCCESS) {
        gvs_remote_managed_forget(p);
        return r;
    }
    cuda_fe_mem_note(p, size, dev);
    return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
                           unsigned int flags)
{
    struct apigen_call c;
    uint64_t p = 0;
    CUdevice dev;
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    if (r == CUDA_SUCCESS)
        r = cuda_fe_ctx_device(&dev);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, bytesize);
    apigen_put_u32(&c, flags);
    r = cuda_fe_run(&c, CUDA_OP_MEM_ALLOC_MANAGED, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &p);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS) {
        r = cuda_fe_managed_shadow(p, bytesize, dev);
        if (r != CUDA_SUCCESS)
            (void)cuMemFree_v2((CUdeviceptr)p);
    }
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)p;
    return r;
}

/* Hints and prefetches --------------------------------------------------- */

static CUresult begin(struct apigen_call *c)
{
    CUresult r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS && !cuda_fe_initialized())
        r = CUDA_ERROR_NOT_INITIALIZED;
    return r;
}

#define HINT_ADVISE 0
#define HINT_PREFETCH 1

/* cuMemAdvise (no stream, advice) or cuMemPrefetchAsync (stream,
 * flags): MEM_HINT. */
static CUresult hint(uint8_t kind, CUdeviceptr p, size_t count,
                     CUmem_advise advice, CUmemLocation loc,
                     unsigned int flags, uint64_t stream)
{
    struct apigen_call c;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, stream);
    apigen_put_u8(&c, 0);
    apigen_put_u64(&c, p);
    apigen_put_u64(&c, count);
    apigen_put_u8(&c, kind);
    apigen_put_i32(&c, advice);
    apigen_put_i32(&c, loc.type);
    apigen_put_i32(&c, loc.id);
    apigen_put_u32(&c, flags);
    r = cuda_fe_run(&c, CUDA_OP_MEM_HINT, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* The location a legacy call's device ordinal names: CU_DEVICE_CPU the
 * host. */
static CUmemLocation of_device(CUdevice dev)
{
    CUmemLocation l;
    memset(&l, 0, sizeof(l));
    l.type = dev == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST
                                  : CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = dev == CU_DEVICE_CPU ? 0 : dev;
    return l;
}

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                        CUmemLocation location)
{
    return hint(HINT_ADVISE, devPtr, count, advice, location, 0, 0);
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                     CUdevice device)
{
    return hint(HINT_ADVISE, devPtr, count, advice, of_device(device), 0, 0);
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                               CUmemLocation location, unsigned int flags,
                               CUstream hStream)
{
    return hint(HINT_PREFETCH, devPtr, count, (CUmem_advise)0, location,
                flags, cuda_fe_stream_wire(hStream, 0));
}

CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
                                    CUmemLocation location,
                                    unsigned int flags, CUstream hStream)
{
    return hint(HINT_PREFETCH, devPtr, count, (CUmem_advise)0, location,
                flags, cuda_fe_stream_wire(hStream, 1));
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count,
                            CUdevice dstDevice, CUstream hStream)
{
    return cuMemPrefetchAsync_v2(devPtr, count, of_device(dstDevice), 0,
                                 hStream);
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count,
                                 CUdevice dstDevice, CUstream hStream)
{
    return cuMemPrefetchAsync_v2_ptsz(devPtr, count, of_device(dstDevice), 0,
                                      hStream);
}

/* Range attributes ------------------------------------------------------- */

/* The most bytes one attribute takes on the wire (the backend's
 * bound). */
#define RANGE_ATTR_MAX 1024u

CUresult cuMemRangeGetAttribute(void *data, size_t dataSize,
                                CUmem_range_attribute attribute,
                                CUdeviceptr devPtr, size_t count)
{
    struct apigen_call c;
    const uint8_t *bytes = NULL;
    size_t got = 0;
    if (data == NULL || dataSize == 0 || dataSize > RANGE_ATTR_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, dataSize);
    apigen_put_i32(&c, attribute);
    apigen_put_u64(&c, devPtr);
    apigen_put_u64(&c, count);
    r = cuda_fe_run(&c, CUDA_OP_MEM_RANGE_ATTRIBUTE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_blob(&c, &bytes, &got);
    if (r == CUDA_SUCCESS && c.rc == 0 && got != dataSize)
        c.rc = GVS_E_PROTO;
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        memcpy(data, bytes, dataSize);
    return r;
}

/* One round trip per attribute, the first failure the answer. */
CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes,
                                 CUmem_range_attribute *attributes,
                                 size_t numAttributes, CUdeviceptr devPtr,
                                 size_t count)
{
    if (numAttributes == 0 ||
        (data == NULL || dataSizes == NULL || attributes == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numAttributes; i++) {
        CUresult r = cuMemRangeGetAttribute(data[i], dataSizes[i],
                                            attributes[i], devPtr, count);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}
