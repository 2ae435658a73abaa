/* Helpers shared by kcoll's MPI test programs: communicator shapes,
 * kcoll's statistics, failure counting and the closing line. */
#ifndef KCOLL_MPITEST_H
#define KCOLL_MPITEST_H

#include <mpi.h>
#include <stdint.h>

#include "kcoll.h"

#define MT_NSHAPES 4
/* MPI_COMM_WORLD, a duplicate, an odd/even split, a split with the rank
 * order reversed. */
void mt_shapes(MPI_Comm comms[MT_NSHAPES], const char *names[MT_NSHAPES]);
void mt_free_shapes(MPI_Comm comms[MT_NSHAPES]);

/* This process's calls on one statistics row (0 if the row is empty). */
uint64_t mt_calls(const char *coll, const char *path);

/* Record a failure (printed for the first few) or a pass. */
void mt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mt_pass(void);
/* Sum over MPI_COMM_WORLD; rank 0 prints "<name>: N passed, M failed".
 * Returns the exit status for main. */
int mt_finish(const char *name);

#endif
