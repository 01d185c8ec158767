#include <stdint.h>
#include <string.h>

#include "gvs/err.h"
#include "gvs/escape.h"

#define CUT_MARK "..."
#define CUT_MARK_LEN (sizeof(CUT_MARK) - 1)

int gvs_escape(char *out, size_t outlen, const void *in, size_t inlen)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = in;
    if (outlen == 0)
        return GVS_E_INVAL;
    size_t room = outlen - 1; /* the NUL always has its byte */
    /* o: bytes written; keep: the last escape boundary that leaves room
     * for the mark, where a cut string ends. */
    size_t o = 0, keep = 0;
    for (size_t i = 0; i < inlen; i++) {
        int plain = p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\';
        size_t n = plain ? 1 : 4;
        if (n > room - o) {
            size_t m = room - keep < CUT_MARK_LEN ? room - keep : CUT_MARK_LEN;
            memcpy(out + keep, CUT_MARK, m);
            out[keep + m] = '\0';
            return GVS_E_TOOBIG;
        }
        if (plain) {
            out[o] = (char)p[i];
        } else {
            out[o] = '\\';
            out[o + 1] = 'x';
            out[o + 2] = hex[p[i] >> 4];
            out[o + 3] = hex[p[i] & 0xf];
        }
        o += n;
        if (room - o >= CUT_MARK_LEN)
            keep = o;
    }
    out[o] = '\0';
    return 0;
}
