/* The executor: runs one rank's schedule against the team's control
 * segment and the transfer engines. It keeps its place, so a schedule can
 * be advanced in pieces (non-blocking collectives later). */
#ifndef KCOLL_EXEC_H
#define KCOLL_EXEC_H

#include "core/team.h"
#include "op/op.h"
#include "sched/sched.h"

typedef struct {
    kcoll_team_t *team;
    const kcoll_sched_t *sched;
    void *bufs[KCOLL_NBUF];
    size_t lens[KCOLL_NBUF];
    uint64_t seq;       /* this collective's sequence number (>= 1) */
    int pc;             /* next step to run */
    int blocked_on;     /* team rank the last unfinished step waits for, or -1 */
    char errmsg[256];   /* one line, set with an error status */
    const kcoll_op_t *op; /* REDUCE steps: the operation (NULL by kcoll_exec_start) */
} kcoll_exec_t;

void kcoll_exec_start(kcoll_exec_t *x, kcoll_team_t *t, const kcoll_sched_t *s,
                      void *const bufs[KCOLL_NBUF], const size_t lens[KCOLL_NBUF], uint64_t seq);
/* Run steps until the schedule is done (KCOLL_OK), a step cannot proceed
 * yet (KCOLL_IN_PROGRESS) or fails (error, x->errmsg says why). */
kcoll_status_t kcoll_exec_progress(kcoll_exec_t *x);
/* Run to completion: poll, then yield the core; notice a dead peer. */
kcoll_status_t kcoll_exec_run(kcoll_exec_t *x);

/* The waiting policy of kcoll_exec_run, for other waits on peers
 * (sched/agree.c): spin KCOLL_SPIN polls, then yield, then short sleeps;
 * every KCOLL_PEER_CHECK_MS check that the awaited peer lives, and warn
 * once after KCOLL_WAIT_WARN_MS. */
typedef struct {
    int64_t spin, check_ns, warn_ns;
    int64_t polls, wait_start, last_check;
    int warned;
} kcoll_waiter_t;

void kcoll_waiter_init(kcoll_waiter_t *w);
/* Something moved: the next pause starts a fresh wait. */
void kcoll_waiter_reset(kcoll_waiter_t *w);
/* One pause while waiting for team rank `peer` in collective seq. Returns
 * KCOLL_OK, or KCOLL_ERR_PEER_DEAD with a one-line reason in errmsg. */
kcoll_status_t kcoll_waiter_pause(kcoll_waiter_t *w, const kcoll_team_t *t, int peer,
                                  uint64_t seq, char *errmsg, size_t errlen);

#endif
