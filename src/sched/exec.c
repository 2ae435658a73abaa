/* The executor: one rank runs its schedule for real.
 *
 * Every word it touches lies in the collective's lane (sched/ctl.h).
 *
 * EXPOSE stores a buffer's address and length in this rank's lane and then
 * the collective's sequence number with release order; a peer that loads
 * that number with acquire order sees the address and length (and every
 * byte the owner wrote before). READ and WRITE first look up the peer's
 * exposure of the named buffer for this collective: not there yet means
 * "in progress", an exposure of a later collective means the peer broke the
 * protocol. The data then moves through a transfer engine
 * (xfer/engine.h). Consecutive READ steps from one peer (or WRITE steps to
 * one peer) whose exposures are all there go into one engine call as one
 * iovec list: one system call instead of one per step (paper 003: every
 * call pays alpha, the start-up and permission check, once).
 *
 * Engines. A one-sided engine
 * (cma) copies at once. A two-sided one (shm, vmsplice) posts the batch to
 * the owner of the peer buffer through the channel (xfer/chan.h), naming
 * the owner's ranges by buffer and logical offset, and the step stays "in
 * progress" until the bytes have moved; the owner moves its half whenever
 * its own executor runs: every kcoll_exec_progress serves the requests
 * posted to this rank first (kcoll_chan_serve: one load when there are
 * none). That is enough because every peer access to a rank's exposed
 * buffer is ordered before the rank's last step (the simulator checks it),
 * so the owner keeps running its executor, in steps or in waits, until
 * every transfer from or to its buffers is over; serving never blocks, so
 * two ranks that read from each other cannot hold each other up.
 *
 * SIGNAL stores (seq << KCOLL_SEQ_SHIFT | value) into this rank's flag with
 * release order, so everything this rank copied before is visible to a
 * peer whose WAIT loads the flag with acquire order and finds it reached,
 * and wakes the peers asleep on the flag (sched/wait.h). Flags only grow,
 * so a WAIT is never fooled by an older collective. A WAIT that cannot
 * proceed leaves the flag and the word it waits for in blocked_line and
 * blocked_want, for a waiting loop that sleeps on it.
 *
 * EXTERN starts the collective's external operation when the step is
 * reached and tests it on every later call until it is done. An EXTERN
 * naming one of the schedule's host collectives (KCOLL_EXTERN_XCOLL) is
 * handed to the run's xhost (sched/sched.h), which may decline to start
 * it yet (not its turn on the group, or a thread that may not call the
 * host): the step then stays where it is, as a WAIT that is not met.
 * A split host collective's BEGIN step starts it and moves on; its END
 * step tests it until it is done; meanwhile every progress call and every
 * batch of READs or WRITEs first lets the host drive what is in flight
 * (xhost->poll), so the messages between nodes move while the node
 * copies, and a waiter never sleeps on a flag: members on other nodes may
 * need this rank's part of a collective in flight before their node can
 * raise the flag it waits for.
 *
 * Buffers laid out by a derived datatype (sched/dmap.h): steps address
 * every buffer by logical offsets; a buffer with a map has its logical
 * range turned into memory pieces, locally from its own map and for a peer
 * from the peer's, whose address EXPOSE publishes beside the buffer's. The
 * first step that needs a peer's map reads it whole from the peer's memory
 * through the engine (header, then segments) and keeps it for the rest of
 * the run. A READ or WRITE then hands both piece lists to one engine call
 * (they may cut the same bytes at different places); COPY and REDUCE walk
 * their two lists side by side (REDUCE pieces stay whole elements: a map
 * for a reduction is made of the operation's elements).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/exec.h"
#include "sched/wait.h"
#include "xfer/direct.h"

/* Most steps one engine call moves. */
#define KCOLL_EXEC_BATCH 64

void kcoll_exec_start(kcoll_exec_t *x, const kcoll_ctl_t *c, const kcoll_engine_t *engine,
                      const kcoll_sched_t *s, void *const bufs[KCOLL_NBUF],
                      const size_t lens[KCOLL_NBUF], uint64_t seq)
{
    x->ctl = c;
    x->engine = engine;
    x->sched = s;
    for (int b = 0; b < KCOLL_NBUF; b++) {
        x->bufs[b] = bufs[b];
        x->lens[b] = lens[b];
    }
    x->seq = seq;
    x->pc = 0;
    x->xstarted = -1;
    x->xlive = 0;
    x->blocked_on = -1;
    x->blocked_line = NULL;
    x->blocked_want = 0;
    x->op = NULL;
    x->xops = NULL;
    x->nxops = 0;
    x->xhost = NULL;
    x->xdata = NULL;
    x->errmsg[0] = '\0';
    for (int b = 0; b < KCOLL_NBUF; b++)
        x->maps[b] = NULL;
    x->rmaps = NULL;
    x->nrmaps = 0;
    x->liov = x->riov = (kcoll_iovs_t){NULL, 0, 0};
    x->cx.active = 0;
    x->cx_steps = 0;
    x->cx_engine = NULL;
    for (int e = 0; e < KCOLL_NENGINES; e++)
        x->moved[e] = 0;
}

void kcoll_exec_finish(kcoll_exec_t *x)
{
    if (x->cx.active) /* a failed run left a transfer in flight */
        kcoll_chan_abandon(x->ctl->chan, &x->cx);
    for (int i = 0; i < x->nrmaps; i++)
        free(x->rmaps[i]);
    free(x->rmaps);
    x->rmaps = NULL;
    x->nrmaps = 0;
    kcoll_iovs_free(&x->liov);
    kcoll_iovs_free(&x->riov);
    x->sched = NULL;
}

/* The datatype map of peer's buffer pbuf, exposure e (its seq acquired),
 * read from the peer's memory once per run: *m NULL for a contiguous one. */
static kcoll_status_t kcoll_exec_peer_map(kcoll_exec_t *x, const kcoll_engine_t *eng, int peer,
                                          int pbuf, kcoll_expo_t *e, const kcoll_dmap_t **m)
{
    /* relaxed: ordered by the caller's acquire load of the exposure's seq */
    uint64_t at = atomic_load_explicit(&e->map, memory_order_relaxed);
    *m = NULL;
    if (!at)
        return KCOLL_OK;
    const int slot = peer * KCOLL_NBUF + pbuf;
    if (slot >= x->nrmaps) {
        int n = x->ctl->p * KCOLL_NBUF;
        kcoll_dmap_t **v = calloc((size_t)n, sizeof *v);
        if (!v)
            return KCOLL_ERR_NOMEM;
        for (int i = 0; i < x->nrmaps; i++)
            v[i] = x->rmaps[i];
        free(x->rmaps);
        x->rmaps = v;
        x->nrmaps = n;
    }
    if (!x->rmaps[slot]) {
        kcoll_dmap_t head, *full;
        const pid_t pid = x->ctl->pids[peer];
        struct iovec l = {&head, sizeof head}, r = {(void *)(uintptr_t)at, sizeof head};
        kcoll_status_t rc = eng->readv(pid, &l, 1, &r, 1);
        if (!rc && (head.magic != KCOLL_DMAP_MAGIC || head.nseg == 0 ||
                    head.nseg > KCOLL_DMAP_MAX_SEG))
            rc = KCOLL_ERR_PROTO;
        if (rc) {
            snprintf(x->errmsg, sizeof x->errmsg,
                     "reading rank %d's datatype map of its %s buffer failed: %s", peer,
                     kcoll_buf_name(pbuf), kcoll_status_str(rc));
            return rc;
        }
        const size_t bytes = kcoll_dmap_bytes(head.nseg);
        if (!(full = malloc(bytes)))
            return KCOLL_ERR_NOMEM;
        l = (struct iovec){full, bytes};
        r = (struct iovec){(void *)(uintptr_t)at, bytes};
        rc = eng->readv(pid, &l, 1, &r, 1);
        if (!rc && !kcoll_dmap_valid(full))
            rc = KCOLL_ERR_PROTO;
        if (rc) {
            free(full);
            snprintf(x->errmsg, sizeof x->errmsg,
                     "rank %d's datatype map of its %s buffer could not be read whole: %s",
                     peer, kcoll_buf_name(pbuf), kcoll_status_str(rc));
            return rc;
        }
        x->rmaps[slot] = full;
    }
    *m = x->rmaps[slot];
    return KCOLL_OK;
}

/* Peer's buffer pbuf, with logical bytes [poff, poff + len), once the peer
 * has exposed it for this collective: its exposure (seq acquired) and base
 * address. */
static kcoll_status_t kcoll_exec_peer_buf(kcoll_exec_t *x, int peer, int pbuf, size_t poff,
                                          size_t len, kcoll_expo_t **expo, char **addr)
{
    kcoll_expo_t *e = &kcoll_ctl_lane(x->ctl, peer, x->seq)->expose[pbuf];
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
    *addr = (char *)(uintptr_t)base;
    *expo = e;
    return KCOLL_OK;
}

/* Local buffer buf must hold logical bytes [off, off + len). */
static kcoll_status_t kcoll_exec_local(kcoll_exec_t *x, int buf, size_t off, size_t len)
{
    if (!x->bufs[buf] || off > x->lens[buf] || len > x->lens[buf] - off) {
        snprintf(x->errmsg, sizeof x->errmsg,
                 "step wants bytes %zu..%zu of the local %s buffer, which has %zu", off,
                 off + len, kcoll_buf_name(buf), x->bufs[buf] ? x->lens[buf] : 0);
        return KCOLL_ERR_ARG;
    }
    return KCOLL_OK;
}

/* Append the memory pieces of local buffer buf's logical bytes [off, off + len) */
static kcoll_status_t kcoll_exec_local_iov(kcoll_exec_t *x, int buf, size_t off, size_t len,
                                           kcoll_iovs_t *out)
{
    kcoll_status_t rc = kcoll_exec_local(x, buf, off, len);
    if (!rc && kcoll_dmap_iov(x->maps[buf], x->bufs[buf], off, len, out))
        rc = KCOLL_ERR_NOMEM;
    return rc;
}

/* COPY (reduce 0) or REDUCE (reduce 1, rev: the reversed kernel) of the
 * local logical bytes src[soff, +len) onto dst[doff, +len), piece by piece */
static kcoll_status_t kcoll_exec_local_op(kcoll_exec_t *x, const kcoll_step_t *st, int reduce)
{
    kcoll_iovs_t *a = &x->liov, *b = &x->riov;
    kcoll_status_t rc;
    a->n = b->n = 0;
    if ((rc = kcoll_exec_local_iov(x, st->sbuf, st->soff, st->len, a)) ||
        (rc = kcoll_exec_local_iov(x, st->dbuf, st->doff, st->len, b)))
        return rc;
    if (reduce && !kcoll_op_fits(x->op, st->len, st->rev)) {
        snprintf(x->errmsg, sizeof x->errmsg,
                 "REDUCE step of %zu bytes without an operation of that element size", st->len);
        return KCOLL_ERR_ARG;
    }
    size_t ia = 0, ib = 0, oa = 0, ob = 0;
    while (ia < (size_t)a->n && ib < (size_t)b->n) {
        size_t na = a->v[ia].iov_len - oa, nb = b->v[ib].iov_len - ob, n = na < nb ? na : nb;
        const char *src = (const char *)a->v[ia].iov_base + oa;
        char *dst = (char *)b->v[ib].iov_base + ob;
        if (!reduce)
            memmove(dst, src, n);
        else if (!kcoll_op_fits(x->op, n, st->rev)) {
            snprintf(x->errmsg, sizeof x->errmsg,
                     "REDUCE piece of %zu bytes splits an element of the operation", n);
            return KCOLL_ERR_ARG;
        } else if (st->rev)
            kcoll_op_apply_rev(x->op, src, dst, n);
        else
            kcoll_op_apply(x->op, src, dst, n);
        if ((oa += n) == a->v[ia].iov_len)
            ia++, oa = 0;
        if ((ob += n) == b->v[ib].iov_len)
            ib++, ob = 0;
    }
    return KCOLL_OK;
}

/* The engine's name and the failing call for an error message. */
static kcoll_status_t kcoll_exec_xfer_failed(kcoll_exec_t *x, const kcoll_engine_t *eng,
                                             const kcoll_step_t *first, size_t bytes,
                                             kcoll_status_t rc, const char *why)
{
    int err = errno, reading = first->kind == KCOLL_STEP_READ;
    pid_t pid = x->ctl->pids[first->peer];
    snprintf(x->errmsg, sizeof x->errmsg, "%s of %zu bytes %s rank %d (pid %d) failed: %s%s%s%s%s",
             reading ? eng->read_call : eng->write_call, bytes, reading ? "from" : "to",
             first->peer, (int)pid, kcoll_status_str(rc),
             rc == KCOLL_ERR_SYS && !why ? ": " : "", rc == KCOLL_ERR_SYS && !why ? strerror(err) : "",
             why ? ": " : "", why ? why : "");
    x->blocked_on = first->peer;
    return rc;
}

/* A two-sided transfer in flight: move what can move. */
static kcoll_status_t kcoll_exec_chan_poll(kcoll_exec_t *x, int *n)
{
    const kcoll_step_t *first = &x->sched->steps[x->pc];
    char why[200] = "";
    kcoll_status_t rc = kcoll_chan_poll(x->ctl->chan, &x->cx, why, sizeof why);
    if (rc == KCOLL_IN_PROGRESS) {
        x->blocked_on = first->peer;
        return rc;
    }
    if (rc)
        return kcoll_exec_xfer_failed(x, x->cx_engine, first, x->cx.total, rc, why);
    x->moved[x->cx_engine->id] += x->cx.total;
    *n = x->cx_steps;
    return KCOLL_OK;
}

/* A staged READ (sched.h) and its REDUCE as one: the reduction reads the
 * peer's mapped vector p in place (paper 004 IV.A) and the scratch is not
 * written. KCOLL_OK, or an error. */
static kcoll_status_t kcoll_exec_reduce_from(kcoll_exec_t *x, const kcoll_step_t *red,
                                             const char *p)
{
    kcoll_status_t rc;
    x->liov.n = 0;
    if ((rc = kcoll_exec_local_iov(x, red->dbuf, red->doff, red->len, &x->liov)))
        return rc;
    size_t at = 0;
    for (int i = 0; i < x->liov.n; i++) {
        const size_t n = x->liov.v[i].iov_len;
        if (!kcoll_op_fits(x->op, n, red->rev)) {
            snprintf(x->errmsg, sizeof x->errmsg,
                     "REDUCE piece of %zu bytes splits an element of the operation", n);
            return KCOLL_ERR_ARG;
        }
        if (red->rev)
            kcoll_op_apply_rev(x->op, p + at, x->liov.v[i].iov_base, n);
        else
            kcoll_op_apply(x->op, p + at, x->liov.v[i].iov_base, n);
        at += n;
    }
    return KCOLL_OK;
}

/* The READ or WRITE step at pc as loads and stores on the peer's buffer,
 * mapped (xfer/direct.h), where the peer exposed it in shareable memory
 * and it can be mapped here; a staged READ with its REDUCE as one
 * reduction from the peer's memory. 1 (*rc its outcome: done, or the
 * exposure not there yet, or an error; *n the steps done), or 0 when the
 * step needs the engine. */
static int kcoll_exec_direct(kcoll_exec_t *x, kcoll_status_t *rc, int *n)
{
    const kcoll_step_t *st = &x->sched->steps[x->pc];
    kcoll_expo_t *e;
    char *r, *p, why[200];
    void *hold;
    if ((*rc = kcoll_exec_peer_buf(x, st->peer, st->pbuf, st->poff, st->len, &e, &r)))
        return 1;
    /* relaxed: ordered by the acquire load of the exposure's seq */
    uint64_t ref = atomic_load_explicit(&e->direct, memory_order_relaxed);
    const kcoll_slot_t *ps = &x->ctl->slots[st->peer];
    if (!ref ||
        kcoll_direct_get(x->ctl->pids[st->peer], ps->dreg_fd, ps->dreg_ino, ref,
                         (uint64_t)(uintptr_t)r + st->poff, st->len, &p, &hold, why, sizeof why))
        return 0; /* not shareable, or not mappable from here: the engine moves it */
    const kcoll_step_t *red = st + 1;
    *n = 1;
    if (st->kind == KCOLL_STEP_READ && st->staged && x->pc + 1 < x->sched->n &&
        red->kind == KCOLL_STEP_REDUCE && red->sbuf == st->lbuf && red->soff == st->loff &&
        red->len == st->len && kcoll_op_fits(x->op, st->len, red->rev)) {
        *rc = kcoll_exec_reduce_from(x, red, p);
        kcoll_direct_put(hold);
        x->moved[KCOLL_ENGINE_DIRECT] += st->len;
        *n = 2;
        return 1;
    }
    x->liov.n = 0;
    if ((*rc = kcoll_exec_local_iov(x, st->lbuf, st->loff, st->len, &x->liov))) {
        kcoll_direct_put(hold);
        return 1;
    }
    kcoll_iovcur_t cur;
    kcoll_iovcur_init(&cur, x->liov.v, x->liov.n);
    kcoll_iovcur_copy(&cur, p, st->len, st->kind == KCOLL_STEP_WRITE);
    kcoll_direct_put(hold);
    x->moved[KCOLL_ENGINE_DIRECT] += st->len;
    return 1;
}

/* The READ or WRITE step at pc and the following ones of the same kind
 * and peer whose exposures are there, as one engine call (or one
 * request of a two-sided engine, in progress until it is over). On
 * success *n is the number of steps done. */
static kcoll_status_t kcoll_exec_transfer(kcoll_exec_t *x, int *n)
{
    if (x->cx.active)
        return kcoll_exec_chan_poll(x, n);
    const kcoll_step_t *first = &x->sched->steps[x->pc];
    kcoll_status_t drc;
    if (x->ctl->direct && kcoll_exec_direct(x, &drc, n)) {
        if (drc == KCOLL_IN_PROGRESS)
            x->blocked_on = first->peer;
        return drc;
    }
    kcoll_iovs_t *local = &x->liov, *remote = &x->riov;
    size_t bytes = 0;
    int k = 0;
    /* which steps go together: consecutive, same kind and peer, exposed */
    for (int i = x->pc; i < x->sched->n && k < KCOLL_EXEC_BATCH; i++, k++) {
        const kcoll_step_t *st = &x->sched->steps[i];
        kcoll_expo_t *e;
        char *r;
        if (k > 0 && (st->kind != first->kind || st->peer != first->peer))
            break;
        kcoll_status_t rc = kcoll_exec_peer_buf(x, st->peer, st->pbuf, st->poff, st->len, &e, &r);
        if (rc == KCOLL_IN_PROGRESS && k > 0)
            break; /* move what is there; this one waits for the next call */
        if (rc)
            return rc;
        /* relaxed: ordered by the acquire load of the exposure's seq */
        if (k > 0 && x->ctl->direct && atomic_load_explicit(&e->direct, memory_order_relaxed))
            break; /* that one goes by loads and stores */
        bytes += st->len;
    }
    const kcoll_engine_t *eng = x->engine;
    const int reading = first->kind == KCOLL_STEP_READ;
    local->n = remote->n = 0;
    if (eng->two_sided) {
        kcoll_chan_seg_t seg[KCOLL_EXEC_BATCH];
        int nseg = 0;
        for (int i = x->pc; i < x->pc + k; i++) {
            const kcoll_step_t *st = &x->sched->steps[i];
            kcoll_status_t rc = kcoll_exec_local_iov(x, st->lbuf, st->loff, st->len, local);
            if (rc)
                return rc;
            if (!st->len)
                continue;
            kcoll_chan_seg_t *last = nseg ? &seg[nseg - 1] : NULL;
            if (last && last->buf == st->pbuf && last->off + last->len == st->poff)
                last->len += st->len; /* continues the last range */
            else
                seg[nseg++] = (kcoll_chan_seg_t){.buf = st->pbuf, .off = st->poff, .len = st->len};
        }
        if (!nseg) {
            *n = k;
            return KCOLL_OK;
        }
        char why[200] = "";
        kcoll_status_t rc = kcoll_chan_start(x->ctl->chan, &x->cx, first->peer,
                                             reading ? KCOLL_CHAN_READ : KCOLL_CHAN_WRITE,
                                             eng->path, x->seq, seg, nseg, local->v, local->n,
                                             why, sizeof why);
        if (rc == KCOLL_IN_PROGRESS) /* another run of this process has the mailbox */
            x->blocked_on = first->peer;
        if (rc)
            return rc == KCOLL_IN_PROGRESS ? rc
                                           : kcoll_exec_xfer_failed(x, eng, first, bytes, rc, why);
        x->cx_steps = k;
        x->cx_engine = eng;
        return kcoll_exec_chan_poll(x, n);
    }
    for (int i = x->pc; i < x->pc + k; i++) {
        const kcoll_step_t *st = &x->sched->steps[i];
        const kcoll_dmap_t *rmap;
        kcoll_expo_t *e;
        char *r;
        kcoll_status_t rc = kcoll_exec_peer_buf(x, st->peer, st->pbuf, st->poff, st->len, &e, &r);
        if (!rc)
            rc = kcoll_exec_peer_map(x, eng, st->peer, st->pbuf, e, &rmap);
        if (!rc)
            rc = kcoll_exec_local_iov(x, st->lbuf, st->loff, st->len, local);
        if (rc)
            return rc;
        if (kcoll_dmap_iov(rmap, r, st->poff, st->len, remote))
            return KCOLL_ERR_NOMEM;
    }
    pid_t pid = x->ctl->pids[first->peer];
    kcoll_status_t rc = reading ? eng->readv(pid, local->v, local->n, remote->v, remote->n)
                                : eng->writev(pid, local->v, local->n, remote->v, remote->n);
    if (rc)
        return kcoll_exec_xfer_failed(x, eng, first, bytes, rc, NULL);
    x->moved[eng->id] += bytes;
    *n = k;
    return KCOLL_OK;
}

static kcoll_status_t kcoll_exec_extern(kcoll_exec_t *x, const kcoll_step_t *st)
{
    if (st->flag == KCOLL_EXTERN_XCOLL) {
        kcoll_status_t rc;
        if (!x->xhost || (int)st->value >= x->sched->nxc) {
            snprintf(x->errmsg, sizeof x->errmsg,
                     "EXTERN step names host collective %u of %d%s", st->value, x->sched->nxc,
                     x->xhost ? "" : ", and nothing runs host collectives here");
            return KCOLL_ERR_ARG;
        }
        const int id = (int)st->value;
        if (st->xpart == KCOLL_XPART_END) {
            if ((rc = x->xhost->test(x->xdata, id, x->errmsg, sizeof x->errmsg)) == KCOLL_OK)
                x->xlive--;
            return rc;
        }
        if (x->xstarted != x->pc) {
            const kcoll_xcoll_t *xc = &x->sched->xc[id];
            const int split = st->xpart == KCOLL_XPART_BEGIN;
            rc = x->xhost->start(x->xdata, id, xc, kcoll_sched_xlens(x->sched, xc), x->bufs, split,
                                 x->errmsg, sizeof x->errmsg);
            if (rc) /* not started (not yet, or failed) */
                return rc;
            x->xstarted = x->pc;
            if (split) { /* in flight: the END step waits for it */
                x->xlive++;
                return KCOLL_OK;
            }
        }
        return x->xhost->test(x->xdata, id, x->errmsg, sizeof x->errmsg);
    }
    if ((int)st->value >= x->nxops || !x->xops[st->value]) {
        snprintf(x->errmsg, sizeof x->errmsg, "EXTERN step names operation %u of %d",
                 st->value, x->nxops);
        return KCOLL_ERR_ARG;
    }
    kcoll_xop_t *op = x->xops[st->value];
    kcoll_status_t rc;
    if (x->xstarted != x->pc) {
        x->xstarted = x->pc;
        if ((rc = op->start(op, x->errmsg, sizeof x->errmsg)))
            return rc;
    }
    rc = op->test(op, x->errmsg, sizeof x->errmsg);
    if (rc == KCOLL_IN_PROGRESS)
        x->blocked_on = op->peer;
    return rc;
}

kcoll_status_t kcoll_exec_progress(kcoll_exec_t *x)
{
    const kcoll_ctl_t *c = x->ctl;
    const kcoll_sched_t *s = x->sched;
    kcoll_lane_t *me = kcoll_ctl_lane(c, c->rank, x->seq);

    x->blocked_line = NULL;
    if (c->chan)
        kcoll_chan_serve(c->chan);
    /* split host collectives in flight move only inside the host's calls,
     * and a member on another node may need this rank's part of one while
     * this rank waits for its node: every turn gives them one */
    if (x->xlive) {
        kcoll_status_t rc = x->xhost->poll(x->xdata, x->errmsg, sizeof x->errmsg);
        if (rc)
            return rc;
    }
    while (x->pc < s->n) {
        const kcoll_step_t *st = &s->steps[x->pc];
        kcoll_status_t rc = KCOLL_OK;
        int done = 1;
        switch ((kcoll_step_kind_t)st->kind) {
        case KCOLL_STEP_EXPOSE: {
            kcoll_expo_t *e = &me->expose[st->lbuf];
            /* a contiguous buffer in shareable memory: peers may map it */
            uint64_t dref = c->direct && !x->maps[st->lbuf]
                                ? kcoll_direct_ref(x->bufs[st->lbuf], x->lens[st->lbuf])
                                : 0;
            /* relaxed: published by the release store of seq below */
            atomic_store_explicit(&e->direct, dref, memory_order_relaxed);
            /* relaxed: published by the release store of seq below */
            atomic_store_explicit(&e->addr, (uint64_t)(uintptr_t)x->bufs[st->lbuf],
                                  memory_order_relaxed);
            /* relaxed: published by the release store of seq below */
            atomic_store_explicit(&e->len, x->bufs[st->lbuf] ? x->lens[st->lbuf] : 0,
                                  memory_order_relaxed);
            /* relaxed: published by the release store of seq below */
            atomic_store_explicit(&e->map, (uint64_t)(uintptr_t)x->maps[st->lbuf],
                                  memory_order_relaxed);
            /* release: publishes addr, len and the buffer's contents to peers acquiring seq */
            atomic_store_explicit(&e->seq, x->seq, memory_order_release);
            break;
        }
        case KCOLL_STEP_READ:
        case KCOLL_STEP_WRITE:
            /* and each batch of copies too */
            if (x->xlive && (rc = x->xhost->poll(x->xdata, x->errmsg, sizeof x->errmsg)))
                break;
            rc = kcoll_exec_transfer(x, &done);
            break;
        case KCOLL_STEP_COPY:
            rc = kcoll_exec_local_op(x, st, 0);
            break;
        case KCOLL_STEP_REDUCE:
            rc = kcoll_exec_local_op(x, st, 1);
            break;
        case KCOLL_STEP_SIGNAL:
            /* everything this rank copied before is visible to whoever
             * acquires the flag; sleepers on it are woken (sched/wait.h) */
            kcoll_flag_store(&me->flag[st->flag], kcoll_flag_word(x->seq, st->value));
            break;
        case KCOLL_STEP_WAIT: {
            kcoll_line_t *f = &kcoll_ctl_lane(c, st->peer, x->seq)->flag[st->flag];
            /* acquire: pairs with the peer's release in SIGNAL; its data becomes visible */
            const uint64_t want = kcoll_flag_word(x->seq, st->value);
            if (atomic_load_explicit(&f->v, memory_order_acquire) < want) {
                x->blocked_on = st->peer;
                /* a waiter may sleep on the flag only where no peer needs
                 * it meanwhile: with a two-sided engine the peers' requests
                 * ring its doorbell, another word, and must be served; a
                 * host collective in flight needs its turns (above) */
                x->blocked_line = x->engine->two_sided || x->xlive ? NULL : f;
                x->blocked_want = want;
                rc = KCOLL_IN_PROGRESS;
            }
            break;
        }
        case KCOLL_STEP_EXTERN:
            rc = kcoll_exec_extern(x, st);
            break;
        default:
            snprintf(x->errmsg, sizeof x->errmsg, "unknown step kind %d", st->kind);
            rc = KCOLL_ERR_ARG;
        }
        if (rc)
            return rc;
        x->pc += done;
    }
    x->blocked_on = -1;
    return KCOLL_OK;
}

kcoll_status_t kcoll_exec_run(kcoll_exec_t *x)
{
    kcoll_pause_t pause;
    kcoll_watch_t watch;
    kcoll_pause_init(&pause);
    kcoll_watch_init(&watch);
    int last_pc = x->pc;

    for (;;) {
        kcoll_status_t rc = kcoll_exec_progress(x);
        if (rc != KCOLL_IN_PROGRESS)
            return rc;
        if (x->pc != last_pc) { /* headway: start a fresh wait */
            last_pc = x->pc;
            kcoll_pause_reset(&pause);
            kcoll_watch_reset(&watch);
        }
        rc = kcoll_watch(&watch, x->ctl, x->blocked_on, x->seq, x->errmsg, sizeof x->errmsg);
        if (rc)
            return rc;
        kcoll_pause_on(&pause, x->blocked_line, x->blocked_want);
    }
}
