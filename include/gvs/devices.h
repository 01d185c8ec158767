/*
 * Device lists in the form of CUDA_VISIBLE_DEVICES: comma-separated
 * entries, each a decimal ordinal or a UUID ("GPU-..." or "MIG-...",
 * possibly shortened to a unique prefix).  gvsd narrows the devices its
 * workers show with one (its `devices` key), and a client narrows them
 * further with its own CUDA_VISIBLE_DEVICES; both are composed with the
 * list already in force, so that a list can only ever narrow.
 */
#ifndef GVS_DEVICES_H
#define GVS_DEVICES_H

#include <stddef.h>

/* Most entries a list may have, and the longest list accepted. */
#define GVS_DEVICES_MAX 64
#define GVS_DEVICES_MAX_LEN 4096u

/* 0 if s is a list gvsd's `devices` key accepts: 1..GVS_DEVICES_MAX
 * entries, each an ordinal or a UUID of hex digits and dashes after its
 * "GPU-"/"MIG-" prefix, no blanks; GVS_E_INVAL otherwise. */
int gvs_devices_check(const char *s);

/* The CUDA_VISIBLE_DEVICES value that shows, of the devices `base` shows,
 * those `sel` names, in sel's order.  base NULL means every device: sel
 * is returned as it is, for CUDA to read.  Otherwise each entry of sel
 * picks one entry of base, read as CUDA reads the variable: an ordinal
 * indexes base's list; a UUID (prefix) picks the one UUID entry of base
 * it agrees with (either a prefix of the other); the first entry that
 * picks nothing ends the list, as CUDA ignores everything from an
 * invalid entry on.  A UUID cannot pick an entry base gives as an
 * ordinal.  Returns a string to free with gvs_free, "" for no device;
 * NULL when out of memory. */
char *gvs_devices_compose(const char *base, const char *sel);

#endif
