/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter:
 * partitioned reduction (paper 004 section IV.A, "every process reduces
 * its own slice in parallel").
 *
 * The vector of n bytes is cut into p slices: rank q's block for the
 * Reduce_scatter family, else a 1/p share (common.c). Every rank exposes
 * its SEND buffer; then
 *  1. each rank reduces its own slice over all ranks: chunk by chunk
 *     (prm.chunk KiB, L2-sized), it reads rank p-1's chunk straight into its
 *     accumulator, then reads each other rank's chunk into TMP and reduces
 *     it in, in kcoll's fixed order r_0 op (r_1 op (... r_{p-1})) (its own
 *     chunk is reduced from SEND without a copy). No rank waits for
 *     another: the slices are disjoint and the SEND buffers are only read.
 *  2. delivery, per collective:
 *     - Allreduce: the accumulator is the rank's own RECV slice. It raises
 *       DATA, then reads every other slice from its owner's RECV once that
 *       owner's DATA is up (starting with the next rank, so that owners are
 *       read one at a time in a ring).
 *     - Reduce: the root accumulates in its RECV; every other rank
 *       accumulates a chunk in TMP and WRITEs it into the root's RECV.
 *     - Reduce_scatter(_block): the accumulator is RECV itself.
 *  3. every rank raises DONE and returns once every other rank is DONE
 *     (each has read its SEND, and for Allreduce its RECV slice).
 * MPI_IN_PLACE: the PMPI layer maps SEND to the receive buffer. A rank
 * then stages each accumulator chunk in TMP and copies it to its slice
 * (Allreduce, the Reduce root: only this rank reads its own slice of its
 * contribution, and it has used that chunk before the copy; peers read
 * the other slices of it, which this rank overwrites only after their
 * owners' DATA, or never). An in-place Reduce_scatter keeps its whole
 * block in TMP until all peers are DONE: its result goes to the start of
 * the buffer, where other ranks' blocks of its contribution lie.
 *
 * Cost (paper 003; m = n/p, c = chunk, w = per-byte reduction time):
 *   phase 1: ceil(m/c) * (p-1) * (alpha + c*beta + l*gamma_{p-1}*ceil(c/s))
 *            + (p-1)*m*w
 *   Allreduce adds (p-1)*(alpha + m*beta + l*ceil(m/s)); Reduce adds m*beta
 *   of writes at the non-roots, in parallel.
 * Each rank moves (p-1)*m + (p-1)*m = 2n(p-1)/p bytes (Allreduce), the
 * bandwidth optimum, and reduces n/p elements (p-1) times: all cores work.
 * Any p, root, count (slices may be empty), predefined or user operation.
 */
#include "coll/reduce/common.h"

kcoll_status_t kcoll_reduce_sliced(const kcoll_args_t *a, kcoll_sched_t *s, kcoll_red_range_fn range)
{
    const int p = a->p, r = a->rank;
    size_t off, len;
    kcoll_red_slice(a, r, &off, &len);
    kcoll_red_dest_t d = {.peer = -1};

    kcoll_sched_expose(s, KCOLL_BUF_SEND);
    switch (a->coll) {
    case KCOLL_COLL_ALLREDUCE:
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        if (a->in_place)
            d = (kcoll_red_dest_t){.staged = 1, .peer = -1, .dst = KCOLL_BUF_RECV, .dst_off = off};
        else
            d = (kcoll_red_dest_t){.acc = KCOLL_BUF_RECV, .acc_off = off, .peer = -1};
        range(a, s, off, len, &d);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
        for (int i = 1; i < p; i++) {
            int q = (r + i) % p;
            size_t qoff, qlen;
            kcoll_red_slice(a, q, &qoff, &qlen);
            if (qlen == 0)
                continue;
            kcoll_sched_wait(s, q, KCOLL_FLAG_DATA, 1);
            kcoll_sched_read(s, q, KCOLL_BUF_RECV, qoff, KCOLL_BUF_RECV, qoff, qlen);
        }
        break;
    case KCOLL_COLL_REDUCE:
        if (r == a->root) {
            kcoll_sched_expose(s, KCOLL_BUF_RECV);
            if (a->in_place)
                d = (kcoll_red_dest_t){.staged = 1, .peer = -1, .dst = KCOLL_BUF_RECV,
                                       .dst_off = off};
            else
                d = (kcoll_red_dest_t){.acc = KCOLL_BUF_RECV, .acc_off = off, .peer = -1};
        } else {
            d = (kcoll_red_dest_t){.staged = 1, .peer = a->root, .dst = KCOLL_BUF_RECV,
                                   .dst_off = off};
        }
        range(a, s, off, len, &d);
        break;
    default: /* the Reduce_scatter family */
        if (a->in_place)
            d = (kcoll_red_dest_t){.acc = KCOLL_BUF_TMP, .acc_off = kcoll_red_chunk(a), .peer = -1};
        else
            d = (kcoll_red_dest_t){.acc = KCOLL_BUF_RECV, .acc_off = 0, .peer = -1};
        range(a, s, off, len, &d);
        break;
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    kcoll_red_wait_all(a, s, KCOLL_FLAG_DONE);
    if ((a->coll == KCOLL_COLL_REDUCE_SCATTER || a->coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK) &&
        a->in_place)
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_TMP, kcoll_red_chunk(a), len);
    return s->err;
}

kcoll_status_t kcoll_reduce_partitioned(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_reduce_sliced(a, s, kcoll_red_range);
}
