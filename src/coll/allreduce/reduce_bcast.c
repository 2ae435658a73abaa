/* MPI_Allreduce, reduce then broadcast (paper 004 section IV.C), the
 * baseline for partitioned.
 *
 *  1. Reduce to rank 0 as in the partitioned Reduce: every rank reduces
 *     its 1/p slice over all ranks' SEND buffers, chunk by chunk, in
 *     kcoll's fixed order (common.h); rank 0 accumulates in its RECV, the
 *     others stage each chunk in TMP and WRITE it into rank 0's RECV. Each
 *     non-root raises DATA when its slice is written.
 *  2. Rank 0 waits for every DATA, then raises its own DATA: the result is
 *     complete. Every other rank reads the whole result from rank 0's RECV
 *     (a direct-read broadcast).
 *  3. All raise DONE and return once every other rank is DONE.
 * In place: SEND is the receive buffer; rank 0 stages its chunks in TMP
 * (as the partitioned Reduce root); a non-root overwrites its buffer only
 * in step 2, after every rank finished reading contributions (rank 0's
 * DATA comes after all of step 1).
 *
 * Cost (paper 003; m = n/p): the partitioned Reduce, then
 *   alpha + n*beta + l*gamma_{p-1}*ceil(n/s)  (p-1 readers of rank 0)
 * so each non-root moves n(p-1)/p + n/p + n bytes, against 2n(p-1)/p for
 * partitioned. Any p, count, operation.
 */
#include "coll/reduce/common.h"

kcoll_status_t kcoll_allreduce_reduce_bcast(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank;
    size_t off, len, n = kcoll_red_vector(a);
    kcoll_red_slice(a, r, &off, &len);
    kcoll_red_dest_t d;

    kcoll_sched_expose(s, KCOLL_BUF_SEND);
    if (r == 0) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        if (a->in_place)
            d = (kcoll_red_dest_t){.staged = 1, .peer = -1, .dst = KCOLL_BUF_RECV, .dst_off = off};
        else
            d = (kcoll_red_dest_t){.acc = KCOLL_BUF_RECV, .acc_off = off, .peer = -1};
        kcoll_red_range(a, s, off, len, &d);
        kcoll_red_wait_all(a, s, KCOLL_FLAG_DATA);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    } else {
        d = (kcoll_red_dest_t){.staged = 1, .peer = 0, .dst = KCOLL_BUF_RECV, .dst_off = off};
        kcoll_red_range(a, s, off, len, &d);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
        kcoll_sched_wait(s, 0, KCOLL_FLAG_DATA, 1);
        kcoll_sched_read(s, 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, n);
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    kcoll_red_wait_all(a, s, KCOLL_FLAG_DONE);
    return s->err;
}
