/* MPI_Scatter / MPI_Scatterv, sequential write (paper 003 section IV.A.2).
 *
 * Every non-root with a non-empty block exposes its receive buffer; the
 * root writes the blocks into them one after the other in relative rank
 * order (1, 2, ...) and after writing relative rank v's block raises its
 * DATA flag to v, which releases every rank written so far. The root then
 * copies its own block (nothing with MPI_IN_PLACE). Only the root's core
 * copies, so no process's pages are ever contended, but the p-1 copies and
 * the root's memcpy are serialized.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_memcpy + T_gather^sm + (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_bcast^sm
 * with T_memcpy = 0 for MPI_IN_PLACE. The root needs no acknowledgement:
 * nobody touches its buffers, and each write has completed before the flag
 * that lets its target return. Any p, root, counts.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_scatter_sequential_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    size_t off, len;
    if (a->rank == a->root) {
        for (int v = 1; v < a->p; v++) {
            int q = kcoll_abs(a, v);
            len = kcoll_sblock(a, a->root, q, &off);
            if (len == 0)
                continue;
            kcoll_sched_write(s, q, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, off, len);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)v);
        }
        kcoll_scatter_copy_own(a, s);
    } else if (kcoll_sblock(a, a->root, a->rank, &off) > 0) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_sched_wait(s, a->root, KCOLL_FLAG_DATA, (uint32_t)kcoll_rel(a, a->rank));
    }
    return s->err;
}
