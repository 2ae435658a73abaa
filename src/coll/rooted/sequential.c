/* MPI_Scatter(v) sequential write and MPI_Gather(v) sequential read: one
 * builder with a direction (paper 003 sections IV.A.2 and IV.B.2).
 *
 * Every non-root with a non-empty block exposes its own buffer (RECV of a
 * scatter, SEND of a gather); the root moves the blocks one after the
 * other in relative rank order (1, 2, ...) between its blocked buffer and
 * theirs (a scatter writes into them, a gather reads from them) and after
 * relative rank v's block raises its DATA flag to v, which releases every
 * rank moved so far (its buffer is written, or no longer needed). The root
 * then copies its own block (nothing with MPI_IN_PLACE). Only the root's
 * core copies, so no process's pages are ever contended, but the p-1
 * copies and the root's memcpy are serialized. The root needs no
 * acknowledgement: nobody touches its buffers, and each copy has completed
 * before the flag that lets its peer return.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_memcpy + T_gather^sm + (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_bcast^sm
 * with T_memcpy = 0 for MPI_IN_PLACE. Any p, root, counts.
 */
#include "coll/coll.h"

static kcoll_status_t kcoll_rooted_sequential(const kcoll_args_t *a, kcoll_sched_t *s,
                                              kcoll_rooted_dir_t d)
{
    size_t off, len;
    if (a->rank == a->root) {
        for (int v = 1; v < a->p; v++) {
            int q = kcoll_abs(a, v);
            len = kcoll_rooted_block(a, d, q, &off);
            if (len == 0)
                continue;
            kcoll_rooted_root_moves(s, d, q, off, len);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)v);
        }
        kcoll_rooted_copy_own(a, s, d);
    } else if (kcoll_rooted_block(a, d, a->rank, &off) > 0) {
        kcoll_sched_expose(s, kcoll_rooted_own(d));
        kcoll_sched_wait(s, a->root, KCOLL_FLAG_DATA, (uint32_t)kcoll_rel(a, a->rank));
    }
    return s->err;
}

kcoll_status_t kcoll_scatter_sequential_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_rooted_sequential(a, s, KCOLL_ROOTED_SCATTER);
}

kcoll_status_t kcoll_gather_sequential_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_rooted_sequential(a, s, KCOLL_ROOTED_GATHER);
}
