/* The decision shared by the rooted collectives MPI_Scatter(v) and
 * MPI_Gather(v) (pmpi/scatter.c, pmpi/gather.c): whether kcoll can do the
 * call, and doing it.
 *
 * Both move one block between the root and each rank. Two buffers take
 * part: the root's blocked buffer, which holds every rank's block (the
 * send buffer of a scatter, the receive buffer of a gather; laid out by a
 * count, or by counts and displacements for the v variants), and each
 * rank's own block (the receive buffer of a scatter, the send buffer of a
 * gather; at the root MPI_IN_PLACE means its own block stays where it is
 * in the blocked buffer).
 *
 * Before the agreement only what every rank knows alike decides: kcoll
 * enabled, communicator, root, and for MPI_Scatter/MPI_Gather the block
 * size, which MPI requires to match between the root's blocked signature
 * and every rank's own block (as MPI_Bcast relies on its message size).
 *
 * Everything else only one rank knows goes into the agreement
 * (sched/agree.h), which every call that passes the first checks makes:
 * each rank votes whether its own datatypes are contiguous, whether its own
 * arguments are valid and consistent (negative counts, null datatypes, a
 * non-root passing MPI_IN_PLACE are not; the root's own block must match
 * its entry in its blocked buffer) and how many bytes its block has (the
 * root: its entry in the blocked buffer); the root of MPI_Scatterv and
 * MPI_Gatherv also publishes its counts and displacements in bytes (the
 * send columns of the layout table for a scatter, the receive columns for
 * a gather). After the agreement all ranks compute the same answer from
 * the same votes: kcoll runs only if every rank is contiguous and
 * consistent and every rank's block size matches the root's entry for it
 * (otherwise it is the user's error: the host MPI reports it, on every
 * rank, as without kcoll), and for the v variants if the largest block
 * reaches KCOLL_MIN_BYTES. The default algorithm is chosen from p and the
 * largest block. Only the bytes of the blocks are touched in the root's
 * blocked buffer.
 */
#ifndef KCOLL_PMPI_ROOTED_H
#define KCOLL_PMPI_ROOTED_H

#include <stddef.h>

#include "pmpi/pmpi.h"

/* One rooted call, described by direction rather than by send/receive:
 * coll is KCOLL_COLL_SCATTER(V) or KCOLL_COLL_GATHER(V); rootbuf,
 * rootcount (or counts and displs for the v variants, NULL otherwise) and
 * roottype describe the root's blocked buffer, blockbuf, blockcount and
 * blocktype this rank's own block. Returns an MPI error code, or -1 with
 * *why and *stat_bytes set when the host MPI must do the call. */
int kcoll_rooted_call(kcoll_coll_t coll, const void *rootbuf, int rootcount,
                      const int *counts, const int *displs, MPI_Datatype roottype,
                      const void *blockbuf, int blockcount, MPI_Datatype blocktype, int root,
                      MPI_Comm comm, kcoll_reason_t *why, size_t *stat_bytes);

#endif
