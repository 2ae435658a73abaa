/* MPI_Bcast, split read/write: both sides of every copy work.
 *
 * In direct_read the root's core sits idle while the readers copy; paper
 * 000's principle is to put every core to work. Here each non-root's copy
 * of the message is split in two: the root writes the tail, w = n/p bytes
 * (kcoll_split's alignment), into the non-roots one after the other, while
 * each non-root reads the head, n - w bytes, from the root. After its j-th
 * write the root raises DATA to j; a non-root waits for its turn, then
 * raises DONE; the root returns once all are DONE.
 *
 * With w = n/p the root's (p-1) writes of n/p bytes take as long as one
 * non-root's read of (p-1)n/p bytes, so both finish together. At p = 2 the
 * two halves move in parallel on two cores: about half the time of one
 * read, the best single-copy broadcast between two processes.
 *
 * Cost: T = T_bcast^sm + max( (p-1)*(alpha + w*beta + l*ceil(w/s)),
 *                              alpha + (n-w)*beta + l*gamma_{p-1}*ceil((n-w)/s) )
 *           + T_gather^sm,   w = n/p.
 * For many ranks the readers contend on the root (gamma_{p-1}) as in
 * direct_read. Any p, root, n.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_bcast_split_rw(const kcoll_args_t *a, kcoll_sched_t *s)
{
    size_t woff, wlen;
    /* the last of p pieces is the part the root writes */
    kcoll_split(a->bytes, a->p, a->p - 1, &woff, &wlen);

    if (a->rank == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        for (int v = 1; v < a->p; v++) {
            kcoll_sched_write(s, kcoll_abs(a, v), KCOLL_BUF_RECV, woff, KCOLL_BUF_RECV, woff, wlen);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)v);
        }
        for (int v = 1; v < a->p; v++)
            kcoll_sched_wait(s, kcoll_abs(a, v), KCOLL_FLAG_DONE, 1);
    } else {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_sched_read(s, a->root, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, woff);
        kcoll_sched_wait(s, a->root, KCOLL_FLAG_DATA, (uint32_t)kcoll_rel(a, a->rank));
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    return s->err;
}
