/* What MPI_Allgather(v) and MPI_Alltoall(v) share on the way to kcoll's
 * path: the vote each rank casts into the agreement (sched/agree.h) and
 * the reading of all ranks' votes. */
#ifndef KCOLL_PMPI_ALLCOLL_H
#define KCOLL_PMPI_ALLCOLL_H

#include <stddef.h>
#include <stdint.h>

#include "pmpi/pmpi.h"

/* Votes: bit 0 "I can", bit 1 "I pass MPI_IN_PLACE", bit 2 "my arguments
 * are inconsistent" (the host MPI reports them); bits 8.. this rank's
 * largest block in bytes (MPI_Alltoallv only; 0 elsewhere). */
#define KCOLL_VOTE_OK 1u
#define KCOLL_VOTE_IN_PLACE 2u
#define KCOLL_VOTE_INVALID 4u
#define KCOLL_VOTE_SHIFT 8

/* Are blocks of any count of dt contiguous runs of bytes (lb: offset of
 * the first byte)? */
int kcoll_allcoll_contig(MPI_Datatype dt, MPI_Aint *lb);

/* This rank's vote for a call with one block size for all ranks (bytes:
 * recvcount * size of recvtype): the send side must match it and both
 * datatypes be contiguous. *rlb, *slb: offsets of the first bytes. */
uint64_t kcoll_allcoll_uniform_vote(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    const void *recvbuf, MPI_Datatype recvtype, size_t bytes,
                                    MPI_Aint *rlb, MPI_Aint *slb);

/* Agree on the votes. Returns 1 (kcoll), 0 (host, why set) or -1 (the
 * agreement failed: err). *in_place: everybody's choice; *largest: the
 * largest block voted by any rank (may be NULL). */
int kcoll_allcoll_agree(kcoll_team_t *team, uint64_t vote, int *in_place, size_t *largest,
                        kcoll_reason_t *why, char *err, size_t errlen);

#endif
