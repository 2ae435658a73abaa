/* kcoll-bench --tune: rules for a tuning file from one run's measurements
 * (docs/tuning.md, "Rules"). The run times the host MPI, kcoll's 'auto'
 * and every algorithm at one process count; wherever the fastest of them
 * beats 'auto' by more than BENCH_TUNE_MARGIN, a rule pins it for the size
 * class of that row. Rank 0 only. */
#ifndef KCOLL_BENCH_TUNE_H
#define KCOLL_BENCH_TUNE_H

#include <stddef.h>

#define BENCH_TUNE_MARGIN 0.05

typedef struct bench_tune bench_tune_t;

/* For collective mpi_name ("MPI_Bcast") at nranks; variant 0 is the host
 * MPI, variant v >= 1 runs algos[v - 1] (one of them "auto"); hot: the run
 * measures on-cache (--cache hot), so its rules hold for on-cache calls
 * only ("cache": "hot"); an off-cache run's rules hold for both states,
 * after any on-cache rules. NULL when out of memory or the collective is
 * unknown. */
bench_tune_t *bench_tune_new(const char *mpi_name, int nranks, int nvariants,
                             const char *const *algos, int hot);
/* One row: the median time of every variant (failed ones are not
 * candidates) and what 'auto' ran (the model's pick). */
void bench_tune_add(bench_tune_t *t, size_t bytes, const double *median_us, const int *failed,
                    const char *auto_pick);
/* Says on stdout, per row, what was found; replaces the collective's rules
 * for exactly this process count and cache state in `path` (read if it
 * exists, else the tuning in force: KCOLL_TUNING's file or the built-in
 * defaults) by the new ones, placed first (an off-cache run's after the
 * on-cache rules it keeps), and writes the file. Returns 0, or -1 with a
 * message on stderr. */
int bench_tune_write(bench_tune_t *t, const char *path);
void bench_tune_free(bench_tune_t *t);

#endif
