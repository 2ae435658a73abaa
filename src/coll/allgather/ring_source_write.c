/* MPI_Allgather(v), ring-source write (paper 003 section IV.C).
 *
 * The sender-writing mirror of ring_source_read: in step i = 1..p-1 a rank
 * writes its own block into the receive buffer of rank (rank + i) mod p.
 * Each rank raises DATA to 1 after its last write and returns once every
 * other rank has done so (then all blocks have arrived in its buffer and
 * nobody writes into it any more). In step i rank d is written by rank
 * d - i only: one writer per process at a time while ranks stay in step.
 *
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_barrier^sm.
 * Any p, n, layout; in place or not.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_allgather_ring_source_write(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    size_t off, len, soff;
    const kcoll_buf_t sb = kcoll_ag_own(a, r, &soff);

    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    for (int i = 1; i < p; i++) {
        int d = (r + i) % p;
        len = kcoll_rblock(a, d, r, &off);
        kcoll_sched_write(s, d, KCOLL_BUF_RECV, off, sb, soff, len);
    }
    if (!a->in_place) {
        len = kcoll_rblock(a, r, r, &off);
        kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
    }
    if (p == 1)
        return s->err;
    kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    for (int i = 1; i < p; i++)
        kcoll_sched_wait(s, (r - i + p) % p, KCOLL_FLAG_DATA, 1);
    return s->err;
}
