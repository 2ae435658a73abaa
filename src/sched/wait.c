/* Waiting on peers (see wait.h). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/params.h"
#include "sched/wait.h"

/* Clock readings are cheap but not free: a watch reads the clock once
 * every this many idle calls. */
#define KCOLL_WATCH_EVERY 16
/* Ranks other than the awaited one a check looks at (in turn), so that a
 * check costs a bounded number of system calls in a large team. */
#define KCOLL_WATCH_SWEEP 8

static inline void kcoll_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- crowding ---- */

/* relaxed, both: see wait.h */
_Atomic int kcoll_wait_crowded_now;
static _Atomic int kcoll_crowd_cores;

int kcoll_wait_crowd_cores(int ranks, int cores)
{
    const int64_t forced = kcoll_param_int(KCOLL_P_CORES);
    if (forced > 0)
        cores = forced > INT_MAX ? INT_MAX : (int)forced;
    return cores > 0 && ranks > cores ? cores : 0;
}

void kcoll_wait_crowd_note(int cores)
{
    if (cores <= 0 || kcoll_wait_crowded())
        return;
    /* relaxed: see wait.h */
    atomic_store_explicit(&kcoll_crowd_cores, cores, memory_order_relaxed);
    /* relaxed: see wait.h */
    atomic_store_explicit(&kcoll_wait_crowded_now, 1, memory_order_relaxed);
}

int kcoll_wait_cores(void)
{
    /* relaxed: see wait.h */
    return kcoll_wait_crowded() ? atomic_load_explicit(&kcoll_crowd_cores, memory_order_relaxed)
                                : 0;
}

/* ---- sleeping on a flag word ---- */

/* The 32 bits of a flag word that futex compares: its low half, where the
 * value and the low bits of the collective number change with every store
 * a waiter can see (a lane's word cannot pass 2^32 values while one of its
 * waiters still waits). */
static uint32_t *kcoll_futex_word(kcoll_line_t *line)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint32_t *)(void *)&line->v;
#else
    return (uint32_t *)(void *)&line->v + 1;
#endif
}

void kcoll_wake_all(kcoll_line_t *line)
{
    /* shared (not FUTEX_PRIVATE): the sleepers are other processes mapping the segment */
    syscall(SYS_futex, kcoll_futex_word(line), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps until line->v changes from below want, at most KCOLL_SLEEP_NS.
 * 1 if the owner's store ended the wait (it woke the sleeper, or came
 * before the sleep), 0 if the time limit did. */
static int kcoll_sleep_on(kcoll_line_t *line, uint64_t want)
{
    int woken = 1;
    /* seq_cst: this increment is ordered before the load of v below, as the
     * owner's seq_cst store of v is before its load of sleepers
     * (kcoll_flag_store): one of the two sees the other's write */
    atomic_fetch_add_explicit(&line->sleepers, 1, memory_order_seq_cst);
    /* seq_cst: see above; only decides whether to sleep (the caller acquires
     * v again afterwards) */
    uint64_t seen = atomic_load_explicit(&line->v, memory_order_seq_cst);
    if (seen < want) {
        struct timespec limit = {0, KCOLL_SLEEP_NS};
        /* returns at once if the word no longer holds what was seen (the
         * owner stored meanwhile), else when woken or after the limit */
        if (syscall(SYS_futex, kcoll_futex_word(line), FUTEX_WAIT, (uint32_t)seen, &limit, NULL,
                    0) != 0 &&
            errno == ETIMEDOUT)
            woken = 0;
    }
    /* relaxed: the count orders nothing the sleeper reads afterwards */
    atomic_fetch_sub_explicit(&line->sleepers, 1, memory_order_relaxed);
    return woken;
}

/* ---- pauses ---- */

/* the layer above's idle work (set once at start-up) */
static void (*kcoll_wait_idle_fn)(void);

void kcoll_wait_idle_set(void (*fn)(void))
{
    kcoll_wait_idle_fn = fn;
}

void kcoll_pause_init(kcoll_pause_t *p)
{
    p->crowded = kcoll_wait_crowded();
    p->spin = p->crowded ? 0 : kcoll_param_int(KCOLL_P_SPIN);
    p->slept = p->woken = 0;
    kcoll_pause_reset(p);
}

void kcoll_pause_reset(kcoll_pause_t *p)
{
    p->polls = 0;
    p->nap_after = 0;
    p->since = 0;
}

void kcoll_pause(kcoll_pause_t *p)
{
    if (++p->polls <= p->spin) {
        kcoll_cpu_relax();
        return;
    }
    if ((p->polls & 15) == 0) {
        if (kcoll_wait_idle_fn)
            kcoll_wait_idle_fn();
        int64_t now = kcoll_now_ns();
        if (!p->nap_after)
            p->nap_after = now + 50 * 1000000; /* 50 ms */
        if (now > p->nap_after) {
            /* a long wait (the peer is busy elsewhere): stop burning the core */
            struct timespec nap = {0, 50000};
            nanosleep(&nap, NULL);
            return;
        }
    }
    sched_yield();
}

void kcoll_pause_on(kcoll_pause_t *p, kcoll_line_t *line, uint64_t want)
{
    if (!p->crowded || !line) {
        kcoll_pause(p);
        return;
    }
    /* a short wait yields: the awaited rank may only need this core for a
     * moment, and a yield hands it over without the wake-up a sleeper
     * needs (an inter-processor interrupt, expensive in a virtual machine);
     * a wait that lasts sleeps until the word changes, off the run queue */
    if ((++p->polls & 15) == 0 && kcoll_wait_idle_fn)
        kcoll_wait_idle_fn();
    int64_t now = kcoll_now_ns();
    if (!p->since)
        p->since = now;
    if (now - p->since < KCOLL_SLEEP_AFTER_NS) {
        sched_yield();
        return;
    }
    p->slept++;
    p->woken += kcoll_sleep_on(line, want);
}

void kcoll_watch_init(kcoll_watch_t *w)
{
    w->quiet = -1; /* the parameters are read when a wait first gets idle */
    w->sweep = 0;
    kcoll_watch_reset(w);
}

void kcoll_watch_reset(kcoll_watch_t *w)
{
    w->start = w->last_check = 0;
    w->idle = 0;
    w->warned = 0;
}

kcoll_status_t kcoll_watch(kcoll_watch_t *w, const kcoll_ctl_t *c, int peer, uint64_t seq,
                           char *err, size_t errlen)
{
    if (w->quiet < 0) {
        w->check_ns = kcoll_param_int(KCOLL_P_PEER_CHECK_MS) * 1000000;
        w->warn_ns = kcoll_param_int(KCOLL_P_WAIT_WARN_MS) * 1000000;
        w->quiet = kcoll_param_int(KCOLL_P_SPIN);
    }
    if (++w->idle <= w->quiet || w->idle % KCOLL_WATCH_EVERY)
        return KCOLL_OK;
    int64_t now = kcoll_now_ns();
    if (!w->start) {
        w->start = w->last_check = now;
        return KCOLL_OK;
    }
    if (w->check_ns <= 0 || now - w->last_check < w->check_ns)
        return KCOLL_OK;
    w->last_check = now;
    if (peer >= 0 && !kcoll_pid_alive(c->pids[peer])) {
        /* the one awaited may have ended because another died first (it
         * gave up and exited): name every rank that is gone */
        char who[160];
        int n = 0, named = 0;
        for (int q = 0; q < c->p && n < (int)sizeof who; q++)
            if (q != c->rank && (q == peer || !kcoll_pid_alive(c->pids[q])) && named++ < 4)
                n += snprintf(who + n, sizeof who - (size_t)n, "%srank %d (pid %d)",
                              named > 1 ? ", " : "", q, (int)c->pids[q]);
        if (named > 1)
            snprintf(err, errlen, "%s of this communicator died while this rank waited for rank %d",
                     who, peer);
        else
            snprintf(err, errlen, "%s of this communicator died while this rank waited for it",
                     who);
        return KCOLL_ERR_PEER_DEAD;
    }
    /* Then a few of the others, in turn: a collective needs every rank of
     * its communicator, and the live rank this one waits for may itself
     * have given up the collective because a third one died or failed (it
     * will never arrive); without this the wait would last until that rank
     * exits. */
    for (int k = 0; k < KCOLL_WATCH_SWEEP && k < c->p; k++) {
        const int q = (int)(w->sweep++ % (uint64_t)c->p);
        if (q == c->rank || q == peer)
            continue;
        if (!kcoll_pid_alive(c->pids[q])) {
            if (peer >= 0)
                snprintf(err, errlen,
                         "rank %d (pid %d) of this communicator died while this rank waited "
                         "for rank %d",
                         q, (int)c->pids[q], peer);
            else
                snprintf(err, errlen,
                         "rank %d (pid %d) of this communicator died while this rank waited",
                         q, (int)c->pids[q]);
            return KCOLL_ERR_PEER_DEAD;
        }
    }
    /* A rank that gave this collective up never arrives either. Its
     * reason is often a death: one of all the ranks is named if so. */
    int gave = peer >= 0 && kcoll_ctl_gave_up(c, peer, seq) ? peer : -1;
    for (int q = 0; gave < 0 && q < c->p; q++)
        if (q != c->rank && kcoll_ctl_gave_up(c, q, seq))
            gave = q;
    if (gave >= 0) {
        for (int q = 0; q < c->p; q++)
            if (q != c->rank && !kcoll_pid_alive(c->pids[q])) {
                snprintf(err, errlen,
                         "rank %d (pid %d) of this communicator died while this rank waited",
                         q, (int)c->pids[q]);
                return KCOLL_ERR_PEER_DEAD;
            }
        snprintf(err, errlen,
                 "rank %d of this communicator gave this collective up after an error of its "
                 "own (its message says which)%s",
                 gave, gave == peer ? " while this rank waited for it" : "");
        return KCOLL_ERR_PROTO;
    }
    if (peer < 0)
        return KCOLL_OK;
    if (w->warn_ns > 0 && !w->warned && now - w->start >= w->warn_ns) {
        /* Alive but absent: stuck elsewhere, or it called the host MPI for
         * this collective while this rank runs kcoll's (ranks passing
         * datatypes of different layouts). Say so once. */
        w->warned = 1;
        kcoll_warn("rank %d of a communicator has waited %lld s in collective %llu for rank %d "
                   "(pid %d), which is alive but does not arrive (stuck elsewhere, or it took "
                   "the host MPI's path: datatypes of different layouts on different ranks?)",
                   c->rank, (long long)((now - w->start) / 1000000000),
                   (unsigned long long)seq, peer, (int)c->pids[peer]);
    }
    return KCOLL_OK;
}
