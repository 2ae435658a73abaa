/* MPI_Gather and MPI_Gatherv: decide whether kcoll can do the call, and
 * do it (algorithms: coll/gather/). The mirror image of pmpi/scatter.c:
 *
 * Before the agreement only what every rank knows alike decides: kcoll
 * enabled, communicator, root, and for MPI_Gather the block size, which
 * MPI requires to match between every send and the root's receive
 * signature.
 *
 * The rest goes into the agreement (sched/agree.h): each rank votes whether
 * its own datatypes are contiguous, whether its own arguments are valid and
 * consistent (negative counts, null datatypes, a non-root passing
 * MPI_IN_PLACE are not; the root's send block must match its own receive
 * block) and how many bytes its block has (the root: its own receive
 * block); the root of MPI_Gatherv also publishes its receive counts and
 * displacements in bytes. After it all ranks compute the same answer: kcoll
 * runs only if every rank is contiguous and consistent and every block
 * matches the root's entry for it (otherwise it is the user's error:
 * PMPI_Gather(v) reports it, on every rank, as without kcoll), and for
 * MPI_Gatherv if the largest block reaches KCOLL_MIN_BYTES. The default
 * algorithm is chosen from p and the largest block. Only the bytes of the
 * blocks are written at the root.
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
 * host MPI must do the call. counts/displs are NULL for MPI_Gather. */
static int kcoll_gather_call(kcoll_coll_t coll, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             const int *counts, const int *displs, MPI_Datatype recvtype,
                             int root, MPI_Comm comm, kcoll_reason_t *why, size_t *stat_bytes)
{
    const int v = coll == KCOLL_COLL_GATHERV;
    int p, rank, ssize = 0, rsize = 0;
    *stat_bytes = 0;
    if (!kcoll_pmpi_comm(comm, &p, &rank, why))
        return -1;
    *why = KCOLL_R_INVALID;
    if (root < 0 || root >= p)
        return -1;
    const int is_root = rank == root;
    const int in_place = is_root && sendbuf == MPI_IN_PLACE;

    /* this rank's own arguments, as far as it can judge them alone; an
     * invalid one goes into the vote, so that all ranks still take the
     * same path (the host MPI's, which reports the error) */
    int valid = 1;
    if (!in_place)
        valid = sendcount >= 0 && type_ok(sendtype, &ssize) && sendbuf != MPI_IN_PLACE;
    if (is_root) {
        valid = valid && type_ok(recvtype, &rsize) &&
                (v ? counts != NULL && displs != NULL : recvcount >= 0);
        for (int j = 0; valid && v && j < p; j++)
            valid = counts[j] >= 0;
    }
    /* my block: what this rank sends (the root: its own receive block) */
    size_t mine = !valid ? 0
                  : is_root ? (size_t)(v ? counts[root] : recvcount) * (size_t)rsize
                            : (size_t)sendcount * (size_t)ssize;
    *stat_bytes = mine;
    if (!kcoll_pmpi_policy(p, v || !valid ? SIZE_MAX : mine, why))
        return -1;
    const kcoll_algo_t *algo;
    int param;
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, why);
    if (!team)
        return -1;

    /* the vote: bit 0 "my datatypes are contiguous", bit 1 "my own
     * arguments are valid and consistent" (the root: its send block
     * matches its own receive block), above them the bytes of my block */
    MPI_Aint slb = 0, rlb = 0, rext = 0;
    int contig = 1, match = valid;
    if (valid && !in_place)
        contig = kcoll_dtype_contig(sendtype, sendcount, &slb);
    size_t span = 0;
    char *rbase = NULL;
    if (is_root && valid) {
        if (!in_place)
            match = (size_t)sendcount * (size_t)ssize == mine;
        contig = contig && blocked_contig(recvtype, &rlb, &rext);
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
                tab[2 * p + j] = (size_t)counts[j] * (size_t)rsize;
                tab[3 * p + j] = tab[2 * p + j] ? (size_t)(displs[j] - lo) * (size_t)rext : 0;
                tab[j] = tab[p + j] = 0;
                if (tab[3 * p + j] + tab[2 * p + j] > span)
                    span = tab[3 * p + j] + tab[2 * p + j];
            }
            rbase = (char *)recvbuf + rlb + lo * rext;
        } else if (contig) {
            span = (size_t)p * mine;
            rbase = (char *)recvbuf + rlb;
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
        size_t want = v ? lay[root].rcount[q] : bytes;
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
        algo = kcoll_gather_select(p, largest, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .root = root, .bytes = bytes,
                         .lay = lay, .in_place = in_place, .k = param};
    size_t slen = 0;
    if (!in_place)
        slen = is_root ? (v ? lay[root].rcount[root] : bytes) : (size_t)(votes[rank] >> 2);
    void *bufs[KCOLL_NBUF] = {in_place ? NULL : (char *)sendbuf + slb, rbase, NULL};
    size_t lens[KCOLL_NBUF] = {slen, span, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, total);
}

KCOLL_PUBLIC int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_gather_call(KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, NULL, NULL, recvtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_GATHER, why, bytes);
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

KCOLL_PUBLIC int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_gather_call(KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                               recvcounts, displs, recvtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_GATHERV, why, bytes);
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root, comm);
}
