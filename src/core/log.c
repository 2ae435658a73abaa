/* One-line messages. Each is formatted into one buffer and written with a
 * single write(2), so lines of different ranks do not interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "core/log.h"
#include "core/params.h"

static void kcoll_vlog(const char *prefix, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "kcoll: %s", prefix);
    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (m < 0)
        return;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void kcoll_warn(const char *fmt, ...)
{
    if (!kcoll_param_int(KCOLL_P_WARN))
        return;
    va_list ap;
    va_start(ap, fmt);
    kcoll_vlog("warning: ", fmt, ap);
    va_end(ap);
}

void kcoll_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kcoll_vlog("error: ", fmt, ap);
    va_end(ap);
}

void kcoll_fmt(char *out, size_t outlen, const char *fmt, ...)
{
    if (!out || outlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, outlen, fmt, ap);
    va_end(ap);
}
