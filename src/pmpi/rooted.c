/* MPI_Scatter(v) and MPI_Gather(v): the vote, agreement and decision they
 * share; the eligibility and agreement protocol is described in
 * pmpi/rooted.h. */
#include "pmpi/rooted.h"

#include <stdint.h>

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

int kcoll_rooted_call(kcoll_coll_t coll, const void *rootbuf, int rootcount,
                      const int *counts, const int *displs, MPI_Datatype roottype,
                      const void *blockbuf, int blockcount, MPI_Datatype blocktype, int root,
                      MPI_Comm comm, kcoll_reason_t *why, size_t *stat_bytes)
{
    const int gather = coll == KCOLL_COLL_GATHER || coll == KCOLL_COLL_GATHERV;
    const int v = coll == KCOLL_COLL_SCATTERV || coll == KCOLL_COLL_GATHERV;
    int p, rank, tsize = 0, bsize = 0;
    *stat_bytes = 0;
    if (!kcoll_pmpi_comm(comm, &p, &rank, why))
        return -1;
    *why = KCOLL_R_INVALID;
    if (root < 0 || root >= p)
        return -1;
    const int is_root = rank == root;
    const int in_place = is_root && blockbuf == MPI_IN_PLACE;

    /* this rank's own arguments, as far as it can judge them alone; an
     * invalid one goes into the vote, so that all ranks still take the
     * same path (the host MPI's, which reports the error) */
    int valid = 1;
    if (!in_place)
        valid = blockcount >= 0 && type_ok(blocktype, &bsize) && blockbuf != MPI_IN_PLACE;
    if (is_root) {
        valid = valid && type_ok(roottype, &tsize) &&
                (v ? counts != NULL && displs != NULL : rootcount >= 0);
        for (int j = 0; valid && v && j < p; j++)
            valid = counts[j] >= 0;
    }
    /* my block: what this rank receives or sends (the root: its own entry
     * in the blocked buffer) */
    size_t mine = !valid ? 0
                  : is_root ? (size_t)(v ? counts[root] : rootcount) * (size_t)tsize
                            : (size_t)blockcount * (size_t)bsize;
    *stat_bytes = mine;
    if (!kcoll_pmpi_policy(p, v || !valid ? SIZE_MAX : mine, why))
        return -1;
    const kcoll_algo_t *algo;
    int param;
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, why);
    if (!team)
        return -1;

    /* the vote: bit 0 "my datatypes are contiguous", bit 1 "my own
     * arguments are valid and consistent" (the root: its own block matches
     * its entry in the blocked buffer), above them the bytes of my block */
    MPI_Aint tlb = 0, text = 0, blb = 0;
    int contig = 1, match = valid;
    if (valid && !in_place)
        contig = kcoll_dtype_contig(blocktype, blockcount, &blb);
    size_t span = 0;
    char *tbase = NULL;
    if (is_root && valid) {
        if (!in_place)
            match = (size_t)blockcount * (size_t)bsize == mine;
        contig = contig && blocked_contig(roottype, &tlb, &text);
        if (contig && v) {
            /* the table in bytes from the lowest non-empty block on: the
             * send columns for a scatter, the receive columns for a gather */
            size_t *tab = kcoll_agree_my_table(team);
            size_t *cnt = tab + (gather ? 2 * p : 0), *dsp = cnt + p;
            size_t *other = tab + (gather ? 0 : 2 * p);
            long long lo = 0;
            int any = 0;
            for (int j = 0; j < p; j++)
                if (counts[j] > 0 && (!any || displs[j] < lo)) {
                    lo = displs[j];
                    any = 1;
                }
            for (int j = 0; j < p; j++) {
                cnt[j] = (size_t)counts[j] * (size_t)tsize;
                dsp[j] = cnt[j] ? (size_t)(displs[j] - lo) * (size_t)text : 0;
                other[j] = other[p + j] = 0;
                if (dsp[j] + cnt[j] > span)
                    span = dsp[j] + cnt[j];
            }
            tbase = (char *)rootbuf + tlb + lo * text;
        } else if (contig) {
            span = (size_t)p * mine;
            tbase = (char *)rootbuf + tlb;
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
    const size_t *entry = !v ? NULL : gather ? lay[root].rcount : lay[root].scount;
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
        size_t want = v ? entry[q] : bytes;
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
        algo = gather ? kcoll_gather_select(p, largest, &param)
                      : kcoll_scatter_select(p, largest, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .root = root, .bytes = bytes,
                         .lay = lay, .in_place = in_place, .k = param};
    size_t blen = 0;
    if (!in_place)
        blen = is_root ? (v ? entry[root] : bytes) : (size_t)(votes[rank] >> 2);
    char *bbase = in_place ? NULL : (char *)blockbuf + blb;
    /* the algorithms take the send buffer first, then the receive buffer */
    void *bufs[KCOLL_NBUF] = {gather ? bbase : tbase, gather ? tbase : bbase, NULL};
    size_t lens[KCOLL_NBUF] = {gather ? blen : span, gather ? span : blen, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, total);
}
