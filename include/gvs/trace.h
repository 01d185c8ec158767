/*
 * Request timelines: with GVS_TRACE_DIR set (docs/config.md), each
 * process stamps the requests it sends or serves at the points below
 * with CLOCK_MONOTONIC, which a client and gvsd on one host share, and
 * writes the last GVS_TRACE_REQUESTS of them at exit to
 * DIR/gvs-trace-PID.txt; bench/trace_rt.py joins a client's file with
 * its worker's by request id and says where a round trip's time goes.
 * Meant for one client at a time.  Off (the default), a stamp is one
 * load and branch.
 */
#ifndef GVS_TRACE_H
#define GVS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define GVS_TRACE_REQUESTS 65536u

enum gvs_trace_point {
    GVS_TRACE_SEND,       /* client: the request's send begins */
    GVS_TRACE_SENT,       /* client: it is written (or buffered) */
    GVS_TRACE_REPLY_READ, /* client: the reply's header is read */
    GVS_TRACE_RETURN,     /* client: the waiter has its reply */
    GVS_TRACE_READ,       /* gvsd: the request is read whole */
    GVS_TRACE_RUN,        /* gvsd: its handler starts */
    GVS_TRACE_RAN,        /* gvsd: its handler has returned */
    GVS_TRACE_REPLIED,    /* gvsd: the reply is written */
    GVS_TRACE_POINTS
};

/* Set while tracing; what gvs_trace stamps into. */
extern struct gvs_trace_entry *gvs_trace_table;

void gvs_trace_stamp(uint64_t id, uint16_t plugin, uint16_t op,
                     enum gvs_trace_point point);

static inline void gvs_trace(uint64_t id, uint16_t plugin, uint16_t op,
                             enum gvs_trace_point point)
{
    if (gvs_trace_table != NULL)
        gvs_trace_stamp(id, plugin, op, point);
}

/* Starts tracing into dir (done at load from GVS_TRACE_DIR).  0, or a
 * negative GVS_E_* code. */
int gvs_trace_open(const char *dir);

/* Writes what was stamped (done at exit): one line per request, "id
 * plugin op" and the GVS_TRACE_POINTS stamps in nanoseconds (0: not
 * stamped here).  No file when nothing was stamped. */
int gvs_trace_dump(void);

#endif
