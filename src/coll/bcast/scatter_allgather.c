/* MPI_Bcast, scatter then allgather (van de Geijn; paper 003 section V.B.3).
 *
 * The message is cut into p chunks (kcoll_split: cache-line or page
 * aligned); relative rank v owns chunk v, the root chunk 0.
 *  1. Scatter: every non-root reads its own chunk from the root, all at
 *     once, and raises DATA to 1 ("my chunk is here").
 *  2. Allgather, ring-source read: in step i = 1..p-1, relative rank v
 *     reads chunk (v - i) mod p directly from that chunk's owner, after
 *     the owner's DATA flag says the chunk is there (the root holds chunk 0
 *     from the start). In every step each owner is read by exactly one
 *     peer, so the allgather has no contention at all, and no chunk is
 *     forwarded: it comes from the rank that got it from the root.
 *  3. A non-root raises DONE when it has read everything; a rank returns
 *     after every rank that reads from it is DONE.
 * Every byte reaches every non-root exactly once. Only the scatter suffers
 * contention (p-1 readers of the root, each reading n/p bytes).
 *
 * Cost (paper 003): T = T_allgather^sm (addresses)
 *   + alpha + (n/p)*beta + l*gamma_{p-1}*ceil(n/(p*s))      (scatter)
 *   + (p-1) * (alpha + (n/p)*beta + l*ceil(n/(p*s)))         (allgather)
 * Best for large n; for small n the 2(p-1) system calls and p flags cost
 * more than they save. Any p, root, n (chunks may be empty for tiny n).
 */
#include "coll/coll.h"

kcoll_status_t kcoll_bcast_scatter_allgather(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, v = kcoll_rel(a, a->rank);
    size_t off, len;

    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    if (v == 0) {
        /* the root reads nothing; chunk 0 is read from it by everybody */
        for (int u = 1; u < p; u++)
            kcoll_sched_wait(s, kcoll_abs(a, u), KCOLL_FLAG_DONE, 1);
        return s->err;
    }

    kcoll_split(a->bytes, p, v, &off, &len);
    kcoll_sched_read(s, a->root, KCOLL_BUF_RECV, off, KCOLL_BUF_RECV, off, len);
    kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);

    for (int i = 1; i < p; i++) {
        int c = (v - i + p) % p;
        size_t coff, clen;
        kcoll_split(a->bytes, p, c, &coff, &clen);
        if (clen == 0)
            continue;
        if (c != 0)
            kcoll_sched_wait(s, kcoll_abs(a, c), KCOLL_FLAG_DATA, 1);
        kcoll_sched_read(s, kcoll_abs(a, c), KCOLL_BUF_RECV, coff, KCOLL_BUF_RECV, coff, clen);
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);

    /* every other non-root reads chunk v from this rank */
    if (len > 0)
        for (int u = 1; u < p; u++)
            if (u != v)
                kcoll_sched_wait(s, kcoll_abs(a, u), KCOLL_FLAG_DONE, 1);
    return s->err;
}
