/* Stream memory operations (cuda.api, STREAM_MEMOP; docs/driver.md
 * "Stream memory operations"): waits on and writes of 32- and 64-bit
 * values, alone or in a batch, which the backend's driver enqueues as
 * the program called them (the unsuffixed forms of CUDA 8 are the
 * driver's own functions still).  Posted where the layer's tables prove
 * they cannot fail; else a round trip, whose answer is the driver's. */
#include "call.h"

#include <string.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs_remote.h"

static int wide(CUstreamBatchMemOpType type)
{
    return type == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
           type == CU_STREAM_MEM_OP_WRITE_VALUE_64;
}

static void put_op(struct apigen_call *c, const CUstreamBatchMemOpParams *op)
{
    uint32_t flags = 0;
    uint64_t addr = 0, value = 0;
    switch (op->operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        /* A wait's and a write's fields lie at the same places. */
        flags = op->waitValue.flags;
        addr = op->waitValue.address;
        value = wide(op->operation) ? op->waitValue.value64
                                    : op->waitValue.value;
        break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
    case CU_STREAM_MEM_OP_BARRIER:
        /* So do a flush's and a barrier's flags. */
        flags = op->memoryBarrier.flags;
        break;
    default:
        /* A type the driver does not know: the backend answers it. */
        break;
    }
    apigen_put_u32(c, (uint32_t)op->operation);
    apigen_put_u32(c, flags);
    apigen_put_u64(c, addr);
    apigen_put_u64(c, value);
}

CUresult cuda_fe_put_memops(struct apigen_call *c, unsigned int count,
                            const CUstreamBatchMemOpParams *ops)
{
    if (count > CUDA_FE_MEMOPS_MAX || (count > 0 && ops == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    apigen_put_u32(c, count);
    for (unsigned int i = 0; i < count; i++)
        put_op(c, &ops[i]);
    return CUDA_SUCCESS;
}

void cuda_fe_get_memops(struct apigen_call *c, CUstreamBatchMemOpParams *ops,
                        unsigned int max, unsigned int *count)
{
    uint32_t n = 0;
    apigen_get_u32(c, &n);
    if (c->rc == 0 && n > max)
        c->rc = GVS_E_PROTO;
    for (uint32_t i = 0; c->rc == 0 && i < n; i++) {
        uint32_t type = 0, flags = 0;
        uint64_t addr = 0, value = 0;
        apigen_get_u32(c, &type);
        apigen_get_u32(c, &flags);
        apigen_get_u64(c, &addr);
        apigen_get_u64(c, &value);
        CUstreamBatchMemOpParams *op = &ops[i];
        memset(op, 0, sizeof(*op));
        op->operation = (CUstreamBatchMemOpType)type;
        if (type == CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES ||
            type == CU_STREAM_MEM_OP_BARRIER) {
            op->memoryBarrier.flags = flags;
            continue;
        }
        /* A wait's and a write's fields lie at the same places. */
        op->waitValue.address = addr;
        op->waitValue.flags = flags;
        if (wide(op->operation))
            op->waitValue.value64 = value;
        else
            op->waitValue.value = (cuuint32_t)value;
    }
    *count = n;
}

/* Whether dev says it has attribute attr, as the layer's table knows it
 * (a device's attributes are the backend's answers, asked once). */
static int has(CUdevice dev, CUdevice_attribute attr)
{
    int v = 0;
    return gvs_remote_device_attr(dev, attr, &v) && v != 0;
}

/* A wait or a write that cannot fail on a stream of dev: flags every
 * device takes or that dev is known to take, an address aligned to its
 * value in one allocation of dev. */
static int cannot_fail(const CUstreamBatchMemOpParams *op, CUdevice dev)
{
    CUdevice mdev;
    uint64_t len = 4;
    switch (op->operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        len = 8;
        if (!has(dev, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
            return 0;
        /* fall through */
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        if (op->waitValue.flags > CU_STREAM_WAIT_VALUE_AND &&
            !(op->waitValue.flags == CU_STREAM_WAIT_VALUE_NOR &&
              has(dev, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR)))
            return 0;
        break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        len = 8;
        if (!has(dev, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
            return 0;
        /* fall through */
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        /* Not NO_MEMORY_BARRIER: driver 580 refuses it on an H200
         * (gpu.stream_memops). */
        if (op->writeValue.flags != CU_STREAM_WRITE_VALUE_DEFAULT)
            return 0;
        break;
    default:
        return 0;
    }
    uint64_t addr = op->waitValue.address;
    return addr % len == 0 && cuda_fe_mem_device_of(addr, len, &mdev) &&
           mdev == dev;
}

/* The current forms alone (the legacy ones answer as their own device
 * attributes say), fewer operations than the driver's bound (256), on a
 * stream the layer knows, no capture under way.  No operation takes
 * managed memory, which the allocation table does not tell from device
 * memory: none is posted while the process has any. */
static int may_post(uint64_t stream, int legacy, unsigned int flags,
                    unsigned int count, const CUstreamBatchMemOpParams *ops)
{
    CUdevice dev;
    if (legacy || flags != 0 || count == 0 || count >= CUDA_FE_MEMOPS_MAX ||
        gvs_remote_capturing() || gvs_remote_managed_any() ||
        cuda_fe_stream_device(stream, &dev) != 0)
        return 0;
    for (unsigned int i = 0; i < count; i++)
        if (!cannot_fail(&ops[i], dev))
            return 0;
    return 1;
}

/* Request: header (u64 stream, u8 0), u8 legacy, u8 single, u32 flags,
 * the operations.  Reply: i32. */
static CUresult submit(uint64_t stream, int legacy, int single,
                       unsigned int flags, unsigned int count,
                       const CUstreamBatchMemOpParams *ops)
{
    struct apigen_call c;
    if (count > CUDA_FE_MEMOPS_MAX || (count > 0 && ops == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_copy_begin(&c, stream, 0);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)legacy);
    apigen_put_u8(&c, (uint8_t)single);
    apigen_put_u32(&c, flags);
    (void)cuda_fe_put_memops(&c, count, ops);
    if (may_post(stream, legacy, flags, count, ops))
        return cuda_fe_post(&c, CUDA_OP_STREAM_MEMOP, APIGEN_DEVICE);
    return cuda_fe_end(&c, cuda_fe_run(&c, CUDA_OP_STREAM_MEMOP,
                                       APIGEN_DEVICE));
}

static CUresult one(CUstream s, int per_thread, int legacy,
                    CUstreamBatchMemOpType type, CUdeviceptr addr,
                    cuuint64_t value, unsigned int flags)
{
    CUstreamBatchMemOpParams op;
    memset(&op, 0, sizeof(op));
    op.operation = type;
    op.waitValue.address = addr;
    op.waitValue.flags = flags;
    if (wide(type))
        op.waitValue.value64 = value;
    else
        op.waitValue.value = (cuuint32_t)value;
    return submit(cuda_fe_stream_wire(s, per_thread), legacy, 1, 0, 1, &op);
}

/* NAME (legacy: the unsuffixed form), NAME_ptsz, NAME_v2, NAME_v2_ptsz. */
#define MEMOP(name, type, vtype)                                             \
    CUresult name(CUstream s, CUdeviceptr a, vtype v, unsigned int f)        \
    {                                                                        \
        return one(s, 0, 1, type, a, v, f);                                  \
    }                                                                        \
    CUresult name##_ptsz(CUstream s, CUdeviceptr a, vtype v, unsigned int f) \
    {                                                                        \
        return one(s, 1, 1, type, a, v, f);                                  \
    }                                                                        \
    CUresult name##_v2(CUstream s, CUdeviceptr a, vtype v, unsigned int f)   \
    {                                                                        \
        return one(s, 0, 0, type, a, v, f);                                  \
    }                                                                        \
    CUresult name##_v2_ptsz(CUstream s, CUdeviceptr a, vtype v,              \
                            unsigned int f)                                  \
    {                                                                        \
        return one(s, 1, 0, type, a, v, f);                                  \
    }

MEMOP(cuStreamWaitValue32, CU_STREAM_MEM_OP_WAIT_VALUE_32, cuuint32_t)
MEMOP(cuStreamWriteValue32, CU_STREAM_MEM_OP_WRITE_VALUE_32, cuuint32_t)
MEMOP(cuStreamWaitValue64, CU_STREAM_MEM_OP_WAIT_VALUE_64, cuuint64_t)
MEMOP(cuStreamWriteValue64, CU_STREAM_MEM_OP_WRITE_VALUE_64, cuuint64_t)

CUresult cuStreamBatchMemOp(CUstream s, unsigned int count,
                            CUstreamBatchMemOpParams *ops, unsigned int flags)
{
    return submit(cuda_fe_stream_wire(s, 0), 1, 0, flags, count, ops);
}

CUresult cuStreamBatchMemOp_ptsz(CUstream s, unsigned int count,
                                 CUstreamBatchMemOpParams *ops,
                                 unsigned int flags)
{
    return submit(cuda_fe_stream_wire(s, 1), 1, 0, flags, count, ops);
}

CUresult cuStreamBatchMemOp_v2(CUstream s, unsigned int count,
                               CUstreamBatchMemOpParams *ops,
                               unsigned int flags)
{
    return submit(cuda_fe_stream_wire(s, 0), 0, 0, flags, count, ops);
}

CUresult cuStreamBatchMemOp_v2_ptsz(CUstream s, unsigned int count,
                                    CUstreamBatchMemOpParams *ops,
                                    unsigned int flags)
{
    return submit(cuda_fe_stream_wire(s, 1), 0, 0, flags, count, ops);
}
