/* MPI_Bcast, direct read (paper 000 section V.B; paper 003 section V.B.1).
 *
 * The root exposes its buffer; every non-root reads the whole message from
 * it with one single copy, all at the same time, and signals DONE; the root
 * returns once every non-root is done (until then the user must not touch
 * the root's buffer). This is receiver-reading, the direction paper 000
 * recommends for one-to-all: the copies run in parallel on the readers'
 * cores, and the root only waits.
 *
 * Cost (paper 003): T = T_bcast^sm + alpha + n*beta + l*gamma_{p-1}*ceil(n/s)
 *                      + T_gather^sm
 * where gamma_{p-1} is the contention of p-1 concurrent readers of one
 * process's pages: cheap for few ranks, poor for many (then knomial or
 * scatter_allgather). No restriction on p, root or n.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_bcast_direct_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    if (a->rank == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        for (int v = 1; v < a->p; v++)
            kcoll_sched_wait(s, kcoll_abs(a, v), KCOLL_FLAG_DONE, 1);
    } else {
        kcoll_sched_read(s, a->root, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, a->bytes);
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    return s->err;
}
