/* `gvs status`: asks a gvsd for its GPUs and sessions (the STATUS
 * control op, docs/protocol.md) and prints them as tables. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gvs.h"
#include "gvs/auth.h"
#include "gvs/client.h"
#include "gvs/config.h"
#include "gvs/err.h"
#include "gvs/escape.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "gvs/tls.h"

static const char status_usage[] =
    "usage: gvs status [--server URI] [--bytes]\n"
    "Shows a gvsd's GPUs and sessions.\n"
    "\n"
    "  --server URI  the gvsd to ask (default: the one a program would use:\n"
    "                $GVS_SERVER, else the config's server, else\n"
    "                " GVS_DEFAULT_SERVER ")\n"
    "  --bytes       exact byte counts\n"
    "  -h, --help    show this text\n"
    "\n"
    "Exit status: 0 when gvsd answered; 2 for a bad command line; 125 when\n"
    "gvsd could not be asked.\n";

/* Bounds of the reply, as docs/protocol.md gives them. */
#define STATUS_FORMAT 2u
#define REPLY_MAX ((size_t)64 << 20)
#define TIMEOUT_MS 10000u
#define GPUS_MAX 64u
#define STR_MAX 255u
#define DEVICES_MAX 4096u

struct status_gpu {
    char *name, *uuid;
    uint64_t total, used;
};

struct status_session {
    uint32_t id, pid;
    char *identity;
    uint64_t uptime_ms, memory, quota, calls, in, out;
};

/* Counts by reason: refused connections, ended sessions. */
#define REASONS_MAX 64
#define REASON_LABEL_MAX 64

struct status_counts {
    uint32_t n;
    char *label[REASONS_MAX];
    uint64_t count[REASONS_MAX];
};

struct status {
    char *version, *devices, *gpu_note;
    uint32_t protocol, max_sessions, ngpus, nsessions, nlisted;
    uint64_t uptime_ms;
    int32_t gpu_status;
    struct status_gpu gpus[GPUS_MAX];
    struct status_session *sessions;
    struct status_counts refused, ended;
};

static void status_free(struct status *st)
{
    gvs_free(st->version);
    gvs_free(st->devices);
    gvs_free(st->gpu_note);
    for (uint32_t i = 0; i < st->ngpus; i++) {
        gvs_free(st->gpus[i].name);
        gvs_free(st->gpus[i].uuid);
    }
    for (uint32_t i = 0; st->sessions != NULL && i < st->nlisted; i++)
        gvs_free(st->sessions[i].identity);
    gvs_free(st->sessions);
    for (uint32_t i = 0; i < st->refused.n; i++)
        gvs_free(st->refused.label[i]);
    for (uint32_t i = 0; i < st->ended.n; i++)
        gvs_free(st->ended.label[i]);
}

/* What a server sent is printed, not obeyed.  gvsd sends display text:
 * printable ASCII, peers' strings escaped by the rule of gvs/escape.h.
 * Such text is shown as it came (escaping it again would show gvsd's
 * escapes as "\x5cxNN"); a string holding any other byte did not come
 * from a conforming gvsd and is shown escaped whole. */
static int is_display(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

static const char *shown(char *out, size_t len, const char *s)
{
    if (is_display(s))
        return s;
    gvs_escape(out, len, s, strlen(s));
    return out;
}

/* A str of the reply, at most max bytes, as it will be shown. */
static int get_text(struct gvs_buf *b, size_t max, char **out)
{
    int rc = gvs_buf_get_str(b, max, out);
    if (rc < 0 || is_display(*out))
        return rc;
    size_t n = strlen(*out);
    char *e = gvs_malloc(GVS_ESCAPED_SIZE(n));
    if (e == NULL)
        return GVS_E_NOMEM;
    gvs_escape(e, GVS_ESCAPED_SIZE(n), *out, n);
    gvs_free(*out);
    *out = e;
    return 0;
}

static int get_u64s(struct gvs_buf *b, uint64_t *const *v, int n)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = gvs_buf_get_u64(b, v[i]);
    return rc;
}

static int decode_gpus(struct gvs_buf *b, struct status *st)
{
    uint32_t n;
    int rc = gvs_buf_get_i32(b, &st->gpu_status);
    if (rc == 0)
        rc = get_text(b, STR_MAX, &st->gpu_note);
    if (rc == 0)
        rc = gvs_buf_get_u32(b, &n);
    if (rc == 0 && n > GPUS_MAX)
        rc = GVS_E_PROTO;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        struct status_gpu *g = &st->gpus[i];
        st->ngpus = i + 1; /* freed even when half decoded */
        rc = get_text(b, STR_MAX, &g->name);
        if (rc == 0)
            rc = get_text(b, STR_MAX, &g->uuid);
        if (rc == 0)
            rc = get_u64s(b, (uint64_t *const[]){&g->total, &g->used}, 2);
    }
    return rc;
}

static int decode_sessions(struct gvs_buf *b, struct status *st)
{
    uint32_t listed;
    int rc = gvs_buf_get_u32(b, &st->nsessions);
    if (rc == 0)
        rc = gvs_buf_get_u32(b, &listed);
    /* Each listed session takes 60 bytes at least: a count past what
     * is left is a lie, not an allocation to make. */
    if (rc == 0 && (listed > st->nsessions || listed > gvs_buf_len(b) / 60))
        rc = GVS_E_PROTO;
    if (rc == 0 && listed > 0 &&
        (st->sessions = gvs_calloc(listed, sizeof(*st->sessions))) == NULL)
        rc = GVS_E_NOMEM;
    for (uint32_t i = 0; rc == 0 && i < listed; i++) {
        struct status_session *s = &st->sessions[i];
        st->nlisted = i + 1;
        rc = gvs_buf_get_u32(b, &s->id);
        if (rc == 0)
            rc = gvs_buf_get_u32(b, &s->pid);
        if (rc == 0)
            rc = get_text(b, STR_MAX, &s->identity);
        if (rc == 0)
            rc = get_u64s(b,
                          (uint64_t *const[]){&s->uptime_ms, &s->memory,
                                              &s->quota, &s->calls, &s->in,
                                              &s->out},
                          6);
    }
    return rc;
}

static int decode_counts(struct gvs_buf *b, struct status_counts *c)
{
    uint32_t n;
    int rc = gvs_buf_get_u32(b, &n);
    if (rc == 0 && n > REASONS_MAX)
        rc = GVS_E_RANGE;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        rc = get_text(b, REASON_LABEL_MAX, &c->label[i]);
        if (rc == 0)
            c->n = i + 1; /* freed even when half decoded */
        if (rc == 0)
            rc = gvs_buf_get_u64(b, &c->count[i]);
    }
    return rc;
}

static int decode(struct gvs_buf *b, struct status *st)
{
    uint32_t format;
    int rc = gvs_buf_get_u32(b, &format);
    if (rc == 0 && format != STATUS_FORMAT)
        rc = GVS_E_VERSION;
    if (rc == 0)
        rc = get_text(b, STR_MAX, &st->version);
    if (rc == 0)
        rc = gvs_buf_get_u32(b, &st->protocol);
    if (rc == 0)
        rc = gvs_buf_get_u64(b, &st->uptime_ms);
    if (rc == 0)
        rc = gvs_buf_get_u32(b, &st->max_sessions);
    if (rc == 0)
        rc = get_text(b, DEVICES_MAX, &st->devices);
    if (rc == 0)
        rc = decode_gpus(b, st);
    if (rc == 0)
        rc = decode_sessions(b, st);
    if (rc == 0)
        rc = decode_counts(b, &st->refused);
    if (rc == 0)
        rc = decode_counts(b, &st->ended);
    return rc == 0 ? gvs_buf_expect_end(b) : rc;
}

/* One HELLO and its reply; fails on a refusal, with why. */
static int hello_round(struct gvs_conn *c, const struct gvs_hello *hello,
                       struct gvs_buf *b, struct gvs_hello_reply *r,
                       char *why, size_t len)
{
    struct gvs_frame_hdr h = {.op = GVS_CTL_HELLO, .id = 0};
    gvs_buf_reset(b);
    int rc = gvs_hello_encode(hello, b);
    if (rc == 0)
        rc = gvs_frame_send(c, &h, b);
    if (rc == 0)
        rc = gvs_frame_recv(c, REPLY_MAX, &h, b);
    if (rc == 0 && (h.flags != GVS_F_REPLY || h.op != GVS_CTL_HELLO))
        rc = GVS_E_PROTO;
    if (rc == 0)
        rc = gvs_hello_reply_decode(b, r);
    if (rc < 0) {
        snprintf(why, len, "handshake: %s", gvs_strerror(rc));
        return rc;
    }
    if (r->status < 0) {
        char msg[GVS_NAME_MAX + 1]; /* an escaped one is cut to a name */
        snprintf(why, len, "refused: %s",
                 r->message[0] != '\0'
                     ? shown(msg, sizeof(msg), r->message)
                     : gvs_strerror(r->status));
        return r->status;
    }
    return 0;
}

/* The handshake of a client naming no plugin, answering a token
 * challenge as the frontend does (docs/protocol.md): the proof covers
 * the HELLO's body up to its one-byte auth field. */
static int handshake(struct gvs_conn *c, const char *token, struct gvs_buf *b,
                     char *why, size_t len)
{
    struct gvs_hello hello = {.version = GVS_PROTO_VERSION,
                              .pid = (uint32_t)getpid()};
    struct gvs_hello_reply r;
    snprintf(hello.program, sizeof(hello.program), "gvs-status");
    int rc = hello_round(c, &hello, b, &r, why, len);
    if (rc < 0 || r.status != GVS_HELLO_CHALLENGE)
        return rc;
    if (token[0] != '\0') {
        gvs_buf_reset(b);
        rc = gvs_auth_nonce(hello.client_nonce);
        if (rc == 0)
            rc = gvs_hello_encode(&hello, b);
        if (rc == 0)
            rc = gvs_auth_mac(token, r.nonce, hello.client_nonce,
                              gvs_buf_ptr(b), gvs_buf_len(b) - 1, hello.mac);
        if (rc < 0) {
            snprintf(why, len, "token proof: %s", gvs_strerror(rc));
            return rc;
        }
        hello.auth = GVS_HELLO_AUTH_HMAC;
    }
    rc = hello_round(c, &hello, b, &r, why, len);
    explicit_bzero(hello.mac, sizeof(hello.mac));
    if (rc == 0 && r.status != 0) {
        snprintf(why, len, "challenged twice");
        rc = GVS_E_PROTO;
    }
    return rc;
}

/* HELLO naming no plugin, then STATUS; the reply body lands in b. */
static int ask(const char *uri, const char *token, struct gvs_buf *b,
               char *why, size_t len)
{
    struct gvs_conn *c;
    int rc = gvs_connect(uri, &c);
    if (rc < 0) {
        snprintf(why, len, "%s",
                 gvs_comm_why()[0] != '\0' ? gvs_comm_why() : gvs_strerror(rc));
        return rc;
    }
    rc = gvs_conn_set_timeout(c, TIMEOUT_MS);
    if (rc == 0)
        rc = handshake(c, token, b, why, len);
    struct gvs_frame_hdr h = {.op = GVS_CTL_STATUS, .id = 1};
    if (rc == 0)
        rc = gvs_frame_send(c, &h, NULL);
    if (rc == 0)
        rc = gvs_frame_recv(c, REPLY_MAX, &h, b);
    if (rc == 0 && (h.flags != GVS_F_REPLY || h.plugin != 0 ||
                    h.op != GVS_CTL_STATUS || h.id != 1))
        rc = GVS_E_PROTO;
    if (rc == 0) {
        struct gvs_frame_hdr bye = {.op = GVS_CTL_BYE, .id = 2};
        gvs_frame_send(c, &bye, NULL);
    }
    if (rc < 0 && why[0] == '\0')
        snprintf(why, len, "%s", gvs_strerror(rc));
    gvs_conn_close(c);
    return rc;
}

static const char *size_text(char *out, size_t len, uint64_t v, int exact)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                        "PiB"};
    if (exact || v < 1024) {
        snprintf(out, len, "%" PRIu64 "%s", v, exact ? "" : " B");
        return out;
    }
    double d = (double)v;
    int u = 0;
    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    snprintf(out, len, "%.1f %s", d, units[u]);
    return out;
}

static const char *time_text(char *out, size_t len, uint64_t ms)
{
    uint64_t s = ms / 1000;
    if (s < 60)
        snprintf(out, len, "%.1fs", (double)ms / 1000);
    else if (s < 3600)
        snprintf(out, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(out, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600,
                 s / 60 % 60);
    else
        snprintf(out, len, "%" PRIu64 "d%02" PRIu64 "h", s / 86400,
                 s / 3600 % 24);
    return out;
}

static void print_gpus(struct status *st, int exact)
{
    char a[32], b[32];
    printf("devices: %s\n", st->devices[0] != '\0' ? st->devices
                                                   : "all of the host's");
    if (st->gpu_status < 0) {
        printf("GPUs: unknown (%s)\n", st->gpu_note);
        return;
    }
    printf("\n%-4s %-28s %-42s %s\n", "GPU", "NAME", "UUID",
           "MEMORY USED / TOTAL");
    for (uint32_t i = 0; i < st->ngpus; i++) {
        struct status_gpu *g = &st->gpus[i];
        printf("%-4u %-28s %-42s %s / %s\n", i, g->name, g->uuid,
               size_text(a, sizeof(a), g->used, exact),
               size_text(b, sizeof(b), g->total, exact));
    }
}

static void print_sessions(struct status *st, int exact)
{
    char up[32], in[32], out[32], mem[32], quota[32];
    if (st->nsessions == 0) {
        printf("\nno sessions\n");
        return;
    }
    printf("\n%-8s %-8s %-9s %-10s %-11s %-11s %-23s %s\n", "SESSION", "PID",
           "UPTIME", "CALLS", "IN", "OUT", "MEMORY / QUOTA", "IDENTITY");
    for (uint32_t i = 0; i < st->nlisted; i++) {
        struct status_session *s = &st->sessions[i];
        char mq[80];
        snprintf(mq, sizeof(mq), "%s / %s",
                 size_text(mem, sizeof(mem), s->memory, exact),
                 s->quota == 0 ? "none"
                               : size_text(quota, sizeof(quota), s->quota,
                                           exact));
        printf("%-8" PRIu32 " %-8" PRIu32 " %-9s %-10" PRIu64
               " %-11s %-11s %-23s %s\n",
               s->id, s->pid, time_text(up, sizeof(up), s->uptime_ms),
               s->calls, size_text(in, sizeof(in), s->in, exact),
               size_text(out, sizeof(out), s->out, exact), mq,
               s->identity);
    }
    if (st->nlisted < st->nsessions)
        printf("(%" PRIu32 " more sessions did not fit in the reply)\n",
               st->nsessions - st->nlisted);
}

/* "what: label N, label N" for the reasons counted at least once. */
static void print_counts(const char *what, const struct status_counts *c)
{
    const char *sep = ": ";
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->count[i] == 0)
            continue;
        if (sep[0] == ':')
            printf("%s", what);
        printf("%s%s %" PRIu64, sep, c->label[i], c->count[i]);
        sep = ", ";
    }
    if (sep[0] != ':')
        printf("\n");
}

static void print(struct status *st, int exact)
{
    char up[32];
    printf("gvsd %s, protocol %" PRIu32 ", up %s, %" PRIu32 " of %" PRIu32
           " sessions\n",
           st->version, st->protocol,
           time_text(up, sizeof(up), st->uptime_ms), st->nsessions,
           st->max_sessions);
    print_counts("refused", &st->refused);
    print_counts("sessions ended", &st->ended);
    print_gpus(st, exact);
    print_sessions(st, exact);
}

/* What a program run through gvs would use (gvs/client.h): the server,
 * its token and TLS files, from the environment, else the config file.
 * 0, or -1 after printing why. */
static int settings(struct gvs_config *cfg, const char *server,
                    const char **uri, const char **token)
{
    char err[512] = "";
    if (gvs_config_load_default(cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "gvs status: config file %s\n", err);
        return -1;
    }
    const char *env = getenv("GVS_SERVER");
    *uri = server != NULL              ? server
           : env != NULL && env[0]     ? env
           : cfg->server != NULL       ? cfg->server
                                       : GVS_DEFAULT_SERVER;
    env = getenv("GVS_TOKEN");
    *token = env != NULL && env[0]    ? env
             : cfg->ntokens > 0       ? cfg->tokens[0].secret
                                      : "";
    struct gvs_tls_files tls = {cfg->tls_ca, cfg->tls_cert, cfg->tls_key};
    gvs_tls_files_env(&tls);
    if (gvs_tls_configure(&tls) < 0) {
        fprintf(stderr, "gvs status: out of memory\n");
        return -1;
    }
    return 0;
}

int gvs_cmd_status(int argc, char **argv)
{
    enum { OPT_SERVER = 256, OPT_BYTES };
    static const struct option opts[] = {
        {"server", required_argument, NULL, OPT_SERVER},
        {"bytes", no_argument, NULL, OPT_BYTES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *server = NULL;
    int exact = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == OPT_SERVER) {
            server = optarg;
        } else if (c == OPT_BYTES) {
            exact = 1;
        } else if (c == 'h') {
            fputs(status_usage, stdout);
            return 0;
        } else {
            gvs_option_error("status", c, argv);
            return GVS_TOOL_USAGE;
        }
    }
    if (optind < argc) {
        gvs_usage_error("status", "unexpected argument %s", argv[optind]);
        return GVS_TOOL_USAGE;
    }
    struct gvs_config cfg;
    const char *uri, *token;
    gvs_config_init(&cfg);
    if (settings(&cfg, server, &uri, &token) < 0) {
        gvs_config_free(&cfg);
        return GVS_TOOL_FAILED;
    }
    struct gvs_buf *b = gvs_buf_new(REPLY_MAX);
    struct status st = {0};
    char why[320] = "";
    int rc = b != NULL ? ask(uri, token, b, why, sizeof(why)) : GVS_E_NOMEM;
    if (rc == 0 && (rc = decode(b, &st)) < 0)
        snprintf(why, sizeof(why), "bad STATUS reply: %s", gvs_strerror(rc));
    if (rc == 0)
        print(&st, exact);
    else
        fprintf(stderr, "gvs status: %s: %s\n", uri,
                why[0] != '\0' ? why : gvs_strerror(rc));
    status_free(&st);
    gvs_buf_free(b);
    gvs_config_free(&cfg);
    return rc == 0 ? 0 : GVS_TOOL_FAILED;
}
