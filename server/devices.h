/*
 * The GPUs gvsd's sessions see (the `devices` key, --devices).  The
 * parent never starts CUDA: it narrows CUDA_VISIBLE_DEVICES in its own
 * environment, composed with the value it was started with
 * (gvs/devices.h), before any worker is forked; each worker's CUDA reads
 * it when it starts, after the client's own list has narrowed it further.
 */
#ifndef GVSD_DEVICES_H
#define GVSD_DEVICES_H

/* devices NULL: every device, nothing to do.  Call before any thread is
 * started.  0, or a negative GVS_E_* code after logging why. */
int gvsd_devices_apply(const char *devices);

#endif
