/* The executor: one rank runs its schedule for real.
 *
 * EXPOSE stores a buffer's address and length in this rank's slot and then
 * the collective's sequence number with release order; a peer that loads
 * that number with acquire order sees the address and length (and every
 * byte the owner wrote before). READ and WRITE first look up the peer's
 * exposure of the named buffer for this collective: not there yet means
 * "in progress", an exposure of a later collective means the peer broke the
 * protocol. The data then moves with one CMA system call (xfer/cma.c).
 *
 * SIGNAL stores (seq << KCOLL_SEQ_SHIFT | value) into this rank's flag with
 * release order, so everything this rank copied before is visible to a
 * peer whose WAIT loads the flag with acquire order and finds it reached.
 * Flags only grow, so a WAIT is never fooled by an older collective.
 *
 * kcoll_exec_run polls a little, then yields the core (jobs on this kind of
 * machine are often oversubscribed, and a spinning waiter must not starve
 * the process it waits for), and every KCOLL_PEER_CHECK_MS checks that the
 * awaited peer is still alive, turning a dead peer into an error; a live
 * peer that does not arrive within KCOLL_WAIT_WARN_MS gets one warning.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/params.h"
#include "sched/exec.h"
#include "xfer/cma.h"

static inline uint64_t kcoll_flag_word(uint64_t seq, uint32_t value)
{
    return (seq << KCOLL_SEQ_SHIFT) | value;
}

static inline void kcoll_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void kcoll_exec_start(kcoll_exec_t *x, kcoll_team_t *t, const kcoll_sched_t *s,
                      void *const bufs[KCOLL_NBUF], const size_t lens[KCOLL_NBUF], uint64_t seq)
{
    x->team = t;
    x->sched = s;
    for (int b = 0; b < KCOLL_NBUF; b++) {
        x->bufs[b] = bufs[b];
        x->lens[b] = lens[b];
    }
    x->seq = seq;
    x->pc = 0;
    x->blocked_on = -1;
    x->errmsg[0] = '\0';
    x->op = NULL;
}

/* Address of peer's buffer pbuf at poff, valid for len bytes, once the peer
 * has exposed it for this collective. */
static kcoll_status_t kcoll_exec_peer_addr(kcoll_exec_t *x, int peer, int pbuf, size_t poff,
                                           size_t len, char **addr)
{
    kcoll_expo_t *e = &x->team->slots[peer].expose[pbuf];
    /* acquire: pairs with the release in the peer's EXPOSE; makes its addr and len visible */
    uint64_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (seq < x->seq) {
        x->blocked_on = peer;
        return KCOLL_IN_PROGRESS;
    }
    if (seq > x->seq) {
        snprintf(x->errmsg, sizeof x->errmsg,
                 "rank %d exposed its %s buffer for collective %" PRIu64
                 " while this rank is still in collective %" PRIu64,
                 peer, kcoll_buf_name(pbuf), seq, x->seq);
        return KCOLL_ERR_PROTO;
    }
    /* relaxed: ordered by the acquire load of seq above */
    uint64_t base = atomic_load_explicit(&e->addr, memory_order_relaxed);
    /* relaxed: ordered by the acquire load of seq above */
    uint64_t blen = atomic_load_explicit(&e->len, memory_order_relaxed);
    if (poff > blen || len > blen - poff) {
        snprintf(x->errmsg, sizeof x->errmsg,
                 "step wants bytes %zu..%zu of rank %d's %s buffer, which has %" PRIu64, poff,
                 poff + len, peer, kcoll_buf_name(pbuf), blen);
        return KCOLL_ERR_PROTO;
    }
    *addr = (char *)(uintptr_t)base + poff;
    return KCOLL_OK;
}

static kcoll_status_t kcoll_exec_local(kcoll_exec_t *x, int buf, size_t off, size_t len,
                                       char **addr)
{
    if (!x->bufs[buf] || off > x->lens[buf] || len > x->lens[buf] - off) {
        snprintf(x->errmsg, sizeof x->errmsg,
                 "step wants bytes %zu..%zu of the local %s buffer, which has %zu", off,
                 off + len, kcoll_buf_name(buf), x->bufs[buf] ? x->lens[buf] : 0);
        return KCOLL_ERR_ARG;
    }
    *addr = (char *)x->bufs[buf] + off;
    return KCOLL_OK;
}

static kcoll_status_t kcoll_exec_transfer(kcoll_exec_t *x, const kcoll_step_t *st)
{
    char *remote, *local;
    kcoll_status_t rc = kcoll_exec_peer_addr(x, st->peer, st->pbuf, st->poff, st->len, &remote);
    if (rc)
        return rc;
    rc = kcoll_exec_local(x, st->lbuf, st->loff, st->len, &local);
    if (rc)
        return rc;
    pid_t pid = x->team->pids[st->peer];
    int reading = st->kind == KCOLL_STEP_READ;
    rc = reading ? kcoll_cma_read(pid, local, remote, st->len)
                 : kcoll_cma_write(pid, local, remote, st->len);
    if (rc) {
        int err = errno;
        snprintf(x->errmsg, sizeof x->errmsg, "%s of %zu bytes %s rank %d (pid %d) failed: %s%s%s",
                 reading ? "process_vm_readv" : "process_vm_writev", st->len,
                 reading ? "from" : "to", st->peer, (int)pid, kcoll_status_str(rc),
                 rc == KCOLL_ERR_SYS ? ": " : "", rc == KCOLL_ERR_SYS ? strerror(err) : "");
        x->blocked_on = st->peer;
    }
    return rc;
}

kcoll_status_t kcoll_exec_progress(kcoll_exec_t *x)
{
    kcoll_team_t *t = x->team;
    kcoll_slot_t *me = &t->slots[t->rank];
    const kcoll_sched_t *s = x->sched;

    while (x->pc < s->n) {
        const kcoll_step_t *st = &s->steps[x->pc];
        kcoll_status_t rc = KCOLL_OK;
        switch ((kcoll_step_kind_t)st->kind) {
        case KCOLL_STEP_EXPOSE: {
            kcoll_expo_t *e = &me->expose[st->lbuf];
            /* relaxed: published by the release store of seq below */
            atomic_store_explicit(&e->addr, (uint64_t)(uintptr_t)x->bufs[st->lbuf],
                                  memory_order_relaxed);
            /* relaxed: published by the release store of seq below */
            atomic_store_explicit(&e->len, x->bufs[st->lbuf] ? x->lens[st->lbuf] : 0,
                                  memory_order_relaxed);
            /* release: publishes addr, len and the buffer's contents to peers acquiring seq */
            atomic_store_explicit(&e->seq, x->seq, memory_order_release);
            break;
        }
        case KCOLL_STEP_READ:
        case KCOLL_STEP_WRITE:
            rc = kcoll_exec_transfer(x, st);
            break;
        case KCOLL_STEP_COPY: {
            char *src, *dst;
            rc = kcoll_exec_local(x, st->lbuf, st->loff, st->len, &src);
            if (!rc)
                rc = kcoll_exec_local(x, st->pbuf, st->poff, st->len, &dst);
            if (!rc)
                memmove(dst, src, st->len);
            break;
        }
        case KCOLL_STEP_REDUCE: {
            char *src, *dst;
            rc = kcoll_exec_local(x, st->lbuf, st->loff, st->len, &src);
            if (!rc)
                rc = kcoll_exec_local(x, st->pbuf, st->poff, st->len, &dst);
            if (!rc && (!x->op || st->len % x->op->esize || (st->flag && !kcoll_op_has_rev(x->op)))) {
                snprintf(x->errmsg, sizeof x->errmsg,
                         "REDUCE step of %zu bytes without an operation of that element size",
                         st->len);
                rc = KCOLL_ERR_ARG;
            }
            if (!rc && st->flag)
                kcoll_op_apply_rev(x->op, src, dst, st->len);
            else if (!rc)
                kcoll_op_apply(x->op, src, dst, st->len);
            break;
        }
        case KCOLL_STEP_SIGNAL:
            /* release: everything this rank copied before is visible to whoever acquires the flag */
            atomic_store_explicit(&me->flag[st->flag].v, kcoll_flag_word(x->seq, st->value),
                                  memory_order_release);
            break;
        case KCOLL_STEP_WAIT: {
            kcoll_line_t *f = &t->slots[st->peer].flag[st->flag];
            /* acquire: pairs with the peer's release in SIGNAL; its data becomes visible */
            if (atomic_load_explicit(&f->v, memory_order_acquire) <
                kcoll_flag_word(x->seq, st->value)) {
                x->blocked_on = st->peer;
                rc = KCOLL_IN_PROGRESS;
            }
            break;
        }
        default:
            snprintf(x->errmsg, sizeof x->errmsg, "unknown step kind %d", st->kind);
            rc = KCOLL_ERR_ARG;
        }
        if (rc)
            return rc;
        x->pc++;
    }
    x->blocked_on = -1;
    return KCOLL_OK;
}

void kcoll_waiter_init(kcoll_waiter_t *w)
{
    w->spin = kcoll_param_int(KCOLL_P_SPIN);
    w->check_ns = kcoll_param_int(KCOLL_P_PEER_CHECK_MS) * 1000000;
    w->warn_ns = kcoll_param_int(KCOLL_P_WAIT_WARN_MS) * 1000000;
    kcoll_waiter_reset(w);
}

void kcoll_waiter_reset(kcoll_waiter_t *w)
{
    w->polls = 0;
    w->wait_start = w->last_check = 0;
    w->warned = 0;
}

kcoll_status_t kcoll_waiter_pause(kcoll_waiter_t *w, const kcoll_team_t *t, int peer,
                                  uint64_t seq, char *errmsg, size_t errlen)
{
    if (++w->polls <= w->spin) {
        kcoll_cpu_relax();
        return KCOLL_OK;
    }
    if (w->polls == w->spin + 1)
        w->wait_start = w->last_check = kcoll_now_ns();
    int64_t now = (w->polls & 15) ? 0 : kcoll_now_ns();
    if (now && now - w->wait_start > 50 * 1000000) {
        /* a long wait (the peer is busy elsewhere): stop burning the core */
        struct timespec nap = {0, 50000};
        nanosleep(&nap, NULL);
    } else {
        sched_yield();
    }
    if (now && w->check_ns > 0 && now - w->last_check >= w->check_ns) {
        w->last_check = now;
        if (peer >= 0 && !kcoll_pid_alive(t->pids[peer])) {
            snprintf(errmsg, errlen,
                     "rank %d (pid %d) of this communicator died while this rank waited for it",
                     peer, (int)t->pids[peer]);
            return KCOLL_ERR_PEER_DEAD;
        }
        if (peer >= 0 && w->warn_ns > 0 && !w->warned && now - w->wait_start >= w->warn_ns) {
            /* Alive but absent: stuck elsewhere, or it called the host MPI
             * for this collective while this rank runs kcoll's (ranks
             * passing datatypes of different layouts). Say so once. */
            w->warned = 1;
            kcoll_warn("rank %d of a communicator has waited %lld s in collective %llu for "
                       "rank %d (pid %d), which is alive but does not arrive (stuck "
                       "elsewhere, or it took the host MPI's path: datatypes of different "
                       "layouts on different ranks?)",
                       t->rank, (long long)((now - w->wait_start) / 1000000000),
                       (unsigned long long)seq, peer, (int)t->pids[peer]);
        }
    }
    return KCOLL_OK;
}

kcoll_status_t kcoll_exec_run(kcoll_exec_t *x)
{
    kcoll_waiter_t w;
    kcoll_waiter_init(&w);
    int last_pc = x->pc;

    for (;;) {
        kcoll_status_t rc = kcoll_exec_progress(x);
        if (rc != KCOLL_IN_PROGRESS)
            return rc;
        if (x->pc != last_pc) { /* progress: start a fresh wait */
            last_pc = x->pc;
            kcoll_waiter_reset(&w);
        }
        rc = kcoll_waiter_pause(&w, x->team, x->blocked_on, x->seq, x->errmsg, sizeof x->errmsg);
        if (rc)
            return rc;
    }
}
