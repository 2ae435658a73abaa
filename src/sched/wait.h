/* Waiting on peers: how a waiting rank spends its time, and the watchdog
 * that turns a dead peer into an error (DESIGN.md section 4).
 *
 * A pause spins KCOLL_SPIN polls, then yields the core (sched_yield), and
 * after 50 ms of waiting takes short naps: a spinning waiter must not
 * starve the process it waits for.
 *
 * Crowded nodes. When the ranks of a team outnumber the cores they may
 * run on (the union of their CPU affinity masks, found when the team is
 * set up, or KCOLL_CORES), the process it waits for may well be waiting
 * for this waiter's core. Then a pause gives the core away at once: it
 * yields without spinning. A waiter that knows the flag word it waits for
 * (kcoll_pause_on) and has waited KCOLL_SLEEP_AFTER_NS sleeps in the
 * kernel on that word (futex) until its owner stores a new value with
 * kcoll_flag_store, which wakes it: off the run queue, where
 * a yielding waiter keeps coming back to take its share of the core. Short
 * waits only yield: waking a sleeper costs an inter-processor interrupt,
 * which in a virtual machine costs more than the wait (measured at 4 and
 * 8 ranks on 2 cores: sleeping at once made 64 KiB Bcasts 2-3x slower;
 * docs/benchmarks.md "Crowded nodes"). A sleep also ends after
 * KCOLL_SLEEP_NS, so that the watch keeps checking the peer, and a lost
 * wake-up could only ever cost that long. A rank of a team whose engine is
 * two-sided (shm, vmsplice: xfer/chan.h) never sleeps on a flag: its peers'
 * requests ring its doorbell, another word, and it must serve them while
 * it waits, so it only yields.
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

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "sched/ctl.h"

/* ---- crowding: more ranks than cores ---- */

/* The cores a team of `ranks` processes on `cores` CPUs (0: unknown)
 * is crowded on (KCOLL_CORES, if set, replaces the cores), or 0 when it is
 * not: more ranks than cores. */
int kcoll_wait_crowd_cores(int ranks, int cores);
/* This process is crowded, on `cores` cores (0: no news). The team set-up
 * agrees on the value first (the fewest cores any rank of the team found,
 * team/team.c), so every rank of a team, and so of the node's first team,
 * MPI_COMM_WORLD's, which has all of the node's ranks, holds the same: the
 * cost model prices alike on every rank, and a process that is not
 * crowded has no sleeping peers to wake (kcoll_flag_store). The first
 * note stays (a later team is part of the first one). */
void kcoll_wait_crowd_note(int cores);
/* relaxed: settings read by waiters, flag stores and the cost model; set
 * while a team is set up, before any collective runs on it */
extern _Atomic int kcoll_wait_crowded_now;
/* Does this process give its core away at once when it waits? */
static inline int kcoll_wait_crowded(void)
{
    /* relaxed: see the declaration */
    return atomic_load_explicit(&kcoll_wait_crowded_now, memory_order_relaxed);
}
/* The cores the ranks of a crowded node share (what the cost model
 * prices with); 0 when not crowded. */
int kcoll_wait_cores(void);

/* ---- pauses ---- */

typedef struct {
    int64_t spin, polls, nap_after;
    int64_t since; /* kcoll_pause_on: when the wait began (0: not yet timed) */
    int64_t slept, woken; /* sleeps on a flag word, and those the owner's store ended */
    int crowded;   /* kcoll_wait_crowded() when the wait began */
} kcoll_pause_t;

void kcoll_pause_init(kcoll_pause_t *p);
/* Something moved: the next pause starts a fresh wait. */
void kcoll_pause_reset(kcoll_pause_t *p);
/* One pause of a waiting loop. */
void kcoll_pause(kcoll_pause_t *p);
/* Work a long wait does now and then (every 16th pause once the spinning
 * is over): the layer above advances the host MPI's own pending
 * operations there (mpi/progress.c). Set once at start-up. */
void kcoll_wait_idle_set(void (*fn)(void));
/* One pause of a waiting loop that waits for the flag word line->v to
 * reach want (line NULL: nothing in particular, as kcoll_pause). Crowded,
 * it yields, and once the wait has lasted KCOLL_SLEEP_AFTER_NS sleeps until
 * the word changes (at most KCOLL_SLEEP_NS); otherwise as kcoll_pause. */
void kcoll_pause_on(kcoll_pause_t *p, kcoll_line_t *line, uint64_t want);

/* Longest sleep of kcoll_pause_on, and how long a crowded wait yields
 * before it sleeps. */
#define KCOLL_SLEEP_NS 2000000
#define KCOLL_SLEEP_AFTER_NS 1000000

/* Wakes every process asleep on line->v (kcoll_flag_store does it when
 * needed). */
void kcoll_wake_all(kcoll_line_t *line);
/* The owner of line stores `word` into its flag line->v and wakes whoever
 * sleeps on it. Every store into a flag word that peers may wait for goes
 * through here; on a crowded node it costs what a sequentially consistent
 * store costs (one locked instruction on x86) and a load when nobody
 * sleeps, elsewhere a plain store. */
static inline void kcoll_flag_store(kcoll_line_t *line, uint64_t word)
{
    if (!kcoll_wait_crowded()) {
        /* release: everything this rank wrote before, the data of the
         * collective included, is visible to a peer that acquires v. No
         * peer sleeps: every rank of a node is crowded or none is
         * (kcoll_wait_crowd_note), and only crowded ranks sleep. A plain
         * store lets this rank go on while the line travels; the locked
         * store below would wait for it (0.04-0.05 us per Barrier). */
        atomic_store_explicit(&line->v, word, memory_order_release);
        return;
    }
    /* seq_cst: a release (everything this rank wrote before, the data of
     * the collective included, is visible to a peer that acquires v), and
     * ordered before the load of sleepers below, as the sleeper's seq_cst
     * increment of sleepers is before its seq_cst load of v
     * (kcoll_pause_on): either the sleeper sees the new v and does not
     * sleep, or this load sees the sleeper and wakes it */
    atomic_store_explicit(&line->v, word, memory_order_seq_cst);
    /* seq_cst: see above */
    if (atomic_load_explicit(&line->sleepers, memory_order_seq_cst))
        kcoll_wake_all(line);
}
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
