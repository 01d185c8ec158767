#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gvs/log.h"
#include "plugins.h"
#include "session.h"
#include "stats.h"

/* The host API's log function takes no context, so each plugin slot gets
 * its own trampoline that knows which name to prefix.  This stays right
 * even for threads a plugin starts itself. */
static const char *slot_names[GVS_MAX_PLUGINS];

static void host_vlog(int slot, enum gvs_log_level level, const char *fmt,
                      va_list ap)
{
    char msg[900];
    if ((int)level > (int)gvs_log_get_level())
        return;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    gvs_log(level, "%s: %s", slot_names[slot], msg);
}

#define HOST_LOG_FN(i)                                                       \
    __attribute__((format(printf, 2, 3))) static void host_log_##i(          \
        enum gvs_log_level level, const char *fmt, ...)                      \
    {                                                                        \
        va_list ap;                                                          \
        va_start(ap, fmt);                                                   \
        host_vlog(i, level, fmt, ap);                                        \
        va_end(ap);                                                          \
    }
#define HOST_SLOTS(X)                                                        \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)      \
    X(13) X(14) X(15)

HOST_SLOTS(HOST_LOG_FN)

#define HOST_API_ROW(i)                                                      \
    {GVS_PLUGIN_ABI,         host_log_##i,      gvsd_notify,                 \
     gvsd_recv_fd,           gvsd_session_info, gvsd_report_memory,          \
     gvsd_session_peer,      gvsd_report_gpu_memory,                         \
     gvsd_report_gpu_uuid,   gvsd_area,         gvsd_await_client,           \
     gvsd_notify_many,       gvsd_next_queued},
static const struct gvs_host_api host_apis[] = {HOST_SLOTS(HOST_API_ROW)};

_Static_assert(sizeof(host_apis) / sizeof(host_apis[0]) == GVS_MAX_PLUGINS,
               "one host API per plugin slot");

const struct gvs_host_api *gvsd_host_api(int slot, const char *name)
{
    slot_names[slot] = name;
    return &host_apis[slot];
}

void gvsd_session_info(struct gvs_session *s, struct gvs_session_info *out)
{
    *out = s->info;
}

void gvsd_report_memory(struct gvs_session *s, uint64_t bytes)
{
    atomic_store(&s->memory_used, bytes);
    gvsd_stats_set_memory(bytes);
}

void gvsd_report_gpu_memory(struct gvs_session *s, int device,
                            uint64_t bytes)
{
    (void)s;
    gvsd_stats_set_gpu_memory(device, bytes);
}

void gvsd_report_gpu_uuid(struct gvs_session *s, int device,
                          const uint8_t uuid[16])
{
    (void)s;
    struct gvsd_gpu_id id;
    memcpy(id.uuid, uuid, sizeof(id.uuid));
    gvsd_stats_set_gpu_uuid(device, &id);
}

const void *gvsd_session_peer(struct gvs_session *s, const char *name)
{
    for (int i = 0; name != NULL && i < s->nopen; i++) {
        const struct gvs_plugin *d = s->open[i]->desc;
        if (strcmp(d->name, name) == 0)
            return d->peer_api != NULL ? d->peer_api(s->state[i]) : NULL;
    }
    return NULL;
}
