/* MPI_Allgather(v), gather then broadcast (paper 000 section V.C).
 *
 * Rank 0 gathers: it reads every other rank's block straight into its
 * receive buffer (receiver-reading, one peer after the other) and raises
 * DATA to 1. Then every other rank reads the p-1 blocks it lacks from rank
 * 0, all at the same time, and raises DONE; rank 0 returns after all are
 * DONE. A rank's own block goes from its send buffer to its receive buffer
 * with a local copy, so every byte is written exactly once everywhere.
 *
 * Kept as the baseline paper 000 starts from: rank 0's core does the whole
 * gather alone and then p-1 readers contend for its pages.
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s))
 *                     + alpha + (p-1)*n*beta + l*gamma_{p-1}*ceil((p-1)*n/s)
 * (n: bytes of one block; per block alpha for irregular v-layouts).
 * Any p, n, layout; in place or not.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_allgather_gather_bcast(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    size_t off, len, own;
    kcoll_run_t run;
    kcoll_run_init(&run);

    kcoll_allgather_own_block(a, s);
    if (r == 0) {
        for (int q = 1; q < p; q++) {
            len = kcoll_rblock(a, 0, q, &off);
            kcoll_buf_t b = kcoll_ag_own(a, q, &own);
            kcoll_run_add(s, &run, KCOLL_STEP_READ, q, b, own, KCOLL_BUF_RECV, off, len);
        }
        kcoll_run_flush(s, &run);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
        for (int q = 1; q < p; q++)
            kcoll_sched_wait(s, q, KCOLL_FLAG_DONE, 1);
        return s->err;
    }
    kcoll_sched_wait(s, 0, KCOLL_FLAG_DATA, 1);
    for (int q = 0; q < p; q++) {
        if (q == r)
            continue;
        size_t poff;
        kcoll_rblock(a, 0, q, &poff);
        len = kcoll_rblock(a, r, q, &off);
        kcoll_run_add(s, &run, KCOLL_STEP_READ, 0, KCOLL_BUF_RECV, poff, KCOLL_BUF_RECV, off, len);
    }
    kcoll_run_flush(s, &run);
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    return s->err;
}
