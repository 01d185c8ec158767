/*
 * Helpers shared by the core communicator and protocol tests.
 */
#ifndef GVS_TEST_CORE_H
#define GVS_TEST_CORE_H

#include <stddef.h>

#include "gvs/comm.h"

/* "unix:///tmp/gvs-test-<pid>-<tag>.sock" into out; the path alone
 * into path (may be NULL). */
void test_unix_uri(char *out, size_t outlen, char *path, size_t pathlen,
                   const char *tag);

/* Listens on uri, connects to it and accepts: a connected pair in one
 * process.  Returns 0 or a GVS_E_* code. */
int test_conn_pair(const char *uri, struct gvs_listener **l,
                   struct gvs_conn **client, struct gvs_conn **server);

/* Peak virtual memory of this process in KiB (VmPeak), 0 if unknown. */
long test_vm_peak_kib(void);

#endif
