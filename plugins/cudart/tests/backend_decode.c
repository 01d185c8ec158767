/*
 * cudart.backend_decode: the backend's handlers take requests apart
 * strictly.  Loads gvs-cudart.so as gvsd does and feeds its handlers
 * malformed and out-of-range requests (negative GVS_E_* expected) and a
 * few well-formed ones whose result does not depend on having a GPU.
 * usage: backend_decode PLUGIN.so
 */
#include "backend_harness.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "gvs/proto.h"

int main(int argc, char **argv)
{
    struct gvs_buf *in = gvs_buf_new(1 << 20), *out = gvs_buf_new(1 << 24);
    CHECK(argc == 2 && in != NULL && out != NULL);
    gvs_plugin_entry_fn entry = harness_load(argv[1]);
    CHECK(entry != NULL);
    CHECK(entry(GVS_PLUGIN_ABI + 1, &plugin) == GVS_E_VERSION);
    /* No client: nothing here notifies, and stdout stays the test's. */
    CHECK(harness_start(entry, NULL) == 0);
    CHECK(plugin->id == CUDART_PLUGIN_ID);
    CHECK(plugin->table_hash == CUDART_TABLE_HASH);

    /* A trailing byte is refused by every handler. */
    for (const struct gvs_op *o = plugin->ops; o->op != 0; o++) {
        gvs_buf_reset(in);
        for (int i = 0; i < 64; i++)
            gvs_buf_put_u8(in, 0);
        CHECK(call(o->op, in, out) < 0);
    }
    /* Truncated requests of ops that take arguments. */
    static const uint16_t with_args[] = {
        CUDART_OP_cudaGetDeviceProperties, CUDART_OP_cudaDeviceGetAttribute,
        CUDART_OP_cudaSetDevice,           CUDART_OP_cudaMalloc,
        CUDART_OP_cudaFree,                CUDART_OP_cudaMemset,
        CUDART_OP_MEMCPY_H2D,              CUDART_OP_MEMCPY_D2H,
        CUDART_OP_MEMCPY_D2D,              
        CUDART_OP_MODULE_LOAD,             CUDART_OP_MODULE_GLOBALS,
        CUDART_OP_MODULE_UNLOAD,           CUDART_OP_LAUNCH};
    for (size_t i = 0; i < sizeof(with_args) / sizeof(with_args[0]); i++) {
        gvs_buf_reset(in);
        gvs_buf_put_u8(in, 0);
        CHECK(call(with_args[i], in, out) < 0);
    }

    /* Unknown module ids. */
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_MODULE_UNLOAD, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 7);
    CHECK(call(CUDART_OP_MODULE_GLOBALS, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    for (int i = 0; i < 8; i++)
        gvs_buf_put_u32(in, 1);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_blob(in, "", 0);
    CHECK(call(CUDART_OP_LAUNCH, in, out) == GVS_E_RANGE);

    /* A D2H chunk larger than the protocol allows. */
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 4096);
    gvs_buf_put_u64(in, GVS_BULK_CHUNK + 1);
    CHECK(call(CUDART_OP_MEMCPY_D2H, in, out) == GVS_E_RANGE);

    /* MODULE_LOAD: a bad staged flag, a name count the body cannot hold,
     * then a well-formed request whose fat binary is not one. */
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 2);
    CHECK(call(CUDART_OP_MODULE_LOAD, in, out) < 0);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 0);
    gvs_buf_put_blob(in, "x", 1);
    gvs_buf_put_u32(in, 1000000);
    CHECK(call(CUDART_OP_MODULE_LOAD, in, out) == GVS_E_RANGE);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 0);
    gvs_buf_put_blob(in, "not a fat binary", 16);
    gvs_buf_put_u32(in, 1);
    gvs_buf_put_str(in, "_Z1kv");
    gvs_buf_put_u32(in, 0);
    CHECK(call(CUDART_OP_MODULE_LOAD, in, out) == 0);
    CHECK(result_of(out) == 200 /* cudaErrorInvalidKernelImage */);
    CHECK(gvs_buf_expect_end(out) == 0);

    /* Host addresses are never copied to or from. */
    static char host_bytes[64];
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)host_bytes);
    gvs_buf_put_blob(in, "abcd", 4);
    CHECK(call(CUDART_OP_MEMCPY_H2D, in, out) == 0);
    CHECK(result_of(out) == 1 /* cudaErrorInvalidValue */);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)host_bytes);
    gvs_buf_put_u64(in, 4);
    CHECK(call(CUDART_OP_MEMCPY_D2H, in, out) == 0);
    CHECK(result_of(out) == 1);
    CHECK(gvs_buf_expect_end(out) == 0);

    /* Works with or without a GPU. */
    gvs_buf_reset(in);
    CHECK(call(CUDART_OP_cudaDriverGetVersion, in, out) == 0);
    CHECK(result_of(out) == 0);

    harness_close();
    gvs_buf_free(in);
    gvs_buf_free(out);
    puts("ok");
    return 0;
}
