/* The team's internal barrier: the dissemination schedule run by the
 * executor as a collective of its own, outside any MPI call, for code
 * that needs all ranks of a team to meet (see coll.h). */
#include <stdio.h>

#include "coll/coll.h"
#include "core/team.h"
#include "sched/exec.h"

kcoll_status_t kcoll_team_barrier(struct kcoll_team *t, char *errmsg, size_t errlen)
{
    kcoll_args_t a = {.coll = KCOLL_COLL_BARRIER, .p = t->p, .rank = t->rank};
    void *bufs[KCOLL_NBUF] = {NULL, NULL, NULL};
    size_t lens[KCOLL_NBUF] = {0, 0, 0};
    kcoll_exec_t x;

    kcoll_sched_reset(&t->sched);
    kcoll_status_t st = kcoll_barrier_dissemination(&a, &t->sched);
    if (st != KCOLL_OK) {
        snprintf(errmsg, errlen, "building the barrier failed (out of memory?)");
        return st;
    }
    kcoll_exec_start(&x, t, &t->sched, bufs, lens, ++t->seq);
    st = kcoll_exec_run(&x);
    if (st != KCOLL_OK)
        snprintf(errmsg, errlen, "%s", x.errmsg);
    return st;
}
