/* MPI_Allgather(v), recursive doubling (paper 003 section IV.C), for any p.
 *
 * Let q be the largest power of two <= p. Ranks q..p-1 ("extra" ranks)
 * each lean on a partner rank - q:
 *  0. every rank x < p - q first reads the block of its extra rank x + q
 *     into its own receive buffer, then raises DATA to 1;
 *  1. in round t = 0..log2(q)-1, rank x < q reads from x XOR 2^t the
 *     blocks that rank holds: those of the aligned group of 2^t ranks
 *     around it plus their extra ranks' blocks. It waits for the partner's
 *     DATA >= t+1 (partner finished round t-1), reads, raises DATA to t+2.
 *     After the last round rank x holds all p blocks;
 *  2. every extra rank waits for its partner to finish, reads all blocks
 *     but its own from it and raises DONE.
 * A rank x < q returns once each of its round partners has finished all
 * rounds and its extra rank (if any) is DONE; an extra rank returns once
 * its partner has finished (which covers the partner's read of step 0).
 * Every process has at most one reader per round.
 *
 * Cost (paper 003): T = log2(q)*alpha + (q-1)*n'*beta + l*ceil(...)
 *   + (p > q: alpha + n*beta before and alpha + (p-1)*n*beta after),
 *   n' = n*p/q the bytes a virtual block carries.
 * Any p, n, layout; in place or not.
 */
#include "coll/coll.h"

/* Read, from peer's receive buffer, the blocks of ranks g..g+cnt-1 and of
 * their extra ranks g+q.., p exclusive. */
static void read_group(const kcoll_args_t *a, kcoll_sched_t *s, int peer, int g, int cnt, int q)
{
    kcoll_run_t run;
    kcoll_run_init(&run);
    for (int pass = 0; pass < 2; pass++)
        for (int b = g + pass * q; b < g + cnt + pass * q && b < a->p; b++) {
            size_t off, poff, len = kcoll_rblock(a, a->rank, b, &off);
            kcoll_rblock(a, peer, b, &poff);
            kcoll_run_add(s, &run, KCOLL_STEP_READ, peer, KCOLL_BUF_RECV, poff, KCOLL_BUF_RECV,
                          off, len);
        }
    kcoll_run_flush(s, &run);
}

kcoll_status_t kcoll_allgather_recursive_doubling(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    int q = 1, rounds = 0;
    size_t off, len, poff;
    while (2 * q <= p) {
        q *= 2;
        rounds++;
    }

    kcoll_allgather_own_block(a, s);
    if (p == 1)
        return s->err;

    if (r >= q) { /* extra rank */
        const int partner = r - q;
        kcoll_sched_wait(s, partner, KCOLL_FLAG_DATA, (uint32_t)(rounds + 1));
        kcoll_run_t run;
        kcoll_run_init(&run);
        for (int b = 0; b < p; b++) {
            if (b == r)
                continue;
            len = kcoll_rblock(a, r, b, &off);
            kcoll_rblock(a, partner, b, &poff);
            kcoll_run_add(s, &run, KCOLL_STEP_READ, partner, KCOLL_BUF_RECV, poff, KCOLL_BUF_RECV,
                          off, len);
        }
        kcoll_run_flush(s, &run);
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        return s->err;
    }

    if (r + q < p) {
        kcoll_buf_t pb = kcoll_ag_own(a, r + q, &poff);
        len = kcoll_rblock(a, r, r + q, &off);
        kcoll_sched_read(s, r + q, pb, poff, KCOLL_BUF_RECV, off, len);
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    for (int t = 0; t < rounds; t++) {
        const int partner = r ^ (1 << t);
        kcoll_sched_wait(s, partner, KCOLL_FLAG_DATA, (uint32_t)(t + 1));
        read_group(a, s, partner, partner & ~((1 << t) - 1), 1 << t, q);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(t + 2));
    }
    for (int t = 0; t < rounds; t++)
        kcoll_sched_wait(s, r ^ (1 << t), KCOLL_FLAG_DATA, (uint32_t)(rounds + 1));
    if (r + q < p)
        kcoll_sched_wait(s, r + q, KCOLL_FLAG_DONE, 1);
    return s->err;
}
