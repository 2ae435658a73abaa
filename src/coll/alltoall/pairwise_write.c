/* MPI_Alltoall(v), pairwise exchange by writing (paper 003 section IV.C.1).
 *
 * The schedule of pairwise with the direction reversed: in step i a rank
 * writes the block meant for rank XOR i (p a power of two) or
 * (rank + i) mod p into that rank's receive buffer; every process is
 * written by exactly one peer per step. The own block is a local copy
 * after the first write. A rank raises DATA after its last write and
 * returns once every other rank has (then all its blocks have arrived and
 * nobody writes into its buffer any more).
 *
 * In place: the rank copies its other blocks to private scratch (TMP)
 * before it exposes its receive buffer to the writers, and writes from
 * there.
 *
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_barrier^sm.
 * Any p, n, layout.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_alltoall_pairwise_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    const int pow2 = (p & (p - 1)) == 0;
    size_t off, len, soff, slen;

    if (a->in_place)
        kcoll_a2a_save(a, s);
    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    for (int i = 1; i < p; i++) {
        const int dst = pow2 ? r ^ i : (r + i) % p;
        kcoll_buf_t sb = kcoll_a2a_src(a, r, dst, &soff, &slen);
        len = kcoll_rblock(a, dst, r, &off);
        kcoll_sched_write(s, dst, KCOLL_BUF_RECV, off, sb, soff, len < slen ? len : slen);
        if (i == 1 && !a->in_place) {
            slen = kcoll_sblock(a, r, r, &soff);
            len = kcoll_rblock(a, r, r, &off);
            kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, soff, len < slen ? len : slen);
        }
    }
    if (p == 1) {
        if (!a->in_place) {
            slen = kcoll_sblock(a, r, r, &soff);
            len = kcoll_rblock(a, r, r, &off);
            kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, soff, len < slen ? len : slen);
        }
        return s->err;
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    for (int i = 1; i < p; i++)
        kcoll_sched_wait(s, (r - i + p) % p, KCOLL_FLAG_DATA, 1);
    return s->err;
}
