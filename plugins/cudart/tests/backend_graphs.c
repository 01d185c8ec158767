/*
 * cudart.backend_graphs[_mock]: the handlers of pitched and 3D copies,
 * arrays, textures, pools, graphs and managed memory on malformed
 * requests and on ids and values the session never handed out (a
 * negative GVS_E_* code, or CUDA's code for a bad handle; never a crash,
 * never the worker's own memory), loaded as gvsd loads the plugin.  With
 * --mock (the plugin built on the host-memory mock) also ids that exist
 * but name another kind of object, and ids that are gone.
 * usage: backend_graphs PLUGIN.so [--mock]
 */
#include <string.h>

#include "backend_harness.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"

static char worker_bytes[4096];

/* The last USER_OBJECT_DESTROY's callback id. */
static uint64_t destroyed_callback;

static int host_notify(struct gvs_session *s, uint16_t plugin_id, uint16_t op,
                       const void *body, size_t len)
{
    (void)s, (void)plugin_id;
    if (op == CUDART_OP_USER_OBJECT_DESTROY && len == 8)
        memcpy(&destroyed_callback, body, 8);
    return 0;
}

static void put_side(struct gvs_buf *b, uint8_t kind, uint64_t addr,
                     uint64_t pitch)
{
    gvs_buf_put_u8(b, kind);
    gvs_buf_put_u64(b, addr);
    gvs_buf_put_u64(b, pitch);
    gvs_buf_put_u64(b, 1);
    gvs_buf_put_u64(b, 0);
    gvs_buf_put_u64(b, 0);
    gvs_buf_put_u64(b, 0);
}

static void put_box(struct gvs_buf *b, uint64_t w, uint64_t h, uint64_t d)
{
    gvs_buf_put_u64(b, w);
    gvs_buf_put_u64(b, h);
    gvs_buf_put_u64(b, d);
}

static void put_tail(struct gvs_buf *b, uint8_t async)
{
    gvs_buf_put_u8(b, async);
    gvs_buf_put_u64(b, 0);
}

static int copies(struct gvs_buf *in, struct gvs_buf *out)
{
    uint64_t worker = (uint64_t)(uintptr_t)worker_bytes;
    /* A host side never comes from the wire. */
    gvs_buf_reset(in);
    put_side(in, 2, worker, 16);
    put_box(in, 4, 1, 1);
    put_tail(in, 0);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK(call(CUDART_OP_MEMCPY3D_TO, in, out) == GVS_E_PROTO);
    /* The rows must be exactly the box's bytes. */
    gvs_buf_reset(in);
    put_side(in, 0, BOGUS, 16);
    put_box(in, 4, 2, 1);
    put_tail(in, 0);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK(call(CUDART_OP_MEMCPY3D_TO, in, out) == GVS_E_PROTO);
    gvs_buf_reset(in);
    put_side(in, 0, BOGUS, 16);
    put_box(in, 4, 1, 1);
    put_tail(in, 2);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK(call(CUDART_OP_MEMCPY3D_TO, in, out) == GVS_E_PROTO);
    /* The worker's own memory is no device memory. */
    gvs_buf_reset(in);
    put_side(in, 0, worker, 16);
    put_box(in, 4, 1, 1);
    put_tail(in, 0);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK(call(CUDART_OP_MEMCPY3D_TO, in, out) == 0);
    CHECK(result_of(out) != SUCCESS);
    CHECK(memcmp(worker_bytes, "abcd", 4) != 0);
    /* More than a chunk of rows in one reply, or none. */
    gvs_buf_reset(in);
    put_side(in, 0, worker, GVS_BULK_CHUNK);
    put_box(in, GVS_BULK_CHUNK, 2, 1);
    put_tail(in, 0);
    CHECK(call(CUDART_OP_MEMCPY3D_FROM, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    put_side(in, 0, worker, 16);
    put_box(in, 0, 1, 1);
    put_tail(in, 0);
    CHECK(call(CUDART_OP_MEMCPY3D_FROM, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    put_side(in, 0, worker, 16);
    put_box(in, 16, 4, 1);
    put_tail(in, 0);
    CHECK(call(CUDART_OP_MEMCPY3D_FROM, in, out) == 0);
    CHECK(result_of(out) != SUCCESS);
    /* An overflowing box, an array id from nowhere. */
    gvs_buf_reset(in);
    put_side(in, 0, worker, 16);
    put_side(in, 0, worker, 16);
    put_box(in, UINT64_MAX / 2, 4, 1);
    put_tail(in, 0);
    CHECK(call(CUDART_OP_MEMCPY3D_DEV, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    put_side(in, 1, BOGUS, 0);
    put_side(in, 1, BOGUS, 0);
    put_box(in, 4, 1, 1);
    put_tail(in, 0);
    CHECK(call(CUDART_OP_MEMCPY3D_DEV, in, out) == 0);
    CHECK(result_of(out) != SUCCESS);
    /* A memset of the worker's memory. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, worker);
    gvs_buf_put_u64(in, 16);
    gvs_buf_put_u64(in, 4);
    gvs_buf_put_i32(in, 0x55);
    put_box(in, 16, 4, 1);
    put_tail(in, 0);
    CHECK(call(CUDART_OP_MEMSET3D, in, out) == 0);
    CHECK(result_of(out) != SUCCESS && worker_bytes[0] != 0x55);
    /* Managed memory pushes land in device memory only. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, worker);
    gvs_buf_put_blob(in, "wxyz", 4);
    CHECK(call_noreply(CUDART_OP_MANAGED_PUSH, in, out, 1) == 0);
    CHECK(memcmp(worker_bytes, "wxyz", 4) != 0);
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 77);
    gvs_buf_put_str(in, "counter");
    CHECK(call(CUDART_OP_MANAGED_VAR, in, out) == GVS_E_RANGE);
    return 0;
}

static int foreign_ids(struct gvs_buf *in, struct gvs_buf *out)
{
    CHECK(on_u64(CUDART_OP_ARRAY_FREE, BOGUS, in, out) == INVALID_HANDLE);
    CHECK(on_u64(CUDART_OP_ARRAY_INFO, BOGUS, in, out) == INVALID_HANDLE);
    CHECK(on_u64(CUDART_OP_MIPMAP_FREE, BOGUS, in, out) == INVALID_HANDLE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_MIPMAP_LEVEL, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    /* Texture and surface values the session never made. */
    CHECK(on_u64(CUDART_OP_TEXTURE_DESTROY, 1, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_TEXTURE_DESC, BOGUS, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_SURFACE_DESTROY, BOGUS, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_SURFACE_DESC, 0, in, out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_i32(in, 99);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_SURFACE_CREATE, in, out) == GVS_E_PROTO);
    /* Pools. */
    CHECK(on_u64(CUDART_OP_MEMPOOL_DESTROY, BOGUS, in, out) == INVALID_VALUE);
    uint64_t trim[] = {BOGUS, 0};
    CHECK(on_u64s(CUDART_OP_cudaMemPoolTrimTo, 2, trim, in, out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1025);
    CHECK(call(CUDART_OP_MEMPOOL_SET_ACCESS, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 2);
    gvs_buf_put_i32(in, 0);
    CHECK(call(CUDART_OP_DEVICE_GET_MEMPOOL, in, out) == GVS_E_PROTO);
    /* Graphs. */
    CHECK(on_u64(CUDART_OP_GRAPH_DESTROY, BOGUS, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_GRAPH_CLONE, BOGUS, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_GRAPH_EXEC_DESTROY, BOGUS, in, out) ==
          INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_NODE_GET_TYPE, BOGUS, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_NODE_DESTROY, BOGUS, in, out) == INVALID_VALUE);
    uint64_t launch[] = {BOGUS, 0};
    CHECK(on_u64s(CUDART_OP_cudaGraphLaunch, 2, launch, in, out) ==
          INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u8(in, 0);
    gvs_buf_put_u64(in, (1u << 20) + 1);
    CHECK(call(CUDART_OP_GRAPH_NODES, in, out) == GVS_E_PROTO);
    /* A dependency count the request cannot hold, a node type from
     * nowhere, a kernel of no module. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1000000);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u8(in, 99);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == GVS_E_PROTO);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u8(in, 0 /* cudaGraphNodeTypeKernel */);
    gvs_buf_put_u32(in, 12345);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u8(in, 5 /* cudaGraphNodeTypeEmpty */);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u8(in, 0);
    gvs_buf_put_u32(in, 100000);
    CHECK(call(CUDART_OP_GRAPH_EDIT_EDGES, in, out) == GVS_E_RANGE);
    return 0;
}

/* The rest of the graph, capture and stream attribute ops on ids the
 * session never handed out and on malformed requests. */
static int more_foreign(struct gvs_buf *in, struct gvs_buf *out)
{
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u8(in, 0);
    CHECK(call(CUDART_OP_NODE_GET_PARAMS, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    CHECK(call(CUDART_OP_NODE_GET_PARAMS, in, out) < 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 8 /* priority */);
    CHECK(call(CUDART_OP_KERNEL_NODE_GET_ATTR, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 8);
    gvs_buf_put_i32(in, 1);
    CHECK(call(CUDART_OP_KERNEL_NODE_SET_ATTR, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 8);
    CHECK(call(CUDART_OP_KERNEL_NODE_SET_ATTR, in, out) < 0);
    uint64_t two[] = {BOGUS, BOGUS + 1};
    CHECK(on_u64s(CUDART_OP_KERNEL_NODE_COPY_ATTRS, 2, two, in, out) ==
          INVALID_VALUE);
    /* Streams: attributes and capture of a stream that is not one. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 8);
    CHECK(call(CUDART_OP_STREAM_GET_ATTR, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 8);
    gvs_buf_put_i32(in, 1);
    CHECK(call(CUDART_OP_STREAM_SET_ATTR, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    CHECK(on_u64s(CUDART_OP_STREAM_COPY_ATTRS, 2, two, in, out) ==
          INVALID_HANDLE);
    gvs_buf_reset(in);
    gvs_buf_put_i32(in, 3);
    CHECK(call(CUDART_OP_LANE_CAPTURE_MODE, in, out) == GVS_E_PROTO);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_i32(in, 0);
    CHECK(call(CUDART_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 5);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1000000);
    CHECK(call(CUDART_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH, in, out) ==
          GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_STREAM_UPDATE_CAPTURE_DEPS, in, out) == 0);
    CHECK(result_of(out) == INVALID_HANDLE);
    /* Graph memory, conditionals, user objects, DOT output. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    for (int i = 0; i < 4; i++)
        gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u64(in, 64);
    gvs_buf_put_u32(in, 1025);
    CHECK(call(CUDART_OP_GRAPH_ADD_MEM_ALLOC, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    for (int i = 0; i < 4; i++)
        gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u64(in, 64);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_ADD_MEM_ALLOC, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_COND_HANDLE_CREATE, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u64(in, 1);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_ADD_CONDITIONAL, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_USER_OBJECT_REF, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 2);
    CHECK(call(CUDART_OP_USER_OBJECT_REF, in, out) == GVS_E_PROTO);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_USER_OBJECT, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, BOGUS);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_DOT_PRINT, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    return 0;
}

/* On the mock: a user object's last reference sends the client's
 * callback id; a node of the wrong type is refused. */
static int more_mock(struct gvs_buf *in, struct gvs_buf *out)
{
    uint64_t object, graph, node;
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 77);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 1 /* cudaUserObjectNoDestructorSync */);
    CHECK(call(CUDART_OP_USER_OBJECT_CREATE, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && gvs_buf_get_u64(out, &object) == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, object);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 1);
    CHECK(call(CUDART_OP_USER_OBJECT_REF, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && destroyed_callback == 77);
    /* Gone with its last reference. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, object);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u32(in, 1);
    CHECK(call(CUDART_OP_USER_OBJECT_REF, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_CREATE, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && gvs_buf_get_u64(out, &graph) == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, graph);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u8(in, 5);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && gvs_buf_get_u64(out, &node) == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, node);
    gvs_buf_put_u8(in, 2 /* memset */);
    CHECK(call(CUDART_OP_NODE_GET_PARAMS, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, node);
    gvs_buf_put_u8(in, 5);
    CHECK(call(CUDART_OP_NODE_GET_PARAMS, in, out) == 0);
    CHECK(result_of(out) == NOT_SUPPORTED);
    CHECK(on_u64(CUDART_OP_GRAPH_DESTROY, graph, in, out) == SUCCESS);
    return 0;
}

/* On the mock: ids exist, but for another kind of object, then are gone. */
static int mistaken_ids(struct gvs_buf *in, struct gvs_buf *out)
{
    uint64_t graph, array, node;
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_GRAPH_CREATE, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && gvs_buf_get_u64(out, &graph) == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 0);
    gvs_buf_put_i32(in, 32);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_i32(in, 2 /* float */);
    put_box(in, 8, 8, 0);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_ARRAY_MALLOC, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && gvs_buf_get_u64(out, &array) == 0);
    /* A graph is no executable graph, no array, no pool; an array is no
     * graph nor node. */
    uint64_t launch[] = {graph, 0};
    CHECK(on_u64s(CUDART_OP_cudaGraphLaunch, 2, launch, in, out) ==
          INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_ARRAY_INFO, graph, in, out) == INVALID_HANDLE);
    CHECK(on_u64(CUDART_OP_MEMPOOL_DESTROY, graph, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_GRAPH_DESTROY, array, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_NODE_GET_TYPE, array, in, out) == INVALID_VALUE);
    /* A dependency of another graph. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, graph);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u8(in, 5);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == 0);
    CHECK(result_of(out) == SUCCESS && gvs_buf_get_u64(out, &node) == 0);
    CHECK(on_u64(CUDART_OP_NODE_GET_TYPE, node, in, out) == SUCCESS);
    CHECK(on_u64(CUDART_OP_GRAPH_CLONE, graph, in, out) == SUCCESS);
    uint64_t clone;
    CHECK(gvs_buf_get_u64(out, &clone) == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, clone);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_u64(in, node);
    gvs_buf_put_u8(in, 5);
    CHECK(call(CUDART_OP_GRAPH_ADD_NODE, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    /* A texture over a host pointer of the worker. */
    gvs_buf_reset(in);
    gvs_buf_put_i32(in, 2 /* linear */);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)worker_bytes);
    for (int i = 0; i < 5; i++)
        gvs_buf_put_i32(in, i == 0 ? 32 : 0);
    gvs_buf_put_u64(in, sizeof(worker_bytes));
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_SURFACE_CREATE, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    /* Gone: destroyed graphs take their nodes with them. */
    CHECK(on_u64(CUDART_OP_GRAPH_DESTROY, graph, in, out) == SUCCESS);
    CHECK(on_u64(CUDART_OP_GRAPH_DESTROY, graph, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_NODE_GET_TYPE, node, in, out) == INVALID_VALUE);
    CHECK(on_u64(CUDART_OP_GRAPH_DESTROY, clone, in, out) == SUCCESS);
    CHECK(on_u64(CUDART_OP_ARRAY_FREE, array, in, out) == SUCCESS);
    CHECK(on_u64(CUDART_OP_ARRAY_FREE, array, in, out) == INVALID_HANDLE);
    return 0;
}

int main(int argc, char **argv)
{
    struct gvs_buf *in = gvs_buf_new(1 << 20), *out = gvs_buf_new(1 << 24);
    int mock = harness_mock_arg(argc, argv);
    CHECK(mock >= 0 && in != NULL && out != NULL);
    CHECK(harness_open(argv[1], host_notify) == 0);
    CHECK(copies(in, out) == 0);
    CHECK(foreign_ids(in, out) == 0);
    CHECK(more_foreign(in, out) == 0);
    if (mock)
        CHECK(mistaken_ids(in, out) == 0);
    if (mock)
        CHECK(more_mock(in, out) == 0);
    harness_close();
    gvs_buf_free(in);
    gvs_buf_free(out);
    puts("ok");
    return 0;
}
