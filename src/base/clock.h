/* The monotonic clock in nanoseconds, for waits and time limits; the
 * median of measured times. */
#ifndef KCOLL_CLOCK_H
#define KCOLL_CLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline int64_t kcoll_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int kcoll_double_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n times sorted already (0 for none). */
static inline double kcoll_median_sorted(const double *v, int n)
{
    if (n <= 0)
        return 0;
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The median of n times (0 for none); sorts v in place. */
static inline double kcoll_median(double *v, int n)
{
    if (n > 0)
        qsort(v, (size_t)n, sizeof *v, kcoll_double_cmp);
    return kcoll_median_sorted(v, n);
}

#endif
