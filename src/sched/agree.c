/* Agreement among the ranks of a team (see agree.h for the protocol and
 * why two alternating slots are enough). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched/agree.h"
#include "sched/exec.h"

size_t *kcoll_agree_my_table(kcoll_team_t *t)
{
    return kcoll_team_table(t, t->rank, t->agree_seq + 1);
}

kcoll_status_t kcoll_agree(kcoll_team_t *t, uint64_t vote, uint64_t *votes, char *errmsg,
                           size_t errlen)
{
    const uint64_t a = ++t->agree_seq;
    kcoll_vote_t *mine = &t->slots[t->rank].vote[a % 2];
    /* relaxed: published by the release store of seq below */
    atomic_store_explicit(&mine->value, vote, memory_order_relaxed);
    /* release: publishes the vote value and this rank's table to whoever acquires seq a;
     * it also orders this rank's reads of agreement a-1 before any overwrite they enable */
    atomic_store_explicit(&mine->seq, a, memory_order_release);

    kcoll_waiter_t w;
    kcoll_waiter_init(&w);
    for (int q = 0; q < t->p; q++) {
        kcoll_vote_t *v = &t->slots[q].vote[a % 2];
        uint64_t s;
        /* acquire: pairs with rank q's release of seq; its vote and table become visible */
        while ((s = atomic_load_explicit(&v->seq, memory_order_acquire)) != a) {
            if (s > a) {
                snprintf(errmsg, errlen,
                         "rank %d is in agreement %" PRIu64 " while this rank is in %" PRIu64,
                         q, s, a);
                return KCOLL_ERR_PROTO;
            }
            kcoll_status_t rc = kcoll_waiter_pause(&w, t, q, t->seq + 1, errmsg, errlen);
            if (rc)
                return rc;
        }
        kcoll_waiter_reset(&w);
        if (votes)
            /* relaxed: ordered by the acquire load of seq above */
            votes[q] = atomic_load_explicit(&v->value, memory_order_relaxed);
    }
    return KCOLL_OK;
}

const kcoll_layout_t *kcoll_agree_layouts(kcoll_team_t *t)
{
    if (!t->layouts) {
        t->layouts = calloc((size_t)t->p, sizeof(kcoll_layout_t));
        if (!t->layouts)
            return NULL;
    }
    kcoll_layout_t *lay = t->layouts;
    const size_t p = (size_t)t->p;
    for (int q = 0; q < t->p; q++) {
        const size_t *tab = kcoll_team_table(t, q, t->agree_seq);
        lay[q].scount = tab;
        lay[q].sdispl = tab + p;
        lay[q].rcount = tab + 2 * p;
        lay[q].rdispl = tab + 3 * p;
    }
    return lay;
}
