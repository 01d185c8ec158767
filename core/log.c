#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gvs/err.h"
#include "gvs/escape.h"
#include "gvs/log.h"

#define LOG_LINE_MAX 1024

static char log_tag[32] = "gvs";
static _Atomic int log_level = GVS_LOG_WARN;

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static const char *const level_labels[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void gvs_log_setup(const char *tag, enum gvs_log_level level)
{
    if (tag != NULL)
        snprintf(log_tag, sizeof(log_tag), "%s", tag);
    atomic_store(&log_level, (int)level);
}

enum gvs_log_level gvs_log_get_level(void)
{
    return (enum gvs_log_level)atomic_load(&log_level);
}

int gvs_log_parse_level(const char *s, enum gvs_log_level *out)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (s != NULL && strcmp(s, level_names[i]) == 0) {
            *out = (enum gvs_log_level)i;
            return 0;
        }
    }
    return GVS_E_INVAL;
}

void gvs_log(enum gvs_log_level level, const char *fmt, ...)
{
    char msg[LOG_LINE_MAX], line[LOG_LINE_MAX];
    int saved_errno = errno;
    if ((unsigned)level > GVS_LOG_DEBUG || (int)level > atomic_load(&log_level))
        return;
    int n = snprintf(line, sizeof(line), "%s[%ld] %s: ", log_tag,
                     (long)getpid(), level_labels[level]);
    if (n < 0 || (size_t)n >= sizeof(line))
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    /* Callers pass peers' strings as they came: escaped here, whatever
     * the message holds cannot end the line, forge another or reach the
     * reader's terminal.  The room left for the message is shorter than
     * msg, so a message vsnprintf cut is cut again, with the mark; the
     * newline always has its byte, so lines never merge. */
    size_t mlen = (size_t)m < sizeof(msg) ? (size_t)m : sizeof(msg) - 1;
    gvs_escape(line + n, sizeof(line) - (size_t)n - 1, msg, mlen);
    size_t len = (size_t)n + strlen(line + n);
    line[len++] = '\n';
    /* One write per line keeps concurrent writers' lines whole; a short
     * or failed write to stderr has nowhere better to be reported. */
    ssize_t w;
    do
        w = write(STDERR_FILENO, line, len);
    while (w < 0 && errno == EINTR);
    errno = saved_errno;
}
