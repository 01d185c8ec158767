/*
 * The region of an ivshmem:// listener: a file gvsd creates, which QEMU
 * maps into one guest as an ivshmem PCI device (ivshmem-plain, BAR 2),
 * holding slots of connections.  Internal to gvs_core.
 *
 *   [0, PAGE)                        struct gvs_ivs_header (gvsd writes it)
 *   slot i at PAGE + i * stride:
 *     [0, PAGE)                      struct gvs_ivs_slot
 *     [PAGE, area_off)               an shm:// region (shm_ring.h): the
 *                                    control block, then the two rings
 *     [area_off, stride)             the connection's data area
 *                                    (gvs_conn_area), `area` bytes
 *
 * The region's size is a power of two, as a PCI BAR's is.  One region
 * serves one guest (its tenant); each process of the guest that connects
 * claims a free slot, so a guest has at most `slots` connections at once.
 * The data area holds the connection's page-locked host memory: the
 * client places it there, gvsd's worker pins its own mapping of the same
 * pages, and a copy between it and the GPU is one DMA (the remoting
 * layer's shared host memory, as shm:// shares memfds).
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

#include "gvs/comm.h"
#include "shm_ring.h"

#define GVS_IVS_MAGIC 0x49535647u /* "GVSI" */
#define GVS_IVS_VERSION 3u
#define GVS_IVS_PAGE 4096u
#define GVS_IVS_SLOTS_MAX GVS_IVSHMEM_SLOTS_MAX
#define GVS_IVS_SLOTS_DEFAULT 16u
#define GVS_IVS_AREA_DEFAULT (16ull << 20)
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
    uint64_t area;   /* bytes of each slot's data area, at area_off */
};

struct gvs_ivs_slot {
    alignas(64) _Atomic uint32_t state;
    /* beat[GVS_SHM_C2S]: the client's; beat[GVS_SHM_S2C]: gvsd's. */
    alignas(64) _Atomic uint32_t beat[2];
    /* gvsd's side of an idle connection dozes on a futex instead of
     * polling (comm_ivshmem.c): `dozing` counts its threads asleep on
     * `doze`, which gvsd's listener, looking at every slot each tick,
     * moves and wakes once the client's counters moved; `looked` counts
     * the listener's looks, and only a side that sees it move dozes.  A
     * guest that writes these only slows its own connection. */
    alignas(64) _Atomic uint32_t doze;
    _Atomic uint32_t dozing;
    _Atomic uint32_t looked;
};

_Static_assert(sizeof(struct gvs_ivs_header) <= GVS_IVS_PAGE, "header");
_Static_assert(sizeof(struct gvs_ivs_slot) <= GVS_IVS_PAGE, "slot");

/* Where a slot's data area starts, for rings of ring_size. */
static inline uint64_t gvs_ivs_area_off(uint32_t ring_size)
{
    uint64_t end = GVS_IVS_PAGE + gvs_shm_region_size(ring_size);
    return (end + GVS_IVS_PAGE - 1) / GVS_IVS_PAGE * GVS_IVS_PAGE;
}

/* The bytes from one slot to the next. */
static inline uint64_t gvs_ivs_stride(uint32_t ring_size, uint64_t area)
{
    return gvs_ivs_area_off(ring_size) + area;
}

/* The header of a region of `slots` slots with rings of ring_size and
 * data areas of at least area bytes (gvs_ivshmem_set_layout); GVS_E_INVAL
 * when it would pass GVS_IVSHMEM_REGION_MAX. */
int gvs_ivs_layout(uint32_t slots, uint32_t ring_size, uint64_t area,
                   struct gvs_ivs_header *out);

/* How long a polled wait sleeps before its next look, once the
 * connection has been quiet for quiet_ns: a 32nd of it, from 20 us up to
 * 25 ms.  So a wait ends at most about 3% (or 20 us) after what it
 * waited for happened.  gvsd's side dozes instead once the step reaches
 * the listener's tick (20 ms), so that an idle session costs gvsd a
 * wake-up a second, not a look every 25 ms. */
long long gvs_ivs_poll_step_ns(long long quiet_ns);

#endif
