/* MPI_Bcast, k-nomial tree of readers (paper 003 section V.B.2).
 *
 * Relative ranks (root = 0) are written in base k. A rank's parent is the
 * rank with its lowest non-zero digit cleared; its children are the ranks
 * it reaches by setting one digit below its own lowest non-zero digit,
 * highest digit first. Data flows down the tree by reading: a child waits
 * until its parent holds the message, reads it whole from the parent, and
 * raises its own DATA flag to 1 ("I hold it"); then its own children may
 * read from it.
 *
 * Throttling: a parent serves its children in rounds, one round per digit
 * position, at most k-1 children (the k-1 values of that digit) per round.
 * A child of round t waits for the parent's DATA flag to reach 1 + t; the
 * parent raises it to 2 + t after all children of round t hold the data.
 * So no process ever has more than k-1 readers at once, which is what keeps
 * the page-lock contention factor at gamma_{k-1} instead of gamma_{p-1}.
 * The first rounds go to the children with the largest subtrees, which can
 * start forwarding earliest; ceil(log_k p) rounds cover all ranks.
 *
 * Cost (paper 003): T = T_bcast^sm
 *                      + ceil(log_k p) * (alpha + n*beta + l*gamma_{k-1}*ceil(n/s)).
 * Restriction: k >= 2 (k >= p is direct_read with one round). Any p, root, n.
 */
#include "coll/coll.h"

/* The digit weight (power of k) of v's lowest non-zero digit; for the root,
 * the smallest power of k that is >= p. */
static long kcoll_knomial_mask(long v, long k, long p)
{
    long m = 1;
    if (v == 0) {
        while (m < p)
            m *= k;
        return m;
    }
    while (v % (m * k) == 0)
        m *= k;
    return m;
}

kcoll_status_t kcoll_bcast_knomial(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const long k = a->prm.k >= 2 ? a->prm.k : 2, p = a->p;
    const long v = kcoll_rel(a, a->rank);
    const long mv = kcoll_knomial_mask(v, k, p);

    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    if (v != 0) {
        long digit = (v / mv) % k, parent = v - digit * mv;
        /* which round of the parent's serves this rank */
        long mp = kcoll_knomial_mask(parent, k, p);
        uint32_t round = 0;
        for (long m = mp / k; m > mv; m /= k)
            round++;
        kcoll_sched_wait(s, kcoll_abs(a, (int)parent), KCOLL_FLAG_DATA, 1 + round);
        kcoll_sched_read(s, kcoll_abs(a, (int)parent), KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0,
                         a->bytes);
    }
    kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    uint32_t round = 0;
    for (long m = mv / k; m >= 1; m /= k, round++) {
        for (long d = 1; d < k && v + d * m < p; d++)
            kcoll_sched_wait(s, kcoll_abs(a, (int)(v + d * m)), KCOLL_FLAG_DATA, 1);
        /* release the next round, also after an empty one (children of the
         * next round count rounds, not children); none after the last */
        if (m > 1)
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, 2 + round);
    }
    return s->err;
}
