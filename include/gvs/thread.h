#ifndef GVS_THREAD_H
#define GVS_THREAD_H

#include <pthread.h>

/* Threads that gvs starts inside a user's program (the client's
 * receiver, flusher, keepalive and notify threads, a frontend's
 * helpers). */

/* Starts a detached thread running fn(arg), named `name` (truncated to
 * 15 characters, as ps and gdb show it), with every signal blocked: the
 * program's signal handlers must run on its own threads.  Returns 0, or
 * GVS_E_NOMEM when no thread could be made.  A fork() waits until every
 * thread started so has begun to run fn, so that the child never copies
 * one still being set up by the C library or a sanitizer runtime, whose
 * locks it would inherit held. */
int gvs_thread_start(void *(*fn)(void *), void *arg, const char *name);

/* gvs_thread_start's thread, joinable: *out is for pthread_join, which
 * the caller owes it. */
int gvs_thread_start_joinable(void *(*fn)(void *), void *arg, const char *name,
                              pthread_t *out);

#endif
