/* MPI_Allgather and MPI_Allgatherv: decide whether kcoll can do the call,
 * and do it.
 *
 * What every rank knows alike decides first: the communicator, the block
 * sizes (MPI_Allgather: recvcount * size of recvtype, equal on all ranks;
 * MPI_Allgatherv: all recvcounts), KCOLL_MIN_BYTES (on the largest block)
 * and the forced algorithm (ring_neighbor's j must be coprime with p).
 * What only this rank knows goes into an agreement (sched/agree.h): whether
 * its datatypes are contiguous, whether its send size matches its block,
 * whether it passed MPI_IN_PLACE and, for MPI_Allgatherv, where its blocks
 * lie (the layout table, in bytes). All ranks then take kcoll's path or
 * all take the host's, with the same view of every rank's layout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"
#include "core/stats.h"
#include "pmpi/allcoll.h"
#include "pmpi/pmpi.h"
#include "sched/agree.h"

/* ring_neighbor's j must suit p; an unsuitable one is warned about once
 * per (j, p) and the host MPI does the call. All ranks know p and j. */
static int algo_ok(const kcoll_algo_t *algo, int p, int param)
{
    static int warned_j, warned_p;
    char err[160];
    if (!algo || algo->build != kcoll_allgather_ring_neighbor ||
        kcoll_allgather_ring_neighbor_check(p, param, err, sizeof err) == 0)
        return 1;
    if (warned_j != param || warned_p != p) {
        warned_j = param;
        warned_p = p;
        kcoll_warn("KCOLL_ALLGATHER_ALGO: %s; MPI_Allgather(v) uses the host MPI", err);
    }
    return 0;
}

KCOLL_PUBLIC int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_ALLGATHER;
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
    if (!algo_ok(algo, p, param)) {
        why = KCOLL_R_BAD_ALGO;
        goto host;
    }

    const uint64_t vote = kcoll_allcoll_uniform_vote(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvtype, bytes, &rlb, &slb);
    int go = kcoll_allcoll_agree(team, vote, &ip, NULL, &why, err, sizeof err);
    if (go < 0)
        return kcoll_fail(comm, coll, err);
    if (!go)
        goto host;
    if (!algo)
        algo = kcoll_allgather_select(p, bytes, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .bytes = bytes, .in_place = ip,
                         .k = param};
    void *bufs[KCOLL_NBUF] = {ip ? NULL : (char *)sendbuf + slb, (char *)recvbuf + rlb, NULL};
    size_t lens[KCOLL_NBUF] = {ip ? 0 : bytes, bytes * (size_t)p, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, bytes * (size_t)p);

host:
    kcoll_stats_count_mpi(coll, why, why == KCOLL_R_INVALID ? 0 : bytes * (size_t)p);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

KCOLL_PUBLIC int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_ALLGATHERV;
    const int in_place = sendbuf == MPI_IN_PLACE;
    kcoll_reason_t why;
    size_t total = 0, largest = 0;
    int p = 0, rank = 0, rsize, ssize = 0, param, ip;
    MPI_Aint rlb = 0, slb = 0, rlbx, rext;
    const kcoll_algo_t *algo;
    char err[256];

    if (!kcoll_pmpi_comm(comm, &p, &rank, &why))
        goto host;
    why = KCOLL_R_INVALID;
    if (!recvcounts || recvtype == MPI_DATATYPE_NULL ||
        PMPI_Type_size(recvtype, &rsize) != MPI_SUCCESS ||
        PMPI_Type_get_extent(recvtype, &rlbx, &rext) != MPI_SUCCESS)
        goto host;
    for (int q = 0; q < p; q++) {
        if (recvcounts[q] < 0)
            goto host;
        size_t b = (size_t)recvcounts[q] * (size_t)rsize;
        total += b;
        if (b > largest)
            largest = b;
    }
    if (!kcoll_pmpi_policy(p, largest, &why))
        goto host;
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, &why);
    if (!team)
        goto host;
    if (!algo_ok(algo, p, param)) {
        why = KCOLL_R_BAD_ALGO;
        goto host;
    }

    const size_t own = (size_t)recvcounts[rank] * (size_t)rsize;
    uint64_t vote = KCOLL_VOTE_OK | (in_place ? KCOLL_VOTE_IN_PLACE : 0);
    size_t *tab = kcoll_agree_my_table(team), rlen = 0;
    size_t *rc = tab + 2 * (size_t)p, *rd = tab + 3 * (size_t)p;
    if (!displs || (total && !recvbuf) || (own && !in_place && !sendbuf) ||
        (!in_place && (sendcount < 0 || sendtype == MPI_DATATYPE_NULL ||
                       PMPI_Type_size(sendtype, &ssize) != MPI_SUCCESS ||
                       (size_t)sendcount * (size_t)ssize != own)))
        vote = KCOLL_VOTE_INVALID;
    else if (!kcoll_allcoll_contig(recvtype, &rlb) || (!in_place && !kcoll_allcoll_contig(sendtype, &slb)))
        vote &= ~(uint64_t)KCOLL_VOTE_OK;
    else
        for (int q = 0; q < p; q++) {
            rc[q] = (size_t)recvcounts[q] * (size_t)rsize;
            if (displs[q] < 0 && rc[q] > 0) { /* kcoll addresses from the buffer on */
                vote &= ~(uint64_t)KCOLL_VOTE_OK;
                break;
            }
            rd[q] = rc[q] ? (size_t)displs[q] * (size_t)rext : 0;
            if (rd[q] + rc[q] > rlen)
                rlen = rd[q] + rc[q];
        }
    int go = kcoll_allcoll_agree(team, vote, &ip, NULL, &why, err, sizeof err);
    if (go < 0)
        return kcoll_fail(comm, coll, err);
    if (!go)
        goto host;
    const kcoll_layout_t *lay = kcoll_agree_layouts(team);
    if (!lay)
        return kcoll_fail(comm, coll, "out of memory for the layouts");
    if (!algo)
        algo = kcoll_allgather_select(p, largest, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .bytes = largest, .lay = lay,
                         .in_place = ip, .k = param};
    void *bufs[KCOLL_NBUF] = {ip ? NULL : (char *)sendbuf + slb, (char *)recvbuf + rlb, NULL};
    size_t lens[KCOLL_NBUF] = {ip ? 0 : own, rlen, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, total);

host:
    kcoll_stats_count_mpi(coll, why, why == KCOLL_R_INVALID ? 0 : total);
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
}
