/* A team: the processes of one communicator on this node, the control
 * segment through which they synchronize (sched/ctl.h), the transfer
 * engine they agreed on, and what the call layer keeps per team between
 * calls: the collective sequence number, which request occupies each lane,
 * the decisions cache, and a pool of request objects with their memory.
 *
 * Set-up is collective and MPI-free: the host MPI lends two collectives
 * (kcoll_team_host_t), and everything else is shared memory and the
 * engines' own probes. A team lives as long as its communicator holds it
 * and any request on it is not finished (a reference count): MPI lets a
 * program free a communicator while non-blocking collectives on it are
 * still running.
 */
#ifndef KCOLL_TEAM_H
#define KCOLL_TEAM_H

#include <pthread.h>
#include <stdint.h>

#include "base/status.h"
#include "coll/levels.h"
#include "model/select.h"
#include "sched/ctl.h"
#include "sched/sched.h"
#include "xfer/engine.h"

struct kcoll_req; /* the call layer's request (call/request.h) */

/* A built schedule kept for calls of the same shape (call/request.c says
 * what the key holds): a program that repeats a collective runs the same
 * steps without building them again, as paper 000's persistent regions
 * are registered once and used many times. Read-only while in use. */
#define KCOLL_SCHED_CACHE 8
typedef struct {
    uint64_t key[8];
    int valid;
    int users;            /* requests running it now: not replaced meanwhile */
    kcoll_sched_t sched;
} kcoll_sched_entry_t;

/* The call layer's memo of one collective's last call that went to the
 * host MPI before any agreement (call/call.c says what the key holds and
 * why a repeat may skip deciding again): the key, and what deciding found. */
#define KCOLL_MEMO_WORDS 12
typedef struct {
    uint64_t key[KCOLL_MEMO_WORDS]; /* all 0: empty */
    /* a v side's arrays (MPI_Reduce_scatter's counts, MPI_Allgatherv's
     * counts and displacements), compared whole beside the key: vn arrays
     * back to back, vlen bytes in all, at vcounts (owned; 0: none) */
    void *vcounts;
    size_t vlen;
    int vn;
    size_t bytes;                   /* counted with the statistics */
    size_t policy_bytes;            /* the size the selector read */
    int why;                        /* the reason (the call layer's kcoll_reason_t) */
    /* the selector decided: the decision cache entry dkey said `result`,
     * the call did (repeat) or did not repeat last[] of its collective */
    int selected, repeat, dkey, result;
} kcoll_memo_t;

/* The call layer's host streak of a collective that decides after an
 * agreement (call/call.c): its next `left` blocking calls with this root,
 * in parameter generation gen, go to the host MPI for reason `why`
 * without agreeing; `next`: the length of the streak the next host
 * agreement starts (0: no streak since the last agreement that ran the
 * call in kcoll). */
typedef struct {
    uint32_t left, next;
    int root, why;
    uint64_t gen;
} kcoll_streak_t;

typedef struct kcoll_team {
    kcoll_ctl_t ctl;              /* p, rank, slots, pids, the channel */
    const kcoll_engine_t *engine; /* the transfers' engine, agreed at set-up */
    unsigned engines;             /* every engine the team can use (KCOLL_ENGINE_BIT) */
    int forced;                   /* KCOLL_ENGINE at set-up: an engine id, or -1 (auto) */
    size_t percall_bytes;         /* bounce cells held for calls on shm (KCOLL_SHM_PERCALL) */
    uint64_t seq;                 /* number of the last collective started */
    /* the request running in each lane, and the next collective number
     * each lane admits (lanes are used in sequence order) */
    struct kcoll_req *lane[KCOLL_LANES];
    uint64_t lane_next[KCOLL_LANES];
    /* calls across nodes (call/request.c): every collective numbered below
     * xturn has started all its host collectives (or has none, or is over);
     * collective xturn alone may start one now */
    uint64_t xturn;
    kcoll_decisions_t decisions;
    uint64_t share_ticket;        /* sharings through the segment so far (sched/share.h) */
    /* the previous call of each collective that the call layer looked at
     * (its size as the selector reads it, its root): the same again is
     * estimated to find its data in cache (call/call.c) */
    struct {
        size_t bytes;
        int root, valid;
    } last[KCOLL_NCOLL];
    kcoll_memo_t memo[KCOLL_NCOLL];
    /* the host streak of each collective that decides after an agreement */
    kcoll_streak_t streak[KCOLL_NCOLL];
    kcoll_levels_t levels;        /* topology groups of the ranks (flat until set) */
    kcoll_sched_entry_t scache[KCOLL_SCHED_CACHE];
    unsigned scache_next;         /* the entry a miss replaces next (if unused) */
    struct kcoll_req *pool;       /* finished requests kept with their memory */
    int refs;                     /* the communicator's, one per unfinished request or plan */
    pthread_mutex_t lock;         /* all of the above, when threads call MPI at once */
} kcoll_team_t;

/* What set-up needs from the host MPI: two blocking collectives over the
 * team's processes, returning 0 on success. */
typedef struct {
    void *ctx;
    int (*allmin)(void *ctx, int *values, int n); /* in place: element-wise minimum */
    int (*bcast0)(void *ctx, void *buf, size_t len); /* from team rank 0 */
} kcoll_team_host_t;

/* Set up the team of p processes (this one is `rank`), collectively: every
 * process calls it at the same point, and all get the same answer.
 *  1. Rank 0 creates the control segment with shm_open (mode 0600, a name
 *     made of its pid, a counter and random bits, O_EXCL), sizes and maps
 *     it and broadcasts the name; the others open and map it.
 *  2. All agree that everyone attached; rank 0 then unlinks the name at
 *     once, so nothing is left in /dev/shm even if a rank is killed later:
 *     the memory lives exactly as long as some process maps it.
 *  3. The engines (KCOLL_ENGINE, docs/engines.md): shm works wherever the
 *     segment does. For cma (auto, cma, direct) every process lets its
 *     peers reach it, really reads a word of its right neighbour's private
 *     memory through it, and all agree on the outcome. The team's engine
 *     is the forced one, else cma where it works, else shm. An auto team
 *     on cma also makes its bounce cells resident where the budget
 *     KCOLL_SHM_PERCALL allows on every rank, and then lets the model run
 *     single calls on shm (decisions.percall).
 * Returns KCOLL_OK; KCOLL_ERR_PERM when the forced engine cannot run here;
 * another error when the segment could not be set up (with a warning
 * line). Where cma does not work, the lowest failing rank prints one
 * warning line per process naming the cause, the fix and what kcoll does
 * instead (two copies; with KCOLL_ENGINE=cma, the host MPI). On error
 * nothing is left mapped. */
kcoll_status_t kcoll_team_setup(kcoll_team_t *t, int p, int rank, const kcoll_team_host_t *h);

/* The team's topology levels from every rank's raw ids (ids[l * p + q],
 * nraw candidate levels, as kcoll_levels_make takes them): identical on
 * every rank, set once after set-up, before any collective. */
void kcoll_team_set_levels(kcoll_team_t *t, int nraw, const int *ids);

/* One more holder. */
/* A team set up while the program's calls on its communicator went on
 * (mpi/teams.c: its set-up ran in later calls, each rank at its own pace)
 * is turned on at one call, the same on every rank: the first call after
 * every call any rank handed to the host before all were done. Calls are
 * numbered alike on every rank (1, 2, ... from the call that began the
 * set-up). done: this rank's set-up has just finished, and its calls up
 * to `call` went to the host (returns 0). Otherwise: may call `call` run
 * on the team? 1 (then every later call may), or 0: the host's (and,
 * while some rank is not done, recorded as such). One word of the
 * segment holds both counts, changed only by compare-and-swap, so the
 * ranks see its changes in one order: once all are done it changes no
 * more, and every rank reads the same call from it. */
int kcoll_team_turn(kcoll_team_t *t, uint64_t call, int done);
/* Is every rank done (the word is final)? */
int kcoll_team_turn_final(const kcoll_team_t *t);
void kcoll_team_ref(kcoll_team_t *t);
/* One holder less; the last one calls release (which frees what the call
 * layer keeps on the team: its pool), unmaps the segment and frees t. */
void kcoll_team_unref(kcoll_team_t *t, void (*release)(kcoll_team_t *t));

/* Locking, only when several threads may call MPI at once
 * (kcoll_team_threads). */
extern int kcoll_team_threads;
static inline void kcoll_team_lock(kcoll_team_t *t)
{
    if (kcoll_team_threads)
        pthread_mutex_lock(&t->lock);
}
static inline void kcoll_team_unlock(kcoll_team_t *t)
{
    if (kcoll_team_threads)
        pthread_mutex_unlock(&t->lock);
}

#endif
