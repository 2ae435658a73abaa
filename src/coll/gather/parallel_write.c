/* MPI_Gather / MPI_Gatherv, parallel write (paper 003 section IV.B.1;
 * paper 000's sender-writing for all-to-one).
 *
 * The root exposes its receive buffer; every non-root with a non-empty
 * block writes that block into its place there, all at the same time, and
 * signals DONE. Meanwhile the root copies its own block into place with
 * memcpy (nothing with MPI_IN_PLACE: it is already there), so at two ranks
 * the peer's CMA write and the root's memcpy overlap; then it waits for the
 * DONE of every writer. A non-root with an empty block takes no step.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_bcast^sm + alpha + n*beta + l*gamma_{p-1}*ceil(n/s) + T_gather^sm
 * gamma_{p-1}: p-1 writers contend on the root's page-table lock;
 * throttled_write bounds it. Any p, root, counts.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_gather_parallel_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    size_t off, len;
    if (a->rank == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_gather_copy_own(a, s);
        for (int v = 1; v < a->p; v++) {
            int q = kcoll_abs(a, v);
            if (kcoll_rblock(a, a->root, q, &off) > 0)
                kcoll_sched_wait(s, q, KCOLL_FLAG_DONE, 1);
        }
    } else {
        len = kcoll_rblock(a, a->root, a->rank, &off);
        if (len > 0) {
            kcoll_sched_write(s, a->root, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
            kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        }
    }
    return s->err;
}
