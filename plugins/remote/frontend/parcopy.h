/*
 * memcpy of large buffers on several threads, for the staging pipeline
 * (staging.c): one thread copies pageable memory at about 10 GB/s, while
 * the GPU's DMA engines move 50 GB/s and more, so the program's side of
 * a staged copy is the bottleneck unless it is shared out.
 */
#ifndef REMOTE_FE_PARCOPY_H
#define REMOTE_FE_PARCOPY_H

#include <stddef.h>

/* Copies len bytes (the areas must not overlap).  From 1 MiB on, the
 * caller and up to three helper threads (started on first use:
 * $GVS_COPY_THREADS of them when set, else one per four online CPUs
 * beyond the first four) each copy a part; one such copy at a time,
 * others are done by their caller alone.  Never fails: without helpers
 * it is memcpy. */
void remote_fe_parallel_memcpy(void *dst, const void *src, size_t len);

/* fork(): the child has none of the parent's helper threads. */
void remote_fe_parallel_memcpy_fork_child(void);

#endif
