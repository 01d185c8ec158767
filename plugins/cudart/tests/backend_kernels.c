/*
 * cudart.backend_kernels[_mock]: the kernel, launch-configuration and
 * device handlers on malformed requests (a negative GVS_E_* code, never
 * a crash), a few well-formed ones whose result does not depend on a GPU,
 * and the capture of the worker's stdout and stderr: what is written on
 * them before a blocking op reaches the client, as DEVICE_OUTPUT
 * notifications, before that op returns.  Loaded as gvsd loads the
 * plugin; the process stands for the worker.
 * usage: backend_kernels PLUGIN.so
 */
#include <stdlib.h>
#include <string.h>

#include "backend_harness.h"
#include "cudart_ops.h"
#include "gvs/err.h"
#include "remote_ops.h"

/* What DEVICE_OUTPUT notifications carried, per stream. */
static char captured[3][8192];
static size_t ncaptured[3];
static int bad_notes;

static int host_notify(struct gvs_session *session, uint16_t plugin_id,
                       uint16_t op, const void *body, size_t len)
{
    struct gvs_buf *b = gvs_buf_view(body, len);
    const uint8_t *bytes;
    size_t n;
    uint8_t fd;
    (void)session;
    if (b == NULL || plugin_id != REMOTE_PLUGIN_ID ||
        op != REMOTE_OP_DEVICE_OUTPUT || gvs_buf_get_u8(b, &fd) < 0 ||
        (fd != 1 && fd != 2) || gvs_buf_get_blob(b, &bytes, &n) < 0 ||
        gvs_buf_expect_end(b) < 0 || ncaptured[fd] + n > sizeof(captured[fd]))
        bad_notes++;
    else {
        memcpy(captured[fd] + ncaptured[fd], bytes, n);
        ncaptured[fd] += n;
    }
    gvs_buf_free(b);
    return 0;
}

/* A kernel's wire name and a launch configuration with n attributes
 * (cluster dimensions), the last one cut short when truncate is set. */
static void put_config(struct gvs_buf *in, uint32_t nattrs, int truncate)
{
    for (int i = 0; i < 6; i++)
        gvs_buf_put_u32(in, 1);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u32(in, nattrs);
    for (uint32_t i = 0; i < nattrs; i++) {
        gvs_buf_put_u32(in, 4 /* cudaLaunchAttributeClusterDimension */);
        gvs_buf_put_u32(in, 1);
        gvs_buf_put_u32(in, 1);
        if (!truncate || i + 1 < nattrs)
            gvs_buf_put_u32(in, 1);
    }
}

static int malformed(struct gvs_buf *in, struct gvs_buf *out)
{
    static const uint16_t with_args[] = {
        CUDART_OP_FUNC_GET_ATTRIBUTES,
        CUDART_OP_FUNC_SET_ATTRIBUTE,
        CUDART_OP_FUNC_SET_CACHE_CONFIG,
        CUDART_OP_FUNC_SET_SHARED_MEM_CONFIG,
        CUDART_OP_OCCUPANCY_BLOCKS,
        CUDART_OP_OCCUPANCY_DYNAMIC_SMEM,
        CUDART_OP_OCCUPANCY_CLUSTER_SIZE,
        CUDART_OP_OCCUPANCY_CLUSTERS,
        CUDART_OP_LAUNCH_EX,
        CUDART_OP_KERNEL_SET_ATTRIBUTE_FOR_DEVICE,
        CUDART_OP_MODULE_LINK_STAGE,
        CUDART_OP_MEMCPY_PEER,
        CUDART_OP_cudaDeviceGetPCIBusId,
        CUDART_OP_cudaDeviceGetByPCIBusId,
        CUDART_OP_cudaChooseDevice,
        CUDART_OP_DEVICE_SET_SHARED_MEM_CONFIG,
    };
    for (size_t i = 0; i < sizeof(with_args) / sizeof(with_args[0]); i++) {
        gvs_buf_reset(in);
        gvs_buf_put_u8(in, 1);
        CHECK(call(with_args[i], in, out) < 0);
    }
    /* Kernels of modules the session never loaded. */
    static const uint16_t kernel_ops[] = {
        CUDART_OP_FUNC_GET_ATTRIBUTES, CUDART_OP_FUNC_SET_ATTRIBUTE,
        CUDART_OP_OCCUPANCY_BLOCKS, CUDART_OP_OCCUPANCY_CLUSTERS};
    for (size_t i = 0; i < sizeof(kernel_ops) / sizeof(kernel_ops[0]); i++) {
        gvs_buf_reset(in);
        gvs_buf_put_u32(in, 0);
        gvs_buf_put_u32(in, 0);
        CHECK(call(kernel_ops[i], in, out) == GVS_E_RANGE);
    }
    /* LAUNCH_EX: an entry point that does not exist, more attributes
     * than allowed, an attribute cut short, an unknown module. */
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 2);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u32(in, 0);
    put_config(in, 0, 0);
    gvs_buf_put_blob(in, "", 0);
    CHECK(call(CUDART_OP_LAUNCH_EX, in, out) < 0);
    gvs_buf_reset(in);
    put_config(in, 65, 0);
    CHECK(call(CUDART_OP_OCCUPANCY_CLUSTERS, in, out) < 0);
    gvs_buf_reset(in);
    gvs_buf_put_u32(in, 0);
    gvs_buf_put_u32(in, 0);
    put_config(in, 2, 1);
    CHECK(call(CUDART_OP_OCCUPANCY_CLUSTER_SIZE, in, out) < 0);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 0);
    gvs_buf_put_u32(in, 9);
    gvs_buf_put_u32(in, 0);
    put_config(in, 1, 0);
    gvs_buf_put_blob(in, "", 0);
    CHECK(call(CUDART_OP_LAUNCH_EX, in, out) == GVS_E_RANGE);

    /* MODULE_LINK_STAGE: unknown flags, a new list that is not a new
     * image, a piece continuing no image; then a list that is fine. */
    static const uint8_t bad_flags[] = {4, 1, 0};
    for (size_t i = 0; i < sizeof(bad_flags); i++) {
        gvs_buf_reset(in);
        gvs_buf_put_u8(in, bad_flags[i]);
        gvs_buf_put_blob(in, "abc", 3);
        CHECK(call(CUDART_OP_MODULE_LINK_STAGE, in, out) == GVS_E_PROTO);
    }
    static const uint8_t good_flags[] = {3, 0, 2};
    for (size_t i = 0; i < sizeof(good_flags); i++) {
        gvs_buf_reset(in);
        gvs_buf_put_u8(in, good_flags[i]);
        gvs_buf_put_blob(in, "abc", 3);
        CHECK(call(CUDART_OP_MODULE_LINK_STAGE, in, out) == 0);
    }

    /* Devices: a bad flag, a bus id longer than any, a property block of
     * the wrong size, a peer copy's bad async flag. */
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 2);
    gvs_buf_put_str(in, "0");
    CHECK(call_layer_noreply(REMOTE_OP_VISIBLE_DEVICES, in, out, 1) == GVS_E_PROTO);
    char *long_id = malloc(2048);
    CHECK(long_id != NULL);
    memset(long_id, '0', 2047);
    long_id[2047] = '\0';
    gvs_buf_reset(in);
    gvs_buf_put_str(in, long_id);
    free(long_id);
    CHECK(call(CUDART_OP_cudaDeviceGetByPCIBusId, in, out) < 0);
    gvs_buf_reset(in);
    for (int i = 0; i < 100; i++)
        gvs_buf_put_u8(in, 0);
    CHECK(call(CUDART_OP_cudaChooseDevice, in, out) < 0);
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, 0);
    gvs_buf_put_u8(in, 2);
    CHECK(call(CUDART_OP_MEMCPY_PEER, in, out) < 0);
    return 0;
}

static int well_formed(struct gvs_buf *in, struct gvs_buf *out)
{
    /* Host addresses are never copied to or from. */
    static char host_bytes[64];
    gvs_buf_reset(in);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)host_bytes);
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, (uint64_t)(uintptr_t)(host_bytes + 32));
    gvs_buf_put_i32(in, 0);
    gvs_buf_put_u64(in, 16);
    gvs_buf_put_u8(in, 0);
    CHECK(call(CUDART_OP_MEMCPY_PEER, in, out) == 0);
    CHECK(result_of(out) == INVALID_VALUE);
    CHECK(gvs_buf_expect_end(out) == 0);

    /* A bus id always comes back as a string, whatever the result. */
    const uint8_t *text;
    size_t n;
    gvs_buf_reset(in);
    gvs_buf_put_i32(in, 64);
    gvs_buf_put_i32(in, 0);
    CHECK(call(CUDART_OP_cudaDeviceGetPCIBusId, in, out) == 0);
    CHECK(result_of(out) != -1000);
    CHECK(gvs_buf_get_blob(out, &text, &n) == 0 && n < 64);
    CHECK(gvs_buf_expect_end(out) == 0);

    /* The client's list narrows the worker's, once per session. */
    setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 1);
    gvs_buf_put_str(in, "1,9,0");
    CHECK(call_layer_noreply(REMOTE_OP_VISIBLE_DEVICES, in, out, 1) == 0);
    CHECK(gvs_buf_len(out) == 0);
    CHECK(strcmp(getenv("CUDA_VISIBLE_DEVICES"), "5") == 0);
    gvs_buf_reset(in);
    gvs_buf_put_u8(in, 1);
    gvs_buf_put_str(in, "0");
    CHECK(call_layer_noreply(REMOTE_OP_VISIBLE_DEVICES, in, out, 1) == GVS_E_PROTO);
    return 0;
}

/* What the process writes on its stdout and stderr reaches the client
 * once a blocking op (here cudaDeviceSynchronize) has run, before it
 * returns: its reply would follow. */
static int capture(struct gvs_buf *in, struct gvs_buf *out)
{
    printf("device says %d\n", 42);
    fprintf(stderr, "device assert\n");
    gvs_buf_reset(in);
    CHECK(call(CUDART_OP_cudaDeviceSynchronize, in, out) == 0);
    CHECK(bad_notes == 0);
    static const char said[] = "device says 42\n";
    static const char assert_msg[] = "device assert\n";
    CHECK(ncaptured[1] == strlen(said) &&
          memcmp(captured[1], said, strlen(said)) == 0);
    CHECK(ncaptured[2] == strlen(assert_msg) &&
          memcmp(captured[2], assert_msg, strlen(assert_msg)) == 0);
    return 0;
}

int main(int argc, char **argv)
{
    struct gvs_buf *in = gvs_buf_new(1 << 20), *out = gvs_buf_new(1 << 20);
    CHECK(argc == 2 && in != NULL && out != NULL);
    FILE *real_stdout = stdout;
    CHECK(harness_open(argv[1], host_notify) == 0);
    CHECK(stdout != real_stdout);
    int rc = malformed(in, out);
    if (rc == 0)
        rc = well_formed(in, out);
    if (rc == 0)
        rc = capture(in, out);
    harness_close();
    CHECK(stdout == real_stdout);
    gvs_buf_free(in);
    gvs_buf_free(out);
    if (rc == 0)
        puts("ok");
    return rc;
}
