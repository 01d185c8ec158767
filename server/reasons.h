/*
 * Why a connection was refused or a session ended: a bounded set, so
 * that they can be counted (gvs status, the metrics' reason label) while
 * the log line of each says the particulars (which op, which limit,
 * which handle).
 */
#ifndef GVSD_REASONS_H
#define GVSD_REASONS_H

/* X(NAME, label): refusals of a connection before it became a session. */
#define GVSD_REFUSALS(X)                                                     \
    X(TIMEOUT, "timeout")                                                    \
    X(GONE, "gone")                                                          \
    X(TLS, "tls")                                                            \
    X(BAD_HELLO, "bad_hello")                                                \
    X(VERSION, "version")                                                    \
    X(TOKEN, "token")                                                        \
    X(PLUGIN, "plugin")                                                      \
    X(MAX_SESSIONS, "max_sessions")                                          \
    X(MAX_HANDSHAKES, "max_handshakes")                                      \
    X(MAX_HANDSHAKES_PER_PEER, "max_handshakes_per_peer")                    \
    X(NOT_ALLOWED, "not_allowed")                                            \
    X(INTERNAL, "internal")

/* X(NAME, label): how sessions ended. */
#define GVSD_ENDS(X)                                                         \
    X(BYE, "bye")                                                            \
    X(CLOSED, "closed")                                                      \
    X(VANISHED, "vanished")                                                  \
    X(LOST, "connection_lost")                                               \
    X(IDLE, "idle_timeout")                                                  \
    X(BAD_FRAME, "bad_frame")                                                \
    X(FRAME_TOO_BIG, "frame_too_big")                                        \
    X(BAD_FLAGS, "bad_flags")                                                \
    X(UNKNOWN_PLUGIN, "unknown_plugin")                                      \
    X(UNKNOWN_OP, "unknown_op")                                              \
    X(MALFORMED, "malformed_request")                                        \
    X(SEND_FAILED, "send_failed")                                            \
    X(INTERNAL, "internal")                                                  \
    X(KILLED, "worker_killed")

enum gvsd_refusal {
#define GVSD_REASON_ENUM(name, label) GVSD_REFUSED_##name,
    GVSD_REFUSALS(GVSD_REASON_ENUM)
#undef GVSD_REASON_ENUM
    GVSD_REFUSALS_N
};

enum gvsd_end {
#define GVSD_REASON_ENUM(name, label) GVSD_END_##name,
    GVSD_ENDS(GVSD_REASON_ENUM)
#undef GVSD_REASON_ENUM
    GVSD_ENDS_N
};

/* The label of a reason ("timeout"); "unknown" out of range. */
const char *gvsd_refusal_label(enum gvsd_refusal r);
const char *gvsd_end_label(enum gvsd_end e);

/* Counted in the session table (stats.h), by the parent and the workers
 * alike; nothing without a table. */
void gvsd_count_refusal(enum gvsd_refusal r);
void gvsd_count_end(enum gvsd_end e);
/* The counts so far; out has GVSD_REFUSALS_N / GVSD_ENDS_N entries. */
void gvsd_refusal_counts(unsigned long long *out);
void gvsd_end_counts(unsigned long long *out);

#endif
