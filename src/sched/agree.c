/* Agreement among the ranks of a team (see agree.h for the protocol). */
#include <inttypes.h>
#include <stdio.h>

#include "sched/agree.h"
#include "sched/wait.h"

static kcoll_status_t kcoll_agree_start(kcoll_xop_t *op, char *err, size_t errlen)
{
    (void)op;
    (void)err;
    (void)errlen;
    return KCOLL_OK; /* the vote is cast by the first test that may */
}

static kcoll_status_t kcoll_agree_test(kcoll_xop_t *op, char *err, size_t errlen)
{
    kcoll_agree_t *a = (kcoll_agree_t *)op;
    const kcoll_ctl_t *c = a->ctl;
    const uint64_t s = a->seq;

    if (!a->cast) {
        /* may this lane's vote and table be overwritten? */
        for (int q = 0; s > KCOLL_LANES && q < c->p; q++) {
            /* acquire: pairs with rank q's release of seen; its reads of the
             * previous agreement in this lane happen before our writes */
            if (atomic_load_explicit(&kcoll_ctl_lane(c, q, s)->seen.v, memory_order_acquire) <
                s - KCOLL_LANES) {
                op->peer = q;
                return KCOLL_IN_PROGRESS;
            }
        }
        kcoll_lane_t *mine = kcoll_ctl_lane(c, c->rank, s);
        if (a->fill)
            a->fill(a->ctx, kcoll_ctl_table(c, c->rank, s));
        /* relaxed: published by the release store of vote_seq below */
        atomic_store_explicit(&mine->vote, a->vote, memory_order_relaxed);
        /* release: publishes the vote value and this rank's table to whoever acquires vote_seq */
        atomic_store_explicit(&mine->vote_seq, s, memory_order_release);
        a->cast = 1;
    }
    for (; a->next < c->p; a->next++) {
        kcoll_lane_t *l = kcoll_ctl_lane(c, a->next, s);
        /* acquire: pairs with the voter's release of vote_seq; its vote and table become visible */
        uint64_t vs = atomic_load_explicit(&l->vote_seq, memory_order_acquire);
        if (vs > s) {
            snprintf(err, errlen,
                     "rank %d voted in collective %" PRIu64 " while this rank is in %" PRIu64,
                     a->next, vs, s);
            return KCOLL_ERR_PROTO;
        }
        if (vs < s) {
            op->peer = a->next;
            return KCOLL_IN_PROGRESS;
        }
        if (a->votes)
            /* relaxed: ordered by the acquire load of vote_seq above */
            a->votes[a->next] = atomic_load_explicit(&l->vote, memory_order_relaxed);
    }
    op->peer = -1;
    return KCOLL_OK;
}

void kcoll_agree_init(kcoll_agree_t *a, const kcoll_ctl_t *c, uint64_t seq, uint64_t vote,
                      void (*fill)(void *ctx, size_t *table), void *ctx, uint64_t *votes)
{
    a->op.name = "agree";
    a->op.peer = -1;
    a->op.start = kcoll_agree_start;
    a->op.test = kcoll_agree_test;
    a->ctl = c;
    a->seq = seq;
    a->vote = vote;
    a->fill = fill;
    a->ctx = ctx;
    a->votes = votes;
    a->cast = 0;
    a->next = 0;
}

void kcoll_agree_seen(const kcoll_ctl_t *c, uint64_t seq)
{
    /* release: this rank's reads of the lane's votes and tables of seq happen
     * before any peer, acquiring seen, overwrites them */
    atomic_store_explicit(&kcoll_ctl_lane(c, c->rank, seq)->seen.v, seq, memory_order_release);
}

kcoll_status_t kcoll_agree_run(kcoll_agree_t *a, char *err, size_t errlen)
{
    kcoll_pause_t pause;
    kcoll_watch_t watch;
    kcoll_pause_init(&pause);
    kcoll_watch_init(&watch);
    kcoll_status_t rc = a->op.start(&a->op, err, errlen);
    while (rc == KCOLL_OK && (rc = a->op.test(&a->op, err, errlen)) == KCOLL_IN_PROGRESS) {
        if ((rc = kcoll_watch(&watch, a->ctl, a->op.peer, a->seq, err, errlen)))
            break;
        kcoll_pause(&pause);
        rc = KCOLL_OK;
    }
    return rc;
}
