/*
 * cudart.backend_streams[_mock]: the stream, event, callback and async
 * memory handlers on malformed requests and ids from nowhere (a negative
 * GVS_E_* code or cudaErrorInvalidResourceHandle, never a crash), loaded
 * as gvsd loads the plugin.  With --mock (the plugin built on the
 * host-memory mock) also a host callback's round trip, and its release
 * once the client has gone, and posted copies' latched failures.
 * usage: backend_streams PLUGIN.so [--mock]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "backend_harness.h"
#include "cudart_ops.h"
#include "remote_be.h"
#include "remote_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"

#define NOT_READY 600
#define NOT_SUPPORTED 801

/* Notifications the layer sent: the last CALLBACK_RUN's id, how many
 * CALLBACK_WAITING; once `gone`, sends fail as on a closed connection. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t noted = PTHREAD_COND_INITIALIZER;
static uint64_t run_id, bytes_token;
static int nwaiting, gone;
/* The tokens of the D2H_BYTES seen, in order. */
static uint64_t tokens[8];
static int ntokens;

static int host_notify(struct gvs_session *session, uint16_t plugin_id,
                       uint16_t op, const void *body, size_t len)
{
    struct gvs_buf *b = gvs_buf_view(body, len);
    uint64_t id = 0;
    int32_t status = -1;
    uint8_t keep = 1;
    int ok = b != NULL && plugin_id == REMOTE_PLUGIN_ID &&
             gvs_buf_get_u64(b, &id) == 0;
    /* A stream's callback runs once: the client need not keep it. */
    if (ok && op == REMOTE_OP_CALLBACK_RUN)
        ok = gvs_buf_get_i32(b, &status) == 0 && status == 0 &&
             gvs_buf_get_u8(b, &keep) == 0 && keep == 0;
    /* D2H_BYTES: the token, then the copy's bytes. */
    ok = ok && (op == REMOTE_OP_D2H_BYTES || gvs_buf_expect_end(b) == 0);
    gvs_buf_free(b);
    (void)session;
    pthread_mutex_lock(&lock);
    if (!ok)
        dprintf(2, "FAIL: malformed notification %u\n", (unsigned)op);
    else if (op == REMOTE_OP_CALLBACK_RUN)
        run_id = id;
    else if (op == REMOTE_OP_CALLBACK_WAITING)
        nwaiting++;
    else if (op == REMOTE_OP_D2H_BYTES) {
        bytes_token = id;
        if (ntokens < 8)
            tokens[ntokens++] = id;
    }
    pthread_cond_broadcast(&noted);
    int rc = gone ? GVS_E_CLOSED : 0;
    pthread_mutex_unlock(&lock);
    return rc;
}

static int waits_for_run(uint64_t id)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 10;
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (run_id != id && rc == 0)
        rc = pthread_cond_timedwait(&noted, &lock, &t);
    pthread_mutex_unlock(&lock);
    return run_id == id;
}

static int host_func(uint64_t stream, uint64_t id, struct gvs_buf *in,
                     struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    gvs_buf_put_u64(in, id);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u32(in, 0);
    return call(CUDART_OP_HOST_FUNC, in, out) == 0 ? result_of(out) : -1000;
}

static const uint16_t my_ops[] = {
    CUDART_OP_STREAM_CREATE,      CUDART_OP_STREAM_DESTROY,
    CUDART_OP_cudaStreamQuery,       CUDART_OP_cudaStreamSynchronize,
    CUDART_OP_cudaStreamGetFlags,   CUDART_OP_cudaStreamGetPriority,
    CUDART_OP_cudaStreamGetDevice,  CUDART_OP_cudaStreamGetId,
    CUDART_OP_cudaStreamWaitEvent,  CUDART_OP_EVENT_CREATE,
    CUDART_OP_EVENT_DESTROY,      CUDART_OP_cudaEventRecordWithFlags,
    CUDART_OP_cudaEventQuery,        CUDART_OP_cudaEventSynchronize,
    CUDART_OP_cudaEventElapsedTime, CUDART_OP_HOST_FUNC,
    CUDART_OP_MEMCPY_ASYNC_H2D,
    CUDART_OP_MEMCPY_ASYNC_D2H,   CUDART_OP_MEMCPY_ASYNC_D2D,
    CUDART_OP_MEMSET_ASYNC,       CUDART_OP_MEM_PREFETCH_ASYNC,
    CUDART_OP_MEMCPY_POSTED,      CUDART_OP_MEMCPY_ASYNC_H2D_POSTED,
};

static int malformed(struct gvs_buf *in, struct gvs_buf *out)
{
    for (size_t i = 0; i < sizeof(my_ops) / sizeof(my_ops[0]); i++) {
        gvs_buf_reset(in);
        gvs_buf_put_u8(in, 0);
        CHECK(call(my_ops[i], in, out) < 0);
        gvs_buf_reset(in);
        for (int j = 0; j < 64; j++)
            gvs_buf_put_u8(in, 0);
        CHECK(call(my_ops[i], in, out) < 0);
    }
    /* Notifications are not requests; the layer's ops are not ours. */
    CHECK(call_layer_noreply(REMOTE_OP_CALLBACK_RUN, in, out, 0) == 1000);
    CHECK(call_layer_noreply(REMOTE_OP_CALLBACK_WAITING, in, out, 0) ==
          1000);
    CHECK(call(REMOTE_OP_CALLBACK_DONE, in, out) == 1000);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 0);
    CHECK(call_layer_noreply(REMOTE_OP_CALLBACK_DONE, in, out, 1) < 0);

    /* HOST_FUNC: kinds 0 and 1 only, and flags for kind 1 only. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, 1);
    gvs_buf_put_u32(in, 2);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_HOST_FUNC, in, out) == GVS_E_PROTO);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, 1);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u32(in, 1);
    CHECK(call(CUDART_OP_HOST_FUNC, in, out) == GVS_E_PROTO);

    /* A completion no callback waits for. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 77);
    CHECK(call_layer_noreply(REMOTE_OP_CALLBACK_DONE, in, out, 1) ==
          GVS_E_RANGE);

    /* A D2H chunk larger than the protocol allows. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, GVS_BULK_CHUNK + 1);
    CHECK(call(CUDART_OP_MEMCPY_ASYNC_D2H, in, out) == GVS_E_RANGE);
    /* Posted copies of no bytes, and of more than a piece. */
    for (uint64_t len = 0; len <= 1; len++) {
        gvs_buf_reset(in);
        gvs_buf_put_u64(in, 0);
        gvs_buf_put_u64(in, 4096);
        gvs_buf_put_u64(in, len == 0 ? 0 : GVS_BULK_CHUNK + 1);
        gvs_buf_put_u64(in, 1);
        CHECK(call(CUDART_OP_MEMCPY_POSTED, in, out) == GVS_E_RANGE);
    }
    return 0;
}

static int foreign_ids(struct gvs_buf *in, struct gvs_buf *out)
{
    static const uint16_t on_stream[] = {
        CUDART_OP_STREAM_DESTROY,     CUDART_OP_cudaStreamQuery,
        CUDART_OP_cudaStreamSynchronize, CUDART_OP_cudaStreamGetFlags,
        CUDART_OP_cudaStreamGetPriority, CUDART_OP_cudaStreamGetDevice,
        CUDART_OP_cudaStreamGetId};
    static const uint16_t on_event[] = {
        CUDART_OP_EVENT_DESTROY, CUDART_OP_cudaEventQuery,
        CUDART_OP_cudaEventSynchronize};
    for (size_t i = 0; i < sizeof(on_stream) / sizeof(on_stream[0]); i++) {
        CHECK(on_u64(on_stream[i], BOGUS, in, out) == INVALID_HANDLE);
        CHECK(gvs_buf_expect_end(out) == 0);
    }
    for (size_t i = 0; i < sizeof(on_event) / sizeof(on_event[0]); i++) {
        CHECK(on_u64(on_event[i], BOGUS, in, out) == INVALID_HANDLE);
        CHECK(gvs_buf_expect_end(out) == 0);
    }
    /* The default streams are not the client's to destroy. */
    CHECK(on_u64(CUDART_OP_STREAM_DESTROY, 0, in, out) == INVALID_HANDLE);
    CHECK(on_u64(CUDART_OP_STREAM_DESTROY, 2, in, out) == INVALID_HANDLE);

    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_cudaEventRecordWithFlags, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_cudaStreamWaitEvent, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, BOGUS + 1);
    CHECK(call(CUDART_OP_cudaEventElapsedTime, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    CHECK(gvs_buf_expect_end(out) == 0);
    CHECK(host_func(BOGUS, 5, in, out) == INVALID_HANDLE);

    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, 16);
    CHECK(call(CUDART_OP_MEMCPY_ASYNC_D2H, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    CHECK(gvs_buf_expect_end(out) == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, 16);
    CHECK(call(CUDART_OP_MEMCPY_ASYNC_D2D, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);

    /* The worker's own memory is never a copy's end. */
    static char host_bytes[64];
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)host_bytes);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK(call(CUDART_OP_MEMCPY_ASYNC_H2D, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)host_bytes);
    gvs_buf_put_u64(in, 4);
    CHECK(call(CUDART_OP_MEMCPY_ASYNC_D2H, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)host_bytes);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, 4);
    CHECK(call(CUDART_OP_MEMSET_ASYNC, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    return 0;
}

/* A callback's round trip on a mock stream, then one whose client goes
 * away while it waits (and comes back for the tests after). */
static int round_trip(struct gvs_buf *in, struct gvs_buf *out)
{
    uint64_t stream;
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_i32(in, 0);
    CHECK(call(CUDART_OP_STREAM_CREATE, in, out) == 0);
    CHECK(result_of(out) == 0);
    CHECK(gvs_buf_get_u64(out, &stream) == 0 && stream >= (1u << 16));

    CHECK(host_func(stream, 42, in, out) == 0);
    CHECK(waits_for_run(42));
    CHECK(on_u64(CUDART_OP_cudaStreamQuery, stream, in, out) == NOT_READY);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 42);
    CHECK(call_layer_noreply(REMOTE_OP_CALLBACK_DONE, in, out, 1) == 0);
    CHECK(on_u64(CUDART_OP_cudaStreamSynchronize, stream, in, out) == 0);

    CHECK(host_func(stream, 43, in, out) == 0);
    CHECK(waits_for_run(43));
    pthread_mutex_lock(&lock);
    gone = 1;
    pthread_mutex_unlock(&lock);
    CHECK(on_u64(CUDART_OP_cudaStreamSynchronize, stream, in, out) == 0);
    CHECK(nwaiting >= 1);
    CHECK(on_u64(CUDART_OP_STREAM_DESTROY, stream, in, out) == 0);
    CHECK(on_u64(CUDART_OP_cudaStreamQuery, stream, in, out) == INVALID_HANDLE);
    pthread_mutex_lock(&lock);
    gone = 0;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* A MEMCPY_SHARED request with flags, host to device, whose host
 * address lies in no shared region. */
static void bogus_shared_copy(struct gvs_buf *in, uint32_t flags)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, flags);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, 16);
}

/* The lane's next synchronizing call answers the failure latched, and
 * the one after it success. */
static int reported_once(struct gvs_buf *in, struct gvs_buf *out)
{
    gvs_buf_reset(in);
    CHECK(call(CUDART_OP_cudaDeviceSynchronize, in, out) == 0);
    CHECK_EQ(result_of(out), INVALID_VALUE);
    gvs_buf_reset(in);
    CHECK(call(CUDART_OP_cudaDeviceSynchronize, in, out) == 0);
    CHECK_EQ(result_of(out), 0);
    return 0;
}

/* A posted copy of shared memory: waiting for its stream is refused (it
 * may run on the session's reader), and a failure it still meets (here
 * a host address in no shared region) is the lane's next synchronizing
 * call's to answer, once; as is a posted device-to-device copy's, and a
 * posted copy of bytes'. */
static int posted_shared_copy(struct gvs_buf *in, struct gvs_buf *out)
{
    for (uint32_t flags = 0; flags < 4; flags++) {
        bogus_shared_copy(in, flags);
        int rc = call_noreply(CUDART_OP_MEMCPY_SHARED_POSTED, in, out, 1);
        CHECK_EQ(rc, flags == 1 ? 0 : GVS_E_PROTO);
    }
    CHECK(reported_once(in, out) == 0);
    /* So is a posted copy within device memory that meets none. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, BOGUS + 64);
    gvs_buf_put_u64(in, 16);
    CHECK_EQ(call_noreply(CUDART_OP_MEMCPY_ASYNC_D2D, in, out, 1), 0);
    gvs_buf_reset(in);
    CHECK(call(CUDART_OP_cudaDeviceSynchronize, in, out) == 0);
    CHECK_EQ(result_of(out), INVALID_VALUE);
    /* And a posted copy of bytes to no device memory. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK_EQ(call_noreply(CUDART_OP_MEMCPY_ASYNC_H2D_POSTED, in, out, 1), 0);
    gvs_buf_reset(in);
    CHECK(call(CUDART_OP_cudaDeviceSynchronize, in, out) == 0);
    CHECK_EQ(result_of(out), INVALID_VALUE);
    return 0;
}

/* bogus_shared_copy's request with a word and a value. */
static void bogus_with_word(struct gvs_buf *in, uint32_t flags)
{
    bogus_shared_copy(in, flags);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 7);
}

/* A staged chunk's signal (GVS_REMOTE_SHARED_SIGNAL): only with ON_STREAM
 * alone, posted or not, and with its word's address and value; a chunk
 * whose copy fails (here a host address in no shared region) latches
 * the failure, and a word in no region is not written. */
static int signal_shared_copy(struct gvs_buf *in, struct gvs_buf *out)
{
    for (uint32_t flags = 4; flags < 8; flags++) {
        bogus_with_word(in, flags);
        int rc = call_noreply(CUDART_OP_MEMCPY_SHARED_POSTED, in, out, 1);
        CHECK_EQ(rc, flags == 5 ? 0 : GVS_E_PROTO);
    }
    CHECK(reported_once(in, out) == 0);
    /* Without the word, or with an unknown flag. */
    bogus_shared_copy(in, 5);
    CHECK_EQ(call_noreply(CUDART_OP_MEMCPY_SHARED_POSTED, in, out, 1),
             GVS_E_SHORT);
    bogus_shared_copy(in, 17);
    CHECK_EQ(call_noreply(CUDART_OP_MEMCPY_SHARED_POSTED, in, out, 1),
             GVS_E_PROTO);
    /* Waited for, the failure is the reply's. */
    bogus_with_word(in, 5);
    CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out), 0);
    CHECK_EQ(result_of(out), INVALID_VALUE);
    return 0;
}

/* A synchronous copy whose word the worker stores before its reply
 * (STORE): only with ON_STREAM and WAIT, waited for; the failure is the
 * reply's. */
static int store_shared_copy(struct gvs_buf *in, struct gvs_buf *out)
{
    const uint32_t flags[] = {9, 11, 13, 15, 27};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        bogus_with_word(in, flags[i]);
        CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out),
                 flags[i] == 11 ? 0 : GVS_E_PROTO);
        if (flags[i] == 11)
            CHECK_EQ(result_of(out), INVALID_VALUE);
    }
    /* Posted. */
    bogus_with_word(in, 11);
    CHECK_EQ(call_noreply(CUDART_OP_MEMCPY_SHARED_POSTED, in, out, 1),
             GVS_E_PROTO);
    return 0;
}

/* A STORE copy of len bytes between dev and the shared region's bytes
 * at offset 4096, its word at offset 0 to take value. */
static void store_request(struct gvs_buf *in, uint64_t client, uint64_t dev,
                          uint32_t value)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_WAIT |
                            GVS_REMOTE_SHARED_STORE);
    gvs_buf_put_u32(in, GVS_REMOTE_SHARED_H2D);
    gvs_buf_put_u64(in, dev);
    gvs_buf_put_u64(in, client + 4096);
    gvs_buf_put_u64(in, 64);
    gvs_buf_put_u64(in, client);
    gvs_buf_put_u32(in, value);
}

/* The data area (len bytes) shared at client's address, and 4 KiB of
 * device memory at *dev. */
static int share_area(uint64_t client, size_t len, uint64_t *dev,
                      struct gvs_buf *in, struct gvs_buf *out)
{
    int32_t r;
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, GVS_REMOTE_SHARE_AREA);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, client);
    gvs_buf_put_u64(in, len);
    CHECK_EQ(call(CUDART_OP_HOSTMEM_SHARE, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 4096);
    CHECK_EQ(call(CUDART_OP_cudaMalloc, in, out), 0);
    CHECK(gvs_buf_get_i32(out, &r) == 0 && r == 0);
    CHECK(gvs_buf_get_u64(out, dev) == 0 && *dev != 0);
    return 0;
}

/* A STORE copy of memory shared from the data area: a success is
 * answered by its word alone (no reply); a failure stores the value
 * with SIGNAL_ASK and replies; a client that gave up polling (its word
 * holds the value with SIGNAL_GAVE_UP) gets the reply and its word
 * stays; a value with either of those bits is refused. */
static int stored_word(struct gvs_buf *in, struct gvs_buf *out)
{
    const uint64_t client = 0x7f0000000000ull;
    size_t len;
    _Atomic uint32_t *word = harness_area(&len);
    uint64_t dev = 0;
    CHECK_EQ(share_area(client, len, &dev, in, out), 0);

    store_request(in, client, dev, 7);
    CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out), 0);
    CHECK_EQ(harness_answered(), 1);
    CHECK_EQ(atomic_load(word), 7u);

    atomic_store(word, 8u | GVS_REMOTE_SIGNAL_GAVE_UP);
    store_request(in, client, dev, 8);
    CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out), 0);
    CHECK_EQ(harness_answered(), 0);
    CHECK_EQ(result_of(out), 0);
    CHECK_EQ(atomic_load(word), 8u | GVS_REMOTE_SIGNAL_GAVE_UP);

    store_request(in, client, BOGUS, 9);
    CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out), 0);
    CHECK_EQ(harness_answered(), 0);
    CHECK_EQ(result_of(out), INVALID_VALUE);
    CHECK_EQ(atomic_load(word), 9u | GVS_REMOTE_SIGNAL_ASK);

    store_request(in, client, dev, 10u | GVS_REMOTE_SIGNAL_ASK);
    CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out), GVS_E_PROTO);
    store_request(in, client, dev, 10u | GVS_REMOTE_SIGNAL_GAVE_UP);
    CHECK_EQ(call(CUDART_OP_MEMCPY_SHARED, in, out), GVS_E_PROTO);

    gvs_buf_reset(in);
    gvs_buf_put_u64(in, client);
    CHECK_EQ(call(CUDART_OP_HOSTMEM_UNSHARE, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    return 0;
}

/* A posted SIGNAL copy on stream of 64 bytes from the shared region's
 * bytes at offset 4096 to dev, its word at client + word_off to take
 * value. */
static int post_signal(uint64_t stream, uint64_t client, uint64_t dev,
                       uint64_t word_off, uint32_t value, struct gvs_buf *in,
                       struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    gvs_buf_put_u32(in, GVS_REMOTE_SHARED_ON_STREAM | GVS_REMOTE_SHARED_SIGNAL);
    gvs_buf_put_u32(in, GVS_REMOTE_SHARED_H2D);
    gvs_buf_put_u64(in, dev);
    gvs_buf_put_u64(in, client + 4096);
    gvs_buf_put_u64(in, 64);
    gvs_buf_put_u64(in, client + word_off);
    gvs_buf_put_u32(in, value);
    return call_noreply(CUDART_OP_MEMCPY_SHARED_POSTED, in, out, 1);
}

/* Word i of the region's start once the device is idle. */
static uint32_t word_after_sync(_Atomic uint32_t *w, int i, struct gvs_buf *in,
                                struct gvs_buf *out)
{
    gvs_buf_reset(in);
    if (call(CUDART_OP_cudaDeviceSynchronize, in, out) != 0 ||
        result_of(out) != 0)
        return 0xdeadu;
    return atomic_load(&w[i]);
}

static int set_device(int32_t d, struct gvs_buf *in, struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_i32(in, d);
    CHECK_EQ(call_noreply(CUDART_OP_cudaSetDevice, in, out, 1), 0);
    return 0;
}

/* Begins and ends a capture of stream, and destroys the empty graph. */
static int capture_nothing(uint64_t stream, struct gvs_buf *in,
                           struct gvs_buf *out)
{
    uint64_t graph = 0;
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    gvs_buf_put_i32(in, 0);
    CHECK_EQ(call(CUDART_OP_STREAM_BEGIN_CAPTURE, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    CHECK_EQ(call(CUDART_OP_STREAM_END_CAPTURE, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    CHECK(gvs_buf_get_u64(out, &graph) == 0 && graph != 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, graph);
    CHECK_EQ(call(CUDART_OP_GRAPH_DESTROY, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    return 0;
}

static int stream_call(uint16_t op, uint64_t *stream, struct gvs_buf *in,
                       struct gvs_buf *out)
{
    gvs_buf_reset(in);
    if (op == CUDART_OP_STREAM_CREATE) {
        gvs_buf_put_u32(in, 0);
        gvs_buf_put_i32(in, 0);
    } else {
        gvs_buf_put_u64(in, *stream);
    }
    CHECK_EQ(call(op, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    if (op == CUDART_OP_STREAM_CREATE)
        CHECK(gvs_buf_get_u64(out, stream) == 0 && *stream > 2);
    return 0;
}

/* The signal of a posted copy is held back (remote shared.c, "held"):
 * dropped when the next copy of shared memory signals the same word on
 * the same stream, enqueued first when it signals another word or names
 * another stream, or when the stream is destroyed; never held on a
 * default stream (legacy, per-thread).  A failing copy that replaces a held
 * signal still has its value written behind the stream, with
 * SIGNAL_ASK, and its failure is reported once.  A copy of another
 * device leaves it held, a stream's destruction there stores it once
 * its stream is done; a capture's beginning enqueues it.  (Words at 0, 64, 128
 * and 192 bytes: w[0], w[16], w[32], w[48].) */
static int held_signals(struct gvs_buf *in, struct gvs_buf *out)
{
    const uint64_t client = 0x7f0000000000ull;
    size_t len;
    _Atomic uint32_t *w = harness_area(&len);
    uint64_t dev = 0, st = 0;
    CHECK_EQ(share_area(client, len, &dev, in, out), 0);
    for (int i = 0; i <= 48; i += 16)
        atomic_store(&w[i], 0u);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_CREATE, &st, in, out), 0);

    CHECK_EQ(post_signal(st, client, dev, 0, 31, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 0u);
    CHECK_EQ(post_signal(st, client, dev + 64, 0, 30, in, out), 0);
    CHECK_EQ(post_signal(st, client, dev + 128, 64, 33, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 30u);
    CHECK_EQ(word_after_sync(w, 16, in, out), 0u);
    CHECK_EQ(post_signal(0, client, dev + 192, 128, 40, in, out), 0);
    CHECK_EQ(word_after_sync(w, 16, in, out), 33u);
    CHECK_EQ(word_after_sync(w, 32, in, out), 40u);
    CHECK_EQ(post_signal(st, client, dev, 0, 45, in, out), 0);
    CHECK_EQ(post_signal(2, client, dev + 256, 192, 41, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 45u);
    CHECK_EQ(word_after_sync(w, 48, in, out), 41u);
    /* Held on device 0, left held by a copy on device 1, which signals
     * at once, and enqueued by device 0's next. */
    CHECK_EQ(post_signal(st, client, dev, 0, 50, in, out), 0);
    CHECK_EQ(set_device(1, in, out), 0);
    CHECK_EQ(post_signal(0, client, dev, 64, 51, in, out), 0);
    CHECK_EQ(word_after_sync(w, 16, in, out), 51u);
    CHECK_EQ(word_after_sync(w, 0, in, out), 45u);
    CHECK_EQ(set_device(0, in, out), 0);
    CHECK_EQ(post_signal(st, client, dev, 64, 52, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 50u);
    /* Taken by a stream's destruction on device 1: stored once its
     * stream is done. */
    uint64_t other = 0;
    CHECK_EQ(set_device(1, in, out), 0);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_CREATE, &other, in, out), 0);
    CHECK_EQ(atomic_load(&w[16]), 51u);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_DESTROY, &other, in, out), 0);
    CHECK_EQ(atomic_load(&w[16]), 52u);
    CHECK_EQ(set_device(0, in, out), 0);
    /* A capture's beginning enqueues it: a capturing stream would take
     * it into the graph. */
    CHECK_EQ(post_signal(st, client, dev, 0, 60, in, out), 0);
    CHECK_EQ(capture_nothing(st, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 60u);
    CHECK_EQ(post_signal(st, client, dev, 0, 35, in, out), 0);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_DESTROY, &st, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 35u);

    CHECK_EQ(stream_call(CUDART_OP_STREAM_CREATE, &st, in, out), 0);
    CHECK_EQ(post_signal(st, client, dev, 0, 36, in, out), 0);
    CHECK_EQ(post_signal(st, client, BOGUS, 0, 37, in, out), 0);
    CHECK(reported_once(in, out) == 0);
    CHECK_EQ(atomic_load(&w[0]), 35u);
    CHECK_EQ(post_signal(st, client, dev, 64, 38, in, out), 0);
    CHECK_EQ(word_after_sync(w, 0, in, out), 37u | GVS_REMOTE_SIGNAL_ASK);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_DESTROY, &st, in, out), 0);
    CHECK_EQ(word_after_sync(w, 16, in, out), 38u);

    gvs_buf_reset(in);
    gvs_buf_put_u64(in, dev);
    CHECK_EQ(call(CUDART_OP_cudaFree, in, out), 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, client);
    CHECK_EQ(call(CUDART_OP_HOSTMEM_UNSHARE, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    return 0;
}

/* A posted device-to-host copy sent without a reply (its pieces one
 * after the other) that fails (no device memory there): its token comes
 * back alone, so that the client waits for no bytes, and the failure is
 * the lane's next synchronizing call's. */
static int posted_d2h_failure(struct gvs_buf *in, struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, 0x5eed);
    CHECK_EQ(call_noreply(CUDART_OP_MEMCPY_POSTED, in, out, 1), 0);
    pthread_mutex_lock(&lock);
    uint64_t token = bytes_token;
    pthread_mutex_unlock(&lock);
    CHECK_EQ(token, (uint64_t)0x5eed);
    CHECK(reported_once(in, out) == 0);
    return 0;
}

static int post_d2h(uint64_t stream, uint64_t dev, uint64_t token,
                    int followed, struct gvs_buf *in, struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    gvs_buf_put_u64(in, dev);
    gvs_buf_put_u64(in, 16);
    gvs_buf_put_u64(in, token);
    return followed ? call_followed(CUDART_OP_MEMCPY_POSTED, in, out, 1)
                    : call_noreply(CUDART_OP_MEMCPY_POSTED, in, out, 1);
}

/* A posted device-to-host copy of len bytes that waits for its reply:
 * its result, or -1000. */
static int32_t ask_d2h(uint64_t stream, uint64_t dev, uint64_t len,
                       uint64_t token, struct gvs_buf *in,
                       struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    gvs_buf_put_u64(in, dev);
    gvs_buf_put_u64(in, len);
    gvs_buf_put_u64(in, token);
    return call(CUDART_OP_MEMCPY_POSTED, in, out) == 0 ? result_of(out)
                                                       : -1000;
}

/* Lets the stream held by host function id go on, and waits for it. */
static int release(uint64_t stream, uint64_t id, struct gvs_buf *in,
                   struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, id);
    CHECK_EQ(call_layer_noreply(REMOTE_OP_CALLBACK_DONE, in, out, 1), 0);
    CHECK_EQ(on_u64(CUDART_OP_cudaStreamSynchronize, stream, in, out), 0);
    return 0;
}

/* The worker's page-locked buffers for posted copies count bytes (remote
 * posted.c): 64 MiB of pieces of 1 MiB and of GVS_BULK_CHUNK together.
 * With the stream held by a host function, 64 copies of 1 MiB hold one
 * each and the next is refused (not supported: the client copies the
 * ordinary way), as is a larger one; once their bytes are sent, copies of
 * GVS_BULK_CHUNK free the free smaller buffers to make room, as many as
 * 64 MiB holds, and the next of either size is refused. */
static int posted_d2h_pool(struct gvs_buf *in, struct gvs_buf *out)
{
    const uint64_t piece = 1u << 20, chunk = GVS_BULK_CHUNK;
    const int pieces = 64, chunks = (int)((64u << 20) / chunk);
    uint64_t dev = 0, stream = 0;
    int32_t r;
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, chunk);
    CHECK_EQ(call(CUDART_OP_cudaMalloc, in, out), 0);
    CHECK(gvs_buf_get_i32(out, &r) == 0 && r == 0);
    CHECK(gvs_buf_get_u64(out, &dev) == 0 && dev != 0);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_CREATE, &stream, in, out), 0);

    CHECK_EQ(host_func(stream, 90, in, out), 0);
    CHECK(waits_for_run(90));
    for (int i = 0; i < pieces; i++)
        CHECK_EQ(ask_d2h(stream, dev, piece, 100 + i, in, out), 0);
    CHECK_EQ(ask_d2h(stream, dev, piece, 200, in, out), NOT_SUPPORTED);
    CHECK_EQ(ask_d2h(stream, dev, chunk, 201, in, out), NOT_SUPPORTED);
    CHECK_EQ(release(stream, 90, in, out), 0);

    CHECK_EQ(host_func(stream, 91, in, out), 0);
    CHECK(waits_for_run(91));
    for (int i = 0; i < chunks; i++)
        CHECK_EQ(ask_d2h(stream, dev, chunk, 300 + i, in, out), 0);
    CHECK_EQ(ask_d2h(stream, dev, chunk, 400, in, out), NOT_SUPPORTED);
    CHECK_EQ(ask_d2h(stream, dev, piece, 401, in, out), NOT_SUPPORTED);
    CHECK_EQ(release(stream, 91, in, out), 0);

    CHECK_EQ(stream_call(CUDART_OP_STREAM_DESTROY, &stream, in, out), 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, dev);
    CHECK_EQ(call(CUDART_OP_cudaFree, in, out), 0);
    return 0;
}

/* Tokens seen once the device is idle (their host functions ran). */
static int tokens_seen(struct gvs_buf *in, struct gvs_buf *out)
{
    if (call(CUDART_OP_cudaDeviceSynchronize, in, out) != 0 ||
        result_of(out) != 0)
        return -1;
    pthread_mutex_lock(&lock);
    int n = ntokens;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Posted device-to-host copies that follow one another on a stream
 * share one host function (remote posted.c): while gvsd says the next
 * request is another one (next_same), a copy's bytes wait for the batch,
 * which goes on the stream with a copy not so followed, or before the
 * first copy on another stream; the bytes come in order. */
static int posted_d2h_batch(struct gvs_buf *in, struct gvs_buf *out)
{
    uint64_t dev = 0, stream = 0;
    int32_t r;
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 4096);
    CHECK_EQ(call(CUDART_OP_cudaMalloc, in, out), 0);
    CHECK(gvs_buf_get_i32(out, &r) == 0 && r == 0);
    CHECK(gvs_buf_get_u64(out, &dev) == 0 && dev != 0);
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_i32(in, 0);
    CHECK_EQ(call(CUDART_OP_STREAM_CREATE, in, out), 0);
    CHECK(result_of(out) == 0 && gvs_buf_get_u64(out, &stream) == 0);
    pthread_mutex_lock(&lock);
    ntokens = 0;
    pthread_mutex_unlock(&lock);

    CHECK_EQ(post_d2h(0, dev, 1, 1, in, out), 0);
    CHECK_EQ(post_d2h(0, dev + 16, 2, 1, in, out), 0);
    CHECK_EQ(tokens_seen(in, out), 0);
    CHECK_EQ(post_d2h(stream, dev + 32, 3, 1, in, out), 0);
    CHECK_EQ(tokens_seen(in, out), 2);
    CHECK_EQ(post_d2h(stream, dev + 48, 4, 0, in, out), 0);
    CHECK_EQ(tokens_seen(in, out), 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(tokens[i], (uint64_t)i + 1);
    /* One that fails (no device memory there) still ends the batch: its
     * token comes alone, the batch's bytes behind the stream (in either
     * order: no bytes wait for a token of none), the failure with the
     * next synchronizing call. */
    CHECK_EQ(post_d2h(0, dev, 5, 1, in, out), 0);
    CHECK_EQ(post_d2h(0, BOGUS, 6, 0, in, out), 0);
    CHECK_EQ(call(CUDART_OP_cudaDeviceSynchronize, in, out), 0);
    CHECK(result_of(out) != 0);
    CHECK_EQ(tokens_seen(in, out), 6);
    CHECK(tokens[4] != tokens[5]);
    CHECK_EQ(tokens[4] + tokens[5], (uint64_t)11);
    return 0;
}

static int post_d2d(uint64_t stream, uint64_t dst, uint64_t src, int followed,
                    int noreply, struct gvs_buf *in, struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, stream);
    gvs_buf_put_u64(in, dst);
    gvs_buf_put_u64(in, src);
    gvs_buf_put_u64(in, 64);
    return followed ? call_followed(CUDART_OP_MEMCPY_ASYNC_D2D, in, out, noreply)
                    : call_noreply(CUDART_OP_MEMCPY_ASYNC_D2D, in, out, noreply);
}

/* A posted device-to-device copy that joins the thread's batch (gvsd
 * said the next request is another: next_same) and one with a reply
 * behind it to the same bytes: the batched one goes on the stream first
 * (remote batch.c), so the second's bytes stay.  (The mock's device
 * memory is this process's.) */
static int batch_then_reply(struct gvs_buf *in, struct gvs_buf *out)
{
    uint64_t a = 0, st = 0;
    int32_t r;
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 192);
    CHECK_EQ(call(CUDART_OP_cudaMalloc, in, out), 0);
    CHECK(gvs_buf_get_i32(out, &r) == 0 && r == 0);
    CHECK(gvs_buf_get_u64(out, &a) == 0 && a != 0);
    memset((void *)(uintptr_t)a, 1, 64);
    memset((void *)(uintptr_t)(a + 64), 2, 64);
    memset((void *)(uintptr_t)(a + 128), 0, 64);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_CREATE, &st, in, out), 0);
    CHECK_EQ(post_d2d(st, a + 128, a, 1, 1, in, out), 0);
    CHECK_EQ(post_d2d(st, a + 128, a + 64, 0, 0, in, out), 0);
    CHECK_EQ(result_of(out), 0);
    CHECK_EQ(stream_call(CUDART_OP_cudaStreamSynchronize, &st, in, out), 0);
    CHECK_EQ(((uint8_t *)(uintptr_t)a)[128], 2);
    CHECK_EQ(((uint8_t *)(uintptr_t)a)[191], 2);
    CHECK_EQ(stream_call(CUDART_OP_STREAM_DESTROY, &st, in, out), 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, a);
    CHECK_EQ(call(CUDART_OP_cudaFree, in, out), 0);
    return 0;
}

int main(int argc, char **argv)
{
    struct gvs_buf *in = gvs_buf_new(1 << 20), *out = gvs_buf_new(1 << 24);
    int mock = harness_mock_arg(argc, argv);
    CHECK(mock >= 0 && in != NULL && out != NULL);
    CHECK(harness_open(argv[1], host_notify) == 0);
    CHECK(malformed(in, out) == 0);
    CHECK(foreign_ids(in, out) == 0);
    if (mock) {
        CHECK(round_trip(in, out) == 0);
        CHECK(posted_shared_copy(in, out) == 0);
        CHECK(signal_shared_copy(in, out) == 0);
        CHECK(store_shared_copy(in, out) == 0);
        CHECK(stored_word(in, out) == 0);
        CHECK(held_signals(in, out) == 0);
        CHECK(posted_d2h_failure(in, out) == 0);
        CHECK(posted_d2h_batch(in, out) == 0);
        CHECK(posted_d2h_pool(in, out) == 0);
        CHECK(batch_then_reply(in, out) == 0);
    }
    harness_close();
    gvs_buf_free(in);
    gvs_buf_free(out);
    puts("ok");
    return 0;
}
