/*
 * Self-pipe: SIGTERM, SIGINT and SIGCHLD become bytes on a pipe that the
 * accept loop polls, so a signal interrupts poll() cleanly and is handled
 * outside the signal handler.
 */
#ifndef GVSD_SIGNALS_H
#define GVSD_SIGNALS_H

/* Installs the handlers and ignores SIGPIPE.  Returns the descriptor to
 * poll, or a negative GVS_E_* code. */
int gvsd_signals_install(void);

/* Reads every pending signal byte; sets *stop if SIGTERM or SIGINT came
 * and *child if SIGCHLD came (neither is cleared). */
void gvsd_signals_drain(int *stop, int *child);

/* In a worker: default dispositions again, pipe closed. */
void gvsd_signals_reset(void);

#endif
