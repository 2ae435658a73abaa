/* Waiting on peers: how a waiting rank spends its time, and the watchdog
 * that turns a dead peer into an error (DESIGN.md section 4).
 *
 * A pause spins KCOLL_SPIN polls, then yields the core (sched_yield), and
 * after 50 ms of waiting takes short naps: jobs are often oversubscribed,
 * and a spinning waiter must not starve the process it waits for.
 *
 * A watch belongs to one collective: whenever it makes no headway it
 * calls kcoll_watch, which every KCOLL_PEER_CHECK_MS checks that the peer
 * it waits for is alive (a zombie counts as dead), and up to 8 of the
 * team's other ranks in turn (a live peer may never arrive because a third
 * rank died: every rank is needed), and after
 * KCOLL_WAIT_WARN_MS warns once, naming the live peer that does not
 * arrive. Headway resets it. For its first KCOLL_SPIN idle calls it does
 * nothing at all, not even read the clock: most waits end within them.
 * Pauses and watches are separate because one waiting loop may advance
 * several collectives, each with its own peer.
 */
#ifndef KCOLL_SCHED_WAIT_H
#define KCOLL_SCHED_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "sched/ctl.h"

typedef struct {
    int64_t spin, polls, nap_after;
} kcoll_pause_t;

void kcoll_pause_init(kcoll_pause_t *p);
/* Something moved: the next pause starts a fresh wait. */
void kcoll_pause_reset(kcoll_pause_t *p);
/* One pause of a waiting loop. */
void kcoll_pause(kcoll_pause_t *p);
/* The end of one round of a waiting loop: a fresh wait if something
 * moved, else a pause. */
static inline void kcoll_pause_unless(kcoll_pause_t *p, int moved)
{
    if (moved)
        kcoll_pause_reset(p);
    else
        kcoll_pause(p);
}

typedef struct {
    int64_t check_ns, warn_ns, quiet;
    int64_t start, last_check;
    int64_t idle; /* calls without headway */
    uint64_t sweep; /* the next other rank a check looks at */
    int warned;
} kcoll_watch_t;

void kcoll_watch_init(kcoll_watch_t *w);
/* Headway: the next idle call starts a fresh wait. */
void kcoll_watch_reset(kcoll_watch_t *w);
/* The collective seq of team c made no headway while waiting for team
 * rank `peer` (-1: nobody in particular). KCOLL_OK, or
 * KCOLL_ERR_PEER_DEAD with a one-line reason in err. */
kcoll_status_t kcoll_watch(kcoll_watch_t *w, const kcoll_ctl_t *c, int peer, uint64_t seq,
                           char *err, size_t errlen);

#endif
