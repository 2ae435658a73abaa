/* Taking a call (see call.h): the checks every collective passes, in this
 * order, so that the user sees the host MPI's own behaviour wherever kcoll
 * does not act, and so that all ranks of a call take one path:
 *
 *   arguments every rank sees alike are valid       else mpi:invalid_args
 *   kcoll enabled, more than one process,           else mpi:disabled,
 *   the size (where known alike) >= MIN_BYTES            one_rank, below_min_bytes
 *   a communicator that spans nodes: one schedule
 *     across nodes (collectives of kcoll_call_across_has:
 *     KCOLL_CALL_ACROSS; the layout's own checks follow
 *     in kcoll_call_prepare_across)                 else mpi:multinode
 *   datatype layout (where not agreed)              else mpi:noncontig_datatype
 *   a reduction kernel for the operation            else mpi:unsupported_op
 *   the communicator's team                         else its reason
 *   selection: forced algorithm valid, no rule      else mpi:bad_algo,
 *   preferring the host MPI                              below_min_bytes
 *   blocking calls that agree: the agreement        else its reason
 *
 * A blocking MPI_Gatherv, MPI_Scatterv or MPI_Alltoallv that follows an
 * agreement which sent the collective to the host MPI may go there at
 * once, before any of these checks (the host streak, below).
 *
 * A blocking call identical to its team's last one of the collective that
 * these checks sent to the host MPI before any agreement takes the same
 * way at once (the memo, below: the same decision, counted and traced
 * alike, without deciding again), and its repeats argument for argument
 * skip even the description (the shortcut: call/shortcut.h).
 *
 * A request keeps its team referenced until it is released.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hot.h"
#include "base/log.h"
#include "base/params.h"
#include "base/stats.h"
#include "call/adapt.h"
#include "call/request.h"
#include "call/shortcut.h"
#include "model/nodes.h"
#include "topo/topo.h"

static const kcoll_family_t *kcoll_family_of(kcoll_coll_t c)
{
    switch (kcoll_coll_family(c)) {
    case KCOLL_COLL_BCAST: return &kcoll_fam_bcast;
    case KCOLL_COLL_SCATTER:
    case KCOLL_COLL_GATHER: return &kcoll_fam_rooted;
    case KCOLL_COLL_ALLGATHER: return &kcoll_fam_allgather;
    case KCOLL_COLL_ALLTOALL: return &kcoll_fam_alltoall;
    case KCOLL_COLL_BARRIER: return &kcoll_fam_barrier;
    default: return &kcoll_fam_reduce;
    }
}

/* Does a call of collective c, of `bytes` as the selector reads them,
 * with root, repeat team t's previous call of c? */
static int kcoll_call_repeats(const kcoll_team_t *t, kcoll_coll_t c, size_t bytes, int root)
{
    return bytes != KCOLL_BYTES_UNKNOWN && t->last[c].valid && t->last[c].bytes == bytes &&
           t->last[c].root == root;
}

/* The cache state r's data is estimated to be in (model/machine.h): hot
 * when the call repeats the team's previous call of the same collective
 * (the same size, as the selector reads it, and root) and all ranks'
 * buffers fit in the last-level cache together; cold otherwise, and for
 * the first call of a run of equal ones. Benchmarks (OSU) and iterative
 * programs call a collective on the same buffers again and again, and the
 * previous call left them in cache: its destination written, its source
 * read. The addresses themselves differ between ranks, so they cannot
 * decide alike without an exchange; the team's sequence of calls, the
 * sizes MPI makes equal and the machine's cache are the same on every
 * rank. A wrong guess costs only the other state's choice (the model's
 * prices are off-cache ones; the state picks among the tuning's rules). */
static kcoll_cache_t kcoll_call_cache(const kcoll_req_t *r)
{
    static size_t llc; /* the same on every call: races only store the same value */
    const kcoll_team_t *t = r->team;
    const kcoll_coll_t c = r->call.coll, f = kcoll_coll_family(c);
    const int p = r->call.p;
    if (!t || !kcoll_call_repeats(t, c, r->policy_bytes, r->call.root))
        return KCOLL_CACHE_COLD;
    if (!llc && !(llc = kcoll_topo_llc_bytes()))
        llc = 1;
    /* a rank's send and receive buffers: p blocks for the blocked ones */
    const int blocked = f == KCOLL_COLL_SCATTER || f == KCOLL_COLL_GATHER ||
                        f == KCOLL_COLL_ALLGATHER || f == KCOLL_COLL_ALLTOALL ||
                        f == KCOLL_COLL_REDUCE_SCATTER;
    const double all = 2.0 * (double)r->policy_bytes * (blocked ? p : 1) * p;
    return all <= (double)llc ? KCOLL_CACHE_HOT : KCOLL_CACHE_COLD;
}

/* Team t remembers a call of collective c (bytes as the selector read
 * them, root) as its previous one (the caller holds the team's lock). */
static void kcoll_call_remember_in(kcoll_team_t *t, kcoll_coll_t c, size_t bytes, int root)
{
    t->last[c].bytes = bytes;
    t->last[c].root = root;
    t->last[c].valid = bytes != KCOLL_BYTES_UNKNOWN;
}

/* The team remembers r's call as its collective's previous one. */
static void kcoll_call_remember(kcoll_req_t *r)
{
    kcoll_team_lock(r->team);
    kcoll_call_remember_in(r->team, r->call.coll, r->policy_bytes, r->call.root);
    kcoll_team_unlock(r->team);
}

/* Size the per-rank arrays of r for p ranks. 0 or -1 (out of memory). */
static int kcoll_req_arrays(kcoll_req_t *r, int p)
{
    if (p <= r->cap_p)
        return 0;
    uint64_t *votes = realloc(r->votes, (size_t)p * sizeof *votes);
    if (votes)
        r->votes = votes;
    kcoll_layout_t *lay = realloc(r->lay, (size_t)p * sizeof *lay);
    if (lay)
        r->lay = lay;
    size_t *counts = realloc(r->counts, (size_t)p * sizeof *counts);
    if (counts)
        r->counts = counts;
    size_t *xdispl = realloc(r->xdispl, (size_t)p * sizeof *xdispl);
    if (xdispl)
        r->xdispl = xdispl;
    if (!votes || !lay || !counts || !xdispl)
        return -1;
    r->cap_p = p;
    return 0;
}

/* Fill r's decision from the call alone (the family's shared view). */
static void kcoll_call_describe(kcoll_req_t *r, const kcoll_call_t *c, kcoll_mode_t mode)
{
    r->call = *c;
    r->mode = mode;
    r->row = kcoll_stats_row(c->coll, mode);
    r->fam = kcoll_family_of(c->coll);
    r->invalid = r->noncontig = r->bad_op = 0;
    r->policy_bytes = r->stat_bytes = 0;
    r->rshift = 0;
    r->cache = KCOLL_CACHE_COLD;
    memset(&r->args, 0, sizeof r->args);
    r->args.coll = c->coll;
    r->args.p = c->p;
    r->args.rank = c->rank;
    r->args.root = c->root;
    r->fam->shared(r);
}

/* A non-blocking or persistent call keeps its own copies of its sides'
 * datatype maps: MPI lets the program free a datatype while such a call is
 * pending, and the map is the datatype's. 0, or -1 when out of memory. */
static int kcoll_req_own_maps(kcoll_req_t *r)
{
    kcoll_side_t *sides[2] = {&r->call.send, &r->call.recv};
    for (int i = 0; i < 2; i++) {
        const kcoll_dmap_t *m = sides[i]->map;
        free(r->mapcopy[i]);
        r->mapcopy[i] = NULL;
        if (!m)
            continue;
        const size_t bytes = kcoll_dmap_bytes(m->nseg);
        if (!(r->mapcopy[i] = malloc(bytes)))
            return -1;
        memcpy(r->mapcopy[i], m, bytes);
        sides[i]->map = r->mapcopy[i];
    }
    return 0;
}

/* A non-blocking or persistent call's own copies of its sides' v-arrays
 * (request.h, varrays). 0, or -1 when out of memory. */
static int kcoll_req_own_arrays(kcoll_req_t *r)
{
    kcoll_side_t *sides[2] = {&r->call.send, &r->call.recv};
    const size_t p = (size_t)(r->call.p > 0 ? r->call.p : 0);
    size_t need = 0;
    for (int i = 0; i < 2; i++)
        need += ((sides[i]->counts != NULL) + (sides[i]->displs != NULL)) * p *
                (sides[i]->wide ? sizeof(int64_t) : sizeof(int));
    if (!need)
        return 0;
    if (need > r->varrays_cap) {
        void *fresh = malloc(need);
        if (!fresh)
            return -1;
        free(r->varrays);
        r->varrays = fresh;
        r->varrays_cap = need;
    }
    char *at = r->varrays;
    for (int i = 0; i < 2; i++) {
        const size_t len = p * (sides[i]->wide ? sizeof(int64_t) : sizeof(int));
        const void **arrays[2] = {&sides[i]->counts, &sides[i]->displs};
        for (int k = 0; k < 2; k++) {
            if (!*arrays[k])
                continue;
            memcpy(at, *arrays[k], len);
            *arrays[k] = at;
            at += len;
        }
    }
    return 0;
}

/* Count a call not prepared as a request on `path`. */
static void kcoll_call_count(const kcoll_call_t *c, kcoll_mode_t mode, int path)
{
    kcoll_req_t r;
    memset(&r, 0, sizeof r);
    if (c->coll == KCOLL_COLL_REDUCE_SCATTER && c->p > 0 &&
        !(r.counts = calloc((size_t)c->p, sizeof *r.counts)))
        return;
    kcoll_call_describe(&r, c, mode);
    kcoll_call_stat(&r, path, path == KCOLL_PATH_REASON(KCOLL_R_INVALID) ? 0 : r.stat_bytes);
    free(r.counts);
}

KCOLL_HOT kcoll_shortcut_t kcoll_shortcuts[KCOLL_NCOLL];
KCOLL_HOT kcoll_host_fn_t kcoll_host_fns[KCOLL_NCOLL];
kcoll_shortcut_rest_t kcoll_shortcut_rests[KCOLL_NCOLL];
int kcoll_shortcut_allowed;

/* The calls c's shortcut took since it last counted go to the statistics. */
static void kcoll_shortcut_count(kcoll_coll_t c)
{
    kcoll_shortcut_t *s = &kcoll_shortcuts[c];
    const kcoll_shortcut_rest_t *r = &kcoll_shortcut_rests[c];
    const uint64_t n = s->used - s->counted;
    if (!n)
        return;
    kcoll_stats_add_calls(r->row, r->path, n, n * r->bytes, kcoll_team_threads);
    kcoll_stats_add_calls(r->row, KCOLL_PATH_SHORTCUT, n, n * r->bytes, kcoll_team_threads);
    s->counted = s->used;
}

/* The same for the calls c's host streak's fast path took. */
static void kcoll_streak_fast_tally(kcoll_coll_t c)
{
    kcoll_streak_fast_t *f = &kcoll_streak_fasts[c];
    if (!f->calls)
        return;
    kcoll_stats_bump_n(f->cells[0], f->calls, f->bytes);
    kcoll_stats_bump_n(f->cells[1], f->calls, f->bytes);
    f->calls = f->bytes = 0;
}

void kcoll_shortcut_tally(void)
{
    for (int c = 0; c < KCOLL_NCOLL; c++) {
        kcoll_shortcut_count((kcoll_coll_t)c);
        kcoll_streak_fast_tally((kcoll_coll_t)c);
    }
}

/* A call of collective c reaches the call layer: c's shortcut is
 * disarmed, the calls it took are counted and added to the decision they
 * repeated (while that entry still holds it, settled: adapt.h) and its
 * offer is withdrawn. */
static void kcoll_call_shortcut_end(kcoll_coll_t c)
{
    kcoll_shortcut_t *s = &kcoll_shortcuts[c];
    kcoll_shortcut_rest_t *r = &kcoll_shortcut_rests[c];
    kcoll_shortcut_count(c);
    if (s->used && r->dkey) {
        kcoll_team_lock(r->team);
        kcoll_adapt_count(&r->team->decisions, r->dkey % KCOLL_DECISIONS, r->dkey, s->used);
        kcoll_team_unlock(r->team);
    }
    s->left = s->used = s->counted = 0;
    r->offer = 0;
}

void kcoll_shortcut_forget(void)
{
    for (int c = 0; c < KCOLL_NCOLL; c++) {
        kcoll_call_shortcut_end((kcoll_coll_t)c);
        kcoll_streak_fast_tally((kcoll_coll_t)c);
    }
    memset(kcoll_streak_fasts, 0, sizeof kcoll_streak_fasts);
    memset(&kcoll_off_fast, 0, sizeof kcoll_off_fast);
}

void kcoll_call_host(const kcoll_call_t *c, kcoll_mode_t mode, kcoll_reason_t why)
{
    kcoll_call_shortcut_end(c->coll);
    kcoll_call_count(c, mode, KCOLL_PATH_REASON(why));
}

int kcoll_call_across_mode(void)
{
    /* a cache of a function of the parameters: the mode of generation gen */
    static _Atomic uint64_t gen;
    static _Atomic int mode;
    const uint64_t g = kcoll_params_generation();
    /* acquire: pairs with the release below (mode is the one of gen) */
    if (atomic_load_explicit(&gen, memory_order_acquire) == g)
        return atomic_load_explicit(&mode, memory_order_relaxed); /* relaxed: ordered above */
    const char *v = kcoll_param_str(KCOLL_P_HIER);
    int m = 1;
    if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"))
        m = 0;
    else if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "leaders"))
        m = 2;
    else if (!strcmp(v, "lanes"))
        m = 3;
    else if (strcmp(v, "auto"))
        kcoll_warn("KCOLL_HIER=%s is not auto, on, leaders, lanes or off; using auto", v);
    atomic_store_explicit(&mode, m, memory_order_relaxed); /* relaxed: published below */
    /* release: mode is stored before gen says it is current */
    atomic_store_explicit(&gen, g, memory_order_release);
    return m;
}

int kcoll_call_across_has(kcoll_coll_t c)
{
    /* the layouts of src/cluster/registry.c (the others: the host MPI,
     * docs/hierarchy.md) */
    return kcoll_call_across_mode() && (kcoll_cluster_find(c, 0) || kcoll_cluster_find(c, 1));
}

void kcoll_call_stat(kcoll_req_t *r, int path, size_t bytes)
{
    kcoll_stats_add(r->row, path, bytes, kcoll_team_threads); /* threads: team.h */
}

/* The host MPI does r's call. A persistent call is counted at each start
 * instead (pmpi/request.c). */
/* KCOLL_MIN_BYTES set to a size sends smaller calls to the host MPI
 * ("auto", -1: the model decides, in the selector). */
static int kcoll_call_below_min(size_t bytes)
{
    const int64_t min = kcoll_param_int(KCOLL_P_MIN_BYTES);
    return min >= 0 && bytes < (size_t)min;
}

/* KCOLL_TRACE: the choice of the host MPI for a call of statistics row
 * `row`, as a kcoll call traces its own. */
static void kcoll_call_trace_host(int row, kcoll_reason_t why, size_t bytes)
{
    if (kcoll_param_int(KCOLL_P_TRACE)) {
        char name[48];
        fprintf(stderr, "kcoll: trace: %s host MPI (%s), %zu bytes\n",
                kcoll_stats_row_name(row, name, sizeof name), kcoll_reason_name(why), bytes);
    }
}

static kcoll_call_result_t kcoll_call_to_host(kcoll_req_t *r, kcoll_reason_t why,
                                              kcoll_reason_t *out)
{
    const size_t bytes = why == KCOLL_R_INVALID ? 0 : r->stat_bytes; /* unsized when invalid */
    if (r->mode != KCOLL_MODE_PERSISTENT)
        kcoll_call_stat(r, KCOLL_PATH_REASON(why), bytes);
    kcoll_call_trace_host(r->row, why, bytes);
    *out = why;
    return KCOLL_CALL_HOST;
}

/* The memo. A program that repeats a call (a benchmark's loop, an
 * iterative solver's reduction) repeats its decision; where that decision
 * is the host MPI's, taken before any agreement, deciding it again costs
 * more than remembering it: describing the call for its family, a request
 * from the pool, the cache-state estimate, the decision cache, bookkeeping
 * (about 600 instructions of a call Open MPI does in 1.6 us). So each
 * team keeps, per collective, the key of its last such call and what
 * deciding found (team.h, kcoll_memo_t), and a blocking call whose key
 * matches is counted, traced and handed to the host MPI at once.
 *
 * The key holds everything the decision reads, so a match decides alike
 * on every rank, as deciding again would: the parameter generation
 * (KCOLL_DISABLE, KCOLL_MIN_BYTES, forced algorithms, the tuning), the
 * collective, p, rank, root, MPI_IN_PLACE, and both sides' count,
 * element size, extent, lower bound and layout flags, as values, not
 * datatype handles (a freed datatype's handle may name another later),
 * and whether an operation applies, which one on which type. Not the
 * buffers' addresses: no decision taken before an agreement reads them
 * (they differ between ranks, so it could not), and a program that
 * rotates its buffers (a pipelined solver, an off-cache benchmark) repeats
 * its decision all the same. One v side (MPI_Reduce_scatter's
 * recvcounts, MPI_Allgatherv's recvcounts and displs, which every rank
 * passes alike and which decide before any agreement) is held as a copy
 * of its arrays, compared whole (up to KCOLL_SHORTCUT_VBYTES bytes, what
 * the shortcut holds of them too: 256 ranks of counts, 128 with
 * displacements). Calls the key cannot hold are never
 * memoized: two v sides (MPI_Alltoallv, decided after its agreement
 * anyway), datatype maps, user operations. A decision the
 * selector took also read the team's previous call of the collective (the
 * cache state) and its decision cache: a match requires the previous call
 * to be repeated, or not, as it was, and the decision cache entry to be
 * the one that decided, still saying the same; the team's previous call
 * is then updated as kcoll_call_remember would. Invalid calls,
 * non-blocking and persistent calls and calls kcoll takes are never
 * memoized. */

/* A v side's arrays as the memo compares them: n (0, 1 or 2) arrays of
 * len bytes each, counts then displacements. */
typedef struct {
    const void *a[2];
    size_t len;
    int n;
} kcoll_memo_v_t;

/* The memo's key for call c in parameter generation gen, or 0 when c is
 * one the key cannot hold; *v: the arrays of its v side, compared beside
 * the key (n 0: none). */
static int kcoll_call_memo_key(const kcoll_call_t *c, uint64_t gen,
                               uint64_t key[KCOLL_MEMO_WORDS], kcoll_memo_v_t *v)
{
    const kcoll_side_t *sd[2] = {&c->send, &c->recv};
    const kcoll_op_t *op = c->op;
    if (op && op->kind == KCOLL_OP_USER)
        return 0;
    key[0] = gen;
    key[1] = (uint64_t)c->coll | (uint64_t)(c->in_place != 0) << 8 | (uint64_t)(op != NULL) << 9 |
             (op ? (uint64_t)op->kind << 16 | (uint64_t)op->type << 24 : 0) |
             (uint64_t)(sd[0]->type & 0xff) << 32 | (uint64_t)(sd[1]->type & 0xff) << 40 |
             1ull << 63; /* never all 0, the empty entry */
    key[2] = (uint64_t)(uint32_t)c->p | (uint64_t)(uint32_t)c->rank << 32;
    key[3] = (uint64_t)(uint32_t)c->root | (uint64_t)(op ? op->esize : 0) << 32;
    v->n = 0;
    for (int i = 0; i < 2; i++) {
        const kcoll_side_t *s = sd[i];
        if (s->map || s->type > 0xff)
            return 0;
        key[4 + 4 * i] = (uint64_t)s->count;
        if (s->counts || s->displs) {
            const size_t n = (size_t)c->p * (s->wide ? sizeof(int64_t) : sizeof(int));
            const int arrays = 1 + (s->displs != NULL);
            if (v->n || !s->counts || n == 0 ||
                n * (size_t)arrays > KCOLL_SHORTCUT_VBYTES)
                return 0;
            v->a[0] = s->counts;
            v->a[1] = s->displs;
            v->len = n;
            v->n = arrays;
            key[4 + 4 * i] = (uint64_t)n | (uint64_t)arrays << 60 | 1ull << 62; /* compared */
        }
        key[5 + 4 * i] = s->size;
        key[6 + 4 * i] = s->extent;
        key[7 + 4 * i] = (uint64_t)s->lb;
    }
    return 1;
}

/* A memo hit on team t (the caller holds its lock) offers the entry point
 * the shortcut (shortcut.h) for the repeats of its call: as many as may
 * come before the decision's next check, none while it is being checked,
 * none where the shortcut cannot keep the rules (several threads calling
 * MPI at once, every call traced). */
static void kcoll_call_shortcut_offer(kcoll_team_t *t, kcoll_coll_t c, const kcoll_memo_t *m,
                                      int row)
{
    kcoll_shortcut_t *s = &kcoll_shortcuts[c];
    kcoll_shortcut_rest_t *r = &kcoll_shortcut_rests[c];
    const uint64_t most = 1u << 30; /* without a decision: taken back now and then */
    if (!kcoll_shortcut_allowed || !kcoll_param_int(KCOLL_P_SHORTCUT) ||
        kcoll_param_int(KCOLL_P_TRACE))
        return;
    const uint64_t left =
        m->selected ? kcoll_adapt_calls_left(&t->decisions, m->dkey % KCOLL_DECISIONS, most)
                    : most;
    if (!left || !kcoll_stats_cell_of(row, KCOLL_PATH_REASON(m->why)))
        return;
    /* (the memo's arrays are ints here: an entry point that arms the
     * shortcut has int counts, and its memo key says their length) */
    s->vints = m->vn ? (uint32_t)(m->vlen / (size_t)m->vn / sizeof(int)) : 0;
    s->vn = m->vn;
    if (m->vlen)
        memcpy(kcoll_shortcut_varrays(c), m->vcounts, m->vlen);
    r->offer = (uint32_t)left;
    r->dkey = m->selected ? m->dkey : 0;
    r->team = t;
    r->bytes = m->bytes;
    r->row = row;
    r->path = KCOLL_PATH_REASON(m->why);
    s->gen = m->key[0]; /* the parameter generation the memo's key holds */
}

/* Team t's memo of c's collective matches key: count and trace the call,
 * update the team's previous call where deciding would have, and return 1
 * with the reason in *why; else 0. */
static int kcoll_call_memo_hit(kcoll_team_t *t, const kcoll_call_t *c,
                               const uint64_t key[KCOLL_MEMO_WORDS], const kcoll_memo_v_t *v,
                               kcoll_reason_t *why)
{
    const kcoll_memo_t *m = &t->memo[c->coll];
    kcoll_team_lock(t);
    int hit = !memcmp(m->key, key, sizeof m->key) && m->vn == v->n &&
              m->vlen == v->len * (size_t)v->n;
    for (int i = 0; hit && i < v->n; i++)
        hit = !memcmp((const char *)m->vcounts + (size_t)i * v->len, v->a[i], v->len);
    if (hit && m->selected) {
        const int slot = m->dkey % KCOLL_DECISIONS;
        hit = kcoll_call_repeats(t, c->coll, m->policy_bytes, c->root) == m->repeat &&
              t->decisions.e[slot].key == m->dkey &&
              kcoll_adapt_now(&t->decisions, slot) == m->result &&
              kcoll_adapt_memo(&t->decisions, slot);
        if (hit)
            kcoll_call_remember_in(t, c->coll, m->policy_bytes, c->root);
    }
    const kcoll_reason_t w = (kcoll_reason_t)m->why;
    const size_t bytes = m->bytes;
    const int row = kcoll_stats_row(c->coll, KCOLL_MODE_BLOCKING);
    if (hit)
        kcoll_call_shortcut_offer(t, c->coll, m, row);
    kcoll_team_unlock(t);
    if (!hit)
        return 0;
    kcoll_stats_add(row, KCOLL_PATH_REASON(w), bytes, kcoll_team_threads); /* threads: team.h */
    kcoll_call_trace_host(row, w, bytes);
    *why = w;
    return 1;
}

/* Keep r's call, which goes to the host MPI for `why`, in its team's memo
 * under key. selected: an entry of the team's decisions decided (not a
 * forced spec), on a call that did or did not repeat the team's previous
 * one (repeat). */
static void kcoll_call_memo_keep(const kcoll_req_t *r, const uint64_t key[KCOLL_MEMO_WORDS],
                                 const kcoll_memo_v_t *v, kcoll_reason_t why, int selected,
                                 int repeat)
{
    kcoll_team_t *t = r->team;
    kcoll_memo_t *m = &t->memo[r->call.coll];
    const size_t vlen = v->len * (size_t)v->n;
    char *copy = NULL;
    if (vlen && !(copy = malloc(vlen)))
        return; /* not kept: the next call decides */
    for (int i = 0; i < v->n; i++)
        memcpy(copy + (size_t)i * v->len, v->a[i], v->len);
    const int dkey = selected ? kcoll_adapt_key(r) : 0;
    kcoll_team_lock(t);
    memcpy(m->key, key, sizeof m->key);
    free(m->vcounts);
    m->vcounts = copy;
    m->vlen = vlen;
    m->vn = v->n;
    m->bytes = r->stat_bytes;
    m->policy_bytes = r->policy_bytes;
    m->why = (int)why;
    m->selected = selected;
    m->repeat = repeat;
    m->dkey = dkey;
    m->result = selected ? kcoll_adapt_now(&t->decisions, dkey % KCOLL_DECISIONS) : 0;
    if (selected && (t->decisions.e[dkey % KCOLL_DECISIONS].key != dkey ||
                     !kcoll_adapt_repeatable(&t->decisions, dkey % KCOLL_DECISIONS)))
        m->key[1] = 0; /* not the entry that decided (another thread's since), or a
                        * decision under check past its lead (this call may have run
                        * the other side, the next is timed): none */
    kcoll_team_unlock(t);
}

/* The host streak. MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv decide
 * after the ranks agree (no rank knows every size before the votes), and
 * the agreement is a flag round trip between them: 0.5-0.6 us on two
 * ranks, where the host MPI does a small call in 0.3 us. Where an
 * agreement sends a valid blocking call of one of them to the host, the team
 * starts a streak: the collective's next blocking calls with the same
 * root go to the host MPI at once, without agreeing. The first streak is
 * 1 call, and each agreement after a streak that sends the call to the
 * host again doubles it, up to KCOLL_HOST_STREAK; an agreement that runs
 * the call in kcoll ends the doubling. A program that repeats small calls
 * thus agrees about once every KCOLL_HOST_STREAK calls; one whose calls
 * grow runs on the host for at most that many calls before an agreement
 * sees them: never slower than the host, only later faster.
 *
 * The ranks must all take the host's path or all agree, or they would
 * wait for each other. They do: the streak is the team's, started and
 * counted at the same calls on every rank. It starts only from an
 * agreement's outcome, which every rank computes alike from the same
 * votes, and only where that outcome is not a decision being checked by
 * measurement past the check's lead (call/adapt.h: a check counts the
 * calls of its pattern alike on every rank through the selector, which a
 * streak skips, so a lead of L calls is L agreements apart). It is
 * asked first thing for every blocking call of the collective with the
 * team, before anything a rank decides from its own arguments (the memo;
 * these collectives have no shortcut), and it holds only what every rank
 * passes alike: the collective, the root, the parameter generation (MPI
 * and kcoll_param_set want every rank to change parameters at the same
 * point). A call with another root or in another generation ends the
 * streak and agrees. The entry points of the int forms ask before they
 * even describe the call (pmpi/run.c: kcoll_pmpi_streak); the call layer
 * asks for the others (the large-count forms), which match the int forms
 * on other ranks. */
static int kcoll_call_streaks(kcoll_coll_t c)
{
    return c == KCOLL_COLL_GATHERV || c == KCOLL_COLL_SCATTERV || c == KCOLL_COLL_ALLTOALLV;
}

size_t kcoll_call_own_bytes(const kcoll_call_t *c)
{
    const kcoll_side_t *v = c->recv.counts ? &c->recv : c->send.counts ? &c->send : NULL;
    const kcoll_side_t *own = c->coll == KCOLL_COLL_GATHERV ? &c->send : &c->recv;
    size_t n = 0;
    for (int q = 0; v && q < c->p; q++) {
        const int64_t k = kcoll_side_ventry(v->counts, v->wide, q);
        n += k > 0 ? (size_t)k * v->size : 0;
    }
    return v ? n : own->count > 0 ? (size_t)own->count * own->size : 0;
}

int kcoll_streak_take(kcoll_streak_t *k, int root)
{
    const int same = k->root == root && k->gen == kcoll_params_generation();
    const int take = k->left && same;
    if (take)
        k->left--;
    else if (!same) /* another root, or parameters changed: agree, and start over */
        k->left = k->next = 0;
    return take;
}

void kcoll_streak_after(kcoll_streak_t *k, int root, int why)
{
    const int most = kcoll_param_int(KCOLL_P_HOST_STREAK);
    if (!why || most <= 0) {
        k->left = k->next = 0;
        return;
    }
    const uint32_t n = k->next ? k->next : 1, cap = (uint32_t)most;
    k->left = n < cap ? n : cap;
    k->next = 2 * k->left < cap ? 2 * k->left : cap;
    k->root = root;
    k->why = why;
    k->gen = kcoll_params_generation();
}

kcoll_reason_t kcoll_call_streak_take(kcoll_team_t *t, kcoll_coll_t c, int root)
{
    if (!kcoll_call_streaks(c))
        return KCOLL_R_NONE;
    kcoll_team_lock(t);
    kcoll_streak_t *k = &t->streak[c];
    const kcoll_reason_t why =
        kcoll_streak_take(k, root) ? (kcoll_reason_t)k->why : KCOLL_R_NONE;
    kcoll_team_unlock(t);
    return why;
}

KCOLL_HOT kcoll_streak_fast_t kcoll_streak_fasts[KCOLL_NCOLL];

void kcoll_streak_fast_keep(kcoll_team_t *t, kcoll_coll_t c, uint64_t comm)
{
    kcoll_streak_fast_t *f = &kcoll_streak_fasts[c];
    if (!kcoll_shortcut_allowed || kcoll_team_threads || kcoll_param_int(KCOLL_P_TRACE))
        return;
    kcoll_streak_fast_tally(c); /* counted in the cells it kept so far */
    const kcoll_streak_t *k = &t->streak[c];
    const int row = kcoll_stats_row(c, KCOLL_MODE_BLOCKING);
    f->k = NULL;
    f->cells[0] = kcoll_stats_cell_of(row, KCOLL_PATH_REASON(k->why));
    f->cells[1] = kcoll_stats_cell_of(row, KCOLL_PATH_STREAK);
    if (!f->cells[0] || !f->cells[1])
        return;
    f->comm = comm;
    f->why = k->why;
    f->p = t->ctl.p;
    f->rank = t->ctl.rank;
    f->k = &t->streak[c];
}

kcoll_off_fast_t kcoll_off_fast;

void kcoll_off_fast_keep(kcoll_coll_t c)
{
    if (!kcoll_shortcut_allowed || kcoll_team_threads || kcoll_param_int(KCOLL_P_TRACE))
        return;
    const uint64_t gen = kcoll_params_generation();
    if (kcoll_off_fast.gen != gen) /* the cells kept in another generation go */
        memset(&kcoll_off_fast, 0, sizeof kcoll_off_fast);
    kcoll_off_fast.cells[c] = kcoll_stats_cell_of(kcoll_stats_row(c, KCOLL_MODE_BLOCKING),
                                                  KCOLL_PATH_REASON(KCOLL_R_DISABLED));
    kcoll_off_fast.gen = gen;
}

void kcoll_call_host_count(kcoll_coll_t c, kcoll_reason_t why, size_t bytes)
{
    const int row = kcoll_stats_row(c, KCOLL_MODE_BLOCKING);
    kcoll_stats_add(row, KCOLL_PATH_REASON(why), bytes, kcoll_team_threads);
    kcoll_call_trace_host(row, why, bytes);
}

void kcoll_call_streak_count(kcoll_coll_t c, kcoll_reason_t why, size_t bytes)
{
    kcoll_call_host_count(c, why, bytes);
    kcoll_stats_add(kcoll_stats_row(c, KCOLL_MODE_BLOCKING), KCOLL_PATH_STREAK, bytes,
                    kcoll_team_threads);
}

/* After blocking call r agreed: `host` (its reason) or 0 (kcoll runs it).
 * A host outcome that is no decision under check starts the next streak. */
static void kcoll_call_streak_after(kcoll_req_t *r, int host)
{
    kcoll_team_t *t = r->team;
    if (!kcoll_call_streaks(r->call.coll))
        return;
    const int dkey = kcoll_adapt_key(r), slot = dkey % KCOLL_DECISIONS;
    kcoll_team_lock(t);
    kcoll_streak_t *k = &t->streak[r->call.coll];
    /* (in a check's lead too: its calls run the choice, untimed; the
     * lead then counts the calls that agree, as a decided pattern counts
     * them to its next check) */
    const int steady = r->choice.forced || t->decisions.e[slot].key != dkey ||
                       kcoll_adapt_repeatable(&t->decisions, slot);
    kcoll_streak_after(k, r->call.root, host != KCOLL_R_INVALID && steady ? host : 0);
    kcoll_team_unlock(t);
}

/* A request from the team's pool (or a new one). */
static kcoll_req_t *kcoll_req_get(kcoll_team_t *t)
{
    kcoll_team_lock(t);
    kcoll_req_t *r = t->pool;
    if (r)
        t->pool = r->next;
    kcoll_team_unlock(t);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return NULL;
        kcoll_sched_init(&r->sched);
        r->run = &r->sched;
        r->cache_slot = -1;
    }
    r->team = t;
    r->next = r->prev = NULL;
    r->state = KCOLL_REQ_PREPARED;
    r->seq = 0;
    r->seen = r->built = r->detached = r->listed = r->holds_team = r->across = 0;
    r->status = KCOLL_OK;
    r->errmsg[0] = '\0';
    r->done = NULL;
    r->done_ctx = NULL;
    return r;
}

/* kcoll takes r's call: r holds the team and, unless persistent (each
 * start numbers itself), the team's next collective number. */
static void kcoll_req_commit(kcoll_req_t *r, kcoll_team_t *team, kcoll_mode_t mode)
{
    kcoll_team_ref(team);
    r->holds_team = 1;
    if (mode != KCOLL_MODE_PERSISTENT) {
        kcoll_team_lock(team);
        r->seq = ++team->seq;
        kcoll_team_unlock(team);
    }
}

kcoll_call_result_t kcoll_call_prepare(const kcoll_call_t *c, kcoll_mode_t mode,
                                       kcoll_team_t *team, kcoll_reason_t team_why,
                                       kcoll_req_t **req, kcoll_reason_t *why, char *err,
                                       size_t errlen)
{
    kcoll_req_t local, *r = &local;
    uint64_t key[KCOLL_MEMO_WORDS];
    kcoll_memo_v_t varrays = {{NULL, NULL}, 0, 0};
    *req = NULL;
    kcoll_call_shortcut_end(c->coll);
    if (team && mode == KCOLL_MODE_BLOCKING &&
        (*why = kcoll_call_streak_take(team, c->coll, c->root)) != KCOLL_R_NONE) {
        kcoll_call_streak_count(c->coll, *why, kcoll_call_own_bytes(c));
        return KCOLL_CALL_HOST;
    }
    const int memo = team && mode == KCOLL_MODE_BLOCKING &&
                     kcoll_call_memo_key(c, kcoll_params_generation(), key, &varrays);
    if (memo && kcoll_call_memo_hit(team, c, key, &varrays, why))
        return KCOLL_CALL_HOST;
    if (team && (r = kcoll_req_get(team)) == NULL) {
        snprintf(err, errlen, "out of memory for a request");
        return KCOLL_CALL_FAILED;
    }
    if (!team) {
        memset(&local, 0, sizeof local);
        if (c->coll == KCOLL_COLL_REDUCE_SCATTER && c->p > 0 &&
            !(local.counts = calloc((size_t)c->p, sizeof *local.counts)))
            return kcoll_call_to_host(r, team_why, why);
    } else if (kcoll_req_arrays(r, c->p)) {
        kcoll_req_release(r);
        snprintf(err, errlen, "out of memory for a request");
        return KCOLL_CALL_FAILED;
    }
    kcoll_call_describe(r, c, mode);
    if (team && mode != KCOLL_MODE_BLOCKING && (kcoll_req_own_maps(r) || kcoll_req_own_arrays(r))) {
        kcoll_req_release(r);
        snprintf(err, errlen, "out of memory for a datatype map or the counts");
        return KCOLL_CALL_FAILED;
    }

    const int agrees = r->fam->vote != NULL;
    int selected = 0; /* the call reached the selection: the team remembers it */
    int repeat = 0;   /* then: it repeats the team's previous call of its collective */
    kcoll_reason_t reason = KCOLL_R_NONE;
    if (r->invalid)
        reason = KCOLL_R_INVALID;
    else if (kcoll_param_int(KCOLL_P_DISABLE))
        reason = KCOLL_R_DISABLED;
    else if (c->p == 1)
        reason = KCOLL_R_ONE_RANK;
    else if (kcoll_call_below_min(r->policy_bytes))
        reason = KCOLL_R_SMALL;
    else if (!team && team_why == KCOLL_R_SPANS && kcoll_call_across_has(c->coll))
        reason = KCOLL_R_SPANS; /* the layout's own checks follow (kcoll_call_prepare_across) */
    else if (r->noncontig && (!agrees || mode != KCOLL_MODE_BLOCKING))
        reason = KCOLL_R_NONCONTIG;
    else if (r->bad_op)
        reason = KCOLL_R_OP;
    else if (!team)
        reason = team_why == KCOLL_R_SPANS ? KCOLL_R_MULTINODE : team_why;
    else {
        repeat = kcoll_call_repeats(team, c->coll, r->policy_bytes, c->root);
        r->cache = kcoll_call_cache(r);
        const int sel = kcoll_call_select(r);
        if (sel < 0) { /* a peer is gone (one line says which) */
            snprintf(err, errlen, "%s", r->errmsg);
            kcoll_req_release(r);
            return KCOLL_CALL_FAILED;
        }
        reason = (kcoll_reason_t)sel;
        selected = 1;
    }
    if (reason == KCOLL_R_SPANS) { /* nothing taken, nothing counted yet */
        free(local.counts);
        return KCOLL_CALL_ACROSS;
    }
    if (reason != KCOLL_R_NONE || !team) {
        kcoll_call_result_t res = kcoll_call_to_host(r, reason, why);
        if (team) {
            if (memo && reason != KCOLL_R_INVALID)
                kcoll_call_memo_keep(r, key, &varrays, reason, selected && !r->choice.forced,
                                     repeat);
            if (selected)
                kcoll_call_remember(r);
            kcoll_req_release(r);
        }
        else
            free(local.counts);
        return res;
    }

    kcoll_req_commit(r, team, mode);
    if (agrees && mode == KCOLL_MODE_BLOCKING) {
        /* the decision depends on the votes: agree now, inside the call */
        const size_t policy_bytes = r->policy_bytes;
        kcoll_req_start(r, NULL, NULL);
        kcoll_req_wait_state(r, KCOLL_REQ_AGREED);
        if (r->state == KCOLL_REQ_DONE) {
            snprintf(err, errlen, "%s", r->errmsg);
            kcoll_req_release(r);
            return KCOLL_CALL_FAILED;
        }
        int host = r->fam->decide(r);
        /* sizes only the votes told (v-variants) are checked and selected
         * for now; the others were above, with the same bytes */
        if (!host && r->policy_bytes != policy_bytes) {
            r->cache = kcoll_call_cache(r);
            if (kcoll_call_below_min(r->policy_bytes))
                host = KCOLL_R_SMALL;
            else if ((host = kcoll_call_select(r)) < 0) {
                snprintf(err, errlen, "%s", r->errmsg);
                kcoll_req_abandon(r);
                return KCOLL_CALL_FAILED;
            }
        }
        kcoll_call_remember(r);
        kcoll_call_streak_after(r, host);
        if (host) {
            kcoll_call_result_t res = kcoll_call_to_host(r, (kcoll_reason_t)host, why);
            kcoll_req_abandon(r);
            return res;
        }
        kcoll_req_build(r);
        if (r->state == KCOLL_REQ_DONE) { /* the build failed: the others learn it (gave up) */
            snprintf(err, errlen, "%s", r->errmsg);
            kcoll_req_release(r);
            return KCOLL_CALL_FAILED;
        }
    } else {
        kcoll_call_remember(r);
    }
    *req = r;
    return KCOLL_CALL_KCOLL;
}

kcoll_call_result_t kcoll_call_prepare_across(const kcoll_call_t *c, kcoll_mode_t mode,
                                              kcoll_team_t *team, const kcoll_across_t *x,
                                              kcoll_req_t **req, kcoll_reason_t *why, char *err,
                                              size_t errlen)
{
    kcoll_req_t *r;
    *req = NULL;
    kcoll_call_shortcut_end(c->coll);
    if ((x->layout != KCOLL_NODES_LEADERS && x->layout != KCOLL_NODES_LANES) ||
        !kcoll_cluster_find(c->coll, x->layout == KCOLL_NODES_LANES)) {
        snprintf(err, errlen, "%s has no layout across nodes of kcoll's own",
                 kcoll_coll_name(c->coll));
        return KCOLL_CALL_FAILED;
    }
    if ((r = kcoll_req_get(team)) == NULL || kcoll_req_arrays(r, c->p)) {
        if (r)
            kcoll_req_release(r);
        snprintf(err, errlen, "out of memory for a request");
        return KCOLL_CALL_FAILED;
    }
    kcoll_call_describe(r, c, mode);
    if (mode != KCOLL_MODE_BLOCKING && (kcoll_req_own_maps(r) || kcoll_req_own_arrays(r))) {
        kcoll_req_release(r);
        snprintf(err, errlen, "out of memory for a datatype map or the counts");
        return KCOLL_CALL_FAILED;
    }
    /* what sends a reduction to the host MPI here is alike on every rank
     * of the communicator (MPI: count, datatype and operation are) */
    kcoll_reason_t reason = x->settle                         ? KCOLL_R_NONE
                            : r->invalid                      ? KCOLL_R_INVALID
                            : r->noncontig && !r->fam->across ? KCOLL_R_NONCONTIG
                            : r->bad_op                       ? KCOLL_R_OP
                                                              : KCOLL_R_NONE;
    /* a blocked collective's datatypes and counts are each rank's own:
     * without an agreement across nodes, a rank that cannot take part
     * cannot tell the others, and handing its part alone to the host would
     * leave them waiting. It fails with what it cannot do */
    r->xa = *x; /* (an Alltoallv's layouts) */
    /* (a call that settles later is judged there, by every rank together) */
    const int own = reason == KCOLL_R_NONE && !x->settle && r->fam->across ? r->fam->across(r)
                                                                            : 0;
    if (own) {
        snprintf(err, errlen, "%s across nodes: %s (KCOLL_HIER=off has the host MPI do such "
                 "calls)", kcoll_coll_name(c->coll),
                 own == KCOLL_R_INVALID ? "this rank's arguments do not match the call's"
                                        : "kcoll cannot lay out this rank's buffer (a datatype "
                                          "it can neither flatten nor have the host pack)");
        kcoll_req_release(r);
        return KCOLL_CALL_FAILED;
    }
    if (reason != KCOLL_R_NONE) {
        kcoll_call_result_t res = kcoll_call_to_host(r, reason, why);
        kcoll_req_release(r);
        return res;
    }
    r->across = 1;
    r->choice.engine = -1; /* the team's */
    kcoll_req_commit(r, team, mode);
    *req = r;
    return KCOLL_CALL_KCOLL;
}
