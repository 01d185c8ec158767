/* JIT options of links and loads (jit.h). */
#include "jit.h"

#include <string.h>

#include "gvs/err.h"

#define MAX_OPTIONS 64u

void cuda_fe_jit_init(struct cuda_fe_jit *j, unsigned n, CUjit_option *opt,
                      void **val)
{
    memset(j, 0, sizeof(*j));
    j->n = n;
    j->opt = opt;
    j->val = val;
    for (unsigned i = 0; i < n; i++) {
        size_t size = (size_t)(uintptr_t)val[i];
        switch (opt[i]) {
        case CU_JIT_INFO_LOG_BUFFER:
            j->log[0] = val[i];
            break;
        case CU_JIT_ERROR_LOG_BUFFER:
            j->log[1] = val[i];
            break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
            j->log_size[0] = size;
            break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            j->log_size[1] = size;
            break;
        default:
            break;
        }
    }
}

CUresult cuda_fe_jit_put(struct apigen_call *c, unsigned n,
                         const CUjit_option *opt, void *const *val)
{
    if (n > 0 && (opt == NULL || val == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (n > MAX_OPTIONS)
        return CUDA_ERROR_NOT_SUPPORTED;
    apigen_put_u32(c, n);
    for (unsigned i = 0; i < n; i++) {
        apigen_put_i32(c, (int32_t)opt[i]);
        apigen_put_u64(c, (uint64_t)(uintptr_t)val[i]);
    }
    return CUDA_SUCCESS;
}

/* Options the driver writes into. */
static int output(CUjit_option o)
{
    return o == CU_JIT_THREADS_PER_BLOCK || o == CU_JIT_WALL_TIME ||
           o == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
           o == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
}

static void fill_log(char *buf, size_t size, const uint8_t *text,
                     size_t len)
{
    if (buf == NULL || size == 0)
        return;
    if (len > size - 1)
        len = size - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
}

void cuda_fe_jit_take_report(struct apigen_call *c, struct cuda_fe_jit *j)
{
    uint32_t n = 0;
    uint64_t v[MAX_OPTIONS];
    const uint8_t *text[2];
    size_t len[2];
    apigen_get_u32(c, &n);
    if (c->rc == 0 && n != 0 && (j == NULL || n != j->n))
        c->rc = GVS_E_PROTO;
    for (uint32_t i = 0; c->rc == 0 && i < n; i++)
        apigen_get_u64(c, &v[i]);
    apigen_get_blob(c, &text[0], &len[0]);
    apigen_get_blob(c, &text[1], &len[1]);
    if (c->rc < 0 || j == NULL)
        return;
    for (int k = 0; k < 2; k++)
        fill_log(j->log[k], j->log_size[k], text[k], len[k]);
    for (uint32_t i = 0; i < n; i++)
        if (output(j->opt[i]))
            j->val[i] = (void *)(uintptr_t)v[i];
}
