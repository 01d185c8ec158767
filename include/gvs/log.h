/*
 * Leveled logging to stderr.  One line per message, prefixed with the
 * program tag, pid and level.  Thread-safe (one write(2) per line).
 *
 * A message is one line of printable ASCII whatever it holds: once
 * formatted it is escaped by the rule of gvs/escape.h (a newline is shown
 * as \x0a, ESC as \x1b, a backslash as \x5c) and cut, marked with
 * "...", to the line's bound (1 KiB).  So a peer's string (a program or
 * plugin name, an identity) is logged as it came, never escaped before:
 * it would be escaped twice.  A message cannot span lines.
 */
#ifndef GVS_LOG_H
#define GVS_LOG_H

enum gvs_log_level {
    GVS_LOG_ERROR = 0,
    GVS_LOG_WARN = 1,
    GVS_LOG_INFO = 2,
    GVS_LOG_DEBUG = 3,
};

/* Sets the tag ("gvsd", "gvs-client") and the most verbose level shown.
 * Defaults: tag "gvs", level WARN. */
void gvs_log_setup(const char *tag, enum gvs_log_level level);
enum gvs_log_level gvs_log_get_level(void);

/* Parses "error|warn|info|debug"; GVS_E_INVAL otherwise. */
int gvs_log_parse_level(const char *s, enum gvs_log_level *out);

void gvs_log(enum gvs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define gvs_error(...) gvs_log(GVS_LOG_ERROR, __VA_ARGS__)
#define gvs_warn(...) gvs_log(GVS_LOG_WARN, __VA_ARGS__)
#define gvs_info(...) gvs_log(GVS_LOG_INFO, __VA_ARGS__)
#define gvs_debug(...)                                                       \
    do {                                                                     \
        if (gvs_log_get_level() >= GVS_LOG_DEBUG)                            \
            gvs_log(GVS_LOG_DEBUG, __VA_ARGS__);                             \
    } while (0)

#endif
