/* What the two applications share: the result line the timing script
 * reads, and whether kcoll is loaded (and how many of the application's
 * calls it took), asked through kcoll's optional API with dlsym, so that
 * the same binary runs with the host MPI alone and with kcoll preloaded. */
#ifndef KCOLL_APP_H
#define KCOLL_APP_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*app_stats_fn)(const char *, const char *, uint64_t *, uint64_t *);

/* Calls of collective coll this process made on any kcoll path, or -1
 * when kcoll is not loaded. */
static inline long long app_kcoll_calls(const char *coll)
{
    app_stats_fn get;
    uint64_t calls = 0, bytes = 0;
    *(void **)&get = dlsym(RTLD_DEFAULT, "kcoll_stats_get");
    if (!get)
        return -1;
    if (get(coll, "kcoll:*", &calls, &bytes))
        return 0;
    return (long long)calls;
}

/* Time of the run: the slowest rank's (as NAS reports it); time in
 * collectives: the ranks' mean (a rank that waits for a late root in a
 * broadcast counts that wait as collective time, as a profiler would). */
typedef struct {
    double total, coll;
} app_times_t;

static inline app_times_t app_reduce_times(double total, double coll, MPI_Comm comm)
{
    double in[2] = {total, coll}, mx[2], sum[2];
    int p;
    MPI_Comm_size(comm, &p);
    MPI_Allreduce(in, mx, 2, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(in, sum, 2, MPI_DOUBLE, MPI_SUM, comm);
    return (app_times_t){mx[0], sum[1] / p};
}

#endif
