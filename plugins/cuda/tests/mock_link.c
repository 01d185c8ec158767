/*
 * The mock driver's JIT linker (mock_driver.c): the image is MOCK_IMAGE
 * and the inputs' bytes one after the other, a module the mock loads.
 * An input starting "bad" fails as PTX that does not compile, with an
 * error log; the info log and the wall time are written at completion,
 * into the option arrays the state keeps, as the driver writes them.
 */
#include "be.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_driver.h"

struct mock_link {
    unsigned n;
    CUjit_option *opt;
    void **val;
    char *text;
    size_t len;
    unsigned inputs;
};

void mock_jit_log(unsigned n, const CUjit_option *opt, void **val,
                  CUjit_option buf_opt, CUjit_option size_opt,
                  const char *msg)
{
    char *buf = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (opt[i] == buf_opt)
            buf = val[i];
        if (opt[i] == size_opt)
            size = (size_t)(uintptr_t)val[i];
    }
    if (buf == NULL || size == 0)
        return;
    int len = snprintf(buf, size, "%s", msg);
    size_t wrote = (size_t)len < size ? (size_t)len + 1 : size;
    for (unsigned i = 0; i < n; i++)
        if (opt[i] == size_opt)
            val[i] = (void *)(uintptr_t)wrote;
}

static CUresult mock_link_create(unsigned n, CUjit_option *opt, void **val,
                                 CUlinkState *out)
{
    CUcontext cur = NULL;
    (void)CUDA_DRV(cuCtxGetCurrent)(&cur);
    if (cur == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (out == NULL || (n > 0 && (opt == NULL || val == NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++)
        if (opt[i] >= CU_JIT_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    struct mock_link *l = calloc(1, sizeof(*l));
    size_t len = strlen(MOCK_IMAGE "\n");
    if (l == NULL || (l->text = malloc(len + 1)) == NULL) {
        free(l);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(l->text, MOCK_IMAGE "\n", len + 1);
    l->len = len;
    l->n = n;
    l->opt = opt;
    l->val = val;
    *out = (CUlinkState)l;
    return CUDA_SUCCESS;
}

static CUresult mock_link_add(CUlinkState state, CUjitInputType type,
                              void *data, size_t size, const char *name,
                              unsigned n, CUjit_option *opt, void **val)
{
    struct mock_link *l = (struct mock_link *)state;
    char msg[128];
    if (l == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (data == NULL || size == 0 || type >= CU_JIT_NUM_INPUT_TYPES ||
        (n > 0 && (opt == NULL || val == NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    if (size >= 3 && memcmp(data, "bad", 3) == 0) {
        snprintf(msg, sizeof(msg), "mock: %s is bad", name);
        mock_jit_log(l->n, l->opt, l->val, CU_JIT_ERROR_LOG_BUFFER,
                     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, msg);
        return CUDA_ERROR_INVALID_PTX;
    }
    /* PTX text's NUL does not go into the image. */
    if (type == CU_JIT_INPUT_PTX && ((const char *)data)[size - 1] == '\0')
        size--;
    char *p = realloc(l->text, l->len + size + 1);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(p + l->len, data, size);
    l->len += size;
    p[l->len] = '\0';
    l->text = p;
    l->inputs++;
    return CUDA_SUCCESS;
}

static CUresult mock_link_complete(CUlinkState state, void **out,
                                   size_t *size)
{
    struct mock_link *l = (struct mock_link *)state;
    char msg[64];
    if (l == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (out == NULL || size == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (l->inputs == 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(msg, sizeof(msg), "mock linked %u inputs", l->inputs);
    mock_jit_log(l->n, l->opt, l->val, CU_JIT_INFO_LOG_BUFFER,
                 CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, msg);
    for (unsigned i = 0; i < l->n; i++)
        if (l->opt[i] == CU_JIT_WALL_TIME) {
            float ms = 1.5f;
            memcpy(&l->val[i], &ms, sizeof(ms));
        }
    *out = l->text;
    *size = l->len + 1;
    return CUDA_SUCCESS;
}

static CUresult mock_link_destroy(CUlinkState state)
{
    struct mock_link *l = (struct mock_link *)state;
    if (l == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    free(l->text);
    free(l);
    return CUDA_SUCCESS;
}

void mock_link_fill(void)
{
    cuda_be_drv.cuLinkCreate_v2 = mock_link_create;
    cuda_be_drv.cuLinkAddData_v2 = mock_link_add;
    cuda_be_drv.cuLinkComplete = mock_link_complete;
    cuda_be_drv.cuLinkDestroy = mock_link_destroy;
}
