/* Stream memory operations (cuda.api, STREAM_MEMOP): the driver's own
 * calls, the form the program called, on operations whose addresses are
 * checked first to be device memory or the device mapping of host memory
 * the client shared: never an address of the worker's own. */
#include "be.h"

#include "apigen_rt.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* The bytes a wait or write reaches, 0 for an operation of no address. */
static uint64_t reach(CUstreamBatchMemOpType type)
{
    switch (type) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        return 4;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        return 8;
    default:
        return 0;
    }
}

int cuda_be_get_memops(struct apigen_call *c, CUstreamBatchMemOpParams **ops,
                       uint32_t *count)
{
    *ops = NULL;
    apigen_get_u32(c, count);
    if (c->rc == 0 && *count > CUDA_BE_MEMOPS_MAX)
        c->rc = GVS_E_RANGE;
    if (c->rc == 0 && (*ops = gvs_calloc(*count + 1, sizeof(**ops))) == NULL)
        c->rc = GVS_E_NOMEM;
    for (uint32_t i = 0; c->rc == 0 && i < *count; i++) {
        CUstreamBatchMemOpParams *op = &(*ops)[i];
        uint32_t type, flags;
        uint64_t addr, value;
        apigen_get_u32(c, &type);
        apigen_get_u32(c, &flags);
        apigen_get_u64(c, &addr);
        apigen_get_u64(c, &value);
        op->operation = (CUstreamBatchMemOpType)type;
        uint64_t len = reach(op->operation);
        /* The frontend sends a 32-bit value as such, and no address or
         * value where the operation has none. */
        if (c->rc == 0 && ((len == 4 && value > UINT32_MAX) ||
                           (len == 0 && (addr != 0 || value != 0))))
            c->rc = GVS_E_RANGE;
        if (len == 0) {
            /* A barrier's and a flush's flags lie at the same place. */
            op->memoryBarrier.flags = flags;
            continue;
        }
        /* So do a wait's and a write's fields. */
        op->waitValue.address = (CUdeviceptr)addr;
        op->waitValue.flags = flags;
        if (len == 8)
            op->waitValue.value64 = value;
        else
            op->waitValue.value = (cuuint32_t)value;
    }
    if (c->rc < 0) {
        gvs_free(*ops);
        *ops = NULL;
    }
    return c->rc;
}

CUresult cuda_be_check_memops(const CUstreamBatchMemOpParams *ops,
                              uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        CUstreamBatchMemOpType type = ops[i].operation;
        uint64_t len = reach(type), addr = ops[i].waitValue.address;
        /* A type this driver's header does not know may have an address
         * where none is checked. */
        if (len == 0 && type != CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES &&
            type != CU_STREAM_MEM_OP_BARRIER)
            return CUDA_ERROR_INVALID_VALUE;
        if (len != 0 && !cuda_be_remote->shared_device_has(addr, len) &&
            cuda_be_check_device_range(addr, len) != CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* One wait or write through the call the program made. */
static CUresult single(CUstream s, int legacy,
                       const CUstreamBatchMemOpParams *op)
{
    const CUdeviceptr a = op->waitValue.address;
    const unsigned int f = op->waitValue.flags;
    switch (op->operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        return (legacy ? CUDA_DRV(cuStreamWaitValue32)
                       : CUDA_DRV(cuStreamWaitValue32_v2))(
            s, a, op->waitValue.value, f);
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        return (legacy ? CUDA_DRV(cuStreamWriteValue32)
                       : CUDA_DRV(cuStreamWriteValue32_v2))(
            s, a, op->writeValue.value, f);
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        return (legacy ? CUDA_DRV(cuStreamWaitValue64)
                       : CUDA_DRV(cuStreamWaitValue64_v2))(
            s, a, op->waitValue.value64, f);
    default:
        return (legacy ? CUDA_DRV(cuStreamWriteValue64)
                       : CUDA_DRV(cuStreamWriteValue64_v2))(
            s, a, op->writeValue.value64, f);
    }
}

/* Request: u64 stream, u8 0, u8 legacy, u8 single, u32 flags, the
 * operations.  Reply: i32; a posted one's failure is the lane's next
 * synchronizing call's. */
int cuda_be_stream_memop(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUstream s = NULL;
    CUstreamBatchMemOpParams *ops = NULL;
    uint8_t zero = 0, legacy = 0, one = 0;
    uint32_t flags = 0, count = 0;
    CUresult r = cuda_be_enter_stream(call, &c, &s, &zero);
    apigen_get_u8(&c, &legacy);
    apigen_get_u8(&c, &one);
    apigen_get_u32(&c, &flags);
    if (c.rc == 0)
        (void)cuda_be_get_memops(&c, &ops, &count);
    /* A single operation is a wait or a write, its flags its own. */
    if (apigen_end(&c) == 0 &&
        (zero > 1 || legacy > 1 || one > 1 ||
         (one && (count != 1 || flags != 0 || reach(ops[0].operation) == 0))))
        c.rc = GVS_E_PROTO;
    if (c.rc < 0) {
        gvs_free(ops);
        return c.rc;
    }
    if (r == CUDA_SUCCESS)
        r = cuda_be_check_memops(ops, count);
    if (r == CUDA_SUCCESS && one)
        r = single(s, legacy, &ops[0]);
    else if (r == CUDA_SUCCESS)
        r = (legacy ? CUDA_DRV(cuStreamBatchMemOp)
                    : CUDA_DRV(cuStreamBatchMemOp_v2))(s, count, ops, flags);
    gvs_free(ops);
    if (call->noreply && r != CUDA_SUCCESS)
        cuda_be_posted_failure(call, (int)r);
    apigen_put_i32(&c, r);
    return c.rc;
}
