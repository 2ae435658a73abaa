/* Shared pieces of the PMPI layer: the intercepted MPI_* functions call
 * kcoll where it can do the call and the host MPI's PMPI_* where not. */
#ifndef KCOLL_PMPI_H
#define KCOLL_PMPI_H

#include <mpi.h>

#include "coll/coll.h"
#include "core/stats.h"

/* The MPI entry points and the public API keep default visibility; the
 * rest of the library is hidden (-fvisibility=hidden). */
#define KCOLL_PUBLIC __attribute__((visibility("default")))

/* 1 once kcoll is set up (MPI_Init went through it, or lazily after a
 * PMPI_Init it did not see); 0 before MPI_Init and after MPI_Finalize. */
int kcoll_ready(void);

/* Is `count` elements of dt one contiguous run of bytes? Then *lb is the
 * offset of its first byte from the buffer pointer. */
int kcoll_dtype_contig(MPI_Datatype dt, int count, MPI_Aint *lb);

/* The algorithm for collective c: forced by KCOLL_<C>_ALGO (spec), or
 * NULL if the spec is "auto"; -1 if the spec is invalid (one warning per
 * distinct spec). */
int kcoll_algo_forced(kcoll_coll_t c, const char *spec, const kcoll_algo_t **algo, int *param);

/* Report a failure after the protocol started: one error line, then the
 * communicator's error handler. Returns the MPI error code to return. */
int kcoll_fail(MPI_Comm comm, kcoll_coll_t c, const char *what);

#endif
