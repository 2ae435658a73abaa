/* The executor: runs one rank's schedule of one collective against the
 * team's control segment (its lane of the collective) and a transfer
 * engine. It keeps its place, so a schedule can be advanced in pieces:
 * a step that cannot proceed yet returns "in progress", and the next
 * call continues there. Blocking collectives loop; non-blocking ones are
 * advanced from the progress calls of the call layer (call/request.c). */
#ifndef KCOLL_EXEC_H
#define KCOLL_EXEC_H

#include "op/op.h"
#include "sched/ctl.h"
#include "sched/dmap.h"
#include "sched/sched.h"
#include "xfer/chan.h"
#include "xfer/engine.h"

typedef struct {
    const kcoll_ctl_t *ctl;
    /* the engine of every READ and WRITE (set by kcoll_exec_start) */
    const kcoll_engine_t *engine;
    const kcoll_sched_t *sched;
    void *bufs[KCOLL_NBUF];
    size_t lens[KCOLL_NBUF];  /* logical bytes */
    /* how each buffer's logical bytes lie in memory (NULL: contiguous; set
     * after kcoll_exec_start, which clears them), and the peers' maps read
     * so far (rmaps[peer * KCOLL_NBUF + buf]; freed by kcoll_exec_finish) */
    const kcoll_dmap_t *maps[KCOLL_NBUF];
    kcoll_dmap_t **rmaps;
    int nrmaps;
    kcoll_iovs_t liov, riov; /* a transfer's pieces, kept for the next one */
    kcoll_chan_xfer_t cx;    /* a two-sided transfer in flight (xfer/chan.h), */
    int cx_steps;            /*   of this many steps from pc on, */
    const kcoll_engine_t *cx_engine; /* through this engine */
    uint64_t moved[KCOLL_NENGINES]; /* bytes each engine moved in this run */
    uint64_t seq;       /* this collective's sequence number (>= 1): its lane and words */
    int pc;             /* next step to run */
    int xstarted;       /* pc of the EXTERN step whose operation has been started, or -1 */
    int xlive;          /* split host collectives started and not yet ended */
    int blocked_on;     /* team rank the last unfinished step waits for, or -1 */
    /* the flag word a WAIT step that could not proceed waits for, and the
     * word it must reach (NULL: the step waits for something else), for
     * waiting loops that sleep on it (sched/wait.h) */
    kcoll_line_t *blocked_line;
    uint64_t blocked_want;
    const kcoll_op_t *op;       /* REDUCE steps: the operation (NULL by kcoll_exec_start) */
    kcoll_xop_t *const *xops;   /* EXTERN steps: the operations (none by kcoll_exec_start) */
    int nxops;
    /* EXTERN steps naming host collectives: who runs them (NULL by
     * kcoll_exec_start: such a step fails) */
    const kcoll_xhost_t *xhost;
    void *xdata;
    char errmsg[256];   /* one line, set with an error status */
} kcoll_exec_t;

void kcoll_exec_start(kcoll_exec_t *x, const kcoll_ctl_t *c, const kcoll_engine_t *engine,
                      const kcoll_sched_t *s, void *const bufs[KCOLL_NBUF],
                      const size_t lens[KCOLL_NBUF], uint64_t seq);
/* Let go of what the run allocated (peers' maps, piece lists) and of a
 * two-sided transfer left in flight (a run that failed); x may be started
 * again. */
void kcoll_exec_finish(kcoll_exec_t *x);
/* Run steps until the schedule is done (KCOLL_OK), a step cannot proceed
 * yet (KCOLL_IN_PROGRESS) or fails (error, x->errmsg says why). Serves
 * this rank's exposures to the peers' two-sided transfers first. */
kcoll_status_t kcoll_exec_progress(kcoll_exec_t *x);
/* Run to completion, pausing and watching the awaited peer (sched/wait.h)
 * while it cannot proceed: for code that owns the whole team at that
 * moment (the unit tests, a team being set up). */
kcoll_status_t kcoll_exec_run(kcoll_exec_t *x);

#endif
