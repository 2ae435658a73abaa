/* MPI_Alltoall(v), pairwise exchange by reading (paper 003 section IV.C.1;
 * the rotated schedule of paper 000 section V.C).
 *
 * p-1 steps. In step i a rank reads the block meant for it from one peer:
 * rank XOR i when p is a power of two, else (rank - i) mod p. Either way
 * every process is read by exactly one peer per step, so no process's pages
 * are contended while the ranks stay in step, and every core copies. The
 * own block is a local copy, done after the first read so that at two
 * ranks both cores copy the peer's block at the same time. A rank raises
 * DONE after its last read and returns once every other rank is DONE
 * (each of them read from it).
 *
 * In place the send data is the receive buffer itself, which the rank
 * overwrites while peers still read their blocks from it; so the rank
 * first copies its other blocks to private scratch (TMP, kcoll_a2a_save)
 * and the peers read from there: one extra local copy, no ordering
 * constraints between ranks. kcoll_alltoall_in_place_tmp sizes that
 * scratch (the descriptor's tmp, shared with pairwise_write).
 *
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_barrier^sm
 * (+ (p-1)*n*beta' for the in-place copy). Any p, n, layout.
 */
#include "coll/coll.h"

size_t kcoll_alltoall_in_place_tmp(const kcoll_args_t *a)
{
    size_t end = 0, off;
    if (!a->in_place)
        return 0;
    for (int j = 0; j < a->p; j++) {
        size_t len = kcoll_rblock(a, a->rank, j, &off);
        if (len && off + len > end)
            end = off + len;
    }
    return end;
}

void kcoll_a2a_save(const kcoll_args_t *a, kcoll_sched_t *s)
{
    kcoll_run_t run;
    kcoll_run_init(&run);
    for (int j = 0; j < a->p; j++) {
        size_t off, len = kcoll_rblock(a, a->rank, j, &off);
        if (j != a->rank)
            kcoll_run_add(s, &run, KCOLL_STEP_COPY, a->rank, KCOLL_BUF_TMP, off, KCOLL_BUF_RECV,
                          off, len);
    }
    kcoll_run_flush(s, &run);
}

kcoll_status_t kcoll_alltoall_pairwise(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    const int pow2 = (p & (p - 1)) == 0;
    size_t off, len, poff, plen;

    if (a->in_place) {
        kcoll_a2a_save(a, s);
        kcoll_sched_expose(s, KCOLL_BUF_TMP);
    } else {
        kcoll_sched_expose(s, KCOLL_BUF_SEND);
    }
    for (int i = 1; i < p; i++) {
        const int src = pow2 ? r ^ i : (r - i + p) % p;
        kcoll_buf_t pb = kcoll_a2a_src(a, src, r, &poff, &plen);
        len = kcoll_rblock(a, r, src, &off);
        kcoll_sched_read(s, src, pb, poff, KCOLL_BUF_RECV, off, len < plen ? len : plen);
        if (i == 1 && !a->in_place) {
            size_t soff, slen = kcoll_sblock(a, r, r, &soff);
            len = kcoll_rblock(a, r, r, &off);
            kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, soff, len < slen ? len : slen);
        }
    }
    if (p == 1) {
        if (!a->in_place) {
            size_t soff, slen = kcoll_sblock(a, r, r, &soff);
            len = kcoll_rblock(a, r, r, &off);
            kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, soff, len < slen ? len : slen);
        }
        return s->err;
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    for (int i = 1; i < p; i++)
        kcoll_sched_wait(s, (r + i) % p, KCOLL_FLAG_DONE, 1);
    return s->err;
}
