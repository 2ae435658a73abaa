/* MPI_Gather / MPI_Gatherv, throttled write (paper 003 section IV.B.3).
 *
 * Like parallel_write, but at most k non-roots write into the root at a
 * time, bounding the contention on the root's page-table lock to gamma_k.
 * The writers form k chains by relative rank modulo k: relative rank v
 * waits for the DONE flag of v-k (when v-k is a non-root), writes its
 * block, and raises its own DONE; k need not divide p-1 and no barrier is
 * needed. A rank with an empty block writes nothing but still passes its
 * chain on. The root copies its own block (overlapped with the first
 * writers; nothing with MPI_IN_PLACE) and then waits only for the last
 * rank of each chain, whose DONE implies that of every earlier one.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_bcast^sm + ceil((p-1)/k) * (alpha + n*beta + l*gamma_k*ceil(n/s))
 * k = 1: one writer at a time; k >= p-1: parallel_write. Any p, root,
 * counts, k >= 1.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_gather_throttled_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, k = a->prm.k < 1 ? 1 : a->prm.k;
    size_t off, len;
    if (a->rank == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_gather_copy_own(a, s);
        for (int v = p - k > 1 ? p - k : 1; v < p; v++)
            kcoll_sched_wait(s, kcoll_abs(a, v), KCOLL_FLAG_DONE, 1);
    } else {
        const int v = kcoll_rel(a, a->rank);
        if (v - k >= 1)
            kcoll_sched_wait(s, kcoll_abs(a, v - k), KCOLL_FLAG_DONE, 1);
        len = kcoll_rblock(a, a->root, a->rank, &off);
        kcoll_sched_write(s, a->root, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    return s->err;
}
