/* Sharing a few numbers among the ranks of a team (see share.h). */
#include <string.h>

#include "sched/share.h"
#include "sched/wait.h"

kcoll_status_t kcoll_share(const kcoll_ctl_t *c, uint64_t ticket,
                           const float mine[KCOLL_SHARE_VALS], float *all, int (*poll)(void),
                           char *err, size_t errlen)
{
    const int half = (int)(ticket % 2);
    kcoll_slot_t *own = &c->slots[c->rank];
    if (mine)
        memcpy(own->share_val[half], mine, sizeof own->share_val[half]);
    /* release (kcoll_flag_store): the values above are visible to a peer
     * that acquires the ticket; wakes a peer asleep on the word */
    kcoll_flag_store(&own->share, ticket);
    kcoll_pause_t pause;
    kcoll_watch_t watch;
    kcoll_pause_init(&pause);
    kcoll_watch_init(&watch);
    for (int q = 0; q < c->p; q++) {
        kcoll_slot_t *s = &c->slots[q];
        /* acquire: pairs with rank q's release of its ticket; its values
         * of this sharing are visible below */
        while (atomic_load_explicit(&s->share.v, memory_order_acquire) < ticket) {
            const int moved = poll ? poll() : 0;
            /* no collective number can be UINT64_MAX: this wait is not one
             * of a collective a peer could have given up */
            kcoll_status_t st = kcoll_watch(&watch, c, q, UINT64_MAX, err, errlen);
            if (st != KCOLL_OK)
                return st;
            if (moved)
                kcoll_pause_reset(&pause);
            else
                kcoll_pause_on(&pause, &s->share, ticket);
        }
        kcoll_watch_reset(&watch);
        if (all)
            memcpy(all + (size_t)q * KCOLL_SHARE_VALS, s->share_val[half],
                   sizeof s->share_val[half]);
    }
    return KCOLL_OK;
}
