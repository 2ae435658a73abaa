/* Waiting on peers (see wait.h). */
#include <sched.h>
#include <stdio.h>
#include <time.h>

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

void kcoll_pause_init(kcoll_pause_t *p)
{
    p->spin = kcoll_param_int(KCOLL_P_SPIN);
    kcoll_pause_reset(p);
}

void kcoll_pause_reset(kcoll_pause_t *p)
{
    p->polls = 0;
    p->nap_after = 0;
}

void kcoll_pause(kcoll_pause_t *p)
{
    if (++p->polls <= p->spin) {
        kcoll_cpu_relax();
        return;
    }
    if ((p->polls & 15) == 0) {
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
        snprintf(err, errlen,
                 "rank %d (pid %d) of this communicator died while this rank waited for it",
                 peer, (int)c->pids[peer]);
        return KCOLL_ERR_PEER_DEAD;
    }
    /* Then a few of the others, in turn: a collective needs every rank of
     * its communicator, and the live rank this one waits for may itself
     * have given up the collective because a third one died (it will
     * never arrive); without this the wait would last until that rank
     * exits. */
    for (int k = 0; k < KCOLL_WATCH_SWEEP && k < c->p; k++) {
        const int q = (int)(w->sweep++ % (uint64_t)c->p);
        if (q != c->rank && q != peer && !kcoll_pid_alive(c->pids[q])) {
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
