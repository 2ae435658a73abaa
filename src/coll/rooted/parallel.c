/* MPI_Scatter(v) parallel read and MPI_Gather(v) parallel write: one
 * builder with a direction (paper 003 sections IV.A.1 and IV.B.1; paper
 * 000's receiver-reading for one-to-all, sender-writing for all-to-one).
 *
 * The root exposes its blocked buffer (SEND of a scatter, RECV of a
 * gather); every non-root with a non-empty block moves that block between
 * its own buffer and its place there, all at the same time (a scatter's
 * non-root reads it into its RECV, a gather's writes its SEND into the
 * root), and signals DONE. Meanwhile the root copies its own block with
 * memcpy (nothing with MPI_IN_PLACE: it is already in place), so at two
 * ranks the peer's CMA copy and the root's memcpy overlap; then it waits
 * for the DONE of every mover (until then a scatter's send buffer may
 * still be read, a gather's receive buffer still be written). A non-root
 * with an empty block takes no step: nobody touches its buffers and it
 * touches nobody's.
 *
 * Cost (paper 003, n = bytes of one block):
 *   T = T_bcast^sm + alpha + n*beta + l*gamma_{p-1}*ceil(n/s) + T_gather^sm
 * gamma_{p-1}: p-1 movers contend on the root's page-table lock, which
 * grows with p and n; the throttled form bounds it. Any p, root, counts.
 */
#include "coll/coll.h"

static kcoll_status_t kcoll_rooted_parallel(const kcoll_args_t *a, kcoll_sched_t *s,
                                            kcoll_rooted_dir_t d)
{
    size_t off, len;
    if (a->rank == a->root) {
        kcoll_sched_expose(s, kcoll_rooted_blocked(d));
        kcoll_rooted_copy_own(a, s, d);
        for (int v = 1; v < a->p; v++) {
            int q = kcoll_abs(a, v);
            if (kcoll_rooted_block(a, d, q, &off) > 0)
                kcoll_sched_wait(s, q, KCOLL_FLAG_DONE, 1);
        }
    } else {
        len = kcoll_rooted_block(a, d, a->rank, &off);
        if (len > 0) {
            kcoll_rooted_peer_moves(a, s, d, off, len);
            kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        }
    }
    return s->err;
}

kcoll_status_t kcoll_scatter_parallel_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_rooted_parallel(a, s, KCOLL_ROOTED_SCATTER);
}

kcoll_status_t kcoll_gather_parallel_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    return kcoll_rooted_parallel(a, s, KCOLL_ROOTED_GATHER);
}
