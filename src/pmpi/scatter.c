/* MPI_Scatter and MPI_Scatterv: decide whether kcoll can do the call, and
 * do it (algorithms: coll/scatter/).
 *
 * Before the agreement only what every rank knows alike decides: kcoll
 * enabled, communicator, root, and for MPI_Scatter the block size, which
 * MPI requires to match between the root's send and every receive
 * signature (as MPI_Bcast relies on its message size).
 *
 * Everything else only one rank knows goes into the agreement
 * (sched/agree.h), which every call that passes the first checks makes:
 * each rank votes whether its own datatypes are contiguous, whether its own
 * arguments are valid and consistent (negative counts, null datatypes, a
 * non-root passing MPI_IN_PLACE are not; the root's receive block must
 * match its own send block) and how many bytes its block has (the root: its
 * own send block); the root of MPI_Scatterv also publishes its counts and
 * displacements in bytes. After the agreement all ranks compute the same
 * answer from the same votes: kcoll runs only if every rank is contiguous
 * and every rank's block size matches the root's entry for it (otherwise it
 * is the user's error: PMPI_Scatter(v) reports it, on every rank, as
 * without kcoll), and for MPI_Scatterv if the largest block reaches
 * KCOLL_MIN_BYTES. The default algorithm is chosen from p and the largest
 * block.
 */
#include <stdint.h>

#include "core/stats.h"
#include "pmpi/pmpi.h"
#include "sched/agree.h"

/* Is a blocked buffer of dt elements one run of bytes per block with the
 * blocks packed by the type's extent, i.e. size == extent == true extent?
 * Then *lb is the true lower bound. A type of size 0 moves nothing. */
static int blocked_contig(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    int size;
    MPI_Aint xlb, tlb, textent;
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &xlb, extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
        return 0;
    *lb = size ? tlb : 0;
    return size == 0 || (textent == size && *extent == size);
}

static int type_ok(MPI_Datatype dt, int *size)
{
    return dt != MPI_DATATYPE_NULL && PMPI_Type_size(dt, size) == MPI_SUCCESS;
}

/* Returns an MPI error code, or -1 with *why and *stat_bytes set when the
 * host MPI must do the call. counts/displs are NULL for MPI_Scatter. */
static int kcoll_scatter_call(kcoll_coll_t coll, const void *sendbuf, int sendcount,
                              const int *counts, const int *displs, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, kcoll_reason_t *why, size_t *stat_bytes)
{
    const int v = coll == KCOLL_COLL_SCATTERV;
    int p, rank, ssize = 0, rsize = 0;
    *stat_bytes = 0;
    *why = KCOLL_R_DISABLED;
    if (!kcoll_pmpi_comm(comm, &p, &rank, why))
        return -1;
    *why = KCOLL_R_INVALID;
    if (root < 0 || root >= p)
        return -1;
    const int is_root = rank == root;
    const int in_place = is_root && recvbuf == MPI_IN_PLACE;

    /* this rank's own arguments, as far as it can judge them alone; an
     * invalid one goes into the vote, so that all ranks still take the
     * same path (the host MPI's, which reports the error) */
    int valid = 1;
    if (!is_root || !in_place)
        valid = recvcount >= 0 && type_ok(recvtype, &rsize) && recvbuf != MPI_IN_PLACE;
    if (is_root) {
        valid = valid && type_ok(sendtype, &ssize) &&
                (v ? counts != NULL && displs != NULL : sendcount >= 0);
        for (int j = 0; valid && v && j < p; j++)
            valid = counts[j] >= 0;
    }
    /* my block: what this rank receives (the root: its own block) */
    size_t mine = !valid ? 0
                  : is_root ? (size_t)(v ? counts[root] : sendcount) * (size_t)ssize
                            : (size_t)recvcount * (size_t)rsize;
    *stat_bytes = mine;
    if (!kcoll_pmpi_policy(p, v || !valid ? SIZE_MAX : mine, why))
        return -1;
    const kcoll_algo_t *algo;
    int param;
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, why);
    if (!team)
        return -1;

    /* the vote: bit 0 "my datatypes are contiguous", bit 1 "my own
     * arguments are valid and consistent" (the root: its receive block
     * matches its own send block), above them the bytes of my block */
    MPI_Aint slb = 0, sext = 0, rlb = 0;
    int contig = 1, match = valid;
    if (valid && !in_place)
        contig = kcoll_dtype_contig(recvtype, recvcount, &rlb);
    size_t span = 0;
    char *sbase = NULL;
    if (is_root && valid) {
        if (!in_place)
            match = (size_t)recvcount * (size_t)rsize == mine;
        contig = contig && blocked_contig(sendtype, &slb, &sext);
        if (contig && v) {
            /* the table in bytes from the lowest non-empty block on */
            size_t *tab = kcoll_agree_my_table(team);
            long long lo = 0;
            int any = 0;
            for (int j = 0; j < p; j++)
                if (counts[j] > 0 && (!any || displs[j] < lo)) {
                    lo = displs[j];
                    any = 1;
                }
            for (int j = 0; j < p; j++) {
                tab[j] = (size_t)counts[j] * (size_t)ssize;
                tab[p + j] = tab[j] ? (size_t)(displs[j] - lo) * (size_t)sext : 0;
                tab[2 * p + j] = tab[3 * p + j] = 0;
                if (tab[p + j] + tab[j] > span)
                    span = tab[p + j] + tab[j];
            }
            sbase = (char *)sendbuf + slb + lo * sext;
        } else if (contig) {
            span = (size_t)p * mine;
            sbase = (char *)sendbuf + slb;
        }
    }
    uint64_t *votes = kcoll_team_scratch(team, (size_t)p * sizeof *votes);
    if (!votes)
        return kcoll_fail(comm, coll, "out of memory for the votes");
    char err[160];
    if (kcoll_agree(team, (uint64_t)mine << 2 | (uint64_t)match << 1 | (uint64_t)(contig != 0),
                    votes, err, sizeof err) != KCOLL_OK)
        return kcoll_fail(comm, coll, err);

    const kcoll_layout_t *lay = NULL;
    if (v && !(lay = kcoll_agree_layouts(team)))
        return kcoll_fail(comm, coll, "out of memory for the layouts");
    *why = KCOLL_R_INVALID;
    for (int q = 0; q < p; q++)
        if (!(votes[q] & 2))
            return -1;
    *why = KCOLL_R_NONCONTIG;
    for (int q = 0; q < p; q++)
        if (!(votes[q] & 1))
            return -1;
    size_t bytes = (size_t)(votes[root] >> 2), largest = 0, total = 0;
    *why = KCOLL_R_INVALID;
    for (int q = 0; q < p; q++) {
        size_t want = v ? lay[root].scount[q] : bytes;
        if (q != root && (size_t)(votes[q] >> 2) != want)
            return -1;
        if (want > largest)
            largest = want;
        total += want;
    }
    *stat_bytes = total;
    if (v && !kcoll_pmpi_policy(p, largest, why))
        return -1;
    if (!algo)
        algo = kcoll_scatter_select(p, largest, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .root = root, .bytes = bytes,
                         .lay = lay, .in_place = in_place, .k = param};
    size_t rlen = 0;
    if (!in_place)
        rlen = is_root ? (v ? lay[root].scount[root] : bytes) : (size_t)(votes[rank] >> 2);
    void *bufs[KCOLL_NBUF] = {sbase, in_place ? NULL : (char *)recvbuf + rlb, NULL};
    size_t lens[KCOLL_NBUF] = {span, rlen, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, total);
}

KCOLL_PUBLIC int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_scatter_call(KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                                recvbuf, recvcount, recvtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_SCATTER, why, bytes);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

KCOLL_PUBLIC int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_scatter_call(KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, sendtype,
                                recvbuf, recvcount, recvtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_SCATTERV, why, bytes);
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                         root, comm);
}
