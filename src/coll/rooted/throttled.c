/* MPI_Scatter(v) throttled read and MPI_Gather(v) throttled write: one
 * builder with a direction (paper 003 sections IV.A.3 and IV.B.3).
 *
 * Like the parallel form, but at most k non-roots move their blocks
 * to or from the root at a time, which bounds the contention on the
 * root's page-table lock to gamma_k. The movers form k chains by relative
 * rank modulo k: relative rank v waits for the DONE flag of v-k (when v-k
 * is a non-root), moves its block, and raises its own DONE. The first k
 * start at once; each that finishes releases the next of its chain, so
 * there are no barriers and k need not divide p-1. A rank with an empty
 * block moves nothing but still passes its chain on. Its DONE implies the
 * DONE of every earlier rank of its chain, so the root, after copying its
 * own block (overlapped with the first movers; nothing with MPI_IN_PLACE),
 * waits only for the last rank of each chain, min(k, p-1) flags, as in the
 * paper.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_bcast^sm + ceil((p-1)/k) * (alpha + n*beta + l*gamma_k*ceil(n/s))
 * k = 1 moves one block at a time (no contention, no overlap between
 * peers); k >= p-1 is the parallel form. Any p, root, counts, k >= 1.
 */
#include "coll/coll.h"

static kcoll_status_t kcoll_rooted_throttled(const kcoll_args_t *a, kcoll_sched_t *s,
                                             kcoll_rooted_dir_t d)
{
    const int p = a->p, k = a->prm.k < 1 ? 1 : a->prm.k;
    size_t off, len;
    if (a->rank == a->root) {
        kcoll_sched_expose(s, kcoll_rooted_blocked(d));
        kcoll_rooted_copy_own(a, s, d);
        for (int v = p - k > 1 ? p - k : 1; v < p; v++)
            kcoll_sched_wait(s, kcoll_abs(a, v), KCOLL_FLAG_DONE, 1);
    } else {
        const int v = kcoll_rel(a, a->rank);
        if (v - k >= 1)
            kcoll_sched_wait(s, kcoll_abs(a, v - k), KCOLL_FLAG_DONE, 1);
        len = kcoll_rooted_block(a, d, a->rank, &off);
        kcoll_rooted_peer_moves(a, s, d, off, len);
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    return s->err;
}

kcoll_status_t kcoll_scatter_throttled_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_rooted_throttled(a, s, KCOLL_ROOTED_SCATTER);
}

kcoll_status_t kcoll_gather_throttled_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_rooted_throttled(a, s, KCOLL_ROOTED_GATHER);
}
