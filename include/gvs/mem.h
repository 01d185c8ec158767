/*
 * Allocation wrappers used by all gvs code, so tests can inject failures.
 */
#ifndef GVS_MEM_H
#define GVS_MEM_H

#include <stddef.h>

/* Same contracts as malloc/calloc/realloc/free (calloc checks n*size
 * overflow).  Return NULL when an injected failure is due. */
void *gvs_malloc(size_t size);
void *gvs_calloc(size_t n, size_t size);
void *gvs_realloc(void *p, size_t size);
void gvs_free(void *p);
char *gvs_strdup(const char *s);

/* Test hook: the (n+1)-th allocation from now fails, and every later one
 * succeeds again.  n < 0 disables injection (the default). */
void gvs_mem_fail_after(long n);

#endif
