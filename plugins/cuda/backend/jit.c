/* JIT options of loads and links (jit.h). */
#include "jit.h"

#include <string.h>

#include "gvs/err.h"
#include "gvs/mem.h"

#define LOG_MAX ((size_t)64 << 10)

void cuda_be_jit_get(struct apigen_call *c, struct cuda_be_jit_request *o)
{
    apigen_get_u32(c, &o->n);
    if (c->rc == 0 && o->n > CUDA_BE_JIT_MAX_OPTIONS)
        c->rc = GVS_E_RANGE;
    for (uint32_t i = 0; c->rc == 0 && i < o->n; i++) {
        apigen_get_i32(c, &o->opt[i]);
        apigen_get_u64(c, &o->val[i]);
    }
}

/* Options that point into the program's memory cannot be passed. */
static int points(int32_t opt)
{
    return opt == CU_JIT_GLOBAL_SYMBOL_NAMES ||
           opt == CU_JIT_GLOBAL_SYMBOL_ADDRESSES ||
           opt == CU_JIT_REFERENCED_KERNEL_NAMES ||
           opt == CU_JIT_REFERENCED_VARIABLE_NAMES;
}

int cuda_be_jit_log_of(int32_t opt)
{
    return opt == CU_JIT_INFO_LOG_BUFFER || opt == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
               ? 0
           : opt == CU_JIT_ERROR_LOG_BUFFER ||
                   opt == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
               ? 1
               : -1;
}

CUresult cuda_be_jit_fill(struct cuda_be_jit *j,
                          const struct cuda_be_jit_request *o)
{
    j->n = o->n;
    for (uint32_t i = 0; i < o->n; i++) {
        if (points(o->opt[i]))
            return CUDA_ERROR_NOT_SUPPORTED;
        j->opt[i] = (CUjit_option)o->opt[i];
        j->val[i] = o->opt[i] >= 0 && o->opt[i] < CU_JIT_NUM_OPTIONS
                        ? (void *)(uintptr_t)o->val[i]
                        : NULL;
        if (o->opt[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
            o->opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            size_t size = o->val[i] < LOG_MAX ? o->val[i] : LOG_MAX;
            j->log_size[cuda_be_jit_log_of(o->opt[i])] = size;
            j->val[i] = (void *)(uintptr_t)size;
        }
    }
    for (uint32_t i = 0; i < o->n; i++) {
        int which = cuda_be_jit_log_of(o->opt[i]);
        if (o->opt[i] == CU_JIT_WALL_TIME) {
            j->val[i] = NULL;
        } else if (o->opt[i] == CU_JIT_INFO_LOG_BUFFER ||
                   o->opt[i] == CU_JIT_ERROR_LOG_BUFFER) {
            if (j->log[which] == NULL &&
                (j->log[which] = gvs_calloc(1, j->log_size[which] + 1)) ==
                    NULL)
                return CUDA_ERROR_OUT_OF_MEMORY;
            j->val[i] = j->log[which];
        }
    }
    return CUDA_SUCCESS;
}

/* The driver wrote the wall time as a float into its option's value. */
static uint64_t out_value(const struct cuda_be_jit *j, unsigned i)
{
    if (j->opt[i] == CU_JIT_INFO_LOG_BUFFER ||
        j->opt[i] == CU_JIT_ERROR_LOG_BUFFER)
        return 0;
    return (uint64_t)(uintptr_t)j->val[i];
}

static void put_log(struct apigen_call *c, const char *log, size_t size)
{
    size_t len = log != NULL ? strnlen(log, size) : 0;
    apigen_put_blob(c, log != NULL ? log : "", len);
}

void cuda_be_jit_put_report(struct apigen_call *c, const struct cuda_be_jit *j)
{
    apigen_put_u32(c, j->n);
    for (unsigned i = 0; i < j->n; i++)
        apigen_put_u64(c, out_value(j, i));
    put_log(c, j->log[0], j->log_size[0]);
    put_log(c, j->log[1], j->log_size[1]);
}

void cuda_be_jit_free(struct cuda_be_jit *j)
{
    gvs_free(j->log[0]);
    gvs_free(j->log[1]);
    j->log[0] = j->log[1] = NULL;
}
