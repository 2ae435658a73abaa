/* Decisions that check themselves where they run (docs/adapt.md).
 *
 * The cost model decides between kcoll's algorithms and the host MPI from
 * prices measured on some machine; on another the crossover moves (a
 * system call or a flag round trip costs more there), and a call kcoll
 * takes can then be slower than the host alone. So a decision the model
 * made (not a forced algorithm) is checked by measurement where it runs,
 * in the manner of STAR-MPI's run-time selection (Faraj, Yuan and
 * Lowenthal, ICS 2006): the blocking calls of one pattern (collective,
 * communicator, size class, cache state: one entry of the team's decision
 * cache), once KCOLL_ADAPT_SETTLE of them have run (KCOLL_ADAPT_SETTLE_LARGE
 * of a quarter MiB or more), time the model's choice
 * and then its runner-up of the other kind (the host MPI for one of
 * kcoll's algorithms, kcoll's best for the host), KCOLL_ADAPT_CALLS calls
 * each (adapt.c lists the calls of a check). The ranks line up before each timed call and every rank times its
 * own. At the next call of the pattern every rank shares its times through
 * the team's control segment (sched/share.h: no MPI message) and every
 * rank computes the same numbers: each call's completion (its time on the
 * slowest rank), and their median per candidate without its spikes
 * (KCOLL_ADAPT_SPIKE), as kcoll-bench measures.
 * kcoll's side then runs where its median is lower than the host's by more
 * than KCOLL_ADAPT_MARGIN and KCOLL_ADAPT_MARGIN_S, the host's otherwise
 * (ties are the host's: kcoll_adapt_winner), and the decision is kept. Every rank counts the
 * calls of a pattern alike (MPI orders a communicator's collectives alike
 * on every rank), so all switch at the same call, whatever each measured.
 * After KCOLL_ADAPT_RECHECK calls of a kept decision it is checked again.
 *
 * Non-blocking and persistent calls are not timed (their start and
 * completion are the program's); they run what the pattern runs now.
 * Patterns larger than KCOLL_ADAPT_MAX_BYTES are not checked (a try of the
 * slower side costs most there). KCOLL_ADAPT=0 turns the checks off.
 */
#ifndef KCOLL_CALL_ADAPT_H
#define KCOLL_CALL_ADAPT_H

#include <stdatomic.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/params.h"
#include "call/request.h"

enum {
    KCOLL_ADAPT_NEW = 0, /* not looked at yet (the decision was just made) */
    KCOLL_ADAPT_TRY,     /* being checked: settling, then timing each side */
    KCOLL_ADAPT_SET,     /* decided; counting calls to the next check */
    KCOLL_ADAPT_OFF      /* not checked (no runner-up, too large, off) */
};

/* How much faster kcoll's side must be than the host's to run: by this
 * fraction of the host's time, closer times being noise, which the host
 * wins; ... */
#define KCOLL_ADAPT_MARGIN 0.03
/* ... and by this many seconds. A check lines the ranks up before each
 * timed call, so every call starts with all ranks there; after a host
 * barrier (kcoll-bench, OSU's loops) or in a program the ranks arrive
 * apart, and a rooted host call's message is often sent before its
 * receiver comes: the check read the host 0.3-0.6 us slower than
 * kcoll-bench did (MPICH 4.0.2's 8 KiB Bcast 2.15-2.42 us against 1.95,
 * MPICH 5.0.2's 4 KiB Scatter 2.2-2.4 against 1.5-1.9, on-cache), enough
 * to hand kcoll calls it then ran at 0.7-0.8x. */
#define KCOLL_ADAPT_MARGIN_S 0.25e-6
/* Calls of a pattern that run the model's choice before its first check
 * begins: the program, and the host's own set-up for the size, settle.
 * From KCOLL_ADAPT_WARM_BYTES (a size class of a quarter MiB or more) a
 * call is long beside what settles, and a program makes fewer of them: a
 * lead of 64 calls of 16 MiB is seconds, and a program of fifty such
 * calls would never see its pattern checked (nor kcoll-bench's table, a
 * mix of both sides, its checked decision); there the lead is
 * KCOLL_ADAPT_SETTLE_LARGE calls, which take the first touch of the
 * buffers and the schedule's build. */
#define KCOLL_ADAPT_SETTLE 64
#define KCOLL_ADAPT_SETTLE_LARGE 8
/* A first check of a pattern below KCOLL_ADAPT_WARM_BYTES (its size class,
 * as the lead's) warms its runner-up with untimed calls before timing it
 * (larger ones, and the Barrier: one call):
 * KCOLL_ADAPT_WARM_HOST of them where the runner-up is the host MPI. A
 * host's first calls of a size can be many times slower than its later
 * ones, and for more calls than the choice's settling: MPICH 4.0.2's 8 KiB
 * Bcast at 2 ranks takes 8-20 us for its first 64 calls and 2 us after,
 * but 64 warm-up calls right after 72 calls of kcoll's split_rw still
 * left half of its 8 timed calls at 8-17 us (the check kept split_rw,
 * 2.8 us a call where the host takes 2.3). With 128 it times the warmed
 * host. ... */
#define KCOLL_ADAPT_WARM_BYTES (256u * 1024)
#define KCOLL_ADAPT_WARM_HOST 128
/* ... where it is kcoll's own algorithm, with this many: its first call
 * builds the schedule and touches the scratch. 64 calls of it (most often
 * the slower side below a few KiB) cost a program's first 1000 calls up
 * to 18%; with 8 its timed calls read some 15% slower than after 64
 * (docs/adapt.md), which can only keep the host where the two are that
 * close: never slower than the host, a later gain lost at most. */
#define KCOLL_ADAPT_WARM_KCOLL 8

/* r's decision s, just taken from its team's cache (the caller holds the
 * team's lock): the check's turn. Sets r's choice to the candidate this
 * call runs and returns its result; *share is set when this call closes a
 * check (then call kcoll_adapt_share without the lock). A timed call is
 * remembered until kcoll_adapt_end. */
kcoll_select_t kcoll_adapt_select(kcoll_req_t *r, kcoll_select_t s, int *share);
/* A call of a check slower than this many times its side's fastest is a
 * spike, left out of the side's median: what it says is not about the
 * calls after the check. A rank taken off its core, or a host's own
 * housekeeping while it warms up: Intel MPI 2021.14's 8 B Allgather at 2
 * ranks takes 14-70 us in one call of every 4-8 of its first 512 (with or
 * without a barrier between them) and 0.5-1.6 us in the others and every
 * call after; four of a check's 8 timed calls of it read 13-40 us, their
 * median 8-14 us against kcoll's ring_neighbor at 3.3, and the check
 * handed the pattern to kcoll for good, while Intel MPI's steady time is
 * 1.1 us. Spike-free, the host reads 1.2-1.4 us and keeps it. */
#define KCOLL_ADAPT_SPIKE 4.0
/* The median of a side's n completion times without its spikes (the
 * fastest always counts); sorts t in place. 0 for none. */
double kcoll_adapt_typical(double *t, int n);
/* A check's outcome from the two sides' median completion times in
 * seconds (med[0] the model's choice, med[1] its runner-up; host: which
 * of them is the host MPI): the side that runs from then on. */
int kcoll_adapt_winner(const double med[2], int host);
/* The key of r's decision in its team's decision cache (its pattern). */
int kcoll_adapt_key(const kcoll_req_t *r);
/* After the team's lock is dropped: a timed call begins (the ranks line
 * up through the control segment, then the clock starts; for tests,
 * KCOLL_TEST_ADAPT_SLOW's rank waits there in calls of a decision's own
 * choice). 0, or -1 with r->errmsg when a peer is gone. */
int kcoll_adapt_begin(kcoll_req_t *r);
/* The closing call of a check: share, decide, and set r's choice. Returns
 * the result, or -1 with r->errmsg when a peer is gone. */
int kcoll_adapt_share(kcoll_req_t *r);

/* Is decision key `key` of a size class from KCOLL_ADAPT_WARM_BYTES? (A
 * call of no size, the Barrier's, is of class 64: KCOLL_BYTES_UNKNOWN.) */
static inline int kcoll_adapt_large(int key)
{
    const int c = kcoll_decision_class(key);
    return c > 0 && c < 64 && ((size_t)1 << (c - 1)) >= KCOLL_ADAPT_WARM_BYTES;
}
/* The calls of a check that run the decision's own choice untimed before
 * the first timed one (adapt.c): KCOLL_ADAPT_SETTLE on a first check
 * (KCOLL_ADAPT_SETTLE_LARGE from KCOLL_ADAPT_WARM_BYTES), 1 on a check
 * again. */
static inline uint32_t kcoll_adapt_lead(const kcoll_decisions_t *d, int slot)
{
    return d->e[slot].again                ? 1
           : kcoll_adapt_large(d->e[slot].key) ? KCOLL_ADAPT_SETTLE_LARGE
                                               : KCOLL_ADAPT_SETTLE;
}
/* The runner-up's untimed calls of a check before its first timed one
 * (adapt.c): on a first check below KCOLL_ADAPT_WARM_BYTES,
 * KCOLL_ADAPT_WARM_HOST where it is the host MPI, KCOLL_ADAPT_WARM_KCOLL
 * where it is kcoll's; 1 from KCOLL_ADAPT_WARM_BYTES, for a call of no
 * size and on a check again. */
static inline uint32_t kcoll_adapt_warm(const kcoll_decisions_t *d, int slot)
{
    const __typeof__(d->e[0]) *e = &d->e[slot];
    return e->again || kcoll_decision_class(e->key) >= 64 || kcoll_adapt_large(e->key) ? 1
           : e->alt_result == KCOLL_SELECT_KCOLL ? KCOLL_ADAPT_WARM_KCOLL
                                                 : KCOLL_ADAPT_WARM_HOST;
}
/* Is a call of the decision in entry slot, the next one, one of such a
 * lead? It runs the choice, as a decided pattern's calls run theirs, so
 * the memo and the shortcut may take it (the calls they take are counted,
 * and the one after the lead goes through the selection again on every
 * rank alike: it is timed). */
static inline int kcoll_adapt_leading(const kcoll_decisions_t *d, int slot)
{
    return d->e[slot].phase == KCOLL_ADAPT_TRY && d->e[slot].calls < kcoll_adapt_lead(d, slot);
}

/* A blocking call that repeats a decision without deciding (the call
 * layer's memo) counts as a call of it: slot is the decision's entry.
 * Returns 0 where the memo must not be used (the decision is being
 * checked, past its lead). Inline: it is on the path of every remembered
 * call. */
static inline int kcoll_adapt_memo(kcoll_decisions_t *d, int slot)
{
    __typeof__(d->e[0]) *e = &d->e[slot];
    if (e->phase == KCOLL_ADAPT_OFF)
        return 1;
    if (kcoll_adapt_leading(d, slot)) {
        e->calls++;
        return 1;
    }
    if (e->phase != KCOLL_ADAPT_SET)
        return 0;
    const int64_t every = kcoll_param_int(KCOLL_P_ADAPT_RECHECK);
    if (every > 0 && ++e->calls >= (uint64_t)every) { /* the next call checks again */
        e->phase = KCOLL_ADAPT_TRY;
        e->calls = 0;
        e->n[0] = e->n[1] = 0;
    }
    return 1;
}
/* Blocking calls of the decision in entry slot that may still repeat it
 * without the call layer seeing them (the shortcut, call/shortcut.h):
 * those left of a check's lead while it is being checked, those before
 * the call that starts its next check when it is decided, at most `most`. */
static inline uint64_t kcoll_adapt_calls_left(const kcoll_decisions_t *d, int slot, uint64_t most)
{
    const __typeof__(d->e[0]) *e = &d->e[slot];
    const int64_t every = kcoll_param_int(KCOLL_P_ADAPT_RECHECK);
    if (e->phase == KCOLL_ADAPT_OFF || (e->phase == KCOLL_ADAPT_SET && every <= 0))
        return most;
    uint64_t left = 0;
    if (kcoll_adapt_leading(d, slot))
        left = kcoll_adapt_lead(d, slot) - e->calls; /* the call after them is timed */
    else if (e->phase == KCOLL_ADAPT_SET && e->calls + 1 < (uint64_t)every)
        left = (uint64_t)every - 1 - e->calls; /* the call reaching `every` checks */
    return left < most ? left : most;
}
/* n such calls were made: counted as kcoll_adapt_memo counts them (if
 * entry slot still holds decision key, decided or in its lead). */
static inline void kcoll_adapt_count(kcoll_decisions_t *d, int slot, int key, uint64_t n)
{
    __typeof__(d->e[0]) *e = &d->e[slot];
    if (e->key == key && (e->phase == KCOLL_ADAPT_SET || kcoll_adapt_leading(d, slot)))
        e->calls += n; /* below the next check's count, or the lead's end: kcoll_adapt_calls_left */
}
/* Is a decision's entry settled (not being checked): does a call that
 * went to the host MPI for it say what its next calls do? */
static inline int kcoll_adapt_steady(const kcoll_decisions_t *d, int slot)
{
    return d->e[slot].phase == KCOLL_ADAPT_SET || d->e[slot].phase == KCOLL_ADAPT_OFF;
}
/* Does a call that went to the host MPI for the decision in entry slot
 * say what its next calls do, so that they may repeat it without being
 * decided (the memo, the host streak)? Settled, or within a check's lead. */
static inline int kcoll_adapt_repeatable(const kcoll_decisions_t *d, int slot)
{
    return kcoll_adapt_steady(d, slot) || kcoll_adapt_leading(d, slot);
}
/* The result a decision's entry runs now. */
static inline int kcoll_adapt_now(const kcoll_decisions_t *d, int slot)
{
    const __typeof__(d->e[0]) *e = &d->e[slot];
    return e->phase == KCOLL_ADAPT_SET && e->cur ? e->alt_result : e->result;
}

/* What a call of kcoll's spends before its line-up (the MPI layer's
 * description of it, its team, the decision) is counted in its time, as a
 * program pays it at every call; the host's repeats pay nearly nothing
 * there (the shortcut, call/shortcut.h). So while a check is under way
 * (kcoll_adapt_watch: calls to come that note it, renewed by every call
 * of a pattern under check) the layer above notes when each call entered
 * it, kcoll_adapt_note_entry. */
extern _Atomic int kcoll_adapt_watch;
extern __thread __attribute__((tls_model("initial-exec"))) int64_t kcoll_adapt_entry;
static inline void kcoll_adapt_note_entry(void)
{
    /* relaxed: a count of calls, ordering nothing; threads racing on it
     * only end the watch a few calls sooner or later */
    const int left = atomic_load_explicit(&kcoll_adapt_watch, memory_order_relaxed);
    if (left) {
        /* relaxed: as above */
        atomic_store_explicit(&kcoll_adapt_watch, left - 1, memory_order_relaxed);
        kcoll_adapt_entry = kcoll_now_ns();
    }
}

/* The end of this thread's timed blocking call, if one is pending (the
 * PMPI layer calls it when the call returns, host or kcoll). */
extern __thread __attribute__((tls_model("initial-exec"))) void *kcoll_adapt_timed;
void kcoll_adapt_end_timed(void);
static inline void kcoll_adapt_end(void)
{
    if (kcoll_adapt_timed)
        kcoll_adapt_end_timed();
}

/* The checks this process closed (at most the last 32), one line each,
 * for the statistics report. */
void kcoll_adapt_report(FILE *out);

#endif
