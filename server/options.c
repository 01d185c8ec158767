#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gvs/cli.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/proto.h"
#include "options.h"

/* Flags as given, applied over the config file once it is read. */
struct flags {
    const char *config;
    const char *listen[GVS_CONFIG_MAX_LISTEN];
    int nlisten;
    const char *plugins[GVS_CONFIG_MAX_PLUGINS];
    int nplugins;
    const char *plugin_dir;
    const char *log_level;
    const char *max_frame;
    const char *max_sessions;
    const char *ready_fd;
    const char *devices;
    const char *insecure; /* "1" when --insecure was given */
    const char *memory_quota;
    const char *metrics_sessions; /* "1" when --metrics-sessions was given */
};

enum { OPT_CONFIG = 256, OPT_LISTEN, OPT_PLUGIN_DIR, OPT_PLUGIN,
       OPT_LOG_LEVEL, OPT_MAX_FRAME, OPT_MAX_SESSIONS, OPT_READY_FD,
       OPT_DEVICES, OPT_INSECURE, OPT_MEMORY_QUOTA, OPT_METRICS_SESSIONS,
       OPT_VERSION };

static const struct option long_opts[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"max-frame", required_argument, NULL, OPT_MAX_FRAME},
    {"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
    {"ready-fd", required_argument, NULL, OPT_READY_FD},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"memory-quota", required_argument, NULL, OPT_MEMORY_QUOTA},
    {"metrics-sessions", no_argument, NULL, OPT_METRICS_SESSIONS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static const char usage[] =
    "usage: gvsd [OPTION]...\n"
    "Serves virtualized GPU API calls to gvs frontends.\n"
    "\n"
    "  --config FILE       config file (default $GVS_CONFIG or "
    "/etc/gvs/gvs.conf)\n"
    "  --listen URI        listen on URI (unix:///path, shm:///path,\n"
    "                      tcp://host:port, tls://host:port,\n"
    "                      ivshmem:///path: a region file for a guest);\n"
    "                      repeatable\n"
    "  --plugin-dir DIR    where gvs-NAME.so plugins live\n"
    "  --plugin NAME       load plugin NAME only; repeatable (default: all)\n"
    "  --log-level LEVEL   error, warn, info or debug (default info)\n"
    "  --max-frame BYTES   largest request body accepted\n"
    "  --max-sessions N    concurrent sessions (default 64)\n"
    "  --ready-fd FD       write \"ready\" to FD once listening\n"
    "  --devices LIST      GPUs the sessions see (ordinals or UUIDs, as in\n"
    "                      CUDA_VISIBLE_DEVICES; default: all)\n"
    "  --memory-quota SIZE GPU memory each session may hold (default: no\n"
    "                      limit; tokens may set their own)\n"
    "  --insecure          allow tcp:// off loopback without a token\n"
    "  --metrics-sessions  serve a series per session on metrics_listen\n"
    "                      (default: only totals and per-GPU gauges)\n"
    "  -h, --help          show this text\n"
    "  --version\n"
    "\n"
    "Exit status: 0 once stopped by SIGTERM or SIGINT; 1 when gvsd cannot\n"
    "start serving; 2 for a bad command line or config.  See gvsd(8) and\n"
    "gvs.conf(5).\n";

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gvsd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(try gvsd --help)\n", stderr);
    va_end(ap);
    return GVS_E_INVAL;
}

static int collect(struct flags *f, int argc, char **argv)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG: f->config = optarg; break;
        case OPT_PLUGIN_DIR: f->plugin_dir = optarg; break;
        case OPT_LOG_LEVEL: f->log_level = optarg; break;
        case OPT_MAX_FRAME: f->max_frame = optarg; break;
        case OPT_MAX_SESSIONS: f->max_sessions = optarg; break;
        case OPT_READY_FD: f->ready_fd = optarg; break;
        case OPT_DEVICES: f->devices = optarg; break;
        case OPT_INSECURE: f->insecure = "1"; break;
        case OPT_MEMORY_QUOTA: f->memory_quota = optarg; break;
        case OPT_METRICS_SESSIONS: f->metrics_sessions = "1"; break;
        case OPT_LISTEN:
            if (f->nlisten == GVS_CONFIG_MAX_LISTEN)
                return bad("at most %d --listen", GVS_CONFIG_MAX_LISTEN);
            f->listen[f->nlisten++] = optarg;
            break;
        case OPT_PLUGIN:
            if (f->nplugins == GVS_CONFIG_MAX_PLUGINS)
                return bad("at most %d --plugin", GVS_CONFIG_MAX_PLUGINS);
            f->plugins[f->nplugins++] = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return GVSD_OPTIONS_EXIT;
        case OPT_VERSION:
            printf("gvsd %s (protocol %u)\n", GVS_VERSION, GVS_PROTO_VERSION);
            return GVSD_OPTIONS_EXIT;
        default: {
            char what[256];
            gvs_cli_option_error(what, sizeof(what), c, argv);
            return bad("%s", what);
        }
        }
    }
    if (optind < argc)
        return bad("unexpected argument %s", argv[optind]);
    return 0;
}

static int parse_fd(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v > INT_MAX)
        return GVS_E_RANGE;
    *out = (int)v;
    return 0;
}

/* Applies one flag through the config parser, so that a flag accepts
 * exactly what its key accepts in the file. */
static int set_key(struct gvs_config *cfg, const char *flag, const char *key,
                   const char *value)
{
    char line[1024], err[256];
    int n = snprintf(line, sizeof(line), "%s = %s\n", key, value);
    if (n < 0 || (size_t)n >= sizeof(line) || strpbrk(value, "\n#") != NULL)
        return bad("bad --%s %s", flag, value);
    if (gvs_config_parse(cfg, line, (size_t)n, err, sizeof(err)) < 0)
        return bad("bad --%s %s: %s", flag, value, err);
    return 0;
}

/* A repeatable flag given at least once replaces the file's values. */
static int set_list(struct gvs_config *cfg, char **list, int *n,
                    const char *flag, const char *key,
                    const char *const *values, int nvalues)
{
    if (nvalues == 0)
        return 0;
    for (int i = 0; i < *n; i++)
        gvs_free(list[i]);
    *n = 0;
    for (int i = 0; i < nvalues; i++) {
        int rc = set_key(cfg, flag, key, values[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Only the default file may be missing: a file named by --config or
 * $GVS_CONFIG that cannot be read is an error, not a silent default. */
static int load_config(struct gvs_config *cfg, const char *given)
{
    char err[512] = "";
    int rc = given != NULL ? gvs_config_load(cfg, given, err, sizeof(err))
                           : gvs_config_load_default(cfg, err, sizeof(err));
    return rc < 0 ? bad("config file %s", err) : 0;
}

/* <dir of /proc/self/exe>/../lib/gvs/plugins: the build and install
 * trees share this layout. */
static int default_plugin_dir(struct gvs_config *cfg)
{
    char exe[PATH_MAX], dir[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return bad("cannot find my own executable; give --plugin-dir");
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(dir, sizeof(dir), "%s/../lib/gvs/plugins", exe);
    return set_key(cfg, "plugin-dir", "plugin_dir", dir);
}

static int apply(struct gvsd_options *o, const struct flags *f)
{
    struct gvs_config *cfg = &o->cfg;
    const struct {
        const char *flag, *key, *value;
    } scalars[] = {
        {"plugin-dir", "plugin_dir", f->plugin_dir},
        {"log-level", "log_level", f->log_level},
        {"max-frame", "max_frame", f->max_frame},
        {"max-sessions", "max_sessions", f->max_sessions},
        {"devices", "devices", f->devices},
        {"insecure", "insecure", f->insecure},
        {"memory-quota", "memory_quota", f->memory_quota},
        {"metrics-sessions", "metrics_sessions", f->metrics_sessions},
    };
    int rc = set_list(cfg, cfg->listen, &cfg->nlisten, "listen", "listen",
                      f->listen, f->nlisten);
    if (rc == 0)
        rc = set_list(cfg, cfg->plugins, &cfg->nplugins, "plugin", "plugin",
                      f->plugins, f->nplugins);
    for (size_t i = 0; rc == 0 && i < sizeof(scalars) / sizeof(scalars[0]);
         i++)
        if (scalars[i].value != NULL)
            rc = set_key(cfg, scalars[i].flag, scalars[i].key,
                         scalars[i].value);
    if (rc == 0 && cfg->plugin_dir == NULL)
        rc = default_plugin_dir(cfg);
    if (rc < 0)
        return rc;
    if (cfg->log_level != NULL)
        gvs_log_parse_level(cfg->log_level, &o->log_level);
    if (f->ready_fd != NULL && parse_fd(f->ready_fd, &o->ready_fd) < 0)
        return bad("bad --ready-fd %s", f->ready_fd);
    if (cfg->nlisten == 0)
        return bad("no listen URI (give --listen or the config key listen)");
    return 0;
}

int gvsd_options_parse(struct gvsd_options *o, int argc, char **argv)
{
    struct flags f = {0};
    gvs_config_init(&o->cfg);
    o->log_level = GVS_LOG_INFO;
    o->ready_fd = -1;
    int rc = collect(&f, argc, argv);
    if (rc == 0)
        rc = load_config(&o->cfg, f.config);
    if (rc == 0)
        rc = apply(o, &f);
    return rc;
}

void gvsd_options_free(struct gvsd_options *o)
{
    gvs_config_free(&o->cfg);
}
