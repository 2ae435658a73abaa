/* MPI_Allgather(v), ring-source read (paper 003 section IV.C).
 *
 * In step i = 1..p-1 a rank reads block (rank - i) mod p directly from
 * that block's owner (its send buffer, or its receive buffer in place).
 * No block is forwarded, so no step waits for another: the only
 * synchronisation is at the end, where a rank raises DONE after its last
 * read and returns once every other rank, all of which read from it, is
 * DONE. In step i owner o is read by rank o + i only, so while the ranks
 * stay in step each process has one reader at a time.
 *
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s)) + T_barrier^sm.
 * Any p, n, layout; in place or not.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_allgather_ring_source_read(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    size_t off, len, poff;

    if (!a->in_place)
        kcoll_sched_expose(s, KCOLL_BUF_SEND);
    else
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
    /* the first read starts before the own block's copy, so that at two
     * ranks both cores copy the peer's block while the other copies too */
    for (int i = 1; i < p; i++) {
        int o = (r - i + p) % p;
        kcoll_buf_t pb = kcoll_ag_own(a, o, &poff);
        len = kcoll_rblock(a, r, o, &off);
        kcoll_sched_read(s, o, pb, poff, KCOLL_BUF_RECV, off, len);
    }
    if (!a->in_place) {
        len = kcoll_rblock(a, r, r, &off);
        kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
    }
    if (p == 1)
        return s->err;
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    for (int i = 1; i < p; i++)
        kcoll_sched_wait(s, (r + i) % p, KCOLL_FLAG_DONE, 1);
    return s->err;
}
