/* MPI_Allgather(v), Bruck's algorithm (paper 003 section IV.C), for any p.
 *
 * In round t = 0..ceil(log2 p)-1 a rank reads from rank (rank + 2^t) mod p
 * the min(2^t, p - 2^t) blocks that rank holds, blocks (rank + 2^t) ..
 * (rank + 2^t + cnt - 1) mod p. After round t a rank holds the 2^(t+1)
 * blocks starting at its own, and raises DATA to t+1; round t waits for
 * the partner's DATA >= t. Classic Bruck works on a rotated buffer and
 * rotates it back at the end; with single-copy reads from any offset the
 * blocks go straight to their final places, so no extra copy is needed.
 * A rank is read by rank - 2^t in round t and returns once all those
 * readers have finished their last round.
 *
 * Cost (paper 003): T = ceil(log2 p)*alpha + (p-1)*n*beta + l*ceil(...):
 * the fewest rounds for any p, best for small blocks.
 * Any p, n, layout; in place or not.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_allgather_bruck(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    int rounds = 0;
    size_t off, len, poff;
    while ((1 << rounds) < p)
        rounds++;

    kcoll_allgather_own_block(a, s);
    for (int t = 0; t < rounds; t++) {
        const int d = 1 << t, partner = (r + d) % p;
        const int cnt = d < p - d ? d : p - d;
        kcoll_run_t run;
        kcoll_run_init(&run);
        if (t > 0)
            kcoll_sched_wait(s, partner, KCOLL_FLAG_DATA, (uint32_t)t);
        for (int c = 0; c < cnt; c++) {
            const int b = (partner + c) % p;
            kcoll_buf_t pb = KCOLL_BUF_RECV;
            len = kcoll_rblock(a, r, b, &off);
            if (t == 0) /* the partner's own block, before its copy */
                pb = kcoll_ag_own(a, partner, &poff);
            else
                kcoll_rblock(a, partner, b, &poff);
            kcoll_run_add(s, &run, KCOLL_STEP_READ, partner, pb, poff, KCOLL_BUF_RECV, off, len);
        }
        kcoll_run_flush(s, &run);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(t + 1));
    }
    for (int t = 0; t < rounds; t++)
        kcoll_sched_wait(s, (r - (1 << t) + p) % p, KCOLL_FLAG_DATA, (uint32_t)rounds);
    return s->err;
}
