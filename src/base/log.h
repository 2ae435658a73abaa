/* One-line messages to stderr, each prefixed with "kcoll: ". */
#ifndef KCOLL_LOG_H
#define KCOLL_LOG_H

#include <stddef.h>

#if defined(__GNUC__)
#define KCOLL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KCOLL_PRINTF(a, b)
#endif

/* Print warnings (1, the default) or not; base/params.c follows KCOLL_WARN. */
void kcoll_log_set_warnings(int on);
/* "kcoll: warning: ..." unless switched off. */
void kcoll_warn(const char *fmt, ...) KCOLL_PRINTF(1, 2);
/* kcoll_warn the first time a process passes *once (a static flag of the
 * caller's, initially 0), nothing after: a condition that every later
 * communicator would meet again gets one line. */
void kcoll_warn_once(_Atomic int *once, const char *fmt, ...) KCOLL_PRINTF(2, 3);
/* "kcoll: error: ..." always. */
void kcoll_error(const char *fmt, ...) KCOLL_PRINTF(1, 2);
/* Format a reason into a caller's buffer (nothing if out is NULL or empty). */
void kcoll_fmt(char *out, size_t outlen, const char *fmt, ...) KCOLL_PRINTF(3, 4);

#endif
