/* MPI_Alltoall and MPI_Alltoallv: decide whether kcoll can do the call,
 * and do it.
 *
 * MPI_Alltoall: the block size (recvcount * size of recvtype) is the same
 * on all ranks, so KCOLL_MIN_BYTES and the forced algorithm are checked
 * before anything else. MPI_Alltoallv: every rank knows only its own
 * counts, so the decision waits for the agreement, whose vote carries this
 * rank's largest block. The agreement (sched/agree.h) also carries what
 * else only this rank knows: contiguous datatypes, a send size matching
 * the block, MPI_IN_PLACE, and for MPI_Alltoallv the layout table (send
 * and receive counts and displacements in bytes). In place the send
 * layout is the receive layout, and the algorithms read the send data from
 * a private copy (TMP), since the receive buffer is overwritten.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/stats.h"
#include "pmpi/allcoll.h"
#include "pmpi/pmpi.h"
#include "sched/agree.h"

/* TMP for the algorithm: bruck's areas, or in place the copy of the
 * receive buffer (rlen bytes). */
static int tmp_for(kcoll_team_t *team, const kcoll_algo_t *algo, const kcoll_args_t *args,
                   size_t rlen, void **tmp, size_t *tlen)
{
    *tmp = NULL;
    *tlen = 0;
    if (algo->build == kcoll_alltoall_bruck)
        *tlen = kcoll_alltoall_bruck_tmp(args);
    else if (args->in_place)
        *tlen = rlen;
    if (*tlen == 0)
        return 0;
    *tmp = kcoll_team_scratch(team, *tlen);
    return *tmp ? 0 : -1;
}

KCOLL_PUBLIC int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_ALLTOALL;
    kcoll_reason_t why;
    size_t bytes = 0;
    int p = 0, rank = 0, rsize, param, ip;
    MPI_Aint rlb = 0, slb = 0;
    const kcoll_algo_t *algo;
    char err[256];

    if (!kcoll_pmpi_comm(comm, &p, &rank, &why))
        goto host;
    why = KCOLL_R_INVALID;
    if (recvcount < 0 || recvtype == MPI_DATATYPE_NULL ||
        PMPI_Type_size(recvtype, &rsize) != MPI_SUCCESS)
        goto host;
    bytes = (size_t)recvcount * (size_t)rsize;
    if (!kcoll_pmpi_policy(p, bytes, &why))
        goto host;
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, &why);
    if (!team)
        goto host;

    const uint64_t vote = kcoll_allcoll_uniform_vote(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvtype, bytes, &rlb, &slb);
    int go = kcoll_allcoll_agree(team, vote, &ip, NULL, &why, err, sizeof err);
    if (go < 0)
        return kcoll_fail(comm, coll, err);
    if (!go)
        goto host;
    if (!algo)
        algo = kcoll_alltoall_select(p, bytes, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .bytes = bytes, .in_place = ip,
                         .k = param};
    const size_t all = bytes * (size_t)p;
    void *tmp;
    size_t tlen;
    if (tmp_for(team, algo, &args, all, &tmp, &tlen))
        return kcoll_fail(comm, coll, "out of memory for scratch");
    void *bufs[KCOLL_NBUF] = {ip ? NULL : (char *)sendbuf + slb, (char *)recvbuf + rlb, tmp};
    size_t lens[KCOLL_NBUF] = {ip ? 0 : all, all, tlen};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, all);

host:
    kcoll_stats_count_mpi(coll, why, why == KCOLL_R_INVALID ? 0 : bytes * (size_t)p);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

/* Fill counts and displacements (bytes) of one side of the table; the
 * buffer's length goes to *len, the largest block to *largest. 0, or -1
 * if kcoll cannot address the layout (negative displacements). */
static int fill_side(int p, const int counts[], const int displs[], int size, MPI_Aint extent,
                     size_t *cnt, size_t *dsp, size_t *len, size_t *largest)
{
    for (int q = 0; q < p; q++) {
        cnt[q] = (size_t)counts[q] * (size_t)size;
        if (cnt[q] > 0 && displs[q] < 0)
            return -1;
        dsp[q] = cnt[q] ? (size_t)displs[q] * (size_t)extent : 0;
        if (dsp[q] + cnt[q] > *len)
            *len = dsp[q] + cnt[q];
        if (cnt[q] > *largest)
            *largest = cnt[q];
    }
    return 0;
}

KCOLL_PUBLIC int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_ALLTOALLV;
    const int in_place = sendbuf == MPI_IN_PLACE;
    kcoll_reason_t why;
    size_t largest = 0, mine = 0, slen = 0, rlen = 0, stat = 0;
    int p = 0, rank = 0, rsize, ssize = 0, param, ip;
    MPI_Aint rlb = 0, slb = 0, xlb, rext, sext = 0;
    const kcoll_algo_t *algo;
    char err[256];

    if (!kcoll_pmpi_comm(comm, &p, &rank, &why))
        goto host;
    /* nothing of the counts is known alike yet: check all but the size */
    if (!kcoll_pmpi_policy(p, SIZE_MAX, &why))
        goto host;
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, &why);
    if (!team)
        goto host;

    uint64_t vote = KCOLL_VOTE_OK | (in_place ? KCOLL_VOTE_IN_PLACE : 0);
    size_t *tab = kcoll_agree_my_table(team);
    size_t *sc = tab, *sd = tab + p, *rc = tab + 2 * (size_t)p, *rd = tab + 3 * (size_t)p;
    if (!recvcounts || !rdispls || recvtype == MPI_DATATYPE_NULL ||
        PMPI_Type_size(recvtype, &rsize) != MPI_SUCCESS ||
        PMPI_Type_get_extent(recvtype, &xlb, &rext) != MPI_SUCCESS ||
        (!in_place && (!sendcounts || !sdispls || sendtype == MPI_DATATYPE_NULL ||
                       PMPI_Type_size(sendtype, &ssize) != MPI_SUCCESS ||
                       PMPI_Type_get_extent(sendtype, &xlb, &sext) != MPI_SUCCESS)))
        vote = KCOLL_VOTE_INVALID;
    else {
        for (int q = 0; q < p; q++)
            if (recvcounts[q] < 0 || (!in_place && sendcounts[q] < 0))
                vote = KCOLL_VOTE_INVALID;
    }
    if (vote & KCOLL_VOTE_OK) {
        if (!kcoll_allcoll_contig(recvtype, &rlb) || (!in_place && !kcoll_allcoll_contig(sendtype, &slb)) ||
            fill_side(p, recvcounts, rdispls, rsize, rext, rc, rd, &rlen, &mine) ||
            (!in_place && fill_side(p, sendcounts, sdispls, ssize, sext, sc, sd, &slen, &mine)))
            vote &= ~(uint64_t)KCOLL_VOTE_OK;
        else if (in_place)
            for (int q = 0; q < p; q++) {
                sc[q] = rc[q];
                sd[q] = rd[q];
            }
        if ((rlen && !recvbuf) || (slen && !in_place && !sendbuf))
            vote = KCOLL_VOTE_INVALID;
        stat = 0;
        for (int q = 0; q < p && (vote & KCOLL_VOTE_OK); q++)
            stat += rc[q];
    }
    if (mine > ((uint64_t)1 << 55))
        vote &= ~(uint64_t)KCOLL_VOTE_OK;
    vote |= (uint64_t)mine << KCOLL_VOTE_SHIFT;
    int go = kcoll_allcoll_agree(team, vote, &ip, &largest, &why, err, sizeof err);
    if (go < 0)
        return kcoll_fail(comm, coll, err);
    if (!go)
        goto host;
    if (!kcoll_pmpi_policy(p, largest, &why))
        goto host;
    const kcoll_layout_t *lay = kcoll_agree_layouts(team);
    if (!lay)
        return kcoll_fail(comm, coll, "out of memory for the layouts");
    if (!algo)
        algo = kcoll_alltoall_select(p, largest, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .bytes = largest, .lay = lay,
                         .in_place = ip, .k = param};
    void *tmp;
    size_t tlen;
    if (tmp_for(team, algo, &args, rlen, &tmp, &tlen))
        return kcoll_fail(comm, coll, "out of memory for scratch");
    void *bufs[KCOLL_NBUF] = {ip ? NULL : (char *)sendbuf + slb, (char *)recvbuf + rlb, tmp};
    size_t lens[KCOLL_NBUF] = {ip ? 0 : slen, rlen, tlen};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, stat);

host:
    kcoll_stats_count_mpi(coll, why, why == KCOLL_R_INVALID ? 0 : stat);
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
}
