/* The simulator: all ranks' schedules of a team's collectives, run in one
 * process on real bytes (see sim.h for what it models and finds).
 *
 * Happens-before is tracked with vector clocks, one component per rank.
 * Each executed step ticks its rank's own component. EXPOSE and SIGNAL
 * record the rank's clock with the lane word they store; a READ/WRITE of
 * an exposed buffer joins the exposure's clock (that is what the
 * executor's acquire load of the exposure gives), a WAIT joins the clock
 * of the first signal of the lane's flag whose word satisfied it, and an
 * EXTERN joins the clocks of every rank's start of it. Every data step
 * records its accesses (collective, owner, buffer, byte range, read or
 * write, rank, clock) and is checked against the earlier accesses to
 * overlapping bytes of the same buffer: if one of the two writes and the
 * earlier is not ordered before the later, the schedules race. Because the
 * verdict uses the order the schedules enforce and not the order this run
 * happened to pick, one run finds a race that would show only under some
 * other interleaving.
 *
 * When a rank completes a collective, every access another rank made to
 * that rank's buffers of it must be ordered before its last step: after
 * that the owner has returned to its caller, who may reuse the buffer.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "sched/ctl.h"
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
    uint64_t word;
    uint32_t *vc; /* clock of the signalling rank at the SIGNAL */
} kcoll_sim_signal_t;

typedef struct {
    kcoll_sim_signal_t *s;
    int n, cap;
} kcoll_sim_history_t;

typedef struct {
    uint64_t seq;  /* collective number of the current exposure; 0: none */
    uint32_t *vc;  /* [p] clock at the EXPOSE */
} kcoll_sim_expo_t;

/* An external operation of one collective: shared by its participants. */
typedef struct {
    int participants, started;
    int counted;  /* 1 + the last rank counted among the participants */
    uint32_t *vc; /* [p] join of the starters' clocks */
} kcoll_sim_ext_t;

enum { KCOLL_SIM_IDLE, KCOLL_SIM_RUNNING, KCOLL_SIM_DONE };

/* One collective of the team. */
typedef struct {
    int blocking;
    kcoll_sched_t *sched;             /* [p] */
    uint8_t *(*data)[KCOLL_NBUF];     /* [p][NBUF] */
    size_t (*len)[KCOLL_NBUF];
    uint16_t *(*writes)[KCOLL_NBUF];
    uint8_t (*alias)[KCOLL_NBUF];     /* buffer whose accesses a name's share */
    kcoll_sim_bucket_t (*buckets)[KCOLL_NBUF];
    const kcoll_op_t *op;             /* for REDUCE steps */
    int *pc;                          /* [p] */
    int *state;                       /* [p] KCOLL_SIM_* */
    int *xpc;                         /* [p] pc of the EXTERN step started, or -1 */
    uint32_t *final_vc;               /* [p][p] */
    kcoll_sim_ext_t *ext;             /* per external operation number */
    int next;
} kcoll_sim_coll_t;

struct kcoll_sim {
    int p, lanes;
    kcoll_sim_coll_t *coll;
    int ncoll, capcoll, cur;
    uint32_t *vc;                     /* [p][p] */
    kcoll_sim_expo_t *expo;           /* [p][lanes][NBUF] */
    kcoll_sim_history_t *flags;       /* [p][lanes][NFLAG] */
    int *started;                     /* [p]: collectives started by each rank */
    char err[768];
};

static uint32_t *kcoll_sim_vc(kcoll_sim_t *s, int r)
{
    return &s->vc[(size_t)r * (size_t)s->p];
}

static kcoll_sim_expo_t *kcoll_sim_expo(kcoll_sim_t *s, int r, int lane, int buf)
{
    return &s->expo[((size_t)r * KCOLL_LANES + (size_t)lane) * KCOLL_NBUF + (size_t)buf];
}

static kcoll_sim_history_t *kcoll_sim_flag(kcoll_sim_t *s, int r, int lane, int flag)
{
    return &s->flags[((size_t)r * KCOLL_LANES + (size_t)lane) * KCOLL_NFLAG + (size_t)flag];
}

static void kcoll_sim_coll_free(kcoll_sim_coll_t *c, int p)
{
    for (int r = 0; c->sched && r < p; r++) {
        kcoll_sched_free(&c->sched[r]);
        for (int b = 0; b < KCOLL_NBUF; b++) {
            if (c->writes)
                free(c->writes[r][b]);
            if (c->buckets)
                free(c->buckets[r][b].a);
        }
    }
    for (int i = 0; i < c->next; i++)
        free(c->ext[i].vc);
    free(c->ext);
    free(c->sched);
    free(c->data);
    free(c->len);
    free(c->writes);
    free(c->alias);
    free(c->buckets);
    free(c->pc);
    free(c->state);
    free(c->xpc);
    free(c->final_vc);
}

static int kcoll_sim_coll_init(kcoll_sim_coll_t *c, int p, int blocking)
{
    const size_t P = (size_t)p;
    memset(c, 0, sizeof *c);
    c->blocking = blocking;
    c->sched = calloc(P, sizeof *c->sched);
    c->data = calloc(P, sizeof *c->data);
    c->len = calloc(P, sizeof *c->len);
    c->writes = calloc(P, sizeof *c->writes);
    c->alias = calloc(P, sizeof *c->alias);
    c->buckets = calloc(P, sizeof *c->buckets);
    c->pc = calloc(P, sizeof *c->pc);
    c->state = calloc(P, sizeof *c->state);
    c->xpc = calloc(P, sizeof *c->xpc);
    c->final_vc = calloc(P * P, sizeof *c->final_vc);
    if (!c->sched || !c->data || !c->len || !c->writes || !c->alias || !c->buckets || !c->pc ||
        !c->state || !c->xpc || !c->final_vc) {
        kcoll_sim_coll_free(c, p);
        return -1;
    }
    for (int r = 0; r < p; r++) {
        kcoll_sched_init(&c->sched[r]);
        c->xpc[r] = -1;
        for (int b = 0; b < KCOLL_NBUF; b++)
            c->alias[r][b] = (uint8_t)b;
    }
    return 0;
}

kcoll_sim_t *kcoll_sim_new(int p)
{
    kcoll_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    const size_t P = (size_t)p;
    s->p = p;
    s->lanes = KCOLL_LANES;
    s->vc = calloc(P * P, sizeof *s->vc);
    s->expo = calloc(P * KCOLL_LANES * KCOLL_NBUF, sizeof *s->expo);
    s->flags = calloc(P * KCOLL_LANES * KCOLL_NFLAG, sizeof *s->flags);
    s->started = calloc(P, sizeof *s->started);
    if (!s->vc || !s->expo || !s->flags || !s->started || kcoll_sim_add(s, 1) < 0) {
        kcoll_sim_free(s);
        return NULL;
    }
    return s;
}

void kcoll_sim_free(kcoll_sim_t *s)
{
    if (!s)
        return;
    for (int c = 0; c < s->ncoll; c++)
        kcoll_sim_coll_free(&s->coll[c], s->p);
    free(s->coll);
    for (size_t i = 0; s->expo && i < (size_t)s->p * KCOLL_LANES * KCOLL_NBUF; i++)
        free(s->expo[i].vc);
    for (size_t i = 0; s->flags && i < (size_t)s->p * KCOLL_LANES * KCOLL_NFLAG; i++) {
        for (int k = 0; k < s->flags[i].n; k++)
            free(s->flags[i].s[k].vc);
        free(s->flags[i].s);
    }
    free(s->vc);
    free(s->expo);
    free(s->flags);
    free(s->started);
    free(s);
}

int kcoll_sim_add(kcoll_sim_t *s, int blocking)
{
    if (kcoll_grow((void **)&s->coll, &s->capcoll, s->ncoll, sizeof *s->coll, 4) ||
        kcoll_sim_coll_init(&s->coll[s->ncoll], s->p, blocking))
        return -1;
    s->cur = s->ncoll++;
    return s->cur;
}

void kcoll_sim_set_blocking(kcoll_sim_t *s, int blocking)
{
    s->coll[s->cur].blocking = blocking;
}

void kcoll_sim_set_lanes(kcoll_sim_t *s, int lanes)
{
    if (lanes >= 1 && lanes <= KCOLL_LANES)
        s->lanes = lanes;
}

void kcoll_sim_set_buffer(kcoll_sim_t *s, int rank, kcoll_buf_t buf, uint8_t *data, size_t len)
{
    kcoll_sim_coll_t *c = &s->coll[s->cur];
    c->data[rank][buf] = data;
    c->len[rank][buf] = len;
    free(c->writes[rank][buf]);
    c->writes[rank][buf] = calloc(len ? len : 1, sizeof(uint16_t));
}

void kcoll_sim_set_op(kcoll_sim_t *s, const kcoll_op_t *op)
{
    s->coll[s->cur].op = op;
}

void kcoll_sim_alias(kcoll_sim_t *s, int rank, kcoll_buf_t buf, kcoll_buf_t same_as)
{
    kcoll_sim_coll_t *c = &s->coll[s->cur];
    c->alias[rank][buf] = c->alias[rank][same_as];
}

kcoll_sched_t *kcoll_sim_sched(kcoll_sim_t *s, int rank)
{
    return &s->coll[s->cur].sched[rank];
}

const char *kcoll_sim_error(const kcoll_sim_t *s)
{
    return s->err;
}

const uint16_t *kcoll_sim_writes(const kcoll_sim_t *s, int rank, kcoll_buf_t buf)
{
    return s->coll[s->cur].writes[rank][buf];
}

static kcoll_status_t kcoll_sim_fail(kcoll_sim_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return KCOLL_ERR_SCHED;
}

static void kcoll_sim_join(kcoll_sim_t *s, int r, const uint32_t *other)
{
    uint32_t *vc = kcoll_sim_vc(s, r);
    for (int q = 0; q < s->p; q++)
        if (other[q] > vc[q])
            vc[q] = other[q];
}

static uint32_t *kcoll_sim_snapshot(kcoll_sim_t *s, int r)
{
    uint32_t *snap = malloc((size_t)s->p * sizeof *snap);
    if (snap)
        memcpy(snap, kcoll_sim_vc(s, r), (size_t)s->p * sizeof *snap);
    return snap;
}

static const char *kcoll_sim_kind_name(int kind)
{
    static const char *const names[] = {"EXPOSE", "READ", "WRITE", "COPY",
                                        "SIGNAL", "WAIT", "REDUCE", "EXTERN"};
    return kind >= 0 && kind <= KCOLL_STEP_EXTERN ? names[kind] : "?";
}

/* Record an access by rank r (at its current step of collective ci) to
 * owner's buffer of ci and check it against earlier conflicting accesses. */
static kcoll_status_t kcoll_sim_access(kcoll_sim_t *s, int ci, int r, int owner, int buf,
                                       size_t off, size_t len, int write)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    kcoll_sim_bucket_t *bk = &c->buckets[owner][c->alias[owner][buf]];
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
            "collective %d: race on rank %d's %s bytes %zu..: rank %d's %s (step %d, %s) is not "
            "ordered after rank %d's %s (step %d, %s)",
            ci, owner, kcoll_buf_name(buf), lo, r, write ? "write" : "read", c->pc[r],
            kcoll_sim_kind_name(c->sched[r].steps[c->pc[r]].kind), e->rank,
            e->write ? "write" : "read", e->step,
            kcoll_sim_kind_name(c->sched[e->rank].steps[e->step].kind));
    }
    if (kcoll_grow((void **)&bk->a, &bk->cap, bk->n, sizeof *bk->a, 16))
        return KCOLL_ERR_NOMEM;
    bk->a[bk->n++] = (kcoll_sim_access_t){r, c->pc[r], vc[r], write, off, len};
    return KCOLL_OK;
}

static kcoll_status_t kcoll_sim_bounds(kcoll_sim_t *s, int ci, int r, int owner, int buf,
                                       size_t off, size_t len)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    if (!c->data[owner][buf] && len)
        return kcoll_sim_fail(s, "collective %d rank %d step %d: rank %d has no %s buffer", ci, r,
                              c->pc[r], owner, kcoll_buf_name(buf));
    if (off > c->len[owner][buf] || len > c->len[owner][buf] - off)
        return kcoll_sim_fail(s,
                              "collective %d rank %d step %d: bytes %zu..%zu of rank %d's %s are "
                              "out of bounds (%zu)",
                              ci, r, c->pc[r], off, off + len, owner, kcoll_buf_name(buf),
                              c->len[owner][buf]);
    return KCOLL_OK;
}

/* Move len bytes and count the writes of the destination bytes. */
static void kcoll_sim_move(kcoll_sim_coll_t *c, int dr, int db, size_t doff, int sr, int sb,
                           size_t soff, size_t len)
{
    memmove(c->data[dr][db] + doff, c->data[sr][sb] + soff, len);
    uint16_t *w = c->writes[dr][db] + doff;
    for (size_t i = 0; i < len; i++)
        if (w[i] < UINT16_MAX)
            w[i]++;
}

/* Try to run rank r's next step of collective ci. Returns KCOLL_OK (ran),
 * KCOLL_IN_PROGRESS (blocked) or an error. */
static kcoll_status_t kcoll_sim_step(kcoll_sim_t *s, int ci, int r)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    const kcoll_step_t *st = &c->sched[r].steps[c->pc[r]];
    const int p = s->p, lane = (ci + 1) % s->lanes;
    uint32_t *vc = kcoll_sim_vc(s, r);
    kcoll_status_t rc;

    /* checks that do not depend on other ranks, and blocking conditions */
    switch ((kcoll_step_kind_t)st->kind) {
    case KCOLL_STEP_EXPOSE:
    case KCOLL_STEP_SIGNAL:
    case KCOLL_STEP_COPY:
    case KCOLL_STEP_REDUCE:
        if (st->kind == KCOLL_STEP_REDUCE && !kcoll_op_fits(c->op, st->len, st->rev))
            return kcoll_sim_fail(s, "collective %d rank %d step %d: REDUCE of %zu bytes without "
                                  "an operation of that element size", ci, r, c->pc[r], st->len);
        if (st->kind == KCOLL_STEP_REDUCE && st->dbuf >= KCOLL_NBUF)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: bad buffer", ci, r, c->pc[r]);
        if (st->kind != KCOLL_STEP_SIGNAL && st->lbuf >= KCOLL_NBUF)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: bad buffer", ci, r, c->pc[r]);
        if (st->kind == KCOLL_STEP_SIGNAL && st->flag >= KCOLL_NFLAG)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: bad flag", ci, r, c->pc[r]);
        break;
    case KCOLL_STEP_READ:
    case KCOLL_STEP_WRITE: {
        if (st->peer < 0 || st->peer >= p || st->peer == r || st->pbuf >= KCOLL_NBUF ||
            st->lbuf >= KCOLL_NBUF)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: bad peer %d or buffer", ci,
                                  r, c->pc[r], st->peer);
        if (st->kind == KCOLL_STEP_READ && st->staged) {
            const kcoll_sched_t *sc = &c->sched[r];
            const kcoll_step_t *nx = c->pc[r] + 1 < sc->n ? st + 1 : NULL;
            if (!nx || nx->kind != KCOLL_STEP_REDUCE || nx->sbuf != st->lbuf ||
                nx->soff != st->loff || nx->len != st->len)
                return kcoll_sim_fail(s, "collective %d rank %d step %d: a staged READ not "
                                      "followed by the REDUCE of exactly its bytes",
                                      ci, r, c->pc[r]);
        }
        const kcoll_sim_expo_t *e = kcoll_sim_expo(s, st->peer, lane, st->pbuf);
        if (e->seq < (uint64_t)ci + 1)
            return KCOLL_IN_PROGRESS;
        if (e->seq > (uint64_t)ci + 1)
            return kcoll_sim_fail(s,
                                  "collective %d rank %d step %d (%s): rank %d's %s exposure in "
                                  "lane %d already belongs to collective %" PRIu64,
                                  ci, r, c->pc[r], kcoll_sim_kind_name(st->kind), st->peer,
                                  kcoll_buf_name(st->pbuf), lane, e->seq - 1);
        break;
    }
    case KCOLL_STEP_WAIT:
        if (st->peer < 0 || st->peer >= p || st->peer == r || st->flag >= KCOLL_NFLAG)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: bad peer %d or flag", ci, r,
                                  c->pc[r], st->peer);
        break;
    case KCOLL_STEP_EXTERN:
        if ((int)st->value >= c->next)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: unknown operation %u", ci,
                                  r, c->pc[r], st->value);
        break;
    default:
        return kcoll_sim_fail(s, "collective %d rank %d step %d: unknown step kind %d", ci, r,
                              c->pc[r], st->kind);
    }

    const kcoll_sim_signal_t *sig = NULL;
    if (st->kind == KCOLL_STEP_WAIT) {
        const kcoll_sim_history_t *h = kcoll_sim_flag(s, st->peer, lane, st->flag);
        const uint64_t want = kcoll_flag_word((uint64_t)ci + 1, st->value);
        for (int i = 0; i < h->n && !sig; i++)
            if (h->s[i].word >= want)
                sig = &h->s[i];
        if (!sig)
            return KCOLL_IN_PROGRESS;
    }
    kcoll_sim_ext_t *ext = NULL;
    if (st->kind == KCOLL_STEP_EXTERN) {
        ext = &c->ext[st->value];
        /* the first attempt starts it: this rank's clock so far joins the event */
        if (c->xpc[r] != c->pc[r]) {
            c->xpc[r] = c->pc[r];
            for (int q = 0; q < p; q++)
                if (vc[q] > ext->vc[q])
                    ext->vc[q] = vc[q];
            ext->started++;
        }
        if (ext->started < ext->participants)
            return KCOLL_IN_PROGRESS;
    }

    vc[r]++; /* this step is a new event of rank r */

    switch ((kcoll_step_kind_t)st->kind) {
    case KCOLL_STEP_EXPOSE: {
        kcoll_sim_expo_t *e = kcoll_sim_expo(s, r, lane, st->lbuf);
        /* exposed again in the same collective: peers may access the
         * buffer from the first exposure on (the executor's word already
         * holds this collective), so its clock stays the first's */
        if (e->seq == (uint64_t)ci + 1)
            break;
        free(e->vc);
        if (!(e->vc = kcoll_sim_snapshot(s, r)))
            return KCOLL_ERR_NOMEM;
        e->seq = (uint64_t)ci + 1;
        break;
    }
    case KCOLL_STEP_SIGNAL: {
        kcoll_sim_history_t *h = kcoll_sim_flag(s, r, lane, st->flag);
        const uint64_t word = kcoll_flag_word((uint64_t)ci + 1, st->value);
        if (h->n && h->s[h->n - 1].word > word)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: flag %s signalled %u below "
                                  "an earlier word (flags only grow)",
                                  ci, r, c->pc[r], kcoll_flag_name(st->flag), st->value);
        if (kcoll_grow((void **)&h->s, &h->cap, h->n, sizeof *h->s, 4))
            return KCOLL_ERR_NOMEM;
        uint32_t *snap = kcoll_sim_snapshot(s, r);
        if (!snap)
            return KCOLL_ERR_NOMEM;
        h->s[h->n++] = (kcoll_sim_signal_t){word, snap};
        break;
    }
    case KCOLL_STEP_WAIT:
        kcoll_sim_join(s, r, sig->vc);
        break;
    case KCOLL_STEP_EXTERN:
        kcoll_sim_join(s, r, ext->vc);
        break;
    case KCOLL_STEP_READ:
    case KCOLL_STEP_WRITE: {
        int reading = st->kind == KCOLL_STEP_READ;
        kcoll_sim_join(s, r, kcoll_sim_expo(s, st->peer, lane, st->pbuf)->vc);
        if ((rc = kcoll_sim_bounds(s, ci, r, st->peer, st->pbuf, st->poff, st->len)) ||
            (rc = kcoll_sim_bounds(s, ci, r, r, st->lbuf, st->loff, st->len)))
            return rc;
        if ((rc = kcoll_sim_access(s, ci, r, st->peer, st->pbuf, st->poff, st->len, !reading)) ||
            (rc = kcoll_sim_access(s, ci, r, r, st->lbuf, st->loff, st->len, reading)))
            return rc;
        if (reading)
            kcoll_sim_move(c, r, st->lbuf, st->loff, st->peer, st->pbuf, st->poff, st->len);
        else
            kcoll_sim_move(c, st->peer, st->pbuf, st->poff, r, st->lbuf, st->loff, st->len);
        break;
    }
    case KCOLL_STEP_COPY:
        if ((rc = kcoll_sim_bounds(s, ci, r, r, st->sbuf, st->soff, st->len)) ||
            (rc = kcoll_sim_bounds(s, ci, r, r, st->dbuf, st->doff, st->len)))
            return rc;
        if ((rc = kcoll_sim_access(s, ci, r, r, st->sbuf, st->soff, st->len, 0)) ||
            (rc = kcoll_sim_access(s, ci, r, r, st->dbuf, st->doff, st->len, 1)))
            return rc;
        kcoll_sim_move(c, r, st->dbuf, st->doff, r, st->sbuf, st->soff, st->len);
        break;
    case KCOLL_STEP_REDUCE: {
        if ((rc = kcoll_sim_bounds(s, ci, r, r, st->sbuf, st->soff, st->len)) ||
            (rc = kcoll_sim_bounds(s, ci, r, r, st->dbuf, st->doff, st->len)))
            return rc;
        /* the destination is read and written: recorded as a write, which
         * conflicts with every other access to those bytes */
        if ((rc = kcoll_sim_access(s, ci, r, r, st->sbuf, st->soff, st->len, 0)) ||
            (rc = kcoll_sim_access(s, ci, r, r, st->dbuf, st->doff, st->len, 1)))
            return rc;
        if (st->rev)
            kcoll_op_apply_rev(c->op, c->data[r][st->sbuf] + st->soff,
                               c->data[r][st->dbuf] + st->doff, st->len);
        else
            kcoll_op_apply(c->op, c->data[r][st->sbuf] + st->soff,
                           c->data[r][st->dbuf] + st->doff, st->len);
        uint16_t *w = c->writes[r][st->dbuf] + st->doff;
        for (size_t i = 0; i < st->len; i++)
            if (w[i] < UINT16_MAX)
                w[i]++;
        /* the second half of a staged READ: where the executor fuses the
         * two, the scratch bytes are never written, so here they are
         * scrambled; a later step that relied on them shows it */
        const kcoll_step_t *pv = c->pc[r] ? st - 1 : NULL;
        if (pv && pv->kind == KCOLL_STEP_READ && pv->staged)
            for (size_t i = 0; i < st->len; i++)
                c->data[r][st->sbuf][st->soff + i] ^= (uint8_t)(0xa5 + i);
        break;
    }
    }
    c->pc[r]++;
    return KCOLL_OK;
}

static void kcoll_sim_describe_block(kcoll_sim_t *s, int ci, int r, char *out, size_t outlen)
{
    const kcoll_sim_coll_t *c = &s->coll[ci];
    const kcoll_step_t *st = &c->sched[r].steps[c->pc[r]];
    if (st->kind == KCOLL_STEP_WAIT)
        snprintf(out, outlen, "collective %d rank %d step %d waits for rank %d %s >= %u", ci, r,
                 c->pc[r], st->peer, kcoll_flag_name(st->flag), st->value);
    else if (st->kind == KCOLL_STEP_EXTERN)
        snprintf(out, outlen, "collective %d rank %d step %d waits in external operation %u", ci,
                 r, c->pc[r], st->value);
    else
        snprintf(out, outlen, "collective %d rank %d step %d %s waits for rank %d to expose %s",
                 ci, r, c->pc[r], kcoll_sim_kind_name(st->kind), st->peer,
                 kcoll_buf_name(st->pbuf));
}

/* Rank r finished collective ci: its clock now is what every peer access
 * to r's buffers of ci must be ordered before (checked at the end). */
static void kcoll_sim_finish(kcoll_sim_t *s, int ci, int r)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    c->state[r] = KCOLL_SIM_DONE;
    memcpy(&c->final_vc[(size_t)r * (size_t)s->p], kcoll_sim_vc(s, r),
           (size_t)s->p * sizeof *s->vc);
}

static kcoll_status_t kcoll_sim_check_lifetimes(kcoll_sim_t *s)
{
    for (int ci = 0; ci < s->ncoll; ci++) {
        const kcoll_sim_coll_t *c = &s->coll[ci];
        for (int q = 0; q < s->p; q++) {
            const uint32_t *fin = &c->final_vc[(size_t)q * (size_t)s->p];
            for (int b = 0; b < KCOLL_NBUF; b++) {
                const kcoll_sim_bucket_t *bk = &c->buckets[q][b];
                for (int i = 0; i < bk->n; i++) {
                    const kcoll_sim_access_t *e = &bk->a[i];
                    if (e->rank != q && e->clock > fin[e->rank])
                        return kcoll_sim_fail(s,
                                              "collective %d: use after return: rank %d's %s "
                                              "(step %d) of rank %d's %s bytes %zu.. is not "
                                              "ordered before rank %d returns",
                                              ci, e->rank, e->write ? "write" : "read", e->step,
                                              q, kcoll_buf_name(b), e->off, q);
                }
            }
        }
    }
    return KCOLL_OK;
}

/* May rank r start its next collective now? */
static int kcoll_sim_may_start(const kcoll_sim_t *s, int r)
{
    const int ci = s->started[r];
    if (ci >= s->ncoll)
        return 0;
    if (ci > 0 && s->coll[ci - 1].blocking && s->coll[ci - 1].state[r] != KCOLL_SIM_DONE)
        return 0;
    /* the lane: its previous collective done on this rank */
    return ci < s->lanes || s->coll[ci - s->lanes].state[r] == KCOLL_SIM_DONE;
}

static unsigned kcoll_sim_rand(unsigned *rng)
{
    *rng = *rng * 1103515245u + 12345u;
    return *rng >> 16;
}

/* v[0..n) in a random order (Fisher-Yates). */
static void kcoll_sim_shuffle(int *v, int n, unsigned *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(kcoll_sim_rand(rng) % (unsigned)(i + 1));
        int t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

kcoll_status_t kcoll_sim_run(kcoll_sim_t *s, unsigned seed)
{
    const int p = s->p;
    unsigned rng = seed ? seed : 1;
    int *order = malloc((size_t)p * sizeof *order);
    int *cand = malloc((size_t)(s->ncoll ? s->ncoll : 1) * sizeof *cand);
    kcoll_status_t rc = KCOLL_OK;
    if (!order || !cand) {
        free(order);
        free(cand);
        return KCOLL_ERR_NOMEM;
    }
    s->err[0] = '\0';
    for (int r = 0; r < p; r++)
        order[r] = r;
    /* each collective's external operations and their participants */
    for (int ci = 0; ci < s->ncoll; ci++) {
        kcoll_sim_coll_t *c = &s->coll[ci];
        for (int r = 0; r < p; r++) {
            if (c->sched[r].err) {
                rc = kcoll_sim_fail(s, "collective %d rank %d: building its schedule failed: %s",
                                    ci, r, kcoll_status_str(c->sched[r].err));
                goto out;
            }
            for (int i = 0; i < c->sched[r].n; i++) {
                const kcoll_step_t *st = &c->sched[r].steps[i];
                if (st->kind != KCOLL_STEP_EXTERN)
                    continue;
                for (; c->next <= (int)st->value; c->next++) {
                    kcoll_sim_ext_t *e = realloc(c->ext, (size_t)(c->next + 1) * sizeof *e);
                    uint32_t *vc = e ? calloc((size_t)p, sizeof *vc) : NULL;
                    if (e)
                        c->ext = e;
                    if (!vc) {
                        rc = KCOLL_ERR_NOMEM;
                        goto out;
                    }
                    c->ext[c->next] = (kcoll_sim_ext_t){0, 0, 0, vc};
                }
                kcoll_sim_ext_t *x = &c->ext[st->value];
                if (x->counted != r + 1) { /* each rank counts once per operation */
                    x->counted = r + 1;
                    x->participants++;
                }
            }
        }
    }

    int remaining = p * s->ncoll;
    while (remaining > 0) {
        int progressed = 0;
        if (seed) /* a fresh random order of ranks each pass */
            kcoll_sim_shuffle(order, p, &rng);
        for (int i = 0; i < p; i++) {
            const int r = order[i];
            /* start what the order and the lanes allow (a non-blocking
             * program may start several at once; a random burst of them) */
            int nstart = seed ? 1 + (int)(kcoll_sim_rand(&rng) % 3) : 1;
            while (nstart-- > 0 && kcoll_sim_may_start(s, r)) {
                kcoll_sim_coll_t *c = &s->coll[s->started[r]];
                c->state[r] = KCOLL_SIM_RUNNING;
                if (c->sched[r].n == 0) { /* an empty schedule returns at once */
                    kcoll_sim_finish(s, s->started[r], r);
                    remaining--;
                }
                s->started[r]++;
                progressed = 1;
            }
            /* the running ones, in order or shuffled */
            int nc = 0;
            for (int ci = 0; ci < s->started[r]; ci++)
                if (s->coll[ci].state[r] != KCOLL_SIM_IDLE && s->coll[ci].state[r] != KCOLL_SIM_DONE)
                    cand[nc++] = ci;
            if (seed)
                kcoll_sim_shuffle(cand, nc, &rng);
            for (int k = 0; k < nc; k++) {
                const int ci = cand[k];
                kcoll_sim_coll_t *c = &s->coll[ci];
                int burst = seed ? 1 + (int)(kcoll_sim_rand(&rng) % 4) : 1;
                for (int b = 0; b < burst && c->pc[r] < c->sched[r].n; b++) {
                    rc = kcoll_sim_step(s, ci, r);
                    if (rc == KCOLL_IN_PROGRESS)
                        break;
                    if (rc)
                        goto out;
                    progressed = 1;
                    if (c->pc[r] == c->sched[r].n) {
                        kcoll_sim_finish(s, ci, r);
                        remaining--;
                    }
                }
                if (!seed && progressed)
                    break; /* round robin: one step per rank per pass */
            }
        }
        if (!progressed) {
            char what[200];
            int n = snprintf(s->err, sizeof s->err, "deadlock:");
            for (int ci = 0; ci < s->ncoll && n < (int)sizeof s->err - 2; ci++)
                for (int r = 0; r < p && n < (int)sizeof s->err - 2; r++) {
                    const kcoll_sim_coll_t *c = &s->coll[ci];
                    if (c->state[r] == KCOLL_SIM_DONE)
                        continue;
                    if (c->state[r] == KCOLL_SIM_IDLE)
                        snprintf(what, sizeof what, "collective %d rank %d not started", ci, r);
                    else
                        kcoll_sim_describe_block(s, ci, r, what, sizeof what);
                    n += snprintf(s->err + n, sizeof s->err - (size_t)n, " %s;", what);
                }
            rc = KCOLL_ERR_SCHED;
            goto out;
        }
    }
    rc = kcoll_sim_check_lifetimes(s);
out:
    free(order);
    free(cand);
    if (rc == KCOLL_IN_PROGRESS)
        rc = KCOLL_OK;
    return rc;
}
