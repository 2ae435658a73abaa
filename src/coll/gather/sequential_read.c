/* MPI_Gather / MPI_Gatherv, sequential read (paper 003 section IV.B.2).
 *
 * Every non-root with a non-empty block exposes its send buffer; the root
 * reads the blocks one after the other in relative rank order (1, 2, ...)
 * into their places and after reading relative rank v's block raises its
 * DATA flag to v, which tells every rank read so far that it may return
 * (its send buffer is no longer needed). The root then copies its own
 * block (nothing with MPI_IN_PLACE). Only the root's core copies: no
 * contention, but the copies are serialized.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_memcpy + T_gather^sm + (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_bcast^sm
 * with T_memcpy = 0 for MPI_IN_PLACE. Any p, root, counts.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_gather_sequential_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    size_t off, len;
    if (a->rank == a->root) {
        for (int v = 1; v < a->p; v++) {
            int q = kcoll_abs(a, v);
            len = kcoll_rblock(a, a->root, q, &off);
            if (len == 0)
                continue;
            kcoll_sched_read(s, q, KCOLL_BUF_SEND, 0, KCOLL_BUF_RECV, off, len);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)v);
        }
        kcoll_gather_copy_own(a, s);
    } else if (kcoll_rblock(a, a->root, a->rank, &off) > 0) {
        kcoll_sched_expose(s, KCOLL_BUF_SEND);
        kcoll_sched_wait(s, a->root, KCOLL_FLAG_DATA, (uint32_t)kcoll_rel(a, a->rank));
    }
    return s->err;
}
