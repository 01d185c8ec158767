/*
 * Escaping untrusted bytes for display.  Whatever gvs shows of what a
 * peer sent (a HELLO's program or plugin name, a session's identity) goes
 * through this one rule, in gvsd's log, `gvs status` and the metrics:
 *
 *   bytes 0x20..0x7e are copied, except the backslash; every other byte
 *   (NUL and the other controls, DEL, 0x80..0xff) and the backslash
 *   become "\xNN", NN two lowercase hex digits.
 *
 * So the result is printable ASCII, without a newline or an escape
 * sequence a terminal would act on, and says exactly which bytes came:
 * a backslash in it always starts "\xNN".  Escaping an escaped string
 * again turns its backslashes into "\x5c": escape once, where the bytes
 * are shown.
 */
#ifndef GVS_ESCAPE_H
#define GVS_ESCAPE_H

#include <stddef.h>

/* An escape takes at most 4 bytes: a buffer of GVS_ESCAPED_SIZE(n)
 * bytes holds the escaped form of any n bytes, NUL included. */
#define GVS_ESCAPED_SIZE(n) (4 * (size_t)(n) + 1)

/* Writes the escaped form of the inlen bytes at in (any bytes, NUL
 * included; in may be NULL when inlen is 0) into out, a buffer of outlen
 * bytes that must not overlap in.  Nothing is written past out[outlen - 1]
 * and, when outlen >= 1, out is NUL-terminated.
 *
 * When the escaped form does not fit in outlen - 1 bytes, out holds the
 * longest run of whole escapes (never part of a "\xNN") that leaves room
 * for "...", then "..." (as much of it as fits when outlen < 4).
 *
 * Returns 0 when all of in was written, GVS_E_TOOBIG when it was cut and
 * marked (out is still a valid string: only the return value tells a cut
 * from input that ends in "..."), GVS_E_INVAL when outlen is 0 (out is
 * not touched). */
int gvs_escape(char *out, size_t outlen, const void *in, size_t inlen);

#endif
