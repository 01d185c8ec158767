/*
 * The session table that `gvs status` and the metrics endpoint show
 * (docs/protocol.md, "Status").
 *
 * gvsd maps it MAP_SHARED|MAP_ANONYMOUS before it forks any worker, so
 * the parent and every worker see the same memory: one fixed-size slot
 * per possible worker (max_sessions + max_handshakes).  The parent
 * claims a free slot for each worker it forks and clears it again when
 * it reaps the worker;
 * between the two only that worker writes the slot (its counters, its
 * identity once the handshake is done) and it clears the slot before it
 * exits.  Counters are relaxed atomics; the other fields are guarded by a
 * per-slot sequence count, so a reader copies a consistent slot or skips
 * it.  A worker is not trusted: what a reader takes from the table is
 * for display only (strings are cut and sanitized on the way out).
 *
 * The table is a process-wide singleton: gvsd has one, and a worker's
 * own slot is remembered as "self" for the cheap counting calls below,
 * which do nothing when there is no table (tests linking the pieces).
 *
 * The metrics' cumulative counters (calls by plugin, bytes each way) are
 * the slots' own: a slot's counters only ever grow, across all the
 * workers that hold it in turn, so that their sum over the table counts
 * every session gvsd has served, ended ones included, and never goes
 * down.  A session's own counts are the growth since its slot was
 * claimed.
 */
#ifndef GVSD_STATS_H
#define GVSD_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gvs/buf.h"
#include "gvs/plugin.h"
#include "gvs/proto.h"

/* Layout version of the table; a change of any slot field bumps it. */
#define GVSD_STATS_VERSION 3u

enum gvsd_slot_state {
    GVSD_SLOT_FREE = 0,
    GVSD_SLOT_STARTING = 1, /* claimed, the handshake is under way */
    GVSD_SLOT_ACTIVE = 2,   /* a session: shown */
    GVSD_SLOT_STATUS = 3,   /* a session that asked for STATUS: not shown */
};

/* A GPU by its UUID: the 16 bytes CUDA and NVML give. */
struct gvsd_gpu_id {
    uint8_t uuid[16];
};

/* One session as a reader copied it. */
struct gvsd_stats_view {
    uint32_t session;
    uint32_t pid; /* the worker's */
    char identity[GVS_IDENTITY_MAX]; /* printable ASCII, NUL-terminated */
    uint64_t uptime_ns;
    uint64_t memory_quota;
    uint64_t memory_used;
    uint64_t calls;
    uint64_t bytes_in;
    uint64_t bytes_out;
    /* Its GPUs that a plugin named (host->report_gpu_uuid), with what
     * they hold (host->report_gpu_memory). */
    int ngpus;
    struct gvsd_gpu_id gpu[GVS_SESSION_GPUS];
    uint64_t gpu_memory[GVS_SESSION_GPUS];
};

/* What the table has counted since gvsd started, ended sessions
 * included: only ever grows. */
struct gvsd_stats_totals {
    uint64_t sessions_started; /* status clients included */
    uint64_t calls[GVS_MAX_PLUGINS]; /* by the plugin's index in gvsd's
                                      * table (plugins.h) */
    uint64_t bytes_in, bytes_out;
};

/* The parent, before any fork: maps the table of nslots slots, for at
 * most max_sessions sessions.  0 or GVS_E_NOMEM. */
int gvsd_stats_create(int nslots, int max_sessions);
/* Unmaps it (the parent at exit). */
void gvsd_stats_destroy(void);

/* The parent, before forking session `session`: a free slot, marked
 * starting, or -1 when none is free (the session then goes unshown). */
int gvsd_stats_claim(uint32_t session);
/* The parent, once the worker of `session` has ended (or was never
 * forked): clears the slot if the worker left it holding that session,
 * and returns the state it was left in (FREE when the worker cleared it
 * itself). */
enum gvsd_slot_state gvsd_stats_release(int slot, uint32_t session);

/* The worker, first thing: slot (from gvsd_stats_claim, -1 for none)
 * becomes its own. */
void gvsd_stats_adopt(int slot);
/* The worker, once the handshake set who the client is: its slot becomes
 * a session, shown from now, unless max_sessions (> 0) sessions are
 * there already: GVS_E_RANGE.  Handshakes do not count, so connections
 * that never finish theirs cannot take the tenants' places; counting and
 * joining are one step for all workers.  GVS_E_TIMEOUT when another
 * worker holds that step for over a second.  0 without a table. */
int gvsd_stats_publish(const struct gvs_session_info *info, int max_sessions);
/* The parent: where session's worker, which claimed slot, stands (FREE
 * also for no slot, and once the worker has left it: the slot may then
 * be another session's while the worker is still exiting). */
enum gvsd_slot_state gvsd_stats_state(int slot, uint32_t session);
/* The worker, serving STATUS: its own session is hidden from then on. */
void gvsd_stats_mark_status(void);
/* The worker, before its client can see the session end (and again,
 * doing nothing, before it exits): clears its slot. */
void gvsd_stats_leave(void);

/* The worker's counters; any thread, relaxed.  plugin is the index in
 * gvsd's plugin table of the plugin that served the call. */
void gvsd_stats_add_in(uint64_t bytes);
void gvsd_stats_add_out(uint64_t bytes);
void gvsd_stats_add_call(int plugin);
void gvsd_stats_set_memory(uint64_t bytes);
/* The session's memory on its device ordinal device, and that device's
 * UUID (host->report_gpu_memory, report_gpu_uuid: the first naming
 * stands); ordinals outside 0..GVS_SESSION_GPUS-1 are not recorded. */
void gvsd_stats_set_gpu_memory(int device, uint64_t bytes);
void gvsd_stats_set_gpu_uuid(int device, const struct gvsd_gpu_id *id);

/* Copies up to max shown sessions into out, in slot order; returns how
 * many.  Any process sharing the table. */
int gvsd_stats_snapshot(struct gvsd_stats_view *out, int max);
/* Slots in the table; 0 when there is none. */
int gvsd_stats_slots(void);
/* max_sessions as given to gvsd_stats_create; 0 when there is none. */
int gvsd_stats_max_sessions(void);
/* Nanoseconds since gvsd (the parent) started. */
uint64_t gvsd_stats_uptime_ns(void);
/* The cumulative counts (all zero without a table).  Any process. */
void gvsd_stats_totals(struct gvsd_stats_totals *out);

/* The parent, once, before serving metrics: a child it forks lists the
 * host's GPUs through NVML (gpus.h: never in the parent itself, which
 * must not wait for it either) into the table, for the per-GPU
 * metrics, and exits; it is reaped with the workers.  Nothing when
 * there is no table or no NVML. */
void gvsd_stats_learn_gpus(void);
/* The host's GPUs as that child listed them, in NVML's order (the
 * index nvidia-smi and `gvs status` show): fills id[0..n) and returns
 * n, at most max; 0 until the child has written them.  valid[i] is 0
 * for a GPU whose UUID NVML gave in a form not understood. */
int gvsd_stats_gpus(struct gvsd_gpu_id *id, int *valid, int max);

#endif
