#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gvs/mem.h"

/* Allocations left before the injected failure; negative = disabled. */
static _Atomic long fail_countdown = -1;

static int inject_failure(void)
{
    long n = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    while (n >= 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1))
            return n == 0;
    }
    return 0;
}

void gvs_mem_fail_after(long n)
{
    atomic_store(&fail_countdown, n < 0 ? -1 : n);
}

void *gvs_malloc(size_t size)
{
    if (inject_failure())
        return NULL;
    return malloc(size);
}

void *gvs_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    if (inject_failure())
        return NULL;
    return calloc(n, size);
}

void *gvs_realloc(void *p, size_t size)
{
    if (inject_failure())
        return NULL;
    return realloc(p, size);
}

void gvs_free(void *p)
{
    free(p);
}

char *gvs_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *d = gvs_malloc(len);
    if (d != NULL)
        memcpy(d, s, len);
    return d;
}
