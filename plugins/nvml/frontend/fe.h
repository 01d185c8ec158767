/*
 * Private contracts between the files of the NVML frontend
 * (libnvidia-ml.so.1).  The library is built with hidden visibility;
 * NVML's declarations below get default visibility so that the
 * functions defined against them are exported, and the version script
 * keeps everything else out of the dynamic symbol table.
 *
 * nvml.h maps the names a program writes to the current versions
 * (nvmlInit is nvmlInit_v2); the library exports the older ones too,
 * under their own names, so it reads nvml.h with
 * NVML_NO_UNVERSIONED_FUNC_DEFS, which declares them so.
 * tools/apigen/gvs_unsupported.py reads the header the same way.
 *
 * Must be included before nvml.h.
 */
#ifndef NVML_FE_H
#define NVML_FE_H

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#pragma GCC visibility push(default)
#include <nvml.h>
/* NVML's private export tables, which no header declares. */
nvmlReturn_t nvmlInternalGetExportTable(const void **ppExportTable,
                                        const void *pExportTableId);
#pragma GCC visibility pop

#include <stdint.h>

#include "apigen_rt.h"

/* The hooks of the generated calls (tools/apigen/README.md), on the
 * remoting layer's round trips (call.c).  A call before nvmlInit, or
 * after the last nvmlShutdown, answers NVML_ERROR_UNINITIALIZED there,
 * as NVML does. */
nvmlReturn_t nvml_fe_begin(struct apigen_call *c);
nvmlReturn_t nvml_fe_run(struct apigen_call *c, uint16_t op, unsigned flags);
nvmlReturn_t nvml_fe_post(struct apigen_call *c, uint16_t op, unsigned flags);
nvmlReturn_t nvml_fe_end(struct apigen_call *c, nvmlReturn_t r);
nvmlReturn_t nvml_fe_ret(nvmlReturn_t r);

/* call.c: NVML_SUCCESS while the library is initialized, else
 * NVML_ERROR_UNINITIALIZED. */
nvmlReturn_t nvml_fe_ready(void);

/* devices.c: the session's GPUs, as INIT counted them.  A device handle
 * points at an entry of the frontend's own list; its wire value is its
 * index, which the backend checks against the session's list. */
struct nvmlDevice_st {
    unsigned index;
};
void nvml_fe_devices_set(unsigned count);
unsigned nvml_fe_device_count(void);
/* The index of a handle of the list, or -1 for anything else (never
 * dereferenced). */
int nvml_fe_device_index(nvmlDevice_t device);
uint64_t nvml_fe_device_wire(nvmlDevice_t device, int per_thread);

/* devices.c: a hand-written op's request started for device (after
 * nvml_fe_begin), or its failure. */
nvmlReturn_t nvml_fe_begin_device(struct apigen_call *c, nvmlDevice_t device);
/* A reply's string (a blob of at most NVML_STRING_MAX bytes, no NUL)
 * into out[0..length), NUL-terminated: NVML_ERROR_INSUFFICIENT_SIZE
 * when it does not fit, NVML_ERROR_UNKNOWN when malformed. */
nvmlReturn_t nvml_fe_get_string(struct apigen_call *c, char *out,
                                unsigned length);

/* memory.c: the session's processes of kind (enum nvml_process_kind) as
 * NVML lists them, entries `stride` bytes apart: nvmlProcessInfo_v1_t
 * (version 1) or nvmlProcessInfo_t, the rest of each entry zeroed. */
nvmlReturn_t nvml_fe_process_list(nvmlDevice_t device, int kind,
                                  unsigned int *infoCount, void *infos,
                                  int version, size_t stride);

#endif
