/*
 * cudart.backend_misc[_mock]: the handlers of api/80-misc.api on
 * malformed requests (every strict prefix of a well-formed request, and
 * one byte more, is refused with a negative GVS_E_* code), on ids the
 * session never handed out, out-of-bounds counts and sizes, and the
 * worker's own memory named as device memory.  With --mock (the plugin
 * built on the host-memory mock) also the results of well-formed calls,
 * the notifications of registered callbacks and ids of the other kind.
 * usage: backend_misc PLUGIN.so [--mock]
 */
#include <string.h>

#include "backend_harness.h"
#include "cudart_ops.h"
#include "gvs/err.h"

#define INVALID_DEVICE 101
#define INVALID_KERNEL_IMAGE 200
#define REFUSED (-1000)

static char worker_bytes[4096];

/* The last notification sent, and how many were. */
static uint16_t notified_op;
static uint8_t notified[8192];
static size_t notified_len;
static unsigned notifications;

static int host_notify(struct gvs_session *s, uint16_t plugin_id, uint16_t op,
                       const void *body, size_t len)
{
    (void)s;
    if (plugin_id != CUDART_PLUGIN_ID || len > sizeof(notified))
        return -1;
    notified_op = op;
    memcpy(notified, body, len);
    notified_len = len;
    notifications++;
    return 0;
}

/* The handler's return on the len bytes at req, its reply in out. */
static int call_bytes(uint16_t op, const uint8_t *req, size_t len,
                      struct gvs_buf *out)
{
    struct gvs_buf *in = gvs_buf_new(len + 16);
    if (in == NULL || gvs_buf_put_bytes(in, req, len) < 0)
        return 1000;
    int rc = call(op, in, out);
    gvs_buf_free(in);
    return rc;
}

/* The result of op on the request in b, or REFUSED. */
static int32_t result(uint16_t op, struct gvs_buf *b, struct gvs_buf *out)
{
    int32_t r;
    if (call_bytes(op, gvs_buf_ptr(b), gvs_buf_len(b), out) != 0)
        return REFUSED;
    return gvs_buf_get_i32(out, &r) == 0 ? r : REFUSED - 1;
}

/* Every strict prefix of the request in b, and b with a byte more, are
 * refused. */
static int malformed(uint16_t op, struct gvs_buf *b, struct gvs_buf *out)
{
    size_t len = gvs_buf_len(b);
    uint8_t more[4096];
    CHECK(len + 1 <= sizeof(more));
    memcpy(more, gvs_buf_ptr(b), len);
    more[len] = 0;
    for (size_t n = 0; n < len; n++)
        if (call_bytes(op, more, n, out) >= 0) {
            dprintf(2, "op %u: prefix of %zu bytes accepted\n", op, n);
            return 1;
        }
    if (call_bytes(op, more, len + 1, out) >= 0) {
        dprintf(2, "op %u: a trailing byte accepted\n", op);
        return 1;
    }
    return 0;
}

/* Well-formed requests of every op, built into b. */
static void build(uint16_t op, struct gvs_buf *b, uint64_t ptr)
{
    static const uint8_t handle[64];
    gvs_buf_reset(b);
    switch (op) {
    case CUDART_OP_POINTER_ATTRS:
    case CUDART_OP_IPC_GET_MEM_HANDLE:
    case CUDART_OP_IPC_CLOSE_MEM_HANDLE:
        gvs_buf_put_u64(b, ptr);
        break;
    case CUDART_OP_PROFILER:
    case CUDART_OP_LOGS_CURRENT:
        gvs_buf_put_u32(b, 0);
        break;
    case CUDART_OP_cudaDeviceFlushGPUDirectRDMAWrites:
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_i32(b, 100);
        break;
    case CUDART_OP_MEM_ADVISE:
        gvs_buf_put_u64(b, ptr);
        gvs_buf_put_u64(b, 4);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_i32(b, 0);
        break;
    case CUDART_OP_STREAM_ATTACH_MEM:
        gvs_buf_put_u64(b, 0);
        gvs_buf_put_u64(b, ptr);
        gvs_buf_put_u64(b, 4);
        gvs_buf_put_u32(b, 1);
        break;
    case CUDART_OP_MEM_DISCARD:
        gvs_buf_put_u64(b, 0);
        gvs_buf_put_u64(b, ptr);
        gvs_buf_put_u64(b, 4);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_u64(b, 0);
        break;
    case CUDART_OP_MEM_GET_POOL:
        gvs_buf_put_u8(b, 0);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_i32(b, 1);
        break;
    case CUDART_OP_MEM_SET_POOL:
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_u64(b, BOGUS);
        break;
    case CUDART_OP_IPC_OPEN_MEM_HANDLE:
        gvs_buf_put_blob(b, handle, sizeof(handle));
        gvs_buf_put_u32(b, 1);
        break;
    case CUDART_OP_IPC_OPEN_EVENT_HANDLE:
        gvs_buf_put_blob(b, handle, sizeof(handle));
        break;
    case CUDART_OP_LIBRARY_LOAD:
        gvs_buf_put_u8(b, 0);
        gvs_buf_put_blob(b, "// ptx", 6);
        gvs_buf_put_u32(b, 1);
        gvs_buf_put_u32(b, 0);
        gvs_buf_put_u64(b, 32);
        break;
    case CUDART_OP_LIBRARY_KERNEL:
        gvs_buf_put_u32(b, 0);
        gvs_buf_put_str(b, "_Z5emptyv");
        break;
    case CUDART_OP_LIBRARY_SYMBOL:
        gvs_buf_put_u32(b, 0);
        gvs_buf_put_u8(b, 0);
        gvs_buf_put_str(b, "dv");
        break;
    case CUDART_OP_ATOMIC_CAPS:
        gvs_buf_put_u32(b, 2);
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_i32(b, 10);
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_i32(b, -1);
        break;
    case CUDART_OP_TEX1D_LINEAR_MAX_WIDTH:
        for (int i = 0; i < 4; i++)
            gvs_buf_put_i32(b, 8);
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_i32(b, 0);
        break;
    case CUDART_OP_ARRAY_PROPS:
        gvs_buf_put_u8(b, 0);
        gvs_buf_put_u64(b, BOGUS);
        gvs_buf_put_u8(b, 0);
        gvs_buf_put_i32(b, 0);
        break;
    case CUDART_OP_ARRAY_PLANE:
        gvs_buf_put_u64(b, BOGUS);
        gvs_buf_put_u32(b, 0);
        break;
    case CUDART_OP_MEM_RANGE_ATTRS:
        gvs_buf_put_u64(b, ptr);
        gvs_buf_put_u64(b, 4);
        gvs_buf_put_u32(b, 2);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_u64(b, 4);
        gvs_buf_put_i32(b, 3);
        gvs_buf_put_u64(b, 8);
        break;
    case CUDART_OP_cudaIpcGetEventHandle:
        gvs_buf_put_u64(b, BOGUS);
        break;
    case CUDART_OP_LOGS_DUMP:
        gvs_buf_put_u8(b, 1);
        gvs_buf_put_u64(b, 0);
        gvs_buf_put_u64(b, 256);
        gvs_buf_put_u32(b, 0);
        break;
    case CUDART_OP_ASYNC_NOTIFY_REGISTER:
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_u64(b, 7);
        break;
    case CUDART_OP_ASYNC_NOTIFY_UNREGISTER:
        gvs_buf_put_i32(b, 0);
        gvs_buf_put_u64(b, BOGUS);
        break;
    case CUDART_OP_LOGS_REGISTER:
        gvs_buf_put_u64(b, 9);
        break;
    case CUDART_OP_LOGS_UNREGISTER:
        gvs_buf_put_u64(b, BOGUS);
        break;
    default:
        break;
    }
}

static const uint16_t ops[] = {
    CUDART_OP_POINTER_ATTRS, CUDART_OP_PROFILER,
    CUDART_OP_cudaDeviceFlushGPUDirectRDMAWrites, CUDART_OP_MEM_ADVISE,
    CUDART_OP_STREAM_ATTACH_MEM, CUDART_OP_MEM_DISCARD,
    CUDART_OP_MEM_GET_POOL, CUDART_OP_MEM_SET_POOL,
    CUDART_OP_IPC_GET_MEM_HANDLE, CUDART_OP_IPC_OPEN_MEM_HANDLE,
    CUDART_OP_IPC_CLOSE_MEM_HANDLE, CUDART_OP_LIBRARY_LOAD,
    CUDART_OP_LIBRARY_KERNEL, CUDART_OP_LIBRARY_SYMBOL,
    CUDART_OP_ATOMIC_CAPS, CUDART_OP_TEX1D_LINEAR_MAX_WIDTH,
    CUDART_OP_ARRAY_PROPS, CUDART_OP_ARRAY_PLANE,
    CUDART_OP_MEM_RANGE_ATTRS, CUDART_OP_cudaIpcGetEventHandle,
    CUDART_OP_IPC_OPEN_EVENT_HANDLE, CUDART_OP_LOGS_CURRENT,
    CUDART_OP_LOGS_DUMP, CUDART_OP_ASYNC_NOTIFY_REGISTER,
    CUDART_OP_ASYNC_NOTIFY_UNREGISTER, CUDART_OP_LOGS_REGISTER,
    CUDART_OP_LOGS_UNREGISTER,
};

static int all_malformed(struct gvs_buf *b, struct gvs_buf *out)
{
    uint64_t mine = (uint64_t)(uintptr_t)worker_bytes;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        build(ops[i], b, mine);
        CHECK(malformed(ops[i], b, out) == 0);
    }
    /* The op without arguments takes none. */
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 0);
    CHECK(call_bytes(CUDART_OP_cudaCtxResetPersistingL2Cache, gvs_buf_ptr(b), 1,
               out) < 0);
    return 0;
}

/* The worker's own memory is never device memory. */
static int worker_memory(struct gvs_buf *b, struct gvs_buf *out)
{
    uint64_t mine = (uint64_t)(uintptr_t)worker_bytes;
    static const uint16_t by_ptr[] = {
        CUDART_OP_POINTER_ATTRS, CUDART_OP_MEM_ADVISE,
        CUDART_OP_STREAM_ATTACH_MEM, CUDART_OP_MEM_DISCARD,
        CUDART_OP_IPC_GET_MEM_HANDLE, CUDART_OP_IPC_CLOSE_MEM_HANDLE,
        CUDART_OP_MEM_RANGE_ATTRS};
    for (size_t i = 0; i < sizeof(by_ptr) / sizeof(by_ptr[0]); i++) {
        build(by_ptr[i], b, mine);
        int32_t r = result(by_ptr[i], b, out);
        CHECK(r != SUCCESS && r > REFUSED);
    }
    return 0;
}

/* Counts, sizes and kinds out of bounds are refused before CUDA. */
static int bounds(struct gvs_buf *b, struct gvs_buf *out)
{
    gvs_buf_reset(b);
    gvs_buf_put_u64(b, BOGUS);
    gvs_buf_put_u64(b, 4);
    gvs_buf_put_u32(b, 17);
    CHECK(result(CUDART_OP_MEM_RANGE_ATTRS, b, out) == REFUSED);
    for (uint64_t size = 0; size <= 1; size++) {
        gvs_buf_reset(b);
        gvs_buf_put_u64(b, BOGUS);
        gvs_buf_put_u64(b, 4);
        gvs_buf_put_u32(b, 1);
        gvs_buf_put_i32(b, 1);
        gvs_buf_put_u64(b, size ? (uint64_t)1 << 40 : 0);
        CHECK(result(CUDART_OP_MEM_RANGE_ATTRS, b, out) == REFUSED);
    }
    gvs_buf_reset(b);
    gvs_buf_put_u32(b, 1025);
    CHECK(result(CUDART_OP_ATOMIC_CAPS, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 2);
    gvs_buf_put_u64(b, BOGUS);
    gvs_buf_put_u8(b, 1);
    CHECK(result(CUDART_OP_ARRAY_PROPS, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 0);
    gvs_buf_put_u64(b, BOGUS);
    gvs_buf_put_u8(b, 2);
    CHECK(result(CUDART_OP_ARRAY_PROPS, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 2);
    gvs_buf_put_u64(b, 0);
    gvs_buf_put_u64(b, 16);
    gvs_buf_put_u32(b, 0);
    CHECK(result(CUDART_OP_LOGS_DUMP, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 1);
    gvs_buf_put_u64(b, (uint64_t)1 << 32);
    gvs_buf_put_u64(b, 16);
    gvs_buf_put_u32(b, 0);
    CHECK(result(CUDART_OP_LOGS_DUMP, b, out) == REFUSED);
    /* Handles of another size than CUDA's. */
    static const uint8_t h63[63];
    gvs_buf_reset(b);
    gvs_buf_put_blob(b, h63, sizeof(h63));
    CHECK(result(CUDART_OP_IPC_OPEN_EVENT_HANDLE, b, out) == REFUSED);
    gvs_buf_put_u32(b, 1);
    CHECK(result(CUDART_OP_IPC_OPEN_MEM_HANDLE, b, out) == REFUSED);
    return 0;
}

/* Library requests: staging that never happened, too many options, a
 * fat binary whose header lies, modules that do not exist. */
static int libraries(struct gvs_buf *b, struct gvs_buf *out)
{
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 1);
    gvs_buf_put_u32(b, 0);
    CHECK(result(CUDART_OP_LIBRARY_LOAD, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 2);
    gvs_buf_put_blob(b, "x", 1);
    gvs_buf_put_u32(b, 0);
    CHECK(result(CUDART_OP_LIBRARY_LOAD, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 0);
    gvs_buf_put_blob(b, "x", 1);
    gvs_buf_put_u32(b, 65);
    CHECK(result(CUDART_OP_LIBRARY_LOAD, b, out) == REFUSED);
    uint8_t fat[32] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 99};
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 0);
    gvs_buf_put_blob(b, fat, sizeof(fat));
    gvs_buf_put_u32(b, 0);
    CHECK(result(CUDART_OP_LIBRARY_LOAD, b, out) == INVALID_KERNEL_IMAGE);
    build(CUDART_OP_LIBRARY_KERNEL, b, 0);
    CHECK(result(CUDART_OP_LIBRARY_KERNEL, b, out) == REFUSED);
    build(CUDART_OP_LIBRARY_SYMBOL, b, 0);
    CHECK(result(CUDART_OP_LIBRARY_SYMBOL, b, out) == REFUSED);
    /* Ids the session never handed out. */
    build(CUDART_OP_ARRAY_PLANE, b, 0);
    CHECK(result(CUDART_OP_ARRAY_PLANE, b, out) == INVALID_HANDLE);
    build(CUDART_OP_cudaIpcGetEventHandle, b, 0);
    CHECK(result(CUDART_OP_cudaIpcGetEventHandle, b, out) == INVALID_HANDLE);
    build(CUDART_OP_ASYNC_NOTIFY_UNREGISTER, b, 0);
    CHECK(result(CUDART_OP_ASYNC_NOTIFY_UNREGISTER, b, out) == INVALID_VALUE);
    build(CUDART_OP_LOGS_UNREGISTER, b, 0);
    CHECK(result(CUDART_OP_LOGS_UNREGISTER, b, out) == INVALID_VALUE);
    return 0;
}

/* Unregisters handle (op's), 0 for an async one on device; the result,
 * the callback id answered in *callback. */
static int32_t unregister(uint16_t op, int32_t device, uint64_t handle,
                          uint64_t *callback, struct gvs_buf *b,
                          struct gvs_buf *out)
{
    gvs_buf_reset(b);
    if (op == CUDART_OP_ASYNC_NOTIFY_UNREGISTER)
        gvs_buf_put_i32(b, device);
    gvs_buf_put_u64(b, handle);
    int32_t r = result(op, b, out);
    *callback = 0;
    if (r == SUCCESS && (gvs_buf_get_u64(out, callback) < 0 ||
                         gvs_buf_expect_end(out) < 0))
        return REFUSED - 2;
    return r;
}

/* On the mock: a registration is told at once that the process is over
 * budget, a refused call's log line reaches the log callback, each kind's
 * handles are refused as the other's, and an unregistered callback hears
 * nothing more. */
static int mock_notifications(struct gvs_buf *b, struct gvs_buf *out)
{
    uint64_t async, logs, callback, u64;
    int32_t i32;
    const uint8_t *text;
    size_t len;
    gvs_buf_reset(b);
    gvs_buf_put_i32(b, 5);
    gvs_buf_put_u64(b, 7);
    CHECK(result(CUDART_OP_ASYNC_NOTIFY_REGISTER, b, out) == INVALID_DEVICE);
    CHECK(notifications == 0);
    build(CUDART_OP_ASYNC_NOTIFY_REGISTER, b, 0);
    CHECK(result(CUDART_OP_ASYNC_NOTIFY_REGISTER, b, out) == SUCCESS);
    CHECK(gvs_buf_get_u64(out, &async) == 0 && notifications == 1 &&
          notified_op == CUDART_OP_ASYNC_NOTIFICATION);
    struct gvs_buf *n = gvs_buf_view(notified, notified_len);
    CHECK(n != NULL && gvs_buf_get_u64(n, &callback) == 0 && callback == 7 &&
          gvs_buf_get_u64(n, &u64) == 0 && u64 == async &&
          gvs_buf_get_i32(n, &i32) == 0 && i32 == 1 &&
          gvs_buf_get_u64(n, &u64) == 0 && u64 == (uint64_t)1 << 20 &&
          gvs_buf_expect_end(n) == 0);
    gvs_buf_free(n);

    build(CUDART_OP_LOGS_REGISTER, b, 0);
    CHECK(result(CUDART_OP_LOGS_REGISTER, b, out) == SUCCESS);
    CHECK(gvs_buf_get_u64(out, &logs) == 0 && logs != async);
    gvs_buf_reset(b);
    gvs_buf_put_u32(b, 1);
    CHECK(result(CUDART_OP_LOGS_CURRENT, b, out) == INVALID_VALUE);
    CHECK(notifications == 2 && notified_op == CUDART_OP_LOGS_MESSAGE);
    n = gvs_buf_view(notified, notified_len);
    CHECK(n != NULL && gvs_buf_get_u64(n, &callback) == 0 && callback == 9 &&
          gvs_buf_get_i32(n, &i32) == 0 && i32 == 0 &&
          gvs_buf_get_blob(n, &text, &len) == 0 &&
          gvs_buf_expect_end(n) == 0 && len == 40 &&
          memcmp(text, "[mock] cudaLogsCurrent: invalid argument", 40) == 0);
    gvs_buf_free(n);

    CHECK(unregister(CUDART_OP_LOGS_UNREGISTER, 0, async, &callback, b,
                     out) == INVALID_VALUE);
    CHECK(unregister(CUDART_OP_ASYNC_NOTIFY_UNREGISTER, 0, logs, &callback,
                     b, out) == INVALID_VALUE);
    /* CUDA refuses the wrong device; the registration stays. */
    CHECK(unregister(CUDART_OP_ASYNC_NOTIFY_UNREGISTER, 1, async, &callback,
                     b, out) == INVALID_VALUE);
    CHECK(unregister(CUDART_OP_ASYNC_NOTIFY_UNREGISTER, 0, async, &callback,
                     b, out) == SUCCESS && callback == 7);
    CHECK(unregister(CUDART_OP_ASYNC_NOTIFY_UNREGISTER, 0, async, &callback,
                     b, out) == INVALID_VALUE);
    CHECK(unregister(CUDART_OP_LOGS_UNREGISTER, 0, logs, &callback, b,
                     out) == SUCCESS && callback == 9);
    CHECK(unregister(CUDART_OP_LOGS_UNREGISTER, 0, logs, &callback, b,
                     out) == INVALID_VALUE);
    gvs_buf_reset(b);
    gvs_buf_put_u32(b, 1);
    CHECK(result(CUDART_OP_LOGS_CURRENT, b, out) == INVALID_VALUE);
    CHECK(notifications == 2);
    return 0;
}

/* On the mock: a library loads, its kernels and symbols are found, an
 * option pointing at client memory is refused, the handlers' results. */
static int mock_results(struct gvs_buf *b, struct gvs_buf *out)
{
    uint32_t id, n, index;
    build(CUDART_OP_LIBRARY_LOAD, b, 0);
    CHECK(result(CUDART_OP_LIBRARY_LOAD, b, out) == SUCCESS);
    CHECK(gvs_buf_get_u32(out, &id) == 0 && gvs_buf_get_u32(out, &n) == 0 &&
          n == 4);
    gvs_buf_reset(b);
    gvs_buf_put_u32(b, id);
    gvs_buf_put_str(b, "_Z5emptyv");
    CHECK(result(CUDART_OP_LIBRARY_KERNEL, b, out) == SUCCESS);
    CHECK(gvs_buf_get_u32(out, &index) == 0 && index == 3);
    gvs_buf_reset(b);
    gvs_buf_put_u32(b, id);
    gvs_buf_put_u8(b, 2);
    gvs_buf_put_str(b, "dv");
    CHECK(result(CUDART_OP_LIBRARY_SYMBOL, b, out) == REFUSED);
    gvs_buf_reset(b);
    gvs_buf_put_u8(b, 0);
    gvs_buf_put_blob(b, "// ptx", 6);
    gvs_buf_put_u32(b, 1);
    gvs_buf_put_u32(b, 3); /* cudaJitInfoLogBuffer */
    gvs_buf_put_u64(b, BOGUS);
    CHECK(result(CUDART_OP_LIBRARY_LOAD, b, out) == NOT_SUPPORTED);
    build(CUDART_OP_ARRAY_PROPS, b, 0);
    CHECK(result(CUDART_OP_ARRAY_PROPS, b, out) == INVALID_HANDLE);
    build(CUDART_OP_LOGS_DUMP, b, 0);
    CHECK(result(CUDART_OP_LOGS_DUMP, b, out) == SUCCESS);
    build(CUDART_OP_ATOMIC_CAPS, b, 0);
    CHECK(result(CUDART_OP_ATOMIC_CAPS, b, out) == SUCCESS);
    return 0;
}

int main(int argc, char **argv)
{
    struct gvs_buf *b = gvs_buf_new(1 << 16), *out = gvs_buf_new(1 << 20);
    int mock = harness_mock_arg(argc, argv);
    CHECK(mock >= 0 && b != NULL && out != NULL);
    CHECK(harness_open(argv[1], host_notify) == 0);
    CHECK(all_malformed(b, out) == 0);
    CHECK(worker_memory(b, out) == 0);
    CHECK(bounds(b, out) == 0);
    CHECK(libraries(b, out) == 0);
    if (mock)
        CHECK(mock_results(b, out) == 0 && mock_notifications(b, out) == 0);
    harness_close();
    gvs_buf_free(b);
    gvs_buf_free(out);
    puts("ok");
    return 0;
}
