/* MPI_Reduce, serial (paper 004 section IV.A, its original algorithm):
 * the root alone reads and reduces every contribution.
 *
 * Every rank exposes its SEND buffer. The root walks the vector in chunks
 * of prm.chunk KiB: it reads rank p-1's chunk straight into its RECV buffer,
 * then each other rank's chunk into TMP and reduces it in, for q = p-2
 * down to 0 (kcoll's fixed order, common.h; its own chunk is reduced from
 * SEND directly). It then raises DONE; the others wait for it and return.
 * In place (MPI_IN_PLACE at the root, SEND mapped to RECV) the root stages
 * each chunk in TMP and copies it back once that chunk is reduced.
 *
 * Cost (paper 003; c = chunk, w = per-byte reduction time):
 *   ceil(n/c) * (p-1) * (alpha + c*beta + l*ceil(c/s)) + (p-1)*n*w
 * all on the root's core: no contention, but no parallelism either. It is
 * the baseline partitioned is measured against. Any p, root, count.
 */
#include "coll/reduce/common.h"

kcoll_status_t kcoll_reduce_serial(const kcoll_args_t *a, kcoll_sched_t *s)
{
    kcoll_sched_expose(s, KCOLL_BUF_SEND);
    if (a->rank != a->root) {
        kcoll_sched_wait(s, a->root, KCOLL_FLAG_DONE, 1);
        return s->err;
    }
    size_t n = kcoll_red_vector(a);
    kcoll_red_dest_t d;
    if (a->in_place)
        d = (kcoll_red_dest_t){.staged = 1, .peer = -1, .dst = KCOLL_BUF_RECV, .dst_off = 0};
    else
        d = (kcoll_red_dest_t){.acc = KCOLL_BUF_RECV, .acc_off = 0, .peer = -1};
    kcoll_red_range(a, s, 0, n, &d);
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    return s->err;
}
