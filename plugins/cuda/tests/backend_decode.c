/*
 * cuda.backend_decode: every handler of the driver backend takes its
 * request apart strictly and answers hostile values with a CUresult.
 * Loads the mock-driver gvs-cuda.so as gvsd does (cudart's
 * backend_harness.h) and, for each op of its table, runs the valid
 * request, each of its truncations and the request plus a trailing byte
 * (refused: a negative GVS_E_* code), each of its bits flipped and
 * out-of-range values in each argument (a reply: its CUresult, and the
 * outputs only after CUDA_SUCCESS).  Each request lies in a heap block of
 * exactly its length, so that the ASan build (tools/ci-hardening.sh)
 * catches a handler reading past it.
 * usage: backend_decode MOCK-PLUGIN.so
 */
#include <cuda.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend_harness.h"
#include "cuda_ops.h"
#include "gvs/err.h"

/* The mock driver's devices (mock_driver.c). */
#define MOCK_DEVICES 2
/* The longest device name DEVICE_GET_NAME replies (cuda.api). */
#define NAME_MAX_LEN 255

/* What an argument is, which picks its out-of-range values. */
enum arg_kind { FLAGS, ORDINAL, ATTRIBUTE };

/* What follows CUDA_SUCCESS in the reply. */
enum reply_kind { NOTHING, INT, INT2, UUID, SIZE, NAME };

/* An op's request, each argument a 4-byte integer (cuda.api), and its
 * reply. */
struct op_case {
    uint16_t op;
    int nargs;
    enum arg_kind kind[2];
    int32_t valid[2];
    enum reply_kind reply;
};

static const struct op_case cases[] = {
    {CUDA_OP_cuInit, 1, {FLAGS}, {0}, NOTHING},
    {CUDA_OP_cuDriverGetVersion, 0, {0}, {0}, INT},
    {CUDA_OP_cuDeviceGetCount, 0, {0}, {0}, INT},
    {CUDA_OP_cuDeviceGet, 1, {ORDINAL}, {1}, INT},
    {CUDA_OP_cuDeviceGetAttribute, 2, {ATTRIBUTE, ORDINAL},
     {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1}, INT},
    {CUDA_OP_cuDeviceGetUuid, 1, {ORDINAL}, {1}, UUID},
    {CUDA_OP_cuDeviceGetUuid_v2, 1, {ORDINAL}, {1}, UUID},
    {CUDA_OP_cuDeviceComputeCapability, 1, {ORDINAL}, {0}, INT2},
    {CUDA_OP_cuDeviceTotalMem_v2, 1, {ORDINAL}, {1}, SIZE},
    {CUDA_OP_DEVICE_GET_NAME, 1, {ORDINAL}, {0}, NAME},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* Out-of-range values of each kind and what the driver answers them. */
static const int32_t bad_flags[] = {1, INT32_MAX, -1};
static const int32_t bad_ordinals[] = {-1, MOCK_DEVICES, INT32_MAX,
                                       INT32_MIN};
static const int32_t bad_attributes[] = {-1, 0, CU_DEVICE_ATTRIBUTE_MAX,
                                         INT32_MAX};

static struct gvs_buf *out;

/* Runs op on the len bytes at req, copied to a block of exactly len
 * bytes; returns the handler's return. */
static int run(uint16_t op, const uint8_t *req, size_t len)
{
    uint8_t *copy = malloc(len > 0 ? len : 1);
    struct gvs_buf *in = copy != NULL ? gvs_buf_view(copy, len) : NULL;
    if (in == NULL)
        abort();
    memcpy(copy, req, len);
    int rc = call(op, in, out);
    gvs_buf_free(in);
    free(copy);
    return rc;
}

/* The request of the case's arguments in v. */
static size_t encode(const struct op_case *k, const int32_t *v, uint8_t *req)
{
    for (int i = 0; i < k->nargs; i++)
        for (int b = 0; b < 4; b++) /* little-endian, as on the wire */
            req[4 * i + b] = (uint8_t)((uint32_t)v[i] >> 8 * b);
    return 4 * (size_t)k->nargs;
}

/* A refusal: a negative GVS_E_* code. */
static int refused(int rc)
{
    CHECK(rc < 0);
    CHECK(strcmp(gvs_errname(rc), "UNKNOWN") != 0);
    return 0;
}

/* A reply of handler return rc: 0, a CUresult, and after CUDA_SUCCESS
 * exactly the outputs of the case's kind, with *result set.  Or a
 * refusal, *result -1. */
static int well_formed(const struct op_case *k, int rc, int32_t *result)
{
    *result = -1;
    if (rc != 0)
        return refused(rc);
    CHECK(gvs_buf_get_i32(out, result) == 0 && *result >= 0);
    if (*result == CUDA_SUCCESS) {
        uint8_t outputs[16];
        const uint8_t *name;
        size_t len;
        switch (k->reply) {
        case NOTHING:
            break;
        case INT:
            CHECK(gvs_buf_get_bytes(out, outputs, 4) == 0);
            break;
        case INT2:
        case SIZE:
            CHECK(gvs_buf_get_bytes(out, outputs, 8) == 0);
            break;
        case UUID:
            CHECK(gvs_buf_get_bytes(out, outputs, 16) == 0);
            break;
        case NAME:
            CHECK(gvs_buf_get_blob(out, &name, &len) == 0);
            CHECK(len <= NAME_MAX_LEN && memchr(name, 0, len) == NULL);
            break;
        }
    }
    CHECK(gvs_buf_expect_end(out) == 0);
    return 0;
}

/* Every hostile variant of one op's valid request. */
static int check_op(const struct op_case *k)
{
    uint8_t req[9];
    size_t len = encode(k, k->valid, req);
    int32_t result;

    CHECK(well_formed(k, run(k->op, req, len), &result) == 0);
    CHECK(result == CUDA_SUCCESS);

    for (size_t n = 0; n < len; n++)
        CHECK(refused(run(k->op, req, n)) == 0);
    req[len] = 0;
    CHECK(run(k->op, req, len + 1) == GVS_E_TRAILING);

    /* A flipped bit keeps the length: always a reply. */
    for (size_t bit = 0; bit < 8 * len; bit++) {
        req[bit / 8] ^= (uint8_t)(1u << bit % 8);
        CHECK(well_formed(k, run(k->op, req, len), &result) == 0);
        CHECK(result >= 0);
        req[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }

    for (int i = 0; i < k->nargs; i++) {
        const int32_t *bad = bad_ordinals;
        size_t nbad = sizeof(bad_ordinals) / sizeof(bad_ordinals[0]);
        int32_t expect = CUDA_ERROR_INVALID_DEVICE;
        if (k->kind[i] == FLAGS) {
            bad = bad_flags;
            nbad = sizeof(bad_flags) / sizeof(bad_flags[0]);
            expect = CUDA_ERROR_INVALID_VALUE;
        } else if (k->kind[i] == ATTRIBUTE) {
            bad = bad_attributes;
            nbad = sizeof(bad_attributes) / sizeof(bad_attributes[0]);
            expect = CUDA_ERROR_INVALID_VALUE;
        }
        for (size_t j = 0; j < nbad; j++) {
            int32_t v[2] = {k->valid[0], k->valid[1]};
            v[i] = bad[j];
            len = encode(k, v, req);
            CHECK(well_formed(k, run(k->op, req, len), &result) == 0);
            if (result != expect)
                dprintf(2, "op %u arg %d = %d: %d\n", k->op, i, bad[j],
                        result);
            CHECK(result == expect);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    out = gvs_buf_new(1 << 16);
    CHECK(argc == 2 && out != NULL);
    gvs_plugin_entry_fn entry = harness_load(argv[1]);
    CHECK(entry != NULL);
    CHECK(entry(GVS_PLUGIN_ABI + 1, &plugin) == GVS_E_VERSION);
    /* No client: nothing here notifies, and stdout stays the test's. */
    CHECK(harness_start(entry, NULL) == 0);
    CHECK(plugin->id == CUDA_PLUGIN_ID);
    CHECK(plugin->table_hash == CUDA_TABLE_HASH);

    /* Every op of the table has its case, and every case its op. */
    size_t nops = 0;
    for (const struct gvs_op *o = plugin->ops; o->op != 0; o++, nops++) {
        size_t i = 0;
        while (i < NCASES && cases[i].op != o->op)
            i++;
        if (i == NCASES)
            dprintf(2, "op %u has no case here\n", o->op);
        CHECK(i < NCASES);
        CHECK(check_op(&cases[i]) == 0);
    }
    CHECK(nops == NCASES);

    harness_close();
    gvs_buf_free(out);
    puts("ok");
    return 0;
}
