/* MPI_Alltoall(v), Bruck's algorithm (paper 003 section IV.C.1), for small
 * blocks: ceil(log2 p) rounds instead of p-1, at the price of moving each
 * block up to log2 p times.
 *
 * TMP holds two areas of p slots (slot = the largest block of the call).
 *  1. Local rotation: slot i of area A := the block for rank (rank + i).
 *  2. Round t = 0..ceil(log2 p)-1: a rank reads the slots i whose bit t is
 *     set from area A of rank (rank - 2^t) into its own area B. Slot i at
 *     rank x then holds the block that rank x - (i mod 2^(t+1)) has for
 *     rank x - (i mod 2^(t+1)) + i. Before overwriting its own area A
 *     with B, a rank must know that its reader of this round, rank
 *     (rank + 2^t), has read the old contents: DATA = 2t+1 says "I have
 *     read round t", DATA = 2t+2 "my area A holds round t's result", which
 *     is what the next round's reader waits for.
 *  3. After the last round slot i holds the block from rank (rank - i):
 *     local copies into the receive buffer.
 * In place, step 1 copies from the receive buffer, which no peer touches.
 *
 * Cost (paper 003): T = ceil(log2 p)*(alpha + (p/2)*n*beta + ...)
 *   + 2*p*n*beta' (local copies). Any p, n, layout (v: slots of the
 *   largest block).
 */
#include "coll/coll.h"

static size_t max_block(const kcoll_args_t *a)
{
    size_t m = 0, off;
    for (int q = 0; q < a->p; q++)
        for (int j = 0; j < a->p; j++) {
            size_t n = a->in_place ? kcoll_rblock(a, q, j, &off) : kcoll_sblock(a, q, j, &off);
            if (n > m)
                m = n;
        }
    return m;
}

size_t kcoll_alltoall_bruck_tmp(const kcoll_args_t *a)
{
    return 2 * (size_t)a->p * max_block(a);
}

/* Bytes of the block rank src has for rank dst. */
static size_t blen(const kcoll_args_t *a, int src, int dst)
{
    size_t off;
    return a->in_place ? kcoll_rblock(a, src, dst, &off) : kcoll_sblock(a, src, dst, &off);
}

kcoll_status_t kcoll_alltoall_bruck(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    const size_t slot = max_block(a), area_b = (size_t)p * slot;
    const kcoll_buf_t sb = a->in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
    int rounds = 0;
    size_t off, len;
    kcoll_run_t run;
    while ((1 << rounds) < p)
        rounds++;

    kcoll_run_init(&run);
    for (int i = 0; i < p; i++) {
        const int d = (r + i) % p;
        len = a->in_place ? kcoll_rblock(a, r, d, &off) : kcoll_sblock(a, r, d, &off);
        kcoll_run_add(s, &run, KCOLL_STEP_COPY, r, KCOLL_BUF_TMP, (size_t)i * slot, sb, off, len);
    }
    kcoll_run_flush(s, &run);
    if (p > 1)
        kcoll_sched_expose(s, KCOLL_BUF_TMP);

    for (int t = 0; t < rounds; t++) {
        const int d = 1 << t, from = (r - d + p) % p, reader = (r + d) % p;
        if (t > 0)
            kcoll_sched_wait(s, from, KCOLL_FLAG_DATA, (uint32_t)(2 * t));
        for (int i = 0; i < p; i++) {
            if (!(i & d))
                continue;
            /* at `from`, slot i holds the block of src for src + i */
            const int src = ((from - (i & (d - 1))) % p + p) % p;
            len = blen(a, src, (src + i) % p);
            kcoll_run_add(s, &run, KCOLL_STEP_READ, from, KCOLL_BUF_TMP, (size_t)i * slot,
                          KCOLL_BUF_TMP, area_b + (size_t)i * slot, len);
        }
        kcoll_run_flush(s, &run);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(2 * t + 1));
        kcoll_sched_wait(s, reader, KCOLL_FLAG_DATA, (uint32_t)(2 * t + 1));
        for (int i = 0; i < p; i++) {
            if (!(i & d))
                continue;
            const int src = ((r - (i & (2 * d - 1))) % p + p) % p;
            len = blen(a, src, (src + i) % p);
            kcoll_run_add(s, &run, KCOLL_STEP_COPY, r, KCOLL_BUF_TMP, (size_t)i * slot,
                          KCOLL_BUF_TMP, area_b + (size_t)i * slot, len);
        }
        kcoll_run_flush(s, &run);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(2 * t + 2));
    }

    for (int i = 0; i < p; i++) {
        const int src = (r - i + p) % p;
        if (a->in_place && i == 0)
            continue; /* the own block stays where it is */
        len = kcoll_rblock(a, r, src, &off);
        size_t have = blen(a, src, r);
        kcoll_run_add(s, &run, KCOLL_STEP_COPY, r, KCOLL_BUF_RECV, off, KCOLL_BUF_TMP,
                      (size_t)i * slot, len < have ? len : have);
    }
    kcoll_run_flush(s, &run);
    return s->err;
}
