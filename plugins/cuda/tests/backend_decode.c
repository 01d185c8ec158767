/*
 * cuda.backend_decode: every handler of the driver backend takes its
 * request apart strictly and answers hostile values with a CUresult.
 * Loads the mock-driver gvs-cuda.so as gvsd does (cudart's
 * backend_harness.h) and, for each op of its table, runs
 *   - its valid request: CUDA_SUCCESS and exactly the outputs;
 *   - each truncation of it, and it plus a trailing byte: refused, a
 *     negative GVS_E_* code;
 *   - it with each bit flipped in turn: refused, or a reply (a CUresult,
 *     followed by the outputs only after CUDA_SUCCESS);
 *   - out-of-range values in each device argument (-1, the device count,
 *     INT32_MAX, INT32_MIN): CUDA_ERROR_INVALID_DEVICE;
 *   - the op's own hostile values (enums and flags out of range, bus ids
 *     too long or not one): the code listed, or any reply where the mock
 *     driver does not check the value (NVIDIA's does).
 * Each request lies in a heap block of exactly its length, so that the
 * ASan build (tools/ci-hardening.sh) catches a handler reading past it.
 * An op of the table without a case here fails the test: a new handler
 * gets its case.
 * usage: backend_decode MOCK-PLUGIN.so
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#include "backend_harness.h"
#include "cuda_ops.h"
#include "gvs/err.h"

/* The mock driver's devices (mock_driver.c). */
#define MOCK_DEVICES 2
/* The longest bus id DEVICE_GET_BY_PCI_BUS_ID takes (cuda.api). */
#define BUS_ID_MAX_LEN 63
/* The longest request here: a bus id far too long, in a blob. */
#define REQ_MAX (4 + 4096)

/* A request's arguments: the i32s of its ints, in order, and its blob. */
struct values {
    int32_t i[3];
    const char *s;
    size_t slen;
};

/* What a hostile request gets: a CUresult (>= 0), a refusal (a GVS_E_*
 * code), or ANY_REPLY, any CUresult. */
#define ANY_REPLY INT32_MIN

/* The values of a request of ints, and of one of a blob. */
#define INTS(...) {{__VA_ARGS__}, NULL, 0}
#define BLOB(s, len) {{0}, s, len}

struct hostile {
    struct values v;
    int32_t expect;
};

struct op_case {
    uint16_t op;
    /* The request, an argument a character: d, an i32 device; i, another
     * 4-byte integer; b, a blob. */
    const char *in;
    /* The outputs after CUDA_SUCCESS: i, 4 bytes; q, 8; U, a CUuuid; P, a
     * CUdevprop; n, a blob of a device name (at most 255 bytes); B, a
     * blob of a bus id (at most 63); none of the blobs holds a NUL. */
    const char *reply;
    struct values valid;
    const struct hostile *bad;
    size_t nbad;
};

#define BAD(list) list, sizeof(list) / sizeof(list[0])

static const struct hostile init_bad[] = {
    {INTS(1), CUDA_ERROR_INVALID_VALUE},
    {INTS(-1), CUDA_ERROR_INVALID_VALUE},
};
static const struct hostile attribute_bad[] = {
    {INTS(-1, 0), CUDA_ERROR_INVALID_VALUE},
    {INTS(0, 0), CUDA_ERROR_INVALID_VALUE},
    {INTS(CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE},
    {INTS(INT32_MAX, 0), CUDA_ERROR_INVALID_VALUE},
};
static const struct hostile p2p_bad[] = {
    {INTS(-1, 0, 1), ANY_REPLY},
    {INTS(INT32_MAX, 0, 1), ANY_REPLY},
    {INTS(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 1, 1),
     CUDA_ERROR_INVALID_DEVICE},
};
static const struct hostile tex1d_bad[] = {
    {INTS(0, 1, 0), CUDA_ERROR_INVALID_VALUE},
    {INTS(-1, 1, 0), ANY_REPLY},
    {INTS(CU_AD_FORMAT_FLOAT, 0, 0), CUDA_ERROR_INVALID_VALUE},
    {INTS(CU_AD_FORMAT_FLOAT, 5, 0), CUDA_ERROR_INVALID_VALUE},
    {INTS(CU_AD_FORMAT_FLOAT, -1, 0), CUDA_ERROR_INVALID_VALUE},
};
static const struct hostile affinity_bad[] = {
    {INTS(-1, 0), ANY_REPLY},
    {INTS(INT32_MAX, 0), ANY_REPLY},
};
/* Bus ids of 'x's (xs, filled by main) and ones that are not. */
static char xs[REQ_MAX - 4];
static const struct hostile by_bus_id_bad[] = {
    {BLOB("", 0), CUDA_ERROR_INVALID_VALUE},
    {BLOB("0000:ff:00.0", 12), CUDA_ERROR_INVALID_VALUE},
    {BLOB("0000:18:00.0\0junk", 17), ANY_REPLY},
    {BLOB(xs, BUS_ID_MAX_LEN), CUDA_ERROR_INVALID_VALUE},
    {BLOB(xs, BUS_ID_MAX_LEN + 1), GVS_E_RANGE},
    {BLOB(xs, sizeof(xs)), GVS_E_RANGE},
};

static const struct op_case cases[] = {
    {CUDA_OP_cuInit, "i", "", INTS(0), BAD(init_bad)},
    {CUDA_OP_cuDriverGetVersion, "", "i", INTS(0), NULL, 0},
    {CUDA_OP_cuDeviceGetCount, "", "i", INTS(0), NULL, 0},
    {CUDA_OP_cuDeviceGet, "d", "i", INTS(1), NULL, 0},
    {CUDA_OP_cuDeviceGetAttribute, "id", "i",
     INTS(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1), BAD(attribute_bad)},
    {CUDA_OP_cuDeviceGetUuid, "d", "U", INTS(1), NULL, 0},
    {CUDA_OP_cuDeviceGetUuid_v2, "d", "U", INTS(1), NULL, 0},
    {CUDA_OP_cuDeviceComputeCapability, "d", "ii", INTS(0), NULL, 0},
    {CUDA_OP_cuDeviceTotalMem_v2, "d", "q", INTS(1), NULL, 0},
    {CUDA_OP_DEVICE_GET_NAME, "d", "n", INTS(0), NULL, 0},
    {CUDA_OP_cuDeviceCanAccessPeer, "dd", "i", INTS(0, 1), NULL, 0},
    {CUDA_OP_cuDeviceGetP2PAttribute, "idd", "i",
     INTS(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 1), BAD(p2p_bad)},
    {CUDA_OP_cuDeviceGetProperties, "d", "P", INTS(1), NULL, 0},
    {CUDA_OP_cuDeviceGetTexture1DLinearMaxWidth, "iid", "q",
     INTS(CU_AD_FORMAT_FLOAT, 4, 1), BAD(tex1d_bad)},
    {CUDA_OP_cuDeviceGetExecAffinitySupport, "id", "i",
     INTS(CU_EXEC_AFFINITY_TYPE_SM_COUNT, 1), BAD(affinity_bad)},
    {CUDA_OP_DEVICE_GET_PCI_BUS_ID, "d", "B", INTS(1), NULL, 0},
    {CUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, "b", "i",
     BLOB("0000:19:00.0", 12), BAD(by_bus_id_bad)},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const int32_t bad_devices[] = {-1, MOCK_DEVICES, INT32_MAX,
                                      INT32_MIN};
#define NBAD_DEVICES (sizeof(bad_devices) / sizeof(bad_devices[0]))

static struct gvs_buf *out;

/* Runs op on the len bytes at req, copied to a block of exactly len
 * bytes; returns the handler's return. */
static int run(uint16_t op, const uint8_t *req, size_t len)
{
    uint8_t *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL)
        abort();
    memcpy(copy, req, len);
    struct gvs_buf *in = gvs_buf_view(copy, len);
    if (in == NULL)
        abort();
    int rc = call(op, in, out);
    gvs_buf_free(in);
    free(copy);
    return rc;
}

static size_t put_u32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++) /* little-endian, as on the wire */
        p[b] = (uint8_t)(v >> 8 * b);
    return 4;
}

/* The request of the case's shape on the values v, into req (REQ_MAX
 * bytes); its length. */
static size_t encode(const struct op_case *k, const struct values *v,
                     uint8_t *req)
{
    size_t len = 0;
    int n = 0;
    for (const char *a = k->in; *a != '\0'; a++)
        if (*a == 'b') {
            len += put_u32(req + len, (uint32_t)v->slen);
            memcpy(req + len, v->s, v->slen);
            len += v->slen;
        } else {
            len += put_u32(req + len, (uint32_t)v->i[n++]);
        }
    return len;
}

/* A refusal: a negative GVS_E_* code. */
static int refused(int rc)
{
    CHECK(rc < 0);
    CHECK(strcmp(gvs_errname(rc), "UNKNOWN") != 0);
    return 0;
}

/* A blob of at most max bytes, none of them a NUL. */
static int text(size_t max)
{
    const uint8_t *p;
    size_t len;
    CHECK(gvs_buf_get_blob(out, &p, &len) == 0);
    CHECK(len <= max && memchr(p, 0, len) == NULL);
    return 0;
}

/* The handler's return rc and its reply: a refusal (*result is then rc),
 * or 0 and a reply of a CUresult (*result), followed after CUDA_SUCCESS
 * by exactly the case's outputs. */
static int well_formed(const struct op_case *k, int rc, int32_t *result)
{
    *result = rc;
    if (rc != 0)
        return refused(rc);
    CHECK(gvs_buf_get_i32(out, result) == 0 && *result >= 0);
    for (const char *o = k->reply; *result == CUDA_SUCCESS && *o != '\0';
         o++) {
        uint8_t bytes[sizeof(CUdevprop)];
        switch (*o) {
        case 'i':
            CHECK(gvs_buf_get_bytes(out, bytes, 4) == 0);
            break;
        case 'q':
            CHECK(gvs_buf_get_bytes(out, bytes, 8) == 0);
            break;
        case 'U':
            CHECK(gvs_buf_get_bytes(out, bytes, sizeof(CUuuid)) == 0);
            break;
        case 'P':
            CHECK(gvs_buf_get_bytes(out, bytes, sizeof(CUdevprop)) == 0);
            break;
        case 'n':
            CHECK(text(255) == 0);
            break;
        default:
            CHECK(*o == 'B' && text(BUS_ID_MAX_LEN) == 0);
            break;
        }
    }
    CHECK(gvs_buf_expect_end(out) == 0);
    return 0;
}

/* The ops of contexts, memory, modules, launches, streams and events:
 * requests of u64 handles and addresses the mock driver mostly cannot
 * honour.  Each is refused when cut short or trailed, and any bit flip
 * gets a refusal or a CUresult, never a crash or a read past it (ASan).
 * The shape's characters: c u8, i 4 bytes, q u64, b a blob of 4 bytes,
 * R a CUDA_RESOURCE_DESC of an array whose handle is the value, T a
 * CUDA_TEXTURE_DESC of zeros. */
struct raw_case {
    uint16_t op;
    const char *in;
    uint64_t v[24];
    int posted; /* a piece that may be posted: no reply when it is not last */
};

#define H 0x10000u /* an id no table holds */
static const struct raw_case raw_cases[] = {
    {CUDA_OP_PRIMARY_CTX_RETAIN, "i", {0}, 0},
    {CUDA_OP_cuDevicePrimaryCtxRelease_v2, "i", {0}, 0},
    {CUDA_OP_cuDevicePrimaryCtxReset_v2, "i", {1}, 0},
    {CUDA_OP_cuDevicePrimaryCtxGetState, "i", {0}, 0},
    {CUDA_OP_cuDevicePrimaryCtxSetFlags_v2, "ii", {0, 0}, 0},
    {CUDA_OP_CTX_CREATE, "ii", {0, 1}, 0},
    {CUDA_OP_CTX_DESTROY, "q", {H}, 0},
    {CUDA_OP_CTX_SYNCHRONIZE, "q", {0}, 0},
    {CUDA_OP_cuCtxGetLimit, "i", {0}, 0},
    {CUDA_OP_cuCtxSetLimit, "iq", {0, 1024}, 0},
    {CUDA_OP_cuCtxGetStreamPriorityRange, "", {0}, 0},
    {CUDA_OP_cuCtxGetFlags, "", {0}, 0},
    {CUDA_OP_cuCtxSetFlags, "i", {0}, 0},
    {CUDA_OP_MEM_ALLOC, "q", {64}, 0},
    {CUDA_OP_MEM_FREE, "q", {H}, 0},
    {CUDA_OP_cuMemGetInfo_v2, "", {0}, 0},
    {CUDA_OP_MEMCPY_H2D, "qcqqqqb", {0, 2, H, 4, 4, 1}, 1},
    {CUDA_OP_MEMCPY_D2H, "qcqqqq", {0, 0, H, 4, 4, 1}, 0},
    {CUDA_OP_MEMCPY_D2D, "qcqqqqqq", {0, 0, H, 4, H, 4, 4, 1}, 0},
    {CUDA_OP_MEMSET, "qccqqiqq", {0, 0, 4, H, 4, 7, 1, 1}, 0},
    {CUDA_OP_LOAD, "ccib", {0, 0, 0}, 0},
    {CUDA_OP_UNLOAD, "cq", {0, H}, 0},
    {CUDA_OP_KERNEL_GET_FUNCTION, "q", {H}, 0},
    {CUDA_OP_GET_GLOBAL, "cqb", {1, H}, 0},
    {CUDA_OP_LAUNCH, "qiiiiiiiqcbi", {H, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 0}, 0},
    {CUDA_OP_FUNC_GET_ATTRIBUTE, "cqii", {1, H, 0, 0}, 0},
    {CUDA_OP_FUNC_SET_ATTRIBUTE, "cqiii", {0, H, 8, 0, 0}, 0},
    {CUDA_OP_STREAM_CREATE, "ii", {0, 0}, 0},
    {CUDA_OP_STREAM_DESTROY, "q", {H}, 0},
    {CUDA_OP_cuStreamSynchronize, "q", {0}, 0},
    {CUDA_OP_cuStreamQuery, "q", {H}, 0},
    {CUDA_OP_cuStreamWaitEvent, "qqi", {0, H, 0}, 0},
    {CUDA_OP_cuStreamGetPriority, "q", {0}, 0},
    {CUDA_OP_cuStreamGetFlags, "q", {0}, 0},
    {CUDA_OP_EVENT_CREATE, "i", {0}, 0},
    {CUDA_OP_EVENT_DESTROY, "q", {H}, 0},
    {CUDA_OP_cuEventRecord, "qq", {H, 0}, 0},
    {CUDA_OP_cuEventRecordWithFlags, "qqi", {H, 0, 0}, 0},
    {CUDA_OP_cuEventSynchronize, "q", {H}, 0},
    {CUDA_OP_cuEventQuery, "q", {H}, 0},
    {CUDA_OP_cuEventElapsedTime_v2, "qq", {H, H}, 0},
    {CUDA_OP_cuOccupancyMaxActiveBlocksPerMultiprocessor, "qiq", {H, 128, 0}, 0},
    {CUDA_OP_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, "qiqi",
     {H, 128, 0, 0}, 0},
    {CUDA_OP_cuOccupancyAvailableDynamicSMemPerBlock, "qii", {H, 1, 128}, 0},
    {CUDA_OP_cuStreamIsCapturing, "q", {0}, 0},
    {CUDA_OP_STREAM_CAPTURE_INFO, "q", {0}, 0},
    {CUDA_OP_POINTER_ATTRS, "q", {H}, 0},
    {CUDA_OP_cuCtxGetApiVersion, "q", {0}, 0},
    {CUDA_OP_cuCtxGetCacheConfig, "", {0}, 0},
    {CUDA_OP_cuCtxSetCacheConfig, "i", {1}, 0},
    {CUDA_OP_cuFuncSetCacheConfig, "qi", {H, 1}, 0},
    {CUDA_OP_cuKernelSetCacheConfig, "qii", {H, 1, 0}, 0},
    {CUDA_OP_MEM_ALLOC_PITCH, "qqi", {64, 4, 4}, 0},
    {CUDA_OP_STREAM_ATTRIBUTE, "cqi", {0, 0, 3}, 0},
    {CUDA_OP_cuFuncSetSharedMemConfig, "qi", {H, 0}, 0},
    {CUDA_OP_cuStreamCopyAttributes, "qq", {0, H}, 0},
    {CUDA_OP_cuCtxGetSharedMemConfig, "", {0}, 0},
    {CUDA_OP_cuCtxSetSharedMemConfig, "i", {CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE}, 0},
    {CUDA_OP_OCCUPANCY_CLUSTERS, "cqiiiiiiiqi", {0, H, 1, 1, 1, 128, 1, 1, 0, 0, 0}, 0},
    {CUDA_OP_HOST_FUNC, "qqii", {H, 1, 1, 0}, 0},
    {CUDA_OP_cuStreamGetId, "q", {H}, 0},
    {CUDA_OP_cuStreamGetDevice, "q", {H}, 0},
    {CUDA_OP_STREAM_GET_CTX, "q", {0}, 0},
    {CUDA_OP_MEM_ALLOC_MANAGED, "qi", {64, CU_MEM_ATTACH_GLOBAL}, 0},
    {CUDA_OP_MEM_ALLOC_MANAGED, "qi", {UINT64_MAX, CU_MEM_ATTACH_GLOBAL}, 0},
    /* Pushes and hints on addresses that are no device memory. */
    {CUDA_OP_MANAGED_PUSH, "qb", {H}, 1},
    {CUDA_OP_MEM_HINT, "qcqqciiii", {0, 0, H, 4, 0, 1, 1, 0, 0}, 0},
    {CUDA_OP_MEM_HINT, "qcqqciiii", {H, 0, H, 4, 1, 0, 1, 0, 0}, 0},
    {CUDA_OP_MEM_RANGE_ATTRIBUTE, "qiqq", {4, 1, H, 4}, 0},
    {CUDA_OP_MEM_RANGE_ATTRIBUTE, "qiqq", {UINT64_MAX, 1, H, 4}, 0},
    {CUDA_OP_cuProfilerStart, "", {0}, 0},
    {CUDA_OP_cuProfilerStop, "", {0}, 0},
    {CUDA_OP_cuCtxResetPersistingL2Cache, "", {0}, 0},
    /* Pools: ids no table holds, sizes past any quota, bounds. */
    {CUDA_OP_MEM_ALLOC_ASYNC, "qcqq", {0, 0, 64, 0}, 0},
    {CUDA_OP_MEM_ALLOC_ASYNC, "qcqq", {0, 0, 64, H}, 0},
    {CUDA_OP_MEM_ALLOC_ASYNC, "qcqq", {H, 0, UINT64_MAX, 0}, 0},
    {CUDA_OP_MEM_FREE_ASYNC, "qcq", {0, 0, H}, 0},
    {CUDA_OP_MEMPOOL_CREATE, "iiiiqi",
     {CU_MEM_ALLOCATION_TYPE_PINNED, 0, CU_MEM_LOCATION_TYPE_DEVICE, 0, 0, 0},
     0},
    {CUDA_OP_MEMPOOL_CREATE, "iiiiqi", {1, 0, 1, 0, 0, 0x10000}, 0},
    {CUDA_OP_MEMPOOL_DESTROY, "q", {H}, 0},
    {CUDA_OP_MEMPOOL_ATTRIBUTE, "cqiq", {1, H, 1, 0}, 0},
    {CUDA_OP_MEMPOOL_ATTRIBUTE, "cqiq", {0, H, 99, 0}, 0},
    {CUDA_OP_cuMemPoolTrimTo, "qq", {H, 0}, 0},
    {CUDA_OP_MEMPOOL_GET, "ciii", {0, 1, 0, 1}, 0},
    {CUDA_OP_MEMPOOL_GET, "ciii", {3, 1, -1, 1}, 0},
    {CUDA_OP_MEMPOOL_SET_CURRENT, "ciiiq", {0, 1, 0, 1, H}, 0},
    {CUDA_OP_MEMPOOL_ACCESS, "cqiiii", {0, H, 1, 1, 0, 0}, 0},
    {CUDA_OP_MEMPOOL_ACCESS, "cqi", {1, H, 0}, 0},
    /* IPC: no device memory, handles of 64 bytes of anything. */
    {CUDA_OP_IPC_GET_MEM_HANDLE, "q", {H}, 0},
    {CUDA_OP_IPC_OPEN_MEM_HANDLE, "qqqqqqqqi", {H, H, H, H, H, H, H, H, 1}, 0},
    {CUDA_OP_IPC_CLOSE_MEM_HANDLE, "q", {H}, 0},
    {CUDA_OP_cuIpcGetEventHandle, "q", {H}, 0},
    {CUDA_OP_IPC_OPEN_EVENT_HANDLE, "qqqqqqqq", {0, 1, 2, 3, 4, 5, 6, 7}, 0},
    /* Counts past the bound, peers and iterators out of range. */
    {CUDA_OP_ATOMIC_CAPS, "iiiii", {2, 0, 1, 0, (uint32_t)-1}, 0},
    {CUDA_OP_ATOMIC_CAPS, "iii", {0, 0, 1}, 0},
    {CUDA_OP_LOGS_DUMP, "cqqi", {1, 5, 4096, 0}, 0},
    {CUDA_OP_LOGS_DUMP, "cqqi", {0, 0, UINT64_MAX, 0}, 0},
    {CUDA_OP_cuLogsCurrent, "i", {0}, 0},
    {CUDA_OP_cuFlushGPUDirectRDMAWrites, "ii", {0, 100}, 0},
    {CUDA_OP_ARRAY_CREATE, "cqqqiiii",
     {1, 4, 4, 2, CU_AD_FORMAT_FLOAT, 1, 0, 0}, 0},
    {CUDA_OP_ARRAY_DESTROY, "cq", {0, H}, 0},
    {CUDA_OP_ARRAY_SUB, "cqi", {0, H, 0}, 0},
    {CUDA_OP_cuArrayGetDescriptor_v2, "q", {H}, 0},
    {CUDA_OP_cuArray3DGetDescriptor_v2, "q", {H}, 0},
    {CUDA_OP_cuArrayGetMemoryRequirements, "qi", {H, 0}, 0},
    {CUDA_OP_cuMipmappedArrayGetMemoryRequirements, "qi", {H, 0}, 0},
    {CUDA_OP_cuArrayGetSparseProperties, "q", {H}, 0},
    {CUDA_OP_cuMipmappedArrayGetSparseProperties, "q", {H}, 0},
    /* Sides: u8 kind, u64 array id or address, pitch, rows per slice,
     * x, y, z; a box: width, height, depth. */
    {CUDA_OP_MEMCPY3D_TO, "qccqqqqqqqqqb",
     {0, 2, 1, H, 0, 0, 0, 0, 0, 4, 1, 1}, 1},
    {CUDA_OP_MEMCPY3D_FROM, "qccqqqqqqqqq",
     {0, 0, 1, H, 0, 0, 0, 0, 0, 4, 1, 1}, 0},
    {CUDA_OP_MEMCPY3D_DEV, "qccqqqqqqcqqqqqqqqq",
     {0, 0, 1, H, 0, 0, 1, 2, 3, 0, H, 64, 4, 0, 0, 0, 16, 4, 2}, 0},
    {CUDA_OP_TEXOBJ_CREATE, "cRTc", {0, H, 0, 0}, 0},
    {CUDA_OP_TEXOBJ_CREATE, "cR", {1, H}, 0},
    {CUDA_OP_TEXOBJ_DESTROY, "cq", {0, 1}, 0},
    {CUDA_OP_TEXOBJ_DESC, "cq", {1, 1}, 0},
    /* Graphs: a node's parameters of each type, after no dependency or
     * one that is no node. */
    {CUDA_OP_GRAPH_CREATE, "i", {0}, 0},
    {CUDA_OP_GRAPH_DESTROY, "q", {H}, 0},
    {CUDA_OP_GRAPH_ADD_NODE, "qiqcqciiiiiiicb",
     {H, 1, H, CU_GRAPH_NODE_TYPE_KERNEL, H, 1, 1, 1, 1, 32, 1, 1, 0, 0, 0},
     0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicqqqqqqqqqc",
     {H, 0, CU_GRAPH_NODE_TYPE_MEMCPY, H, 64, 1, H, 64, 1, 64, 2, 1, 2}, 0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicqqiiqq",
     {H, 0, CU_GRAPH_NODE_TYPE_MEMSET, H, 16, 7, 4, 4, 2}, 0},
    {CUDA_OP_GRAPH_ADD_NODE, "qic", {H, 0, CU_GRAPH_NODE_TYPE_EMPTY}, 0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicq",
     {H, 0, CU_GRAPH_NODE_TYPE_EVENT_RECORD, H}, 0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicq", {H, 0, CU_GRAPH_NODE_TYPE_GRAPH, H}, 0},
    {CUDA_OP_NODE_SET_PARAMS, "qqcqqiiqq",
     {H, H, CU_GRAPH_NODE_TYPE_MEMSET, H, 16, 7, 4, 4, 1}, 0},
    {CUDA_OP_GRAPH_INSTANTIATE, "qq", {H, 0}, 0},
    {CUDA_OP_cuGraphLaunch, "qq", {H, 0}, 0},
    {CUDA_OP_cuGraphUpload, "qq", {H, 0}, 0},
    {CUDA_OP_GRAPH_EXEC_DESTROY, "q", {H}, 0},
    {CUDA_OP_GRAPH_EXEC_UPDATE, "qq", {H, H}, 0},
    {CUDA_OP_cuStreamBeginCapture_v2, "qi", {H, 0}, 0},
    {CUDA_OP_STREAM_END_CAPTURE, "q", {H}, 0},
    {CUDA_OP_GRAPH_NODES, "qcq", {H, 1, 4}, 0},
    {CUDA_OP_GRAPH_EDIT_EDGES, "qciqiq", {H, 0, 1, H, 1, H}, 0},
    {CUDA_OP_GRAPH_CLONE, "q", {H}, 0},
    {CUDA_OP_NODE_FIND_IN_CLONE, "qq", {H, H}, 0},
    {CUDA_OP_cuGraphNodeGetType, "q", {H}, 0},
    {CUDA_OP_NODE_DESTROY, "q", {H}, 0},
    {CUDA_OP_cuGraphNodeSetEnabled, "qqi", {H, H, 1}, 0},
    {CUDA_OP_cuGraphNodeGetEnabled, "qq", {H, H}, 0},
    {CUDA_OP_CAPTURE_GRAPH, "q", {0}, 0},
    {CUDA_OP_GRAPH_EDGES, "qcq", {H, 1, 4}, 0},
    /* Flags no single flipped bit makes valid: an object made here
     * would outlive the test. */
    {CUDA_OP_USER_OBJECT_CREATE, "qii", {7, 1, 0x100}, 0},
    {CUDA_OP_USER_OBJECT_REF, "qiiqi", {H, 1, 2, H, 1}, 0},
    {CUDA_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH, "qqiqi", {0, H, 1, H, 0}, 0},
    {CUDA_OP_STREAM_UPDATE_CAPTURE_DEPS, "qiiq", {0, 0, 1, H}, 0},
    {CUDA_OP_THREAD_CAPTURE_MODE, "i", {1}, 0},
    {CUDA_OP_GRAPH_DOT_PRINT, "qi", {H, 0}, 0},
    /* Shared host memory: no descriptor comes (the harness's host passes
     * none); a page of the harness's 64 KiB data area is shared (each
     * bit flip of its offset or size leaves the area or a page's
     * alignment, or is another page), unshared, and then no region is,
     * so nothing is copied. */
    {CUDA_OP_HOSTMEM_SHARE, "iqqq", {0, 1, 0x10000000, 4096}, 0},
    {CUDA_OP_HOSTMEM_SHARE, "iqqq", {1, 61440, 0x10000000, 4096}, 0},
    {CUDA_OP_HOSTMEM_UNSHARE, "q", {0x10000000}, 0},
    {CUDA_OP_MEMCPY_SHARED, "qiiqqq", {0, 1, 1, H, 0x10000000, 4}, 0},
    {CUDA_OP_MEMCPY_SHARED_POSTED, "qiiqqq", {0, 1, 1, H, 0x10000000, 4}, 0},
    /* A posted copy from a range that is no device memory, on a stream
     * no table holds, of no bytes and of more than a piece. */
    {CUDA_OP_MEMCPY_POSTED, "qqqq", {0, H, 4, 1}, 0},
    {CUDA_OP_MEMCPY_POSTED, "qqqq", {H, H, 4, 2}, 0},
    {CUDA_OP_MEMCPY_POSTED, "qqqq", {0, H, 0, 3}, 0},
    {CUDA_OP_MEMCPY_POSTED, "qqqq", {0, H, UINT64_MAX, 4}, 0},
    /* Peers: contexts no table holds, ranges that are no device memory,
     * a count past any. */
    {CUDA_OP_cuCtxEnablePeerAccess, "qi", {H, 0}, 0},
    {CUDA_OP_cuCtxDisablePeerAccess, "q", {H}, 0},
    {CUDA_OP_MEMCPY_PEER, "qcqqqqq", {0, 0, H, 0, H, 0, 4}, 0},
    {CUDA_OP_MEMCPY_PEER, "qcqqqqq", {H, 1, H, H, H, H, UINT64_MAX}, 0},
    /* JIT linking: link states no table holds (a name and data of
     * "junk"), options that point into the client's memory, options
     * the driver does not know, log sizes past the backend's. */
    {CUDA_OP_LINK_ADD, "qibiiqcb", {H, CU_JIT_INPUT_PTX, 0, 1, 7, 1, 0}, 0},
    {CUDA_OP_LINK_COMPLETE, "q", {H}, 0},
    {CUDA_OP_LINK_IMAGE, "qq", {H, UINT64_MAX}, 0},
    {CUDA_OP_LINK_DESTROY, "q", {H}, 0},
    {CUDA_OP_LINK_CREATE, "iiq", {1, CU_JIT_GLOBAL_SYMBOL_NAMES, H}, 0},
    {CUDA_OP_LINK_CREATE, "iiq", {1, -1, H}, 0},
    /* Loads with JIT options: a log size past the backend's, options
     * that point into the client's memory, options the driver does not
     * know (an image of "junk"). */
    {CUDA_OP_LOAD, "cciiqiqb",
     {1, 0, 2, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, UINT64_MAX,
      CU_JIT_ERROR_LOG_BUFFER, H}, 0},
    {CUDA_OP_LOAD, "cciiqb", {0, 0, 1, CU_JIT_GLOBAL_SYMBOL_NAMES, H}, 0},
    {CUDA_OP_LOAD, "cciiqb", {0, 0, 1, -1, H}, 0},
    /* Batched prefetches and discards: ranges that are no device
     * memory, no ranges at all. */
    {CUDA_OP_MEM_BATCH, "qccqiqqiiiq", {0, 0, 0, 0, 1, H, 4, 1, 1, 0, 0}, 0},
    {CUDA_OP_MEM_BATCH, "qccqii", {H, 0, 1, 1, 0, 0}, 0},
    {CUDA_OP_MEM_BATCH, "qccqiqqiiiq",
     {0, 0, 2, 0, 1, H, UINT64_MAX, 1, 1, 0, UINT64_MAX}, 0},
    /* Where the two frontends meet: a batch on CU_STREAM_PER_THREAD (an
     * answer, not the end of the session); the runtime's primary
     * context named. */
    {CUDA_OP_MEM_BATCH, "qccqiqqiiiq",
     {(uintptr_t)CU_STREAM_PER_THREAD, 0, 0, 0, 1, H, 4, 1, 1, 0, 0}, 0},
    {CUDA_OP_RUNTIME_PRIMARY_CTX, "i", {0}, 0},
    {CUDA_OP_LINK_CREATE, "iiqiq",
     {2, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, UINT64_MAX,
      CU_JIT_INFO_LOG_BUFFER, H}, 0},
    /* The rest of the graph API: memory alloc (one access descriptor),
     * free and conditional nodes in a graph that is none; queries and
     * attributes of a node that is none; graph memory of device 0. */
    {CUDA_OP_GRAPH_ADD_NODE, "qiciiiiqiqiiii",
     {H, 0, CU_GRAPH_NODE_TYPE_MEM_ALLOC, 1, 0, 1, 0, 0, 0, 64, 1, 1, 0, 3},
     0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicq", {H, 0, CU_GRAPH_NODE_TYPE_MEM_FREE, H},
     0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicqii",
     {H, 0, CU_GRAPH_NODE_TYPE_CONDITIONAL, 1, 0, 2}, 0},
    {CUDA_OP_NODE_GET_PARAMS, "q", {H}, 0},
    {CUDA_OP_KERNEL_NODE_ATTRIBUTE, "cqi", {0, H, 8}, 0},
    {CUDA_OP_KERNEL_NODE_ATTRIBUTE, "cqiqqqqqqqq",
     {1, H, 8, 1, 0, 0, 0, 0, 0, 0, 0}, 0},
    {CUDA_OP_cuGraphKernelNodeCopyAttributes, "qq", {H, H}, 0},
    {CUDA_OP_GRAPH_MEM_ATTRIBUTE, "cii",
     {0, 0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH}, 0},
    {CUDA_OP_GRAPH_MEM_ATTRIBUTE, "ciiq",
     {1, 0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, 0}, 0},
    {CUDA_OP_cuDeviceGraphMemTrim, "i", {0}, 0},
    {CUDA_OP_COND_HANDLE_CREATE, "qii", {H, 1, 0}, 0},
    {CUDA_OP_cuGraphExecGetFlags, "q", {H}, 0},
    /* The virtual memory API: handles no table holds, ranges outside any
     * reservation of the session (one wrapping around), sizes past any
     * quota, a handle type other than a descriptor, an import's flags
     * (more in vmm_hostile). */
    {CUDA_OP_MEM_ADDRESS_RESERVE, "qqqq", {2u << 20, 0, 0, 0}, 0},
    {CUDA_OP_MEM_ADDRESS_RESERVE, "qqqq", {UINT64_MAX, 0, 0, 0}, 0},
    {CUDA_OP_MEM_ADDRESS_FREE, "qq", {H, 2u << 20}, 0},
    {CUDA_OP_MEM_CREATE, "qiiiicciq", {2u << 20, 1, 1, 1, 0, 0, 0, 0, 0}, 0},
    {CUDA_OP_MEM_CREATE, "qiiiicciq",
     {UINT64_MAX, 1, 1, 1, 0, 0, 0, 0, 0}, 0},
    {CUDA_OP_MEM_RELEASE, "q", {H}, 0},
    {CUDA_OP_MEM_MAP, "qqqqq", {0x540000000000u, 2u << 20, 0, H, 0}, 0},
    {CUDA_OP_MEM_UNMAP, "qq", {H, 2u << 20}, 0},
    {CUDA_OP_MEM_UNMAP, "qq", {UINT64_MAX - 5, 100}, 0},
    {CUDA_OP_MEM_ACCESS, "cqqiiii", {1, H, 2u << 20, 1, 1, 0, 3}, 0},
    {CUDA_OP_MEM_ACCESS, "cqqiiii", {0, H, 0, 1, 1, 0, 0}, 0},
    {CUDA_OP_MEM_GRANULARITY, "iiiiccii", {1, 0, 1, 0, 0, 0, 0, 0}, 0},
    {CUDA_OP_MEM_GRANULARITY, "iiiiccii", {1, 0, 1, 7, 0, 0, 0, 9}, 0},
    {CUDA_OP_MEM_PROPERTIES, "q", {H}, 0},
    {CUDA_OP_MEM_RETAIN_HANDLE, "q", {H}, 0},
    {CUDA_OP_MEM_RETAIN_HANDLE, "q", {UINT64_MAX}, 0},
    {CUDA_OP_MEM_SHAREABLE, "cqiq", {0, H, 1, 0}, 0},
    {CUDA_OP_MEM_SHAREABLE, "cqiq", {1, H, 1, 0}, 0},
    {CUDA_OP_MEM_SHAREABLE, "cqiq", {0, H, CU_MEM_HANDLE_TYPE_FABRIC, 0}, 0},
    {CUDA_OP_MEM_SHAREABLE, "cqiq", {1, H, 1, 1}, 0},
    /* Stream memory operations: one on memory that is none, a batch of
     * a write and a barrier, an unknown type; a
     * batch memory operation node in a graph that is none.  Operation:
     * u32 type, u32 flags, u64 address, u64 value. */
    {CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq",
     {0, 0, 0, 1, 0, 1, CU_STREAM_MEM_OP_WRITE_VALUE_32, 0, H, 1}, 0},
    {CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq" "iiqq",
     {H, 0, 1, 0, 0, 2, CU_STREAM_MEM_OP_WAIT_VALUE_64, 3, H, UINT64_MAX,
      CU_STREAM_MEM_OP_BARRIER, 1, 0, 0}, 0},
    {CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", {0, 0, 0, 0, 0, 1, 99, 0, 0, 0},
     0},
    {CUDA_OP_GRAPH_ADD_NODE, "qicqii" "iiqq",
     {H, 0, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, 0, 0, 1,
      CU_STREAM_MEM_OP_WRITE_VALUE_64, 0, H, 5}, 0},
    {CUDA_OP_NODE_SET_PARAMS, "qqcqii" "iiqq",
     {H, H, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, H, 0, 1,
      CU_STREAM_MEM_OP_WAIT_VALUE_32, 1, H, 5}, 0},
    /* Tensor maps over memory that is none: tiled of rank 1, im2col and
     * im2col wide of rank 3; a map's address replaced. */
    {CUDA_OP_TENSOR_MAP_ENCODE, "ciiq" "q" "i" "i" "iiii",
     {0, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, H, 16, 1, 8, 0, 0, 0, 0}, 0},
    {CUDA_OP_TENSOR_MAP_ENCODE, "ciiq" "qqq" "qq" "iii" "i" "i" "ii" "iiii",
     {1, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, H, 16, 16, 4, 64, 1024, 1, 1, 1,
      0, 0, 8, 4, 0, 0, 0, 0}, 0},
    {CUDA_OP_TENSOR_MAP_ENCODE, "ciiq" "qqq" "qq" "iii" "iiiii" "iiii",
     {2, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, H, 16, 16, 4, 64, 1024, 1, 1, 1,
      0, 0, 8, 4, 0, 0, 0, 0, 0}, 0},
    {CUDA_OP_TENSOR_MAP_REPLACE, "qqqqqqqqqqqqqqqqq",
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, H}, 0},
    /* The legacy elapsed time, of events that are none. */
    {CUDA_OP_cuEventElapsedTime, "qq", {H, H}, 0},
};
#define NRAW (sizeof(raw_cases) / sizeof(raw_cases[0]))

static size_t raw_encode(const struct raw_case *k, uint8_t *req)
{
    size_t len = 0;
    int n = 0;
    for (const char *a = k->in; *a != '\0'; a++) {
        uint64_t v = k->v[n++];
        if (*a == 'R' || *a == 'T') {
            CUDA_RESOURCE_DESC r;
            CUDA_TEXTURE_DESC t;
            memset(&r, 0, sizeof(r));
            memset(&t, 0, sizeof(t));
            r.resType = CU_RESOURCE_TYPE_ARRAY;
            r.res.array.hArray = (CUarray)(uintptr_t)v;
            memcpy(req + len, *a == 'R' ? (void *)&r : (void *)&t,
                   *a == 'R' ? sizeof(r) : sizeof(t));
            len += *a == 'R' ? sizeof(r) : sizeof(t);
            continue;
        }
        size_t w = *a == 'c' ? 1 : *a == 'q' ? 8 : 4;
        for (size_t b = 0; b < w; b++)
            req[len + b] = (uint8_t)(v >> 8 * b);
        len += w;
        if (*a == 'b') {
            memcpy(req + len, "junk", 4);
            req[len - 4] = 4;
            req[len - 3] = req[len - 2] = req[len - 1] = 0;
            len += 4;
        }
    }
    return len;
}

/* A reply of one CUresult and whatever follows it, or none for a posted
 * piece. */
static int raw_answer(const struct raw_case *k, int rc)
{
    int32_t result;
    if (rc != 0)
        return refused(rc);
    if (k->posted && gvs_buf_len(out) == 0)
        return 0;
    CHECK(gvs_buf_get_i32(out, &result) == 0 && result >= 0);
    return 0;
}

static int check_raw(const struct raw_case *k)
{
    static uint8_t req[REQ_MAX];
    size_t len = raw_encode(k, req);
    CHECK(raw_answer(k, run(k->op, req, len)) == 0);
    for (size_t n = 0; n < len; n++)
        CHECK(refused(run(k->op, req, n)) == 0);
    req[len] = 0;
    CHECK(run(k->op, req, len + 1) == GVS_E_TRAILING);
    for (size_t bit = 0; bit < 8 * len; bit++) {
        req[bit / 8] ^= (uint8_t)(1u << bit % 8);
        CHECK(raw_answer(k, run(k->op, req, len)) == 0);
        req[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    return 0;
}

/* The handler's answer to the values v is expect (a hostile's). */
static int answers(const struct op_case *k, const struct values *v,
                   int32_t expect)
{
    static uint8_t req[REQ_MAX];
    int32_t result;
    CHECK(well_formed(k, run(k->op, req, encode(k, v, req)), &result) == 0);
    if (expect == ANY_REPLY ? result < 0 : result != expect)
        dprintf(2, "op %u: %d, not %d\n", k->op, result, expect);
    CHECK(expect == ANY_REPLY ? result >= 0 : result == expect);
    return 0;
}

/* Every hostile variant of one op's valid request. */
static int check_op(const struct op_case *k)
{
    static uint8_t req[REQ_MAX];
    size_t len = encode(k, &k->valid, req);
    int32_t result;

    CHECK(answers(k, &k->valid, CUDA_SUCCESS) == 0);

    for (size_t n = 0; n < len; n++)
        CHECK(refused(run(k->op, req, n)) == 0);
    req[len] = 0;
    CHECK(run(k->op, req, len + 1) == GVS_E_TRAILING);

    for (size_t bit = 0; bit < 8 * len; bit++) {
        req[bit / 8] ^= (uint8_t)(1u << bit % 8);
        CHECK(well_formed(k, run(k->op, req, len), &result) == 0);
        req[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }

    int n = 0;
    for (const char *a = k->in; *a != '\0'; a++) {
        if (*a == 'd')
            for (size_t j = 0; j < NBAD_DEVICES; j++) {
                struct values v = k->valid;
                v.i[n] = bad_devices[j];
                CHECK(answers(k, &v, CUDA_ERROR_INVALID_DEVICE) == 0);
            }
        if (*a != 'b')
            n++;
    }
    for (size_t j = 0; j < k->nbad; j++)
        CHECK(answers(k, &k->bad[j].v, k->bad[j].expect) == 0);
    return 0;
}

/* HOST_FUNC's answer to (stream, callback, kind, flags): a CUresult, or
 * the refusal of a kind or flags no API has. */
static int32_t host_func(uint64_t stream, uint32_t kind, uint32_t flags)
{
    static const struct raw_case shape = {CUDA_OP_HOST_FUNC, "qqii", {0}, 0};
    struct raw_case k = shape;
    uint8_t req[24];
    int32_t result;
    k.v[0] = stream;
    k.v[1] = 7;
    k.v[2] = kind;
    k.v[3] = flags;
    int rc = run(k.op, req, raw_encode(&k, req));
    if (rc != 0)
        return rc;
    return gvs_buf_get_i32(out, &result) == 0 &&
                   gvs_buf_expect_end(out) == 0
               ? result
               : INT32_MIN;
}

/* HOST_FUNC's own hostile values.  No client listens (harness_start's
 * notify is NULL): a callback the mock runs returns at once. */
static int host_func_hostile(void)
{
    CHECK(host_func(H, 0, 0) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(host_func(0, 2, 0) == GVS_E_PROTO);
    CHECK(host_func(0, UINT32_MAX, 0) == GVS_E_PROTO);
    CHECK(host_func(0, 0, 1) == GVS_E_PROTO);
    CHECK(host_func(0, 1, 1) == CUDA_ERROR_INVALID_VALUE);
    /* The per-thread default stream of a lane with no context. */
    CHECK(host_func((uint64_t)(uintptr_t)CU_STREAM_PER_THREAD, 0, 0) ==
          CUDA_ERROR_INVALID_CONTEXT);
    CHECK(host_func(0, 0, 0) == CUDA_SUCCESS);
    CHECK(host_func(0, 1, 0) == CUDA_SUCCESS);
    return 0;
}

/* A raw request's result, and its first u64 after CUDA_SUCCESS (an id,
 * an address) in *v. */
static int32_t raw_run(const struct raw_case *k, uint64_t *v)
{
    static uint8_t req[REQ_MAX];
    int32_t result;
    int rc = run(k->op, req, raw_encode(k, req));
    if (rc < 0)
        return rc;
    if (gvs_buf_get_i32(out, &result) < 0)
        return GVS_E_PROTO;
    if (result == CUDA_SUCCESS && v != NULL &&
        gvs_buf_get_u64(out, v) < 0)
        return GVS_E_PROTO;
    return result;
}

/* The virtual memory API's refusals no whole request shows (an access
 * list past the bound, a get of two, usage past 16 bits), and the
 * session's own objects named wrongly: its handle mapped outside its
 * reservation, its reservation mapped with no handle of its own or
 * unmapped past its end. */
static int vmm_hostile(void)
{
    const uint64_t g = 2u << 20;
    uint64_t va = 0, id = 0;
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_ACCESS, "cqqi",
                                     {1, H, g, 2000}, 0},
                  NULL) == GVS_E_PROTO);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_ACCESS, "cqqi",
                                     {0, H, 0, 2}, 0},
                  NULL) == GVS_E_PROTO);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_CREATE, "qiiiicciq",
                                     {g, 1, 1, 1, 0, 0, 0, 0x10000, 0}, 0},
                  NULL) == GVS_E_PROTO);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_ADDRESS_RESERVE, "qqqq",
                                     {g, 0, 0, 0}, 0},
                  &va) == CUDA_SUCCESS);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_CREATE, "qiiiicciq",
                                     {g, 1, 1, 1, 0, 0, 0, 0, 0}, 0},
                  &id) == CUDA_SUCCESS);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_MAP, "qqqqq",
                                     {va + g, g, 0, id, 0}, 0},
                  NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_MAP, "qqqqq",
                                     {va - g, 2 * g, 0, id, 0}, 0},
                  NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_MAP, "qqqqq",
                                     {va, g, 0, H, 0}, 0},
                  NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_MAP, "qqqqq",
                                     {va, g, 0, id, 0}, 0},
                  NULL) == CUDA_SUCCESS);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_UNMAP, "qq", {va, 2 * g}, 0},
                  NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_RELEASE, "q", {id}, 0},
                  NULL) == CUDA_SUCCESS);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_RELEASE, "q", {id}, 0},
                  NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_UNMAP, "qq", {va, g}, 0},
                  NULL) == CUDA_SUCCESS);
    CHECK(raw_run(&(struct raw_case){CUDA_OP_MEM_ADDRESS_FREE, "qq",
                                     {va, g}, 0},
                  NULL) == CUDA_SUCCESS);
    return 0;
}

/* A raw request's answer, its values given in place. */
#define RAW(op, in, ...)                                                     \
    raw_run(&(struct raw_case){op, in, {__VA_ARGS__}, 0}, NULL)

/* STREAM_MEMOP's and TENSOR_MAP_ENCODE's malformed requests, refused
 * before the rest is read: counts and ranks past the bounds, a single
 * operation that is a batch or no wait or write, a 32-bit value past 32
 * bits, an address on a barrier; and what the backend refuses with the
 * driver's code: device memory that is none. */
static int memops_hostile(void)
{
    const uint64_t w32 = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    const uint64_t bar = CU_STREAM_MEM_OP_BARRIER;
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii", 0, 0, 0, 0, 0, 257) ==
          GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq" "iiqq", 0, 0, 0, 1, 0, 2,
              w32, 0, H, 1, w32, 0, H, 1) == GVS_E_PROTO);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", 0, 0, 0, 1, 0, 1, bar,
              0, 0, 0) == GVS_E_PROTO);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", 0, 0, 0, 1, 1, 1, w32,
              0, H, 1) == GVS_E_PROTO);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", 0, 0, 2, 0, 0, 1, w32,
              0, H, 1) == GVS_E_PROTO);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", 0, 0, 0, 1, 0, 1, w32,
              0, H, (uint64_t)1 << 32) == GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", 0, 0, 0, 0, 0, 1, bar,
              0, H, 0) == GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_STREAM_MEMOP, "qcccii" "iiqq", 0, 0, 0, 1, 0, 1, w32,
              0, H, 1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(RAW(CUDA_OP_TENSOR_MAP_ENCODE, "ciiq", 0, 0, 6, H) == GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_TENSOR_MAP_ENCODE, "ciiq", 0, 0, 0, H) == GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_TENSOR_MAP_ENCODE, "ciiq", 1, 0, 2, H) == GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_TENSOR_MAP_ENCODE, "ciiq", 3, 0, 3, H) == GVS_E_RANGE);
    CHECK(RAW(CUDA_OP_TENSOR_MAP_ENCODE, "ciiq" "q" "i" "i" "iiii", 0,
              CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, H, 16, 1, 8, 0, 0, 0,
              0) == CUDA_ERROR_INVALID_VALUE);
    return 0;
}

/* Where the two frontends meet: a batch on CU_STREAM_PER_THREAD is
 * answered (here, a lane with no context: CUDA_ERROR_INVALID_CONTEXT),
 * not refused as malformed, while an ordering byte the frontend never
 * sends is; the runtime's primary context is named for a device, not
 * for one past them. */
static int mixed_hostile(void)
{
    const uint64_t pt = (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    CHECK(RAW(CUDA_OP_MEM_BATCH, "qccqiqqiiiq", pt, 0, 0, 0, 1, H, 4, 1, 1,
              0, 0) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(RAW(CUDA_OP_MEM_BATCH, "qccqiqqiiiq", 0, 2, 0, 0, 1, H, 4, 1, 1, 0,
              0) == GVS_E_PROTO);
    CHECK(RAW(CUDA_OP_RUNTIME_PRIMARY_CTX, "i", 0) == CUDA_SUCCESS);
    CHECK(RAW(CUDA_OP_RUNTIME_PRIMARY_CTX, "i", MOCK_DEVICES) ==
          CUDA_ERROR_INVALID_DEVICE);
    return 0;
}

int main(int argc, char **argv)
{
    out = gvs_buf_new(1 << 16);
    CHECK(argc == 2 && out != NULL);
    memset(xs, 'x', sizeof(xs));
    gvs_plugin_entry_fn entry = harness_load(argv[1]);
    CHECK(entry != NULL);
    CHECK(entry(GVS_PLUGIN_ABI + 1, &plugin) == GVS_E_VERSION);
    /* No client: nothing here notifies, and stdout stays the test's. */
    CHECK(harness_start(entry, NULL) == 0);
    CHECK(plugin->id == CUDA_PLUGIN_ID);
    CHECK(plugin->table_hash == CUDA_TABLE_HASH);

    /* Before the raw cases' bit flips fill the mock's reservations. */
    CHECK(vmm_hostile() == 0);
    /* Every op of the table has its cases (an op of raw requests may have
     * several), and every case its op. */
    size_t ncases = 0;
    for (const struct gvs_op *o = plugin->ops; o->op != 0; o++) {
        size_t i = 0, found = 0;
        while (i < NCASES && cases[i].op != o->op)
            i++;
        if (i < NCASES) {
            CHECK(check_op(&cases[i]) == 0);
            found++;
        }
        for (size_t j = 0; j < NRAW; j++)
            if (raw_cases[j].op == o->op) {
                CHECK(check_raw(&raw_cases[j]) == 0);
                found++;
            }
        if (found == 0)
            dprintf(2, "op %u has no case here\n", o->op);
        CHECK(found > 0);
        ncases += found;
    }
    CHECK(ncases == NCASES + NRAW);
    CHECK(host_func_hostile() == 0);
    CHECK(mixed_hostile() == 0);
    CHECK(memops_hostile() == 0);

    harness_close();
    gvs_buf_free(out);
    puts("ok");
    return 0;
}
