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
 *
 * Host collectives (EXTERN steps naming a kcoll_xcoll_t) are matched per
 * group, as MPI matches collectives on one communicator: the k-th host
 * collective a member starts on a group is the group's k-th, whichever
 * collective of the simulation it belongs to, and every member's k-th must
 * agree with the first starter's (same collective of the simulation, same
 * kind, root, length, element size). When the last member starts it, its
 * data moves at once, from every member's send side to the receive sides;
 * each member's step then completes with the join of all members' clocks
 * at their starts (the messages between nodes), and records its accesses
 * to its own buffers then: the host MPI may touch them anywhere between
 * the start and the completion, so a peer on the node that touches them
 * without being ordered before the start or after the completion races.
 * A split one (BEGIN ... END steps) starts at its BEGIN, and the rank goes
 * on; its END waits as above and then checks that every peer's earlier
 * access to those bytes was ordered before the BEGIN (the rank's clock
 * then is kept), and the rank itself may not touch them in between (its
 * receive side at all, its send side by a write), nor end its collective
 * with one in flight.
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

/* One host collective of a group: the k-th its members start. */
typedef struct {
    int ci;              /* collective of the simulation (the first starter's) */
    int first;           /* rank that started it first */
    kcoll_xcoll_t shape; /* the first starter's descriptor */
    const size_t *lens;  /* its v form's block lengths (NULL: uniform) */
    int started;
    int done;            /* every member has started: the data has moved */
    kcoll_xcoll_t *mine; /* [n] each member's descriptor, by group rank */
    uint32_t *vc;        /* [p] join of the members' clocks at their starts */
} kcoll_sim_xinst_t;

/* A group of ranks that host collectives run between. */
typedef struct {
    int n;                   /* members; 0: no such group */
    int *members;            /* [n] ranks, by rank in the group */
    int *next;               /* [n] host collectives each member has started */
    kcoll_sim_xinst_t *inst; /* [ninst] in the order the group runs them */
    int ninst, cap;
} kcoll_sim_group_t;

enum { KCOLL_SIM_IDLE, KCOLL_SIM_RUNNING, KCOLL_SIM_DONE };

/* A rank's split host collective (BEGIN ... END) in one collective. */
typedef struct {
    int inst;      /* its instance in its group */
    int live;      /* begun and not yet ended */
    uint32_t *bvc; /* [p] the rank's clock at its BEGIN */
} kcoll_sim_split_t;

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
    int *xinst;                       /* [p] its group's host collective, if one */
    kcoll_sim_split_t **split;        /* [p][the rank's nxc] made at its first BEGIN */
    int *nlive;                       /* [p] split host collectives in flight */
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
    int *node_of;                     /* [p] or NULL: all ranks on one node */
    kcoll_sim_group_t *grp;           /* [ngrp] by group id */
    int ngrp;
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
    free(c->xinst);
    for (int r = 0; c->split && r < p; r++) {
        for (int i = 0; c->split[r] && i < c->sched[r].nxc; i++)
            free(c->split[r][i].bvc);
        free(c->split[r]);
    }
    free(c->split);
    free(c->nlive);
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
    c->xinst = calloc(P, sizeof *c->xinst);
    c->split = calloc(P, sizeof *c->split);
    c->nlive = calloc(P, sizeof *c->nlive);
    c->final_vc = calloc(P * P, sizeof *c->final_vc);
    if (!c->sched || !c->data || !c->len || !c->writes || !c->alias || !c->buckets || !c->pc ||
        !c->state || !c->xpc || !c->xinst || !c->split || !c->nlive || !c->final_vc) {
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
    for (int g = 0; g < s->ngrp; g++) {
        kcoll_sim_group_t *G = &s->grp[g];
        for (int k = 0; k < G->ninst; k++) {
            free(G->inst[k].mine);
            free(G->inst[k].vc);
        }
        free(G->inst);
        free(G->members);
        free(G->next);
    }
    free(s->grp);
    free(s->node_of);
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

kcoll_status_t kcoll_sim_set_nodes(kcoll_sim_t *s, const int *node_of)
{
    if (!s->node_of && !(s->node_of = malloc((size_t)s->p * sizeof *s->node_of)))
        return KCOLL_ERR_NOMEM;
    memcpy(s->node_of, node_of, (size_t)s->p * sizeof *s->node_of);
    return KCOLL_OK;
}

kcoll_status_t kcoll_sim_set_group(kcoll_sim_t *s, int group, int n, const int *members)
{
    if (group < 0 || n < 1)
        return KCOLL_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (members[i] < 0 || members[i] >= s->p)
            return KCOLL_ERR_ARG;
    if (group >= s->ngrp) {
        kcoll_sim_group_t *g = realloc(s->grp, (size_t)(group + 1) * sizeof *g);
        if (!g)
            return KCOLL_ERR_NOMEM;
        memset(g + s->ngrp, 0, (size_t)(group + 1 - s->ngrp) * sizeof *g);
        s->grp = g;
        s->ngrp = group + 1;
    }
    kcoll_sim_group_t *G = &s->grp[group];
    if (G->n) /* set once, before running */
        return KCOLL_ERR_ARG;
    G->members = malloc((size_t)n * sizeof *G->members);
    G->next = calloc((size_t)n, sizeof *G->next);
    if (!G->members || !G->next) {
        free(G->members);
        free(G->next);
        G->members = G->next = NULL;
        return KCOLL_ERR_NOMEM;
    }
    memcpy(G->members, members, (size_t)n * sizeof *members);
    G->n = n;
    return KCOLL_OK;
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

static kcoll_status_t kcoll_sim_live(kcoll_sim_t *s, int ci, int r, int buf, size_t off,
                                     size_t len, int write);

/* Is every earlier access of another rank to owner's buf[off..+len) that
 * conflicts with this one (either writes) ordered before clock vc? */
static kcoll_status_t kcoll_sim_ordered(kcoll_sim_t *s, int ci, int r, int owner, int buf,
                                        size_t off, size_t len, int write, const uint32_t *vc)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    kcoll_sim_bucket_t *bk = &c->buckets[owner][c->alias[owner][buf]];
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
    return KCOLL_OK;
}

/* Record an access by rank r (at its current step of collective ci) to
 * owner's buffer of ci and check it against earlier conflicting accesses
 * (and, on r's own buffers, against its split host collectives in flight). */
static kcoll_status_t kcoll_sim_access(kcoll_sim_t *s, int ci, int r, int owner, int buf,
                                       size_t off, size_t len, int write)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    kcoll_sim_bucket_t *bk = &c->buckets[owner][c->alias[owner][buf]];
    const uint32_t *vc = kcoll_sim_vc(s, r);
    kcoll_status_t rc = kcoll_sim_ordered(s, ci, r, owner, buf, off, len, write, vc);
    if (!rc && owner == r && c->nlive[r])
        rc = kcoll_sim_live(s, ci, r, buf, off, len, write);
    if (rc)
        return rc;
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

/* -- host collectives between the members of a group -- */

typedef struct {
    int buf;
    size_t off, len;
    int write;
} kcoll_sim_range_t;

/* Member q's block of a gather or scatter x (lens: a v form's lengths,
 * else NULL): its length, and its offset in the gathered buffer. */
static size_t kcoll_sim_blk(const kcoll_xcoll_t *x, const size_t *lens, int q, size_t *off)
{
    *off = 0;
    if (!lens) {
        *off = (size_t)q * x->len;
        return x->len;
    }
    for (int i = 0; i < q; i++)
        *off += lens[i];
    return lens[q];
}

/* The accesses member gr (of n) makes to its own buffers in host
 * collective x (lens: a v form's block lengths, else NULL): at most three
 * ranges into out; returns how many. */
static int kcoll_sim_xranges(const kcoll_xcoll_t *x, const size_t *lens, int gr, int n,
                             kcoll_sim_range_t *out)
{
    size_t at = 0;
    const size_t B = kcoll_sim_blk(x, lens, gr, &at), N = lens ? x->len : (size_t)n * x->len;
    const int root = gr == x->root, ip = kcoll_xcoll_in_place(x);
    int k = 0;
#define KCOLL_SIM_R(b, o, l, w) (out[k++] = (kcoll_sim_range_t){(b), (o), (l), (w)})
    switch ((kcoll_xcoll_kind_t)x->coll) {
    case KCOLL_XC_ALLREDUCE:
        KCOLL_SIM_R(x->sbuf, x->soff, B, 0);
        KCOLL_SIM_R(x->rbuf, x->roff, B, 1);
        break;
    case KCOLL_XC_REDUCE:
        KCOLL_SIM_R(x->sbuf, x->soff, B, 0);
        if (root)
            KCOLL_SIM_R(x->rbuf, x->roff, B, 1);
        break;
    case KCOLL_XC_BCAST:
        KCOLL_SIM_R(x->rbuf, x->roff, B, !root);
        break;
    case KCOLL_XC_ALLGATHER:
    case KCOLL_XC_ALLGATHERV:
    case KCOLL_XC_GATHER:
    case KCOLL_XC_GATHERV:
        if ((x->coll == KCOLL_XC_GATHER || x->coll == KCOLL_XC_GATHERV) && !root) {
            KCOLL_SIM_R(x->sbuf, x->soff, B, 0);
            break;
        }
        if (ip) { /* the own block stays, read in place; the others arrive */
            KCOLL_SIM_R(x->rbuf, x->roff + at, B, 0);
            KCOLL_SIM_R(x->rbuf, x->roff, at, 1);
            KCOLL_SIM_R(x->rbuf, x->roff + at + B, N - at - B, 1);
        } else {
            KCOLL_SIM_R(x->sbuf, x->soff, B, 0);
            KCOLL_SIM_R(x->rbuf, x->roff, N, 1);
        }
        break;
    case KCOLL_XC_REDUCE_SCATTER_BLOCK:
    case KCOLL_XC_REDUCE_SCATTER:
        KCOLL_SIM_R(x->sbuf, x->soff, N, 0);
        KCOLL_SIM_R(x->rbuf, x->roff, B, 1);
        break;
    case KCOLL_XC_SCATTER:
    case KCOLL_XC_SCATTERV:
        if (root)
            KCOLL_SIM_R(x->sbuf, x->soff, N, 0);
        if (!root || !ip)
            KCOLL_SIM_R(x->rbuf, x->roff, B, 1);
        break;
    case KCOLL_XC_ALLTOALL:
        KCOLL_SIM_R(x->sbuf, x->soff, (size_t)n * x->len, 0);
        KCOLL_SIM_R(x->rbuf, x->roff, (size_t)n * x->len, 1);
        break;
    case KCOLL_XC_ALLTOALLV: { /* the n lengths sent, then the n received */
        size_t sent = 0, got = 0;
        for (int i = 0; lens && i < n; i++) {
            sent += lens[i];
            got += lens[n + i];
        }
        KCOLL_SIM_R(x->sbuf, x->soff, sent, 0);
        KCOLL_SIM_R(x->rbuf, x->roff, got, 1);
        break;
    }
    default:
        break;
    }
#undef KCOLL_SIM_R
    return k;
}

/* Rank r's rank in group G, or -1 where it is not a member. */
static int kcoll_sim_group_rank(const kcoll_sim_group_t *G, int r)
{
    for (int i = 0; G && i < G->n; i++)
        if (G->members[i] == r)
            return i;
    return -1;
}

/* The ranges of host collective x of rank r (a member: checked when its
 * step was reached) in collective ci. */
static int kcoll_sim_xranges_of(const kcoll_sim_t *s, int ci, int r, const kcoll_xcoll_t *x,
                                kcoll_sim_range_t *out)
{
    const kcoll_sim_group_t *G = &s->grp[x->group];
    return kcoll_sim_xranges(x, kcoll_sched_xlens(&s->coll[ci].sched[r], x),
                             kcoll_sim_group_rank(G, r), G->n, out);
}

/* Rank r touches its own buf[off..+len) while split host collectives of
 * it are in flight: none may use those bytes (a receive side at all, a
 * send side where r writes). */
static kcoll_status_t kcoll_sim_live(kcoll_sim_t *s, int ci, int r, int buf, size_t off,
                                     size_t len, int write)
{
    const kcoll_sim_coll_t *c = &s->coll[ci];
    const kcoll_sched_t *sc = &c->sched[r];
    for (int i = 0; c->split[r] && i < sc->nxc; i++) {
        if (!c->split[r][i].live)
            continue;
        kcoll_sim_range_t rg[3];
        const int nr = kcoll_sim_xranges_of(s, ci, r, &sc->xc[i], rg);
        for (int k = 0; k < nr; k++)
            if ((write || rg[k].write) && rg[k].len && len && c->alias[r][rg[k].buf] ==
                c->alias[r][buf] && rg[k].off < off + len && off < rg[k].off + rg[k].len)
                return kcoll_sim_fail(s,
                                      "collective %d rank %d step %d: %s of its %s bytes %zu..%zu "
                                      "while its host %s #%d (begun, not ended) %s them",
                                      ci, r, c->pc[r], write ? "a write" : "a read",
                                      kcoll_buf_name(buf), off, off + len,
                                      kcoll_xcoll_name(sc->xc[i].coll), i,
                                      rg[k].write ? "receives into" : "sends from");
    }
    return KCOLL_OK;
}

/* Rank r, at its step of collective ci, starts host collective *x: the
 * next one of x's group for r; *inst says which. */
static kcoll_status_t kcoll_sim_xstart(kcoll_sim_t *s, int ci, int r, const kcoll_xcoll_t *x,
                                       int *inst);

/* The all-to-alls of kcoll_sim_xdata: every member's blocks, from its send side,
 * to their receivers' receive sides, each length checked against the
 * receiver's (ALLTOALLV: MPI's rule). */
static kcoll_status_t kcoll_sim_xalltoall(kcoll_sim_t *s, const kcoll_sim_group_t *G,
                                          kcoll_sim_xinst_t *xi)
{
    kcoll_sim_coll_t *c = &s->coll[xi->ci];
    const int n = G->n, v = xi->shape.coll == KCOLL_XC_ALLTOALLV;
    const kcoll_xcoll_t *m = xi->mine;
    const size_t **lens = calloc((size_t)n, sizeof *lens);
    size_t *sat = calloc(2 * (size_t)n, sizeof *sat), *rat = sat + n, total = 0;
    if (!lens || !sat) {
        free(lens);
        free(sat);
        return KCOLL_ERR_NOMEM;
    }
    for (int q = 0; q < n; q++) {
        lens[q] = v ? kcoll_sched_xlens(&c->sched[G->members[q]], &m[q]) : NULL;
        for (int t = 0; t < n; t++)
            total += v ? lens[q][t] : xi->shape.len;
    }
    /* all blocks are taken before any is written */
    uint8_t *tmp = malloc(total ? total : 1), *at = tmp;
    kcoll_status_t rc = tmp ? KCOLL_OK : KCOLL_ERR_NOMEM;
    for (int q = 0; q < n && !rc; q++)
        for (int t = 0; t < n; t++) {
            const size_t len = v ? lens[q][t] : xi->shape.len;
            memcpy(at, c->data[G->members[q]][m[q].sbuf] + m[q].soff + sat[q], len);
            sat[q] += len;
            at += len;
        }
    at = tmp;
    for (int q = 0; q < n && !rc; q++)
        for (int t = 0; t < n; t++) {
            const size_t len = v ? lens[q][t] : xi->shape.len;
            if (v && lens[t][n + q] != len) {
                rc = kcoll_sim_fail(s, "collective %d: host ALLTOALLV of group %d: member %d "
                                    "sends %zu bytes to member %d, which receives %zu",
                                    xi->ci, (int)xi->shape.group, q, len, t, lens[t][n + q]);
                break;
            }
            /* member t's receive side holds the blocks in member order */
            memcpy(c->data[G->members[t]][m[t].rbuf] + m[t].roff + rat[t], at, len);
            rat[t] += len;
            at += len;
        }
    free(tmp);
    free(lens);
    free(sat);
    if (!rc)
        xi->done = 1;
    return rc;
}

/* Every member of G's host collective xi has started it: move its data,
 * from the members' send sides to their receive sides. */
static kcoll_status_t kcoll_sim_xdata(kcoll_sim_t *s, const kcoll_sim_group_t *G,
                                      kcoll_sim_xinst_t *xi)
{
    if (xi->shape.coll == KCOLL_XC_ALLTOALL || xi->shape.coll == KCOLL_XC_ALLTOALLV)
        return kcoll_sim_xalltoall(s, G, xi);
    kcoll_sim_coll_t *c = &s->coll[xi->ci];
    const int n = G->n, root = xi->shape.root;
    const size_t B = xi->shape.len, N = xi->lens ? B : (size_t)n * B;
    const kcoll_xcoll_t *m = xi->mine;
    size_t at, len;
    uint8_t *tmp = malloc(N ? N : 1);
    if (!tmp)
        return KCOLL_ERR_NOMEM;
#define KCOLL_SIM_S(q) (c->data[G->members[q]][m[q].sbuf] + m[q].soff)
#define KCOLL_SIM_D(q) (c->data[G->members[q]][m[q].rbuf] + m[q].roff)
    switch ((kcoll_xcoll_kind_t)xi->shape.coll) {
    case KCOLL_XC_ALLREDUCE:
    case KCOLL_XC_REDUCE:
    case KCOLL_XC_REDUCE_SCATTER_BLOCK:
    case KCOLL_XC_REDUCE_SCATTER: {
        /* kcoll's order over the group ranks: c_0 op (c_1 op (... c_{n-1})),
         * the whole result computed before any receive side is written
         * (in place, a receive side is its member's operand) */
        const int scatter = xi->shape.coll == KCOLL_XC_REDUCE_SCATTER_BLOCK ||
                            xi->shape.coll == KCOLL_XC_REDUCE_SCATTER;
        const size_t V = scatter ? N : B;
        memcpy(tmp, KCOLL_SIM_S(n - 1), V);
        for (int q = n - 2; q >= 0; q--)
            kcoll_op_apply(c->op, KCOLL_SIM_S(q), tmp, V);
        for (int q = 0; q < n; q++) {
            if (xi->shape.coll == KCOLL_XC_ALLREDUCE || (xi->shape.coll == KCOLL_XC_REDUCE && q == root))
                memcpy(KCOLL_SIM_D(q), tmp, B);
            else if (scatter) {
                len = kcoll_sim_blk(&xi->shape, xi->lens, q, &at);
                memcpy(KCOLL_SIM_D(q), tmp + at, len);
            }
        }
        break;
    }
    case KCOLL_XC_BCAST:
        for (int q = 0; q < n; q++)
            if (q != root)
                memcpy(KCOLL_SIM_D(q), KCOLL_SIM_D(root), B);
        break;
    case KCOLL_XC_ALLGATHER:
    case KCOLL_XC_ALLGATHERV:
    case KCOLL_XC_GATHER:
    case KCOLL_XC_GATHERV: {
        const int all = xi->shape.coll == KCOLL_XC_ALLGATHER ||
                        xi->shape.coll == KCOLL_XC_ALLGATHERV;
        for (int q = 0; q < n; q++) { /* every block, from where its member keeps it */
            len = kcoll_sim_blk(&xi->shape, xi->lens, q, &at);
            memcpy(tmp + at,
                   (all || q == root) && kcoll_xcoll_in_place(&m[q]) ? KCOLL_SIM_D(q) + at
                                                                   : KCOLL_SIM_S(q),
                   len);
        }
        for (int q = 0; q < n; q++)
            if (all || q == root)
                memcpy(KCOLL_SIM_D(q), tmp, N);
        break;
    }
    case KCOLL_XC_SCATTER:
    case KCOLL_XC_SCATTERV:
        memcpy(tmp, KCOLL_SIM_S(root), N);
        for (int q = 0; q < n; q++) {
            len = kcoll_sim_blk(&xi->shape, xi->lens, q, &at);
            if (q != root || !kcoll_xcoll_in_place(&m[q]))
                memcpy(KCOLL_SIM_D(q), tmp + at, len);
        }
        break;
    default:
        break;
    }
#undef KCOLL_SIM_S
#undef KCOLL_SIM_D
    free(tmp);
    xi->done = 1;
    return KCOLL_OK;
}

static kcoll_status_t kcoll_sim_xstart(kcoll_sim_t *s, int ci, int r, const kcoll_xcoll_t *x,
                                       int *inst)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    kcoll_sim_group_t *G = &s->grp[x->group];
    const int gr = kcoll_sim_group_rank(G, r); /* a member: checked before */
    const int k = G->next[gr]++;
    if (k == G->ninst) { /* the first member to start it */
        if (kcoll_grow((void **)&G->inst, &G->cap, G->ninst, sizeof *G->inst, 4))
            return KCOLL_ERR_NOMEM;
        kcoll_sim_xinst_t *xi = &G->inst[G->ninst];
        memset(xi, 0, sizeof *xi);
        xi->mine = calloc((size_t)G->n, sizeof *xi->mine);
        xi->vc = calloc((size_t)s->p, sizeof *xi->vc);
        if (!xi->mine || !xi->vc) {
            free(xi->mine);
            free(xi->vc);
            return KCOLL_ERR_NOMEM;
        }
        xi->ci = ci;
        xi->first = r;
        xi->shape = *x;
        xi->lens = kcoll_sched_xlens(&c->sched[r], x);
        G->ninst++;
    }
    kcoll_sim_xinst_t *xi = &G->inst[k];
    const kcoll_xcoll_t *f = &xi->shape;
    if (xi->ci != ci)
        return kcoll_sim_fail(s,
                              "collective %d rank %d step %d: host collectives of group %d "
                              "started in different orders: this rank's #%d there belongs to "
                              "collective %d, rank %d's to collective %d",
                              ci, r, c->pc[r], x->group, k, ci, xi->first, xi->ci);
    const size_t *lens = kcoll_sched_xlens(&c->sched[r], x);
    /* an ALLTOALLV's lengths are each member's own (checked pairwise when
     * its data moves) */
    const int own = x->coll == KCOLL_XC_ALLTOALLV;
    if (x->coll != f->coll || x->root != f->root || (!own && x->len != f->len) ||
        x->esize != f->esize || x->nv != f->nv ||
        (lens && !own && memcmp(lens, xi->lens, x->nv * sizeof *lens)))
        return kcoll_sim_fail(s,
                              "collective %d rank %d step %d: host collective #%d of group %d "
                              "does not match: this rank starts %s root %d len %zu esize %zu, "
                              "rank %d started %s root %d len %zu esize %zu",
                              ci, r, c->pc[r], k, x->group, kcoll_xcoll_name(x->coll), x->root,
                              x->len, x->esize, xi->first, kcoll_xcoll_name(f->coll), f->root,
                              f->len, f->esize);
    if (kcoll_xcoll_in_place_alike(x->coll) && kcoll_xcoll_in_place(x) != kcoll_xcoll_in_place(f))
        return kcoll_sim_fail(s,
                              "collective %d rank %d step %d: host %s #%d of group %d %s in "
                              "place, rank %d's %s (MPI: every member's or none's)",
                              ci, r, c->pc[r], kcoll_xcoll_name(x->coll), k, x->group,
                              kcoll_xcoll_in_place(x) ? "is" : "is not", xi->first,
                              kcoll_xcoll_in_place(f) ? "is" : "is not");
    if (x->root >= G->n)
        return kcoll_sim_fail(s, "collective %d rank %d step %d: root %d of a group of %d", ci, r,
                              c->pc[r], x->root, G->n);
    if (lens && x->nv != (uint32_t)(G->n * kcoll_xcoll_sides(x->coll)))
        return kcoll_sim_fail(s, "collective %d rank %d step %d: host %s with %u block lengths "
                              "on a group of %d", ci, r, c->pc[r], kcoll_xcoll_name(x->coll),
                              x->nv, G->n);
    const int red = kcoll_xcoll_reduces(x->coll);
    if (red && (!kcoll_op_fits(c->op, x->len, 0) || c->op->esize != x->esize))
        return kcoll_sim_fail(s, "collective %d rank %d step %d: host %s of %zu bytes without an "
                              "operation of element size %zu", ci, r, c->pc[r],
                              kcoll_xcoll_name(x->coll), x->len, x->esize);
    kcoll_sim_range_t rg[3];
    const int nr = kcoll_sim_xranges(x, lens, gr, G->n, rg);
    for (int i = 0; i < nr; i++) {
        kcoll_status_t rc = kcoll_sim_bounds(s, ci, r, r, rg[i].buf, rg[i].off, rg[i].len);
        if (rc)
            return rc;
    }
    xi->mine[gr] = *x;
    const uint32_t *vc = kcoll_sim_vc(s, r);
    for (int q = 0; q < s->p; q++)
        if (vc[q] > xi->vc[q])
            xi->vc[q] = vc[q];
    *inst = k;
    if (++xi->started == G->n)
        return kcoll_sim_xdata(s, G, xi);
    return KCOLL_OK;
}

/* Rank r's host collective (its step of ci) is done: it has heard from
 * every member, and the host has used its buffers. */
static kcoll_status_t kcoll_sim_xfinish(kcoll_sim_t *s, int ci, int r, const kcoll_xcoll_t *x,
                                        int inst, const uint32_t *bvc)
{
    kcoll_sim_coll_t *c = &s->coll[ci];
    kcoll_sim_join(s, r, s->grp[x->group].inst[inst].vc);
    kcoll_sim_range_t rg[3];
    const int nr = kcoll_sim_xranges_of(s, ci, r, x, rg);
    for (int i = 0; i < nr; i++) {
        /* a split one: the peers' earlier accesses come before its BEGIN */
        kcoll_status_t rc =
            bvc ? kcoll_sim_ordered(s, ci, r, r, rg[i].buf, rg[i].off, rg[i].len, rg[i].write, bvc)
                : KCOLL_OK;
        if (!rc)
            rc = kcoll_sim_access(s, ci, r, r, rg[i].buf, rg[i].off, rg[i].len, rg[i].write);
        if (rc)
            return rc;
        if (!rg[i].write)
            continue;
        uint16_t *w = c->writes[r][rg[i].buf] + rg[i].off;
        for (size_t b = 0; b < rg[i].len; b++)
            if (w[b] < UINT16_MAX)
                w[b]++;
    }
    return KCOLL_OK;
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
    const int host = st->kind == KCOLL_STEP_EXTERN && st->flag == KCOLL_EXTERN_XCOLL;
    const kcoll_xcoll_t *x = NULL;

    /* only host collectives cross nodes: CMA and the control segment are
     * a node's */
    if ((st->kind == KCOLL_STEP_READ || st->kind == KCOLL_STEP_WRITE ||
         st->kind == KCOLL_STEP_WAIT) &&
        s->node_of && st->peer >= 0 && st->peer < p && s->node_of[st->peer] != s->node_of[r])
        return kcoll_sim_fail(s,
                              "collective %d rank %d step %d: %s names rank %d on node %d, this "
                              "rank is on node %d: only host collectives cross nodes",
                              ci, r, c->pc[r], kcoll_sim_kind_name(st->kind), st->peer,
                              s->node_of[st->peer], s->node_of[r]);

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
        if (host) {
            if (st->value >= (uint32_t)c->sched[r].nxc)
                return kcoll_sim_fail(s, "collective %d rank %d step %d: unknown host collective "
                                      "%u", ci, r, c->pc[r], st->value);
            x = &c->sched[r].xc[st->value];
            if (kcoll_sim_group_rank(x->group < s->ngrp ? &s->grp[x->group] : NULL, r) < 0)
                return kcoll_sim_fail(s, "collective %d rank %d step %d: host %s on group %d, "
                                      "which this rank is not a member of", ci, r, c->pc[r],
                                      kcoll_xcoll_name(x->coll), x->group);
            break;
        }
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
    kcoll_sim_split_t *sp = NULL;
    if (host && st->xpart != KCOLL_XPART_WHOLE) {
        if (!c->split[r] && !(c->split[r] = calloc((size_t)c->sched[r].nxc, sizeof *sp)))
            return KCOLL_ERR_NOMEM;
        sp = &c->split[r][st->value];
        if ((st->xpart == KCOLL_XPART_END) != sp->live)
            return kcoll_sim_fail(s, "collective %d rank %d step %d: %s of host %s #%u, %s", ci,
                                  r, c->pc[r], sp->live ? "BEGIN" : "END",
                                  kcoll_xcoll_name(x->coll), st->value,
                                  sp->live ? "already in flight" : "which is not in flight");
    }
    if (host && st->xpart == KCOLL_XPART_END) {
        if (!s->grp[x->group].inst[sp->inst].done)
            return KCOLL_IN_PROGRESS;
    } else if (host) {
        /* the first attempt starts it; a whole one is done once every
         * member has, a BEGIN at once */
        if (c->xpc[r] != c->pc[r]) {
            c->xpc[r] = c->pc[r];
            if ((rc = kcoll_sim_xstart(s, ci, r, x, sp ? &sp->inst : &c->xinst[r])))
                return rc;
        }
        if (!sp && !s->grp[x->group].inst[c->xinst[r]].done)
            return KCOLL_IN_PROGRESS;
    }
    kcoll_sim_ext_t *ext = NULL;
    if (st->kind == KCOLL_STEP_EXTERN && !host) {
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
        if (host && st->xpart == KCOLL_XPART_BEGIN) { /* in flight from here */
            free(sp->bvc);
            if (!(sp->bvc = kcoll_sim_snapshot(s, r)))
                return KCOLL_ERR_NOMEM;
            sp->live = 1;
            c->nlive[r]++;
        } else if (host && st->xpart == KCOLL_XPART_END) {
            sp->live = 0;
            c->nlive[r]--;
            if ((rc = kcoll_sim_xfinish(s, ci, r, x, sp->inst, sp->bvc)))
                return rc;
        } else if (host) {
            if ((rc = kcoll_sim_xfinish(s, ci, r, x, c->xinst[r], NULL)))
                return rc;
        } else
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
    else if (st->kind == KCOLL_STEP_EXTERN && st->flag == KCOLL_EXTERN_XCOLL) {
        const kcoll_xcoll_t *x = &c->sched[r].xc[st->value];
        const kcoll_sim_group_t *G = &s->grp[x->group];
        const int k = st->xpart == KCOLL_XPART_END ? c->split[r][st->value].inst : c->xinst[r];
        const kcoll_sim_xinst_t *xi = &G->inst[k];
        snprintf(out, outlen,
                 "collective %d rank %d step %d waits in host %s #%d of group %d (%d of %d "
                 "members started)",
                 ci, r, c->pc[r], kcoll_xcoll_name(x->coll), k, x->group, xi->started, G->n);
    } else if (st->kind == KCOLL_STEP_EXTERN)
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
                if (st->kind != KCOLL_STEP_EXTERN || st->flag == KCOLL_EXTERN_XCOLL)
                    continue; /* host collectives are matched per group as they start */
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
                        if (c->nlive[r]) {
                            rc = kcoll_sim_fail(s, "collective %d rank %d: ends with %d host "
                                                "collectives begun and not ended",
                                                ci, r, c->nlive[r]);
                            goto out;
                        }
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
