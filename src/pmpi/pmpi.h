/* Shared pieces of the PMPI layer: the intercepted MPI_* functions call
 * kcoll where it can do the call and the host MPI's PMPI_* where not. */
#ifndef KCOLL_PMPI_H
#define KCOLL_PMPI_H

#include <mpi.h>

#include "coll/coll.h"
#include "core/stats.h"
#include "core/team.h"

/* The MPI entry points and the public API keep default visibility; the
 * rest of the library is hidden (-fvisibility=hidden). */
#define KCOLL_PUBLIC __attribute__((visibility("default")))

/* 1 once kcoll is set up (MPI_Init went through it, or lazily after a
 * PMPI_Init it did not see); 0 before MPI_Init and after MPI_Finalize. */
int kcoll_ready(void);

/* Is `count` elements of dt one contiguous run of bytes? Then *lb is the
 * offset of its first byte from the buffer pointer. */
int kcoll_dtype_contig(MPI_Datatype dt, int count, MPI_Aint *lb);

/* The algorithm for collective c: forced by KCOLL_<FAMILY>_ALGO, or NULL
 * if that is "auto"; -1 if the spec is invalid (one warning per distinct
 * spec). */
int kcoll_algo_forced(kcoll_coll_t c, const kcoll_algo_t **algo, int *param);

/* The steps every intercepted collective takes, in this order, so that
 * the user sees the host MPI's own behaviour wherever kcoll does not act:
 *
 *   if (!kcoll_pmpi_comm(comm, &p, &rank, &why)) goto host;   ready, valid, intra
 *   ...the collective's own argument checks (why = KCOLL_R_INVALID)...
 *   if (!kcoll_pmpi_policy(p, bytes, &why)) goto host;         disabled, 1 rank, small
 *   ...datatype layout (KCOLL_R_NONCONTIG)...
 *   team = kcoll_pmpi_team(comm, coll, &algo, &param, &why);   forced algorithm, team
 *   ...default algorithm, kcoll_args_t, buffers...
 *   return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, bytes);
 * host:
 *   kcoll_stats_count_mpi(coll, why, bytes); return PMPI_...;
 *
 * All of it must use only values every rank of the call knows alike; a
 * v-variant agrees first (sched/agree.h). */
int kcoll_pmpi_comm(MPI_Comm comm, int *p, int *rank, kcoll_reason_t *why);
int kcoll_pmpi_policy(int p, size_t bytes, kcoll_reason_t *why);
kcoll_team_t *kcoll_pmpi_team(MPI_Comm comm, kcoll_coll_t coll, const kcoll_algo_t **algo,
                              int *param, kcoll_reason_t *why);
/* Build this rank's schedule with algo, run it on bufs/lens, count it in the
 * statistics under stat_bytes. Returns MPI_SUCCESS or the error of
 * kcoll_fail. */
int kcoll_pmpi_run(MPI_Comm comm, kcoll_team_t *team, const kcoll_algo_t *algo,
                   const kcoll_args_t *args, void *const bufs[KCOLL_NBUF],
                   const size_t lens[KCOLL_NBUF], size_t stat_bytes);

/* Report a failure after the protocol started: one error line, then the
 * communicator's error handler. Returns the MPI error code to return. */
int kcoll_fail(MPI_Comm comm, kcoll_coll_t c, const char *what);

#endif
