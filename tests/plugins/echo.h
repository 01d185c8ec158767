/*
 * The test-only "echo" backend plugin's wire contract, shared by the
 * plugin and the tests that speak to it.
 */
#ifndef GVS_TEST_ECHO_H
#define GVS_TEST_ECHO_H

#define ECHO_PLUGIN_ID 200
#define ECHO_PLUGIN_NAME "echo"
/* Fixed by hand: bump it whenever an op below changes. */
#define ECHO_TABLE_HASH 0x6563686f0000000bull

enum echo_op {
    ECHO_OP_ECHO = 1,   /* reply = request body */
    ECHO_OP_CRASH = 2,  /* abort()s the worker */
    ECHO_OP_SLEEP = 3,  /* u32 ms; empty reply after sleeping */
    ECHO_OP_NOTE = 4,   /* u32 v; may be posted; counts v */
    ECHO_OP_COUNT = 5,  /* reply: u64 notes seen, u64 sum of their v */
    ECHO_OP_BADREQ = 6, /* always a malformed request */
    ECHO_OP_PID = 7,    /* reply: u32 pid of the worker */
    /* Blocking: u32 ms; waits for a RELEASE (one each) or ms to pass.
     * Reply: u32 1 if released, 0 if timed out. */
    ECHO_OP_BLOCK = 8,
    ECHO_OP_RELEASE = 9,   /* inline, may be posted: releases one BLOCK */
    ECHO_OP_PING_LANE = 10, /* reply: u32 the request's lane */
    /* u32 n: a thread of the plugin sends n notifications ECHO_NOTE_TICK
     * with body u32 0..n-1; the empty reply follows the last of them. */
    ECHO_OP_NOTIFY_ME = 11,
    /* u64 bytes: reported as the session's GPU memory through
     * host->report_memory (what gvs status shows); empty reply. */
    ECHO_OP_REPORT_MEMORY = 12,
    /* u32 ms; may be posted; counts a note of v 1 after sleeping. */
    ECHO_OP_SLOW_NOTE = 13,
    ECHO_OP_COUNT_SYNC = 14, /* COUNT, run as a blocking op */
    /* Reply: u32 the "peer" plugin's value as host->peer gave it when the
     * session opened (0: none), u32 the same asked now. */
    ECHO_OP_PEER = 15,
    /* i32 device, 16 bytes of its UUID, u64 bytes: the device named
     * through host->report_gpu_uuid, then bytes reported as the
     * session's memory on it through host->report_gpu_memory (the
     * per-GPU metrics); empty reply. */
    ECHO_OP_REPORT_GPU_MEMORY = 16,
    /* SLOW_NOTE flagged blocking (as a copy that may wait for its
     * stream), posted: ordered as any posted request */
    ECHO_OP_SLOW_NOTE_BLOCKING = 17,
    /* Not blocking, so it may run on the reader: u32 ms; bracketed by
     * host->await_client, sends ECHO_NOTE_AWAIT and waits for a RELEASE
     * (the answer, as a host callback waits for its end) or ms to pass.
     * Reply: u32 1 if released, 0 if timed out. */
    ECHO_OP_AWAIT = 18,
    /* u32 ms, then any bytes (a bulk piece's); may be posted, not
     * blocking: counts a note of v 1 after sleeping. */
    ECHO_OP_BULK_NOTE = 19,
    /* Any bytes: sent back as one ECHO_NOTE_BYTES, then an empty reply. */
    ECHO_OP_NOTIFY_BYTES = 20,
    /* u32 1 to answer otherwise (no reply is sent), 0 to reply: as a
     * STORE copy answered by its word (remote_be.h). */
    ECHO_OP_QUIET = 21,
    /* Blocking: u32 ms, slept (the plugin's may_wait says it waits for
     * nothing when ms is 0); reply u32 the serving thread's id. */
    ECHO_OP_TID = 22,
    /* Inline: reply u32 the reading thread's id. */
    ECHO_OP_TID_INLINE = 23,
    /* Posted, GVS_OP_BATCH: u32 v, counted as served; one whose
     * gvs_call.next_same is 1 counts as a promise, and the next CHAIN
     * served on the same thread right after it as the promise kept. */
    ECHO_OP_CHAIN = 24,
    /* Reply: u64 CHAINs served, u64 promises made, u64 promises kept. */
    ECHO_OP_CHAIN_COUNT = 25,
};

/* The test-only "peer" plugin (peer.c): it offers its peers a pointer to
 * this value, as the remoting layer offers its interface. */
#define PEER_PLUGIN_ID 202
#define PEER_PLUGIN_NAME "peer"
#define PEER_PLUGIN_VALUE 0x70656572u

/* Notification ops of the echo plugin. */
enum echo_note {
    ECHO_NOTE_TICK = 1,
    ECHO_NOTE_AWAIT = 2, /* empty: AWAIT waits for a RELEASE */
    ECHO_NOTE_BYTES = 3, /* NOTIFY_BYTES's request, as it came */
};

#endif
