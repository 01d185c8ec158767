/*
 * The driver's private export tables (cuGetExportTable, exports.c) and
 * the integrity check one of them answers (integrity.c): the contracts
 * the rest of the frontend, and the tests, rely on.
 *
 * cuGetExportTable hands out, for every UUID NVIDIA's driver 580 answers
 * (plugins/cuda/probe/results/h100-580.159.04/export-tables.txt), a
 * table of that driver's size; docs/driver.md, "Export tables", says
 * which slots do what.
 */
#ifndef CUDA_FE_EXPORTS_H
#define CUDA_FE_EXPORTS_H

#include "fe.h"

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Runs and forgets what CONTEXT_LOCAL_STORAGE holds for ctx, where the
 * runtime keeps its per-context state: each value's destructor, if it
 * was put with one, is called as dtor(ctx, key, value), newest first and
 * outside any lock, and the keys are gone.  The context code calls it
 * before ctx goes, as driver 580 runs them: cuCtxDestroy, and for a
 * primary context cuDevicePrimaryCtxReset or its last release.
 * Thread-safe. */
void cuda_fe_ctx_storage_release(CUcontext ctx);

/* What TOOLS_MODULE [7] walks (modules.c): calls fn(cookie, function,
 * its name) for each function of module mod, in the order of its load,
 * outside any lock; the number of functions, 0 for a handle that is no
 * module of this process. */
typedef void (*cuda_fe_function_fn)(void *cookie, CUfunction f,
                                    const char *name);
unsigned int cuda_fe_module_each(CUmodule mod, cuda_fe_function_fn fn,
                                 void *cookie);

/* One device, as the integrity check hashes it. */
struct cuda_fe_integrity_dev {
    uint8_t uuid[16]; /* cuDeviceGetUuid */
    int32_t pci_domain, pci_bus, pci_device;
};

/* Every input of the integrity check (INTEGRITY_CHECK slot 1). */
struct cuda_fe_integrity_in {
    uint32_t driver_version;  /* cuDriverGetVersion */
    uint32_t version;         /* the caller's: the runtime's CUDA version */
    uint32_t pid;             /* getpid() */
    uint32_t thread;          /* low 32 bits of the caller's pthread_self() */
    uint64_t cudart_table;    /* address of the CUDART_INTERFACE table */
    uint64_t integrity_table; /* address of the INTEGRITY_CHECK table */
    uint64_t integrity_fn;    /* INTEGRITY_CHECK slot 1, the function */
    uint64_t unix_seconds;    /* the caller's */
    int ndevices;             /* cuDeviceGetCount */
    const struct cuda_fe_integrity_dev *devices; /* by ordinal */
};

/* What NVIDIA's driver answers for these inputs: for version % 10 of 0
 * or 1 a constant pair, else HMAC-MD2 over a record of the inputs
 * (shared/driver-api-facts.md, "The integrity check"), as two
 * native-endian u64.  Pure; the caller gathers the inputs. */
void cuda_fe_integrity(const struct cuda_fe_integrity_in *in, uint64_t out[2]);

#pragma GCC visibility pop

#endif
