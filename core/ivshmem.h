/*
 * The region of an ivshmem:// listener: a file gvsd creates, which QEMU
 * maps into one guest as an ivshmem PCI device (ivshmem-plain, BAR 2),
 * holding slots of connections.  Internal to gvs_core.
 *
 *   [0, PAGE)                        struct gvs_ivs_header (gvsd writes it)
 *   slot i at PAGE + i * stride:
 *     [0, PAGE)                      struct gvs_ivs_slot
 *     [PAGE, stride)                 an shm:// region (shm_ring.h): the
 *                                    control block, then the two rings
 *
 * The region's size is a power of two, as a PCI BAR's is.  One region
 * serves one guest (its tenant); each process of the guest that connects
 * claims a free slot, so a guest has at most `slots` connections at once.
 *
 * A slot's life: FREE -> CLAIMED (the client, by compare-and-swap) ->
 * ACCEPTED (gvsd, after zeroing the rings' control block) -> FREE (gvsd's
 * listener, once gvsd's side has closed and the client has closed or
 * stopped beating).  Each side increments its beat word every
 * GVS_IVS_BEAT_MS from a thread of its own; a side whose beat stands
 * still for GVS_IVS_DEAD_MS is gone (no socket or futex reaches across
 * the VM boundary to say so).
 *
 * Trust: the guest may write anything anywhere in the region at any
 * moment.  gvsd takes the layout from its own copy, never from the
 * region; a state word it does not know is a slot to free; the rings'
 * counters are checked as shm://'s are.  The client checks the header
 * against the size it mapped before using it.
 */
#ifndef GVS_IVSHMEM_H
#define GVS_IVSHMEM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "shm_ring.h"

#define GVS_IVS_MAGIC 0x49535647u /* "GVSI" */
#define GVS_IVS_VERSION 1u
#define GVS_IVS_PAGE 4096u
#define GVS_IVS_SLOTS_MAX 64u
#define GVS_IVS_REGION_DEFAULT (64u << 20)
#define GVS_IVS_RING_DEFAULT (2u << 20)
#define GVS_IVS_BEAT_MS 250u
#define GVS_IVS_DEAD_MS 3000u

enum { GVS_IVS_FREE = 0, GVS_IVS_CLAIMED = 1, GVS_IVS_ACCEPTED = 2 };

struct gvs_ivs_header {
    uint32_t magic;
    uint32_t version;
    uint32_t slots;
    uint32_t ring_size;
    uint64_t stride; /* bytes from one slot to the next */
    uint64_t size;   /* the whole region */
};

struct gvs_ivs_slot {
    alignas(64) _Atomic uint32_t state;
    /* beat[GVS_SHM_C2S]: the client's; beat[GVS_SHM_S2C]: gvsd's. */
    alignas(64) _Atomic uint32_t beat[2];
};

_Static_assert(sizeof(struct gvs_ivs_header) <= GVS_IVS_PAGE, "header");
_Static_assert(sizeof(struct gvs_ivs_slot) <= GVS_IVS_PAGE, "slot");

/* The bytes from one slot to the next for rings of ring_size. */
static inline uint64_t gvs_ivs_stride(uint32_t ring_size)
{
    return GVS_IVS_PAGE + gvs_shm_region_size(ring_size);
}

/* How many slots of rings of ring_size a region of size bytes holds,
 * at most GVS_IVS_SLOTS_MAX. */
static inline uint32_t gvs_ivs_slots(uint64_t size, uint32_t ring_size)
{
    uint64_t n = size > GVS_IVS_PAGE
                     ? (size - GVS_IVS_PAGE) / gvs_ivs_stride(ring_size)
                     : 0;
    return n > GVS_IVS_SLOTS_MAX ? GVS_IVS_SLOTS_MAX : (uint32_t)n;
}

#endif
