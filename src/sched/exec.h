/* The executor: runs one rank's schedule against the team's control
 * segment and the transfer engines. It keeps its place, so a schedule can
 * be advanced in pieces (non-blocking collectives later). */
#ifndef KCOLL_EXEC_H
#define KCOLL_EXEC_H

#include "core/team.h"
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
} kcoll_exec_t;

void kcoll_exec_start(kcoll_exec_t *x, kcoll_team_t *t, const kcoll_sched_t *s,
                      void *const bufs[KCOLL_NBUF], const size_t lens[KCOLL_NBUF], uint64_t seq);
/* Run steps until the schedule is done (KCOLL_OK), a step cannot proceed
 * yet (KCOLL_IN_PROGRESS) or fails (error, x->errmsg says why). */
kcoll_status_t kcoll_exec_progress(kcoll_exec_t *x);
/* Run to completion: poll, then yield the core; notice a dead peer. */
kcoll_status_t kcoll_exec_run(kcoll_exec_t *x);

#endif
