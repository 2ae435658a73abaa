/* One-line messages. Each is formatted into one buffer and written with a
 * single write(2), so lines of different ranks do not interleave.
 *
 * The log is the lowest floor: it knows no parameter. Whether warnings
 * are printed is a switch that the parameters (base/params.c) set when
 * KCOLL_WARN is read or changed. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "base/log.h"

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

/* 1: print warnings. Relaxed: a switch read on its own, ordering nothing. */
static _Atomic int kcoll_log_warnings = 1;

void kcoll_log_set_warnings(int on)
{
    /* relaxed: a switch read on its own, ordering nothing */
    atomic_store_explicit(&kcoll_log_warnings, on != 0, memory_order_relaxed);
}

void kcoll_warn(const char *fmt, ...)
{
    /* relaxed: a switch read on its own, ordering nothing */
    if (!atomic_load_explicit(&kcoll_log_warnings, memory_order_relaxed))
        return;
    va_list ap;
    va_start(ap, fmt);
    kcoll_vlog("warning: ", fmt, ap);
    va_end(ap);
}

void kcoll_warn_once(_Atomic int *once, const char *fmt, ...)
{
    /* relaxed: at most one line per flag; orders nothing */
    if (atomic_exchange_explicit(once, 1, memory_order_relaxed) ||
        !atomic_load_explicit(&kcoll_log_warnings, memory_order_relaxed))
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
