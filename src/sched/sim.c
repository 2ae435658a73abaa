/* The simulator: all ranks' schedules of one collective, run in one
 * process on real bytes (see sim.h for what it finds).
 *
 * Happens-before is tracked with vector clocks. Each executed step ticks
 * its rank's own component. EXPOSE and SIGNAL record the rank's clock;
 * a READ/WRITE of an exposed buffer joins the exposure's clock (that is
 * what the executor's acquire load of the exposure gives), and a WAIT joins
 * the clock of the first SIGNAL that satisfied it. Every data step records
 * its accesses (owner, buffer, byte range, read or write, rank, clock) and
 * is checked against the earlier accesses to overlapping bytes of the same
 * buffer: if one of the two writes and the earlier is not ordered before
 * the later, the schedules race. Because the verdict uses the order the
 * schedules enforce and not the order this run happened to pick, one run
 * finds a race that would show only under some other interleaving.
 *
 * When all ranks are done, every access a rank made to another rank's
 * buffer must be ordered before the owner's last step: after that the
 * owner has returned to its caller, who may reuse the buffer.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "sched/sim.h"

typedef struct {
    int rank;       /* who accessed */
    int step;       /* which step of that rank */
    uint32_t clock; /* that rank's own clock at the access */
    int write;
    size_t off, len;
} kcoll_sim_access_t;

typedef struct {
    kcoll_sim_access_t *a;
    int n, cap;
} kcoll_sim_bucket_t;

typedef struct {
    uint32_t value;
    uint32_t *vc; /* clock of the signalling rank at the SIGNAL */
} kcoll_sim_signal_t;

typedef struct {
    kcoll_sim_signal_t *s;
    int n, cap;
} kcoll_sim_history_t;

struct kcoll_sim {
    int p;
    kcoll_sched_t *sched;                  /* [p] */
    uint8_t *(*data)[KCOLL_NBUF];          /* [p][NBUF] */
    size_t (*len)[KCOLL_NBUF];
    uint16_t *(*writes)[KCOLL_NBUF];
    int *pc;
    uint32_t *vc;                          /* [p][p] */
    uint32_t *final_vc;                    /* [p][p] */
    int (*exposed)[KCOLL_NBUF];
    uint32_t *expo_vc;                     /* [p][NBUF][p] */
    kcoll_sim_history_t (*flags)[KCOLL_NFLAG];
    kcoll_sim_bucket_t (*buckets)[KCOLL_NBUF];
    const kcoll_op_t *op;                  /* for REDUCE steps */
    uint8_t (*alias)[KCOLL_NBUF];          /* [p][NBUF]: buffer whose accesses a name's share */
    char err[768];
};

kcoll_sim_t *kcoll_sim_new(int p)
{
    kcoll_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t P = (size_t)p;
    s->p = p;
    s->sched = calloc(P, sizeof *s->sched);
    s->data = calloc(P, sizeof *s->data);
    s->len = calloc(P, sizeof *s->len);
    s->writes = calloc(P, sizeof *s->writes);
    s->pc = calloc(P, sizeof *s->pc);
    s->vc = calloc(P * P, sizeof *s->vc);
    s->final_vc = calloc(P * P, sizeof *s->final_vc);
    s->exposed = calloc(P, sizeof *s->exposed);
    s->expo_vc = calloc(P * KCOLL_NBUF * P, sizeof *s->expo_vc);
    s->flags = calloc(P, sizeof *s->flags);
    s->buckets = calloc(P, sizeof *s->buckets);
    s->alias = calloc(P, sizeof *s->alias);
    if (!s->sched || !s->data || !s->len || !s->writes || !s->pc || !s->vc || !s->final_vc ||
        !s->exposed || !s->expo_vc || !s->flags || !s->buckets || !s->alias) {
        kcoll_sim_free(s);
        return NULL;
    }
    for (int r = 0; r < p; r++) {
        kcoll_sched_init(&s->sched[r]);
        for (int b = 0; b < KCOLL_NBUF; b++)
            s->alias[r][b] = (uint8_t)b;
    }
    return s;
}

void kcoll_sim_free(kcoll_sim_t *s)
{
    if (!s)
        return;
    for (int r = 0; s->sched && r < s->p; r++) {
        kcoll_sched_free(&s->sched[r]);
        for (int b = 0; b < KCOLL_NBUF; b++) {
            if (s->writes)
                free(s->writes[r][b]);
            if (s->buckets)
                free(s->buckets[r][b].a);
        }
        for (int f = 0; s->flags && f < KCOLL_NFLAG; f++) {
            for (int i = 0; i < s->flags[r][f].n; i++)
                free(s->flags[r][f].s[i].vc);
            free(s->flags[r][f].s);
        }
    }
    free(s->sched);
    free(s->data);
    free(s->len);
    free(s->writes);
    free(s->pc);
    free(s->vc);
    free(s->final_vc);
    free(s->exposed);
    free(s->expo_vc);
    free(s->flags);
    free(s->buckets);
    free(s->alias);
    free(s);
}

void kcoll_sim_set_buffer(kcoll_sim_t *s, int rank, kcoll_buf_t buf, uint8_t *data, size_t len)
{
    s->data[rank][buf] = data;
    s->len[rank][buf] = len;
    free(s->writes[rank][buf]);
    s->writes[rank][buf] = calloc(len ? len : 1, sizeof(uint16_t));
}

void kcoll_sim_set_op(kcoll_sim_t *s, const kcoll_op_t *op)
{
    s->op = op;
}

void kcoll_sim_alias(kcoll_sim_t *s, int rank, kcoll_buf_t buf, kcoll_buf_t same_as)
{
    s->alias[rank][buf] = s->alias[rank][same_as];
}

kcoll_sched_t *kcoll_sim_sched(kcoll_sim_t *s, int rank)
{
    return &s->sched[rank];
}

const char *kcoll_sim_error(const kcoll_sim_t *s)
{
    return s->err;
}

const uint16_t *kcoll_sim_writes(const kcoll_sim_t *s, int rank, kcoll_buf_t buf)
{
    return s->writes[rank][buf];
}

static kcoll_status_t kcoll_sim_fail(kcoll_sim_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return KCOLL_ERR_SCHED;
}

static uint32_t *kcoll_sim_vc(kcoll_sim_t *s, int r)
{
    return &s->vc[(size_t)r * (size_t)s->p];
}

static void kcoll_sim_join(kcoll_sim_t *s, int r, const uint32_t *other)
{
    uint32_t *vc = kcoll_sim_vc(s, r);
    for (int q = 0; q < s->p; q++)
        if (other[q] > vc[q])
            vc[q] = other[q];
}

static const char *kcoll_sim_kind_name(int kind)
{
    static const char *const names[] = {"EXPOSE", "READ",   "WRITE", "COPY",
                                        "SIGNAL", "WAIT",   "REDUCE"};
    return kind >= 0 && kind <= KCOLL_STEP_REDUCE ? names[kind] : "?";
}

/* Record an access by rank r (at its current step) to owner's buffer and
 * check it against earlier conflicting accesses. */
static kcoll_status_t kcoll_sim_access(kcoll_sim_t *s, int r, int owner, int buf, size_t off,
                                       size_t len, int write)
{
    kcoll_sim_bucket_t *bk = &s->buckets[owner][s->alias[owner][buf]];
    const uint32_t *vc = kcoll_sim_vc(s, r);
    for (int i = 0; i < bk->n; i++) {
        const kcoll_sim_access_t *e = &bk->a[i];
        if (!(write || e->write) || e->rank == r)
            continue;
        if (e->off >= off + len || off >= e->off + e->len)
            continue;
        if (e->clock <= vc[e->rank])
            continue; /* ordered: e happens before this access */
        size_t lo = e->off > off ? e->off : off;
        return kcoll_sim_fail(
            s,
            "race on rank %d's %s bytes %zu..: rank %d's %s (step %d, %s) is not ordered after "
            "rank %d's %s (step %d, %s)",
            owner, kcoll_buf_name(buf), lo, r, write ? "write" : "read", s->pc[r],
            kcoll_sim_kind_name(s->sched[r].steps[s->pc[r]].kind), e->rank,
            e->write ? "write" : "read", e->step,
            kcoll_sim_kind_name(s->sched[e->rank].steps[e->step].kind));
    }
    if (kcoll_grow((void **)&bk->a, &bk->cap, bk->n, sizeof *bk->a, 16))
        return KCOLL_ERR_NOMEM;
    bk->a[bk->n++] = (kcoll_sim_access_t){r, s->pc[r], vc[r], write, off, len};
    return KCOLL_OK;
}

static kcoll_status_t kcoll_sim_bounds(kcoll_sim_t *s, int r, int owner, int buf, size_t off,
                                       size_t len)
{
    if (!s->data[owner][buf] && len)
        return kcoll_sim_fail(s, "rank %d step %d: rank %d has no %s buffer", r, s->pc[r], owner,
                              kcoll_buf_name(buf));
    if (off > s->len[owner][buf] || len > s->len[owner][buf] - off)
        return kcoll_sim_fail(s, "rank %d step %d: bytes %zu..%zu of rank %d's %s are out of bounds (%zu)",
                              r, s->pc[r], off, off + len, owner, kcoll_buf_name(buf),
                              s->len[owner][buf]);
    return KCOLL_OK;
}

/* Move len bytes and count the writes of the destination bytes. */
static void kcoll_sim_move(kcoll_sim_t *s, int dr, int db, size_t doff, int sr, int sb,
                           size_t soff, size_t len)
{
    memmove(s->data[dr][db] + doff, s->data[sr][sb] + soff, len);
    uint16_t *w = s->writes[dr][db] + doff;
    for (size_t i = 0; i < len; i++)
        if (w[i] < UINT16_MAX)
            w[i]++;
}

/* Try to run rank r's next step. Returns KCOLL_OK (ran), KCOLL_IN_PROGRESS
 * (blocked) or an error. */
static kcoll_status_t kcoll_sim_step(kcoll_sim_t *s, int r)
{
    const kcoll_step_t *st = &s->sched[r].steps[s->pc[r]];
    uint32_t *vc = kcoll_sim_vc(s, r);
    int p = s->p;
    kcoll_status_t rc;

    /* checks that do not depend on other ranks, and blocking conditions */
    switch ((kcoll_step_kind_t)st->kind) {
    case KCOLL_STEP_EXPOSE:
    case KCOLL_STEP_SIGNAL:
    case KCOLL_STEP_COPY:
    case KCOLL_STEP_REDUCE:
        if (st->kind == KCOLL_STEP_REDUCE &&
            (!s->op || st->len % s->op->esize || (st->flag && !kcoll_op_has_rev(s->op))))
            return kcoll_sim_fail(s, "rank %d step %d: REDUCE of %zu bytes without an operation "
                                  "of that element size", r, s->pc[r], st->len);
        if (st->kind == KCOLL_STEP_REDUCE && st->pbuf >= KCOLL_NBUF)
            return kcoll_sim_fail(s, "rank %d step %d: bad buffer", r, s->pc[r]);
        if (st->kind != KCOLL_STEP_SIGNAL && st->lbuf >= KCOLL_NBUF)
            return kcoll_sim_fail(s, "rank %d step %d: bad buffer", r, s->pc[r]);
        if (st->kind == KCOLL_STEP_SIGNAL && st->flag >= KCOLL_NFLAG)
            return kcoll_sim_fail(s, "rank %d step %d: bad flag", r, s->pc[r]);
        break;
    case KCOLL_STEP_READ:
    case KCOLL_STEP_WRITE:
        if (st->peer < 0 || st->peer >= p || st->peer == r || st->pbuf >= KCOLL_NBUF ||
            st->lbuf >= KCOLL_NBUF)
            return kcoll_sim_fail(s, "rank %d step %d: bad peer %d or buffer", r, s->pc[r],
                                  st->peer);
        if (!s->exposed[st->peer][st->pbuf])
            return KCOLL_IN_PROGRESS;
        break;
    case KCOLL_STEP_WAIT: {
        if (st->peer < 0 || st->peer >= p || st->peer == r || st->flag >= KCOLL_NFLAG)
            return kcoll_sim_fail(s, "rank %d step %d: bad peer %d or flag", r, s->pc[r],
                                  st->peer);
        break;
    }
    default:
        return kcoll_sim_fail(s, "rank %d step %d: unknown step kind %d", r, s->pc[r], st->kind);
    }

    const kcoll_sim_signal_t *sig = NULL;
    if (st->kind == KCOLL_STEP_WAIT) {
        const kcoll_sim_history_t *h = &s->flags[st->peer][st->flag];
        for (int i = 0; i < h->n && !sig; i++)
            if (h->s[i].value >= st->value)
                sig = &h->s[i];
        if (!sig)
            return KCOLL_IN_PROGRESS;
    }

    vc[r]++; /* this step is a new event of rank r */

    switch ((kcoll_step_kind_t)st->kind) {
    case KCOLL_STEP_EXPOSE:
        s->exposed[r][st->lbuf] = 1;
        memcpy(&s->expo_vc[((size_t)r * KCOLL_NBUF + st->lbuf) * (size_t)p], vc,
               (size_t)p * sizeof *vc);
        break;
    case KCOLL_STEP_SIGNAL: {
        kcoll_sim_history_t *h = &s->flags[r][st->flag];
        if (h->n && h->s[h->n - 1].value > st->value)
            return kcoll_sim_fail(s, "rank %d step %d: flag %s signalled %u after %u (flags only grow)",
                                  r, s->pc[r], kcoll_flag_name(st->flag), st->value,
                                  h->s[h->n - 1].value);
        if (kcoll_grow((void **)&h->s, &h->cap, h->n, sizeof *h->s, 4))
            return KCOLL_ERR_NOMEM;
        uint32_t *snap = malloc((size_t)p * sizeof *snap);
        if (!snap)
            return KCOLL_ERR_NOMEM;
        memcpy(snap, vc, (size_t)p * sizeof *vc);
        h->s[h->n++] = (kcoll_sim_signal_t){st->value, snap};
        break;
    }
    case KCOLL_STEP_WAIT:
        kcoll_sim_join(s, r, sig->vc);
        break;
    case KCOLL_STEP_READ:
    case KCOLL_STEP_WRITE: {
        int reading = st->kind == KCOLL_STEP_READ;
        kcoll_sim_join(s, r, &s->expo_vc[((size_t)st->peer * KCOLL_NBUF + st->pbuf) * (size_t)p]);
        if ((rc = kcoll_sim_bounds(s, r, st->peer, st->pbuf, st->poff, st->len)) ||
            (rc = kcoll_sim_bounds(s, r, r, st->lbuf, st->loff, st->len)))
            return rc;
        if ((rc = kcoll_sim_access(s, r, st->peer, st->pbuf, st->poff, st->len, !reading)) ||
            (rc = kcoll_sim_access(s, r, r, st->lbuf, st->loff, st->len, reading)))
            return rc;
        if (reading)
            kcoll_sim_move(s, r, st->lbuf, st->loff, st->peer, st->pbuf, st->poff, st->len);
        else
            kcoll_sim_move(s, st->peer, st->pbuf, st->poff, r, st->lbuf, st->loff, st->len);
        break;
    }
    case KCOLL_STEP_COPY:
        if ((rc = kcoll_sim_bounds(s, r, r, st->lbuf, st->loff, st->len)) ||
            (rc = kcoll_sim_bounds(s, r, r, st->pbuf, st->poff, st->len)))
            return rc;
        if ((rc = kcoll_sim_access(s, r, r, st->lbuf, st->loff, st->len, 0)) ||
            (rc = kcoll_sim_access(s, r, r, st->pbuf, st->poff, st->len, 1)))
            return rc;
        kcoll_sim_move(s, r, st->pbuf, st->poff, r, st->lbuf, st->loff, st->len);
        break;
    case KCOLL_STEP_REDUCE: {
        if ((rc = kcoll_sim_bounds(s, r, r, st->lbuf, st->loff, st->len)) ||
            (rc = kcoll_sim_bounds(s, r, r, st->pbuf, st->poff, st->len)))
            return rc;
        /* the destination is read and written: recorded as a write, which
         * conflicts with every other access to those bytes */
        if ((rc = kcoll_sim_access(s, r, r, st->lbuf, st->loff, st->len, 0)) ||
            (rc = kcoll_sim_access(s, r, r, st->pbuf, st->poff, st->len, 1)))
            return rc;
        if (st->flag)
            kcoll_op_apply_rev(s->op, s->data[r][st->lbuf] + st->loff,
                               s->data[r][st->pbuf] + st->poff, st->len);
        else
            kcoll_op_apply(s->op, s->data[r][st->lbuf] + st->loff,
                           s->data[r][st->pbuf] + st->poff, st->len);
        uint16_t *w = s->writes[r][st->pbuf] + st->poff;
        for (size_t i = 0; i < st->len; i++)
            if (w[i] < UINT16_MAX)
                w[i]++;
        break;
    }
    }
    s->pc[r]++;
    return KCOLL_OK;
}

static void kcoll_sim_describe_block(kcoll_sim_t *s, int r, char *out, size_t outlen)
{
    const kcoll_step_t *st = &s->sched[r].steps[s->pc[r]];
    if (st->kind == KCOLL_STEP_WAIT)
        snprintf(out, outlen, "rank %d step %d waits for rank %d %s >= %u", r, s->pc[r],
                 st->peer, kcoll_flag_name(st->flag), st->value);
    else
        snprintf(out, outlen, "rank %d step %d %s waits for rank %d to expose %s", r, s->pc[r],
                 kcoll_sim_kind_name(st->kind), st->peer, kcoll_buf_name(st->pbuf));
}

/* The user may reuse a buffer once its owner returned: every peer access
 * to it must be ordered before the owner's last step. */
static kcoll_status_t kcoll_sim_check_lifetimes(kcoll_sim_t *s)
{
    for (int q = 0; q < s->p; q++) {
        const uint32_t *fin = &s->final_vc[(size_t)q * (size_t)s->p];
        for (int b = 0; b < KCOLL_NBUF; b++) {
            const kcoll_sim_bucket_t *bk = &s->buckets[q][b];
            for (int i = 0; i < bk->n; i++) {
                const kcoll_sim_access_t *e = &bk->a[i];
                if (e->rank != q && e->clock > fin[e->rank])
                    return kcoll_sim_fail(
                        s,
                        "use after return: rank %d's %s (step %d) of rank %d's %s bytes %zu.. is not "
                        "ordered before rank %d returns",
                        e->rank, e->write ? "write" : "read", e->step, q, kcoll_buf_name(b),
                        e->off, q);
            }
        }
    }
    return KCOLL_OK;
}

kcoll_status_t kcoll_sim_run(kcoll_sim_t *s, unsigned seed)
{
    int p = s->p;
    unsigned rng = seed ? seed : 1;
    int *order = malloc((size_t)p * sizeof *order);
    if (!order)
        return KCOLL_ERR_NOMEM;
    s->err[0] = '\0';
    for (int r = 0; r < p; r++) {
        order[r] = r;
        if (s->sched[r].err) {
            free(order);
            return kcoll_sim_fail(s, "rank %d: building its schedule failed: %s", r,
                                  kcoll_status_str(s->sched[r].err));
        }
    }
    int remaining = 0;
    for (int r = 0; r < p; r++) {
        if (s->pc[r] < s->sched[r].n)
            remaining++;
        else /* an empty schedule returns at once */
            memcpy(&s->final_vc[(size_t)r * (size_t)p], kcoll_sim_vc(s, r),
                   (size_t)p * sizeof *s->vc);
    }

    kcoll_status_t rc = KCOLL_OK;
    while (remaining > 0) {
        int progressed = 0;
        if (seed) { /* a fresh random order and burst length each pass */
            for (int i = p - 1; i > 0; i--) {
                rng = rng * 1103515245u + 12345u;
                int j = (int)((rng >> 16) % (unsigned)(i + 1));
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        for (int i = 0; i < p; i++) {
            int r = order[i];
            int burst = 1;
            if (seed) {
                rng = rng * 1103515245u + 12345u;
                burst = 1 + (int)((rng >> 16) % 4);
            }
            for (int b = 0; b < burst && s->pc[r] < s->sched[r].n; b++) {
                rc = kcoll_sim_step(s, r);
                if (rc == KCOLL_IN_PROGRESS)
                    break;
                if (rc)
                    goto out;
                progressed = 1;
                if (s->pc[r] == s->sched[r].n) {
                    remaining--;
                    memcpy(&s->final_vc[(size_t)r * (size_t)p], kcoll_sim_vc(s, r),
                           (size_t)p * sizeof *s->vc);
                }
            }
        }
        if (!progressed) {
            char what[200];
            int n = snprintf(s->err, sizeof s->err, "deadlock:");
            for (int r = 0; r < p && n < (int)sizeof s->err - 2; r++)
                if (s->pc[r] < s->sched[r].n) {
                    kcoll_sim_describe_block(s, r, what, sizeof what);
                    n += snprintf(s->err + n, sizeof s->err - (size_t)n, " %s;", what);
                }
            rc = KCOLL_ERR_SCHED;
            goto out;
        }
    }
    rc = kcoll_sim_check_lifetimes(s);
out:
    free(order);
    if (rc == KCOLL_IN_PROGRESS)
        rc = KCOLL_OK;
    return rc;
}
