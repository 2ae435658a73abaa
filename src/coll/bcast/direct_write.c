/* MPI_Bcast, direct write (paper 003 section V.B.1).
 *
 * Every non-root exposes its buffer and waits; the root writes the whole
 * message into the non-roots one after the other (relative ranks 1, 2, ...)
 * and after the j-th write raises its DATA flag to j, which releases
 * exactly the ranks written so far. The root's own core does all the
 * copying, so there is no contention on any process's pages, but the copies
 * are serialized: this is the sender-writing direction that paper 000
 * reserves for all-to-one patterns, kept as a baseline and for the cost
 * model to choose when p is small and contention is high.
 *
 * Cost (paper 003): T = T_gather^sm + (p-1)*(alpha + n*beta + l*ceil(n/s))
 *                      + T_bcast^sm.
 * No restriction on p, root or n.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_bcast_direct_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    if (a->rank == a->root) {
        for (int v = 1; v < a->p; v++) {
            kcoll_sched_write(s, kcoll_abs(a, v), KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, a->bytes);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)v);
        }
    } else {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_sched_wait(s, a->root, KCOLL_FLAG_DATA, (uint32_t)kcoll_rel(a, a->rank));
    }
    return s->err;
}
