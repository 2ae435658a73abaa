/* MPI_Scatter / MPI_Scatterv, parallel read (paper 003 section IV.A.1;
 * paper 000's receiver-reading for one-to-all).
 *
 * The root exposes its send buffer; every non-root with a non-empty block
 * reads that block straight into its receive buffer, all at the same time,
 * and signals DONE. Meanwhile the root copies its own block into its
 * receive buffer with memcpy (nothing with MPI_IN_PLACE), so at two ranks
 * the peer's CMA read and the root's memcpy overlap; then it waits for the
 * DONE of every reader (until then its send buffer may still be read).
 * A non-root with an empty block takes no step: nobody touches its
 * buffers and it touches nobody's.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_bcast^sm + alpha + n*beta + l*gamma_{p-1}*ceil(n/s) + T_gather^sm
 * gamma_{p-1}: p-1 readers contend on the root's page-table lock, which
 * grows with p and n; throttled_read bounds it. Any p, root, counts.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_scatter_parallel_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    size_t off, len;
    if (a->rank == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_SEND);
        kcoll_scatter_copy_own(a, s);
        for (int v = 1; v < a->p; v++) {
            int q = kcoll_abs(a, v);
            if (kcoll_sblock(a, a->root, q, &off) > 0)
                kcoll_sched_wait(s, q, KCOLL_FLAG_DONE, 1);
        }
    } else {
        len = kcoll_sblock(a, a->root, a->rank, &off);
        if (len > 0) {
            kcoll_sched_read(s, a->root, KCOLL_BUF_SEND, off, KCOLL_BUF_RECV, 0, len);
            kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        }
    }
    return s->err;
}
