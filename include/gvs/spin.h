/*
 * Bounded busy-waiting, used where a thread expects work within
 * microseconds: a reply to a request just sent, the next request of a
 * client that is issuing calls back to back.  Sleeping and being woken
 * costs tens of microseconds on a virtual machine; polling for a short
 * while avoids it.  On small machines (fewer than four online CPUs) the
 * pollers would steal the CPU from the threads doing the work, so the
 * default there is not to spin at all, unless that work is done on
 * another machine: a client in a guest whose gvsd is on the host.
 */
#ifndef GVS_SPIN_H
#define GVS_SPIN_H

#include "gvs/comm.h"

/* How long to poll before sleeping, in nanoseconds: $GVS_SPIN_US
 * microseconds if set (0 disables), else 50 us on a machine with at
 * least four online CPUs or whose server is away (gvs_spin_peer_away)
 * and 0 below that, and 0 while more threads are
 * runnable on the host than it has CPUs (the host's load, looked at
 * every millisecond at most): a poller then takes a core from a thread
 * with work, another tenant's included, as when many sessions share a
 * host.  CUDA's own waits spin or yield by the same kind of rule. */
long long gvs_spin_ns(void);

/* The default's value for a host of cpus online CPUs: 50 us from four
 * CPUs up, else 0, but 50 us too when peer_away: the process waits for
 * a server on another machine or across a VM boundary, which its
 * polling cannot slow down (as CUDA's own waits spin on a small VM with
 * a GPU of its own).  The load rule applies either way. */
long long gvs_spin_default_ns(long cpus, int peer_away);

/* Tells the default policy that this process's server is away
 * (GVS_CONN_CAP_PEER_AWAY): gvs_spin_ns() then polls on a machine of
 * fewer than four CPUs too.  Nothing changes under GVS_SPIN_US. */
void gvs_spin_peer_away(void);

/* 1 when /proc/loadavg's text says more threads are runnable than
 * cpus, 0 when not, -1 when it cannot be read as such. */
int gvs_spin_load_busy(const char *loadavg, long cpus);

/* How long to poll at most while a reply is due (a request of ours in
 * flight, or a request the server is serving): 20 times gvs_spin_ns(),
 * 1 ms by default.  A call such as cudaMalloc takes a hundred
 * microseconds or so on the GPU host; sleeping through it would add a
 * wake-up on each side, while its caller would have spun in the driver
 * natively anyway. */
long long gvs_spin_busy_ns(void);

/* How long a poller waiting for the next of a stream of events (a
 * session's requests) polls, the stream's rhythm considered: a program
 * that does a millisecond of host work between its calls sends each one
 * to a server that stopped polling after gvs_spin_ns() and pays a
 * wake-up, tens of microseconds, on every call.  The horizon follows
 * the quiet times that ended with an event: twice the last one, fading
 * by a sixteenth at each event, capped at GVS_SPIN_HOT_MAX_NS; a quiet
 * time beyond the cap resets it to 0.  Pollers poll for the larger of
 * gvs_spin_ns() and the horizon, and not at all while gvs_spin_ns() is
 * 0 (a busy host). */
#define GVS_SPIN_HOT_MAX_NS 2000000LL
long long gvs_spin_hot_next(long long horizon, long long quiet_ns);

/* Monotonic clock in nanoseconds. */
long long gvs_now_ns(void);

/* A pause hint for spin loops. */
static inline void gvs_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* 1 if c has data (or end of stream) to read now, without waiting: the
 * transport's own readiness check, else poll() on its descriptor; 0
 * when it has none or nothing to poll. */
int gvs_conn_readable(struct gvs_conn *c);

/* Polls c for readable data for up to spin_ns without sleeping (a
 * transport's own readiness check, else poll() on its descriptor).
 * Returns 1 as soon as data (or end of stream) is there, 0 when the time
 * ran out or the transport has nothing to poll. */
int gvs_conn_spin_readable(struct gvs_conn *c, long long spin_ns);

#endif
