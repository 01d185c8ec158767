#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gvs/err.h"
#include "internal.h"

/* Room for the largest HELLO or HELLO reply. */
#define HANDSHAKE_BUF_MAX 8192

/* Copies s into out, cut to fit: a long program name is still useful. */
static void copy_cut(char *out, size_t len, const char *s)
{
    size_t n = strnlen(s, len - 1);
    memcpy(out, s, n);
    out[n] = '\0';
}

/* argv[0]'s base name, else the kernel's (truncated) comm. */
static void program_name(char *out, size_t len)
{
    char tmp[4096];
    snprintf(out, len, "?");
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f != NULL) {
        size_t n = fread(tmp, 1, sizeof(tmp) - 1, f);
        fclose(f);
        tmp[n] = '\0';
        if (tmp[0] != '\0') {
            const char *slash = strrchr(tmp, '/');
            copy_cut(out, len, slash != NULL ? slash + 1 : tmp);
            return;
        }
    }
    f = fopen("/proc/self/comm", "r");
    if (f != NULL) {
        if (fgets(tmp, sizeof(tmp), f) != NULL) {
            tmp[strcspn(tmp, "\n")] = '\0';
            copy_cut(out, len, tmp);
        }
        fclose(f);
    }
}

static int exchange(struct gvs_conn *c, struct gvs_buf *b, char *why,
                    size_t len)
{
    struct gvs_hello hello;
    memset(&hello, 0, sizeof(hello));
    hello.version = GVS_PROTO_VERSION;
    hello.pid = (uint32_t)getpid();
    program_name(hello.program, sizeof(hello.program));
    client_registry_fill(&hello);

    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = CLIENT_HELLO_ID};
    int rc = gvs_hello_encode(&hello, b);
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    if (rc == 0)
        rc = gvs_frame_recv(c, HANDSHAKE_BUF_MAX, &h, b);
    if (rc < 0) {
        snprintf(why, len, "%s", gvs_strerror(rc));
        return rc;
    }
    if (!(h.flags & GVS_F_REPLY) || h.plugin != 0 || h.op != GVS_CTL_HELLO ||
        h.id != CLIENT_HELLO_ID) {
        snprintf(why, len, "unexpected reply to HELLO");
        return GVS_E_PROTO;
    }
    struct gvs_hello_reply r;
    rc = gvs_hello_reply_decode(b, &r);
    if (rc < 0) {
        snprintf(why, len, "bad HELLO reply: %s", gvs_strerror(rc));
        return rc;
    }
    if (r.status != 0) {
        snprintf(why, len, "%s", r.message[0] != '\0' ? r.message
                                                      : gvs_strerror(r.status));
        return r.status < 0 ? r.status : GVS_E_PROTO;
    }
    return 0;
}

int client_handshake(struct gvs_conn *c, unsigned timeout_ms, char *why,
                     size_t len)
{
    struct gvs_buf *b = gvs_buf_new(HANDSHAKE_BUF_MAX);
    if (b == NULL) {
        snprintf(why, len, "%s", gvs_strerror(GVS_E_NOMEM));
        return GVS_E_NOMEM;
    }
    int rc = gvs_conn_set_timeout(c, timeout_ms);
    if (rc == 0)
        rc = exchange(c, b, why, len);
    else
        snprintf(why, len, "%s", gvs_strerror(rc));
    if (rc == 0)
        rc = gvs_conn_set_timeout(c, 0);
    gvs_buf_free(b);
    return rc;
}
