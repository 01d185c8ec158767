/*
 * Host memory the client shares with the worker (shm:// sessions only):
 * sealed memfds the frontend passes, mapped here and pinned, so that a
 * copy between the GPU and such memory is one DMA (docs/cudart.md, "Host
 * memory").  The client's addresses are keys into this table only: a
 * copy names a client address, and only the part of the worker's own
 * mapping it translates to is ever touched.
 */
#ifndef CUDART_BE_SHARED_MEM_H
#define CUDART_BE_SHARED_MEM_H

#include "be.h"

/* Regions a session may share, and the bytes they may pin together (a
 * tenant must not pin the host's memory away). */
#define BE_SHARED_REGIONS_MAX 4096u

/* Unpins and unmaps every region (session close). */
void be_shared_free(void);

#endif
