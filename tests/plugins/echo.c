/* gvs-echo.so: a backend plugin for testing gvsd and the client library
 * without a GPU. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "echo.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/plugin.h"

struct echo_state {
    uint64_t notes;
    uint64_t sum;
};

static int op_echo(struct gvs_call *c)
{
    size_t len = gvs_buf_len(c->in);
    int rc = gvs_buf_put_bytes(c->out, gvs_buf_ptr(c->in), len);
    return rc < 0 ? rc : gvs_buf_consume(c->in, len);
}

static int op_crash(struct gvs_call *c)
{
    (void)c;
    abort();
}

static int op_sleep(struct gvs_call *c)
{
    uint32_t ms;
    int rc = gvs_buf_get_u32(c->in, &ms);
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc < 0)
        return rc;
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0)
        ;
    return 0;
}

static int op_note(struct gvs_call *c)
{
    struct echo_state *s = c->state;
    uint32_t v;
    int rc = gvs_buf_get_u32(c->in, &v);
    if (rc == 0)
        rc = gvs_buf_expect_end(c->in);
    if (rc < 0)
        return rc;
    s->notes++;
    s->sum += v;
    return 0;
}

static int op_count(struct gvs_call *c)
{
    const struct echo_state *s = c->state;
    int rc = gvs_buf_expect_end(c->in);
    if (rc == 0)
        rc = gvs_buf_put_u64(c->out, s->notes);
    return rc < 0 ? rc : gvs_buf_put_u64(c->out, s->sum);
}

static int op_badreq(struct gvs_call *c)
{
    (void)c;
    return GVS_E_PROTO;
}

static int op_pid(struct gvs_call *c)
{
    int rc = gvs_buf_expect_end(c->in);
    return rc < 0 ? rc : gvs_buf_put_u32(c->out, (uint32_t)getpid());
}

static const struct gvs_op echo_ops[] = {
    {ECHO_OP_ECHO, 0, "ECHO", op_echo},
    {ECHO_OP_CRASH, 0, "CRASH", op_crash},
    {ECHO_OP_SLEEP, 0, "SLEEP", op_sleep},
    {ECHO_OP_NOTE, GVS_OP_ASYNC_OK, "NOTE", op_note},
    {ECHO_OP_COUNT, 0, "COUNT", op_count},
    {ECHO_OP_BADREQ, 0, "BADREQ", op_badreq},
    {ECHO_OP_PID, 0, "PID", op_pid},
    GVS_OP_END,
};

static int echo_open(const struct gvs_host_api *host, void **state)
{
    struct echo_state *s = gvs_calloc(1, sizeof(*s));
    if (s == NULL)
        return GVS_E_NOMEM;
    host->log(GVS_LOG_DEBUG, "session opened");
    *state = s;
    return 0;
}

static void echo_close(void *state)
{
    gvs_free(state);
}

static const struct gvs_plugin echo_plugin = {
    .abi = GVS_PLUGIN_ABI,
    .id = ECHO_PLUGIN_ID,
    .name = ECHO_PLUGIN_NAME,
    .table_hash = ECHO_TABLE_HASH,
    .ops = echo_ops,
    .session_open = echo_open,
    .session_close = echo_close,
};

__attribute__((visibility("default"))) int
gvs_plugin_entry(uint32_t abi, const struct gvs_plugin **out)
{
    if (abi != GVS_PLUGIN_ABI)
        return GVS_E_VERSION;
    *out = &echo_plugin;
    return 0;
}
