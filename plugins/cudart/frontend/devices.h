/*
 * Contracts of the frontend's device files beyond the first slice:
 * visible.c (the client's CUDA_VISIBLE_DEVICES), devices.c (PCI ids,
 * device choice, shared memory configuration), peer.c, output.c (device
 * printf and assert output).
 */
#ifndef CUDART_FE_DEVICES_H
#define CUDART_FE_DEVICES_H

#include "fe.h"

/* Caller holds the client lock, before the session's first CUDA call:
 * posts VISIBLE_DEVICES with this process's CUDA_VISIBLE_DEVICES, so
 * that the backend shows only the devices it names (docs/cudart.md). */
int fe_visible_devices_post_locked(struct gvs_client *cl);

/* A DEVICE_OUTPUT notification (u8 fd, blob bytes): writes the bytes on
 * stdout (fd 1, flushed) or stderr (fd 2).  Anything else is ignored. */
void fe_device_output(struct gvs_buf *body);

#endif
