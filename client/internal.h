/*
 * Private contracts between the files of libgvs-client.  The library is
 * built with hidden visibility; only the declarations of gvs/client.h are
 * given default visibility here, and the version script keeps every other
 * symbol (including the statically linked gvs core) out of the dynamic
 * symbol table.
 */
#ifndef GVS_CLIENT_INTERNAL_H
#define GVS_CLIENT_INTERNAL_H

#pragma GCC visibility push(default)
#include "gvs/client.h"
#pragma GCC visibility pop

#include <stddef.h>

#include "gvs/comm.h"
#include "gvs/proto.h"

/* registry.c --------------------------------------------------------
 * Callers hold the client lock. */

/* Adds a plugin; an identical re-registration is accepted.  GVS_E_INVAL
 * on a bad descriptor or a conflicting id, GVS_E_TOOBIG when full. */
int client_registry_add(const struct gvs_client_plugin *p);
/* Copies the registered plugins into a HELLO. */
void client_registry_fill(struct gvs_hello *h);

/* settings.c -------------------------------------------------------- */

struct client_settings {
    char server[512];
    unsigned handshake_timeout_ms;
};

/* Chooses the server ($GVS_SERVER, config key "server", default) and
 * reads the handshake timeout from the config file when there is one.
 * On a config error, s->server still names the server that would be
 * used and why holds the reason. */
int client_settings_load(struct client_settings *s, char *why, size_t len);

/* handshake.c ------------------------------------------------------- */

/* Id of the HELLO request; later requests count up from 1. */
#define CLIENT_HELLO_ID 0u

/* Runs the HELLO exchange on a fresh connection, bounded by timeout_ms,
 * then clears the receive timeout.  On failure why says what went wrong
 * (the server's message when it refused us). */
int client_handshake(struct gvs_conn *c, unsigned timeout_ms, char *why,
                     size_t len);

/* stats.c ----------------------------------------------------------- */

/* Counts an API request of `bytes` frame bytes (post: no reply awaited),
 * and a received reply (one completed round trip).  The handshake is not
 * counted: the stats describe the plugins' traffic. */
void client_stats_sent(uint64_t bytes, int post);
void client_stats_reply(uint64_t bytes);
/* Zeroes the counters (a forked child starts its own). */
void client_stats_reset(void);

#endif
