/* The vote and agreement shared by MPI_Allgather(v) and MPI_Alltoall(v)
 * (see allcoll.h). */
#include "pmpi/allcoll.h"

#include <stdlib.h>

#include "sched/agree.h"

int kcoll_allcoll_contig(MPI_Datatype dt, MPI_Aint *lb)
{
    return kcoll_dtype_contig(dt, 2, lb);
}

uint64_t kcoll_allcoll_uniform_vote(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    const void *recvbuf, MPI_Datatype recvtype, size_t bytes,
                                    MPI_Aint *rlb, MPI_Aint *slb)
{
    const int in_place = sendbuf == MPI_IN_PLACE;
    int ssize = 0;
    uint64_t vote = KCOLL_VOTE_OK | (in_place ? KCOLL_VOTE_IN_PLACE : 0);
    if (!in_place && (sendcount < 0 || sendtype == MPI_DATATYPE_NULL ||
                      PMPI_Type_size(sendtype, &ssize) != MPI_SUCCESS ||
                      (size_t)sendcount * (size_t)ssize != bytes))
        vote = KCOLL_VOTE_INVALID;
    else if (!kcoll_allcoll_contig(recvtype, rlb) ||
             (!in_place && !kcoll_allcoll_contig(sendtype, slb)))
        vote &= ~(uint64_t)KCOLL_VOTE_OK;
    else if (bytes && (!recvbuf || (!in_place && !sendbuf)))
        vote = KCOLL_VOTE_INVALID;
    return vote;
}

int kcoll_allcoll_agree(kcoll_team_t *team, uint64_t vote, int *in_place, size_t *largest,
                        kcoll_reason_t *why, char *err, size_t errlen)
{
    uint64_t *votes = malloc((size_t)team->p * sizeof *votes);
    if (!votes)
        vote &= ~(uint64_t)KCOLL_VOTE_OK;
    const uint64_t mine = vote;
    if (kcoll_agree(team, vote, votes, err, errlen) != KCOLL_OK) {
        free(votes);
        return -1;
    }
    int all_ok = votes != NULL, invalid = 0, mixed = 0;
    size_t top = 0;
    for (int q = 0; votes && q < team->p; q++) {
        all_ok &= (votes[q] & KCOLL_VOTE_OK) != 0;
        invalid |= (votes[q] & KCOLL_VOTE_INVALID) != 0;
        mixed |= (votes[q] & KCOLL_VOTE_IN_PLACE) != (mine & KCOLL_VOTE_IN_PLACE);
        if ((size_t)(votes[q] >> KCOLL_VOTE_SHIFT) > top)
            top = (size_t)(votes[q] >> KCOLL_VOTE_SHIFT);
    }
    free(votes);
    if (largest)
        *largest = top;
    *in_place = (mine & KCOLL_VOTE_IN_PLACE) != 0;
    if (invalid || mixed) {
        *why = KCOLL_R_INVALID;
        return 0;
    }
    if (!all_ok) {
        *why = KCOLL_R_NONCONTIG;
        return 0;
    }
    return 1;
}
