/* Selection through a team's decision cache (see select.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/params.h"
#include "model/machine.h"
#include "model/select.h"
#include "sched/wait.h"
#include "xfer/engine.h"

/* KCOLL_<FAMILY>_ALGO of each family. */
static kcoll_param_id_t kcoll_algo_param_of(kcoll_coll_t family)
{
    switch (family) {
    case KCOLL_COLL_SCATTER: return KCOLL_P_SCATTER_ALGO;
    case KCOLL_COLL_GATHER: return KCOLL_P_GATHER_ALGO;
    case KCOLL_COLL_ALLGATHER: return KCOLL_P_ALLGATHER_ALGO;
    case KCOLL_COLL_ALLTOALL: return KCOLL_P_ALLTOALL_ALGO;
    case KCOLL_COLL_BARRIER: return KCOLL_P_BARRIER_ALGO;
    case KCOLL_COLL_REDUCE: return KCOLL_P_REDUCE_ALGO;
    case KCOLL_COLL_ALLREDUCE: return KCOLL_P_ALLREDUCE_ALGO;
    case KCOLL_COLL_REDUCE_SCATTER: return KCOLL_P_REDUCE_SCATTER_ALGO;
    default: return KCOLL_P_BCAST_ALGO;
    }
}

/* One warning per (family, spec, p): a forced spec that cannot run goes to
 * the host MPI on every call, and the user needs to hear it once. */
static void kcoll_select_warn(kcoll_coll_t family, const char *spec, int p, const char *why)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        char spec[128];
        int p;
    } last[KCOLL_NCOLL];
    int say = 0;
    pthread_mutex_lock(&lock);
    if (last[family].p != p || strncmp(last[family].spec, spec, sizeof last[family].spec - 1)) {
        snprintf(last[family].spec, sizeof last[family].spec, "%s", spec);
        last[family].p = p;
        say = 1;
    }
    pthread_mutex_unlock(&lock);
    if (say)
        kcoll_warn("KCOLL_%s_ALGO: %s; %s uses the host MPI", kcoll_coll_env(family), why,
                   kcoll_coll_name(family));
}

int kcoll_spec_engine(const char *spec, char *algo, size_t len)
{
    const char *at = strchr(spec, '@');
    snprintf(algo, len, "%.*s", at ? (int)(at - spec) : (int)strlen(spec), spec);
    if (!at)
        return -1;
    const int e = kcoll_engine_by_name(at + 1);
    return e >= 0 ? e : -2;
}

void kcoll_choice_spec(const kcoll_choice_t *ch, char *out, size_t len)
{
    if (!ch->algo) {
        snprintf(out, len, "host");
        return;
    }
    kcoll_algo_spec(ch->algo, &ch->prm, out, len);
    const size_t n = strlen(out);
    if (ch->engine >= 0 && n < len)
        snprintf(out + n, len - n, "@%s", kcoll_engine((kcoll_engine_id_t)ch->engine)->name);
}

int kcoll_select_rules(const kcoll_tuning_t *t, kcoll_coll_t family, int p, size_t bytes,
                       kcoll_cache_t cache, int host_ok, const kcoll_decisions_t *d,
                       kcoll_select_t *res, kcoll_choice_t *out)
{
    const unsigned engines = KCOLL_ENGINE_BIT(d->engine) | d->percall;
    for (int i = 0; i < t->nrules; i++) {
        const kcoll_trule_t *r = &t->rules[i];
        if (r->coll != (int)family || p < r->pmin || (r->pmax && p > r->pmax) ||
            (double)bytes < r->bmin || (r->bmax > 0 && (double)bytes >= r->bmax) ||
            (cache != KCOLL_CACHE_ANY && r->cache != KCOLL_CACHE_ANY && r->cache != (int)cache))
            continue;
        if (!strcmp(r->spec, "host")) {
            if (!host_ok)
                continue; /* KCOLL_MIN_BYTES, an environment variable, says kcoll */
            *res = KCOLL_SELECT_HOST;
            return i + 1;
        }
        char err[160], algo[sizeof r->spec];
        const int e = kcoll_spec_engine(r->spec, algo, sizeof algo);
        if (e == -2 || (e >= 0 && !(engines & KCOLL_ENGINE_BIT(e))))
            continue;
        if (kcoll_algo_parse(family, algo, &out->algo, &out->prm, err, sizeof err) || !out->algo ||
            (out->algo->check && out->algo->check(p, &out->prm, err, sizeof err)))
            continue;
        out->engine = e >= 0 && e != d->engine ? e : -1;
        *res = KCOLL_SELECT_KCOLL;
        return i + 1;
    }
    return 0;
}

size_t kcoll_class_bytes(size_t bytes)
{
    int c = kcoll_size_class(bytes);
    if (c <= 1 || c >= 63)
        return bytes;
    /* [2^(c-1), 2^c): its geometric middle, 2^(c-1) * sqrt(2) */
    return (size_t)((double)((size_t)1 << (c - 1)) * 1.4142135623730951);
}

/* The values the model tries for one parameter of an algorithm at p. */
static int kcoll_sweep_values(const kcoll_pdesc_t *d, int p, int *v)
{
    static const int ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40,
                             48, 56, 64, 96, 128, 192, 256, 384, 512};
    static const int chunks[] = {32, 64, 128, 256, 512};
    static const int segs[] = {0, 16, 64, 512};
    int n = 0;
    if (!strcmp(d->name, "k")) {
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            if (ks[i] >= d->min && ks[i] <= d->max && ks[i] <= (p > 2 ? p : 2))
                v[n++] = ks[i];
    } else if (!strcmp(d->name, "j")) {
        for (int j = 1; j <= 3 && j < (p > 2 ? p : 2); j++)
            v[n++] = j;
    } else if (!strcmp(d->name, "chunk")) {
        const int *src = d->def ? chunks : segs; /* chunk 0 means auto segments (hier) */
        int ns = d->def ? 5 : 4;
        for (int i = 0; i < ns; i++)
            if (src[i] >= d->min && src[i] <= d->max)
                v[n++] = src[i];
    }
    if (!n)
        v[n++] = d->def;
    return n;
}

/* kcoll_price, but far beyond the caches, where the time grows linearly,
 * at most 64 MiB per rank priced and the time scaled: schedules of
 * gigabytes take long to walk (a 128-rank Reduce_scatter of 16 MiB blocks
 * moves 2 GiB per rank and took minutes). A rank of a blocked collective
 * moves p blocks. */
static int kcoll_price_capped(const kcoll_machine_t *m, const kcoll_algo_t *a,
                              const kcoll_aparam_t *prm, const kcoll_pcall_t *c,
                              kcoll_price_t *pr)
{
    const kcoll_coll_t f = kcoll_coll_family(c->coll);
    const int blocked = f != KCOLL_COLL_BCAST && f != KCOLL_COLL_REDUCE &&
                        f != KCOLL_COLL_ALLREDUCE && f != KCOLL_COLL_BARRIER;
    const size_t cap = ((size_t)64 << 20) / (size_t)(blocked && c->p > 1 ? c->p : 1);
    kcoll_pcall_t pc = *c;
    double scale = 1;
    if (pc.bytes > cap) {
        scale = (double)pc.bytes / (double)cap;
        pc.bytes = cap;
    }
    if (kcoll_price(m, a, prm, &pc, pr))
        return -1;
    pr->t *= scale;
    return 0;
}

static int kcoll_cand_cmp(const void *x, const void *y)
{
    const kcoll_cand_t *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    int ia = a->ch.algo ? kcoll_algo_index(a->ch.algo) : -1;
    int ib = b->ch.algo ? kcoll_algo_index(b->ch.algo) : -1;
    if (ia != ib)
        return ia - ib;
    return memcmp(&a->ch.prm, &b->ch.prm, sizeof a->ch.prm);
}

/* Calls fn(ctx, ch) for every candidate for call c, unpriced, in the
 * model's order: the host MPI first (ch->algo NULL) when host_ok, then
 * each algorithm of the family that is valid for p, with the cross product
 * of its parameters' sweeps (the first parameter turning fastest). Stops
 * where fn returns nonzero. */
static void kcoll_model_each(const kcoll_pcall_t *c, int host_ok,
                             int (*fn)(void *ctx, const kcoll_choice_t *ch), void *ctx)
{
    const kcoll_coll_t family = kcoll_coll_family(c->coll);
    const int flat = !c->lv || c->lv->n == 0;
    kcoll_choice_t ch;
    memset(&ch, 0, sizeof ch);
    ch.engine = -1;
    if (host_ok && fn(ctx, &ch))
        return;
    for (int i = 0; i < kcoll_nalgos; i++) {
        const kcoll_algo_t *a = &kcoll_algos[i];
        if (a->family != family)
            continue;
        if (flat && a->levels)
            continue; /* without levels the same as a flat algorithm */
        /* the cross product of every parameter's sweep */
        int vals[KCOLL_ALGO_MAX_PARAMS][32], nv[KCOLL_ALGO_MAX_PARAMS], np = 0;
        for (; np < KCOLL_ALGO_MAX_PARAMS && a->params[np].name; np++)
            nv[np] = kcoll_sweep_values(&a->params[np], c->p, vals[np]);
        int at[KCOLL_ALGO_MAX_PARAMS] = {0};
        for (;;) {
            char why[160];
            kcoll_algo_defaults(a, &ch.prm);
            for (int q = 0; q < np; q++)
                *kcoll_aparam_field(&ch.prm, &a->params[q]) = vals[q][at[q]];
            ch.algo = a;
            if ((!a->check || !a->check(c->p, &ch.prm, why, sizeof why)) && fn(ctx, &ch))
                return;
            int q = 0;
            while (q < np && ++at[q] == nv[q])
                at[q++] = 0;
            if (q == np)
                break;
        }
    }
}

/* One candidate priced: ch at price *pr, or the host MPI (ch->algo NULL,
 * pr unused). Returns 0, -1 where the model cannot price it. */
static int kcoll_model_price_one(const kcoll_machine_t *m, const kcoll_pcall_t *c,
                                 const kcoll_choice_t *ch, kcoll_cand_t *out)
{
    memset(out, 0, sizeof *out);
    out->ch = *ch;
    if (!ch->algo) {
        out->t = kcoll_price_host(m, c);
        return 0;
    }
    if (kcoll_price_capped(m, ch->algo, &ch->prm, c, &out->pr))
        return -1;
    out->t = out->pr.t;
    return 0;
}

typedef struct {
    const kcoll_machine_t *m;
    const kcoll_pcall_t *c;
    kcoll_cand_t *out;
    int n, max;
} kcoll_rank_ctx_t;

static int kcoll_rank_one(void *ctx, const kcoll_choice_t *ch)
{
    kcoll_rank_ctx_t *x = ctx;
    if (x->n >= x->max)
        return 1;
    if (!kcoll_model_price_one(x->m, x->c, ch, &x->out[x->n]))
        x->n++;
    return x->n >= x->max;
}

int kcoll_model_rank(const kcoll_machine_t *m, const kcoll_pcall_t *c, int host_ok,
                     kcoll_cand_t *out, int max)
{
    kcoll_rank_ctx_t x = {.m = m, .c = c, .out = out, .max = max};
    kcoll_model_each(c, host_ok, kcoll_rank_one, &x);
    qsort(out, (size_t)x.n, sizeof out[0], kcoll_cand_cmp);
    return x.n;
}

static _Atomic uint64_t kcoll_model_priced;

uint64_t kcoll_model_pricings(void)
{
    /* relaxed: a count for tests, ordering nothing */
    return atomic_load_explicit(&kcoll_model_priced, memory_order_relaxed);
}

/* The call the model prices for a decision of (c, p, lv, bytes) on
 * `engine`; *host_ok cleared where the host MPI cannot be a candidate. */
static kcoll_pcall_t kcoll_select_pcall(kcoll_coll_t c, int p, const kcoll_levels_t *lv,
                                        int *host_ok, size_t bytes, int engine)
{
    if (bytes == KCOLL_BYTES_UNKNOWN) {
        /* no size: a barrier moves no bytes; the v-variants' sizes are not
         * known alike before their agreement (which decides again with
         * them), and a non-blocking one runs kcoll's pick for large blocks */
        if (kcoll_coll_family(c) == KCOLL_COLL_BARRIER) {
            bytes = 0;
        } else {
            bytes = (size_t)64 << 20;
            *host_ok = 0;
        }
    }
    kcoll_pcall_t pc = {.coll = c, .p = p, .bytes = kcoll_class_bytes(bytes), .lv = lv,
                        .cores = kcoll_wait_cores(), .engine = engine};
    return pc;
}

/* The model's decisions, process-wide. A decision depends only on
 * (collective, p, size class, host_ok), the team's levels, the crowding,
 * the engine priced, the machine and the parameters other than the
 * algorithm choices (kcoll_params_generation_model), so it outlives a team
 * and a change of KCOLL_<FAMILY>_ALGO: kcoll-bench sets that before every
 * call it times, and its 'auto' column must not pay for pricing every
 * candidate again; nor does a team pay again for the other cache state of
 * a size class (its rules may differ, the model's price does not), nor a
 * new communicator of the same ranks' placement. Pricing with the host MPI
 * among the candidates also keeps the decision without it (kcoll's
 * cheapest: the runner-up the check of a host decision needs), which is
 * the same candidates priced again. A job's end keeps the memo for the
 * next job of the same build, machine terms and parameters (model/keep.h).
 * What the first call of a size class pays: docs/model.md, "What a
 * decision costs". 1024 entries in sets of KCOLL_MODEL_WAYS (a decision's
 * set by a hash of its key; a full set gives up its entries in turn): a
 * direct-mapped table of 256 lost entries to collisions (kcoll-bench's
 * Allreduce job from 8 B to 4 MiB, 34 decisions in about 70 entries, then
 * priced 6 of them again after reading the kept ones). */
#define KCOLL_MODEL_MEMO 1024
#define KCOLL_MODEL_WAYS 4
static struct {
    uint64_t gen; /* 0: empty */
    uint64_t lvh; /* the levels' hash (kcoll_levels_hash) */
    int p;
    int cores;    /* the crowding it was priced with (kcoll_wait_cores) */
    int engine;
    int16_t key;  /* as a team's decision key */
    int16_t algo; /* index in kcoll_algos, or -1: the host MPI */
    kcoll_aparam_t prm;
    double t;     /* its predicted time */
    int8_t kept;  /* read from the decisions kept by an earlier job (model/keep.h) */
} kcoll_model_memo[KCOLL_MODEL_MEMO];
static pthread_mutex_t kcoll_model_memo_lock = PTHREAD_MUTEX_INITIALIZER;

/* A hash of levels lv (FNV-1a over their shape and every rank's groups);
 * flat (NULL or no level kept): 0. Two teams whose ranks sit alike get
 * the same. */
static uint64_t kcoll_levels_hash(const kcoll_levels_t *lv)
{
    if (!lv || lv->n == 0)
        return 0;
    uint64_t h = 1469598103934665603ull;
#define KCOLL_LV_MIX(x) (h = (h ^ (uint64_t)(uint32_t)(x)) * 1099511628211ull)
    KCOLL_LV_MIX(lv->n);
    KCOLL_LV_MIX(lv->p);
    for (int l = 0; l < lv->n; l++) {
        KCOLL_LV_MIX(lv->ngroups[l]);
        for (int q = 0; q < lv->p; q++)
            KCOLL_LV_MIX(lv->group[l][q]);
    }
#undef KCOLL_LV_MIX
    return h | 1; /* never the flat teams' 0 */
}

typedef __typeof__(kcoll_model_memo[0]) kcoll_memo_t;

/* A decision's identity in the memo. */
typedef struct {
    uint64_t gen, lvh;
    int p, cores, engine, key;
} kcoll_memo_key_t;

/* Is memo entry e decision k? */
static int kcoll_model_memo_is(const kcoll_memo_t *e, const kcoll_memo_key_t *k)
{
    return e->gen == k->gen && e->lvh == k->lvh && e->p == k->p && e->key == k->key &&
           e->cores == k->cores && e->engine == k->engine;
}

/* The first entry of decision k's set. */
static kcoll_memo_t *kcoll_model_memo_set(const kcoll_memo_key_t *k)
{
    uint64_t h = k->lvh ^ ((uint64_t)(uint32_t)k->key << 32 | (uint32_t)k->p);
    h = (h ^ ((uint64_t)(uint32_t)k->engine << 16 | (uint32_t)k->cores)) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return &kcoll_model_memo[(h % (KCOLL_MODEL_MEMO / KCOLL_MODEL_WAYS)) * KCOLL_MODEL_WAYS];
}

/* Under the memo's lock: the entry that holds decision k, or NULL. */
static kcoll_memo_t *kcoll_model_memo_find(const kcoll_memo_key_t *k)
{
    kcoll_memo_t *set = kcoll_model_memo_set(k);
    for (int w = 0; w < KCOLL_MODEL_WAYS; w++)
        if (kcoll_model_memo_is(&set[w], k))
            return &set[w];
    return NULL;
}

/* Under the memo's lock: the decision k as a candidate in *out, if the
 * memo holds it (returns 1; else 0). */
static int kcoll_model_memo_get(const kcoll_memo_key_t *k, kcoll_cand_t *out)
{
    const kcoll_memo_t *e = kcoll_model_memo_find(k);
    if (!e)
        return 0;
    memset(out, 0, sizeof *out);
    out->ch.algo = e->algo >= 0 ? &kcoll_algos[e->algo] : NULL;
    out->ch.prm = e->prm;
    out->ch.engine = -1;
    out->t = e->t;
    return 1;
}

/* Under the memo's lock: decision k is candidate c (in its entry, else in
 * one of its set that holds another parameter generation's, else in the
 * set's next in turn). Returns the entry. */
static kcoll_memo_t *kcoll_model_memo_put(const kcoll_memo_key_t *k, const kcoll_cand_t *c)
{
    static unsigned turn;
    kcoll_memo_t *e = kcoll_model_memo_find(k), *set = kcoll_model_memo_set(k);
    for (int w = 0; w < KCOLL_MODEL_WAYS && !e; w++)
        if (set[w].gen != k->gen)
            e = &set[w];
    if (!e)
        e = &set[turn++ % KCOLL_MODEL_WAYS];
    e->gen = k->gen;
    e->lvh = k->lvh;
    e->p = k->p;
    e->cores = k->cores;
    e->engine = k->engine;
    e->key = (int16_t)k->key;
    e->algo = c->ch.algo ? (int16_t)kcoll_algo_index(c->ch.algo) : -1;
    e->prm = c->ch.prm;
    e->t = c->t;
    e->kept = 0;
    return e;
}

int kcoll_model_memo_export(kcoll_memo_rec_t *out, int max, int *fresh)
{
    const uint64_t gen = kcoll_params_generation_model();
    int n = 0;
    *fresh = 0;
    pthread_mutex_lock(&kcoll_model_memo_lock);
    for (int i = 0; i < KCOLL_MODEL_MEMO && n < max; i++) {
        const kcoll_memo_t *e = &kcoll_model_memo[i];
        if (e->gen != gen)
            continue;
        out[n++] = (kcoll_memo_rec_t){.lvh = e->lvh, .p = e->p, .cores = e->cores,
                                      .engine = e->engine, .key = e->key, .algo = e->algo,
                                      .prm = e->prm, .t = e->t};
        *fresh += !e->kept;
    }
    pthread_mutex_unlock(&kcoll_model_memo_lock);
    return n;
}

int kcoll_model_memo_import(const kcoll_memo_rec_t *in, int n)
{
    const uint64_t gen = kcoll_params_generation_model();
    int taken = 0;
    pthread_mutex_lock(&kcoll_model_memo_lock);
    for (int i = 0; i < n; i++) {
        const kcoll_memo_rec_t *r = &in[i];
        if (r->algo < -1 || r->algo >= kcoll_nalgos || r->p < 1 || r->key <= 0 ||
            r->key > INT16_MAX || r->engine < 0 || r->engine >= KCOLL_NENGINES)
            continue;
        /* an algorithm of the key's collective (key: (c * 65 + class) * 2
         * + host_ok + 1) that can run with its parameters */
        const int coll = (r->key - 1) / 2 / 65;
        char why[160];
        if (coll >= KCOLL_NCOLL ||
            (r->algo >= 0 &&
             (kcoll_algos[r->algo].family != kcoll_coll_family((kcoll_coll_t)coll) ||
              (kcoll_algos[r->algo].check &&
               kcoll_algos[r->algo].check(r->p, &r->prm, why, sizeof why)))))
            continue;
        const kcoll_memo_key_t k = {.gen = gen, .lvh = r->lvh, .p = r->p, .cores = r->cores,
                                    .engine = r->engine, .key = r->key};
        if (kcoll_model_memo_find(&k))
            continue; /* this process's own (or an earlier record's) */
        kcoll_cand_t c;
        memset(&c, 0, sizeof c);
        c.ch.algo = r->algo >= 0 ? &kcoll_algos[r->algo] : NULL;
        c.ch.prm = r->prm;
        c.t = r->t;
        kcoll_model_memo_put(&k, &c)->kept = 1;
        taken++;
    }
    pthread_mutex_unlock(&kcoll_model_memo_lock);
    return taken;
}

/* ---- pricing shared by the ranks of a team (select.h) ----
 *
 * The candidates are numbered in the model's order (kcoll_model_each) and
 * rank r of q prices those numbered r, r + q, r + 2q, ...: its cheapest,
 * and its cheapest of kcoll's own, go to every rank, and every rank takes
 * the cheapest of the cheapest. kcoll_cand_cmp orders the candidates
 * totally (price, then algorithm, then parameters), and a price is the
 * same double on every rank (the same machine, call and code), so that is
 * the candidate the sort of all of them puts first, the one a rank pricing
 * alone finds. Where the model would cut the list (more than
 * KCOLL_MAX_CANDS) nobody shares. A rank whose memo knows the decision
 * already (another team of the same shape decided it) prices nothing and
 * shares the decision, and every rank takes it. */

/* A candidate in a sharing: present, algorithm (-1: the host), k, j,
 * chunk, and the price's 64 bits in four 16-bit pieces (a float holds
 * each exactly: every rank reads the very double priced). */
#define KCOLL_SPLIT_CAND 9
_Static_assert(2 + 2 * KCOLL_SPLIT_CAND <= KCOLL_SPLIT_VALS, "a sharing holds two candidates");

static void kcoll_split_put(float *v, const kcoll_cand_t *c)
{
    memset(v, 0, KCOLL_SPLIT_CAND * sizeof *v);
    if (!c)
        return;
    uint64_t b;
    memcpy(&b, &c->t, sizeof b);
    v[0] = 1;
    v[1] = c->ch.algo ? (float)kcoll_algo_index(c->ch.algo) : -1;
    v[2] = (float)c->ch.prm.k;
    v[3] = (float)c->ch.prm.j;
    v[4] = (float)c->ch.prm.chunk;
    for (int i = 0; i < 4; i++)
        v[5 + i] = (float)((b >> (16 * i)) & 0xffff);
}

static int kcoll_split_get(const float *v, kcoll_cand_t *c)
{
    const int a = (int)v[1];
    if (v[0] != 1 || a < -1 || a >= kcoll_nalgos)
        return 0;
    memset(c, 0, sizeof *c);
    c->ch.algo = a >= 0 ? &kcoll_algos[a] : NULL;
    c->ch.prm.k = (int)v[2];
    c->ch.prm.j = (int)v[3];
    c->ch.prm.chunk = (int)v[4];
    c->ch.engine = -1;
    uint64_t b = 0;
    for (int i = 0; i < 4; i++)
        b |= (uint64_t)v[5 + i] << (16 * i);
    memcpy(&c->t, &b, sizeof b);
    return 1;
}

/* What one rank's share of the candidates came to (q = 1: all of them,
 * pricing alone). */
typedef struct {
    const kcoll_machine_t *m;
    const kcoll_pcall_t *c;
    int q, me, i; /* ranks, this one, the next candidate's number */
    int n;        /* candidates priced */
    int max;      /* at most (the model's cut, pricing alone); 0: all */
    int has_best, has_alt;
    kcoll_cand_t best, alt; /* the cheapest, the cheapest of kcoll's */
} kcoll_split_ctx_t;

/* Keep c in *best where it is cheaper (kcoll_cand_cmp). */
static void kcoll_cand_keep(const kcoll_cand_t *c, kcoll_cand_t *best, int *has)
{
    if (!*has || kcoll_cand_cmp(c, best) < 0) {
        *best = *c;
        *has = 1;
    }
}

static int kcoll_split_one(void *ctx, const kcoll_choice_t *ch)
{
    kcoll_split_ctx_t *x = ctx;
    kcoll_cand_t c;
    if (x->max && x->n >= x->max)
        return 1;
    if (x->i++ % x->q != x->me || kcoll_model_price_one(x->m, x->c, ch, &c))
        return 0;
    x->n++;
    kcoll_cand_keep(&c, &x->best, &x->has_best);
    if (ch->algo)
        kcoll_cand_keep(&c, &x->alt, &x->has_alt);
    return 0;
}

static int kcoll_count_one(void *ctx, const kcoll_choice_t *ch)
{
    (void)ch;
    (*(int *)ctx)++;
    return 0;
}

static _Atomic uint64_t kcoll_model_split_n;

uint64_t kcoll_model_shared(void)
{
    /* relaxed: a count for the statistics, ordering nothing */
    return atomic_load_explicit(&kcoll_model_split_n, memory_order_relaxed);
}

/* The decision for pc priced by split's ranks together (known: this
 * rank's memo's decision, known_alt its runner-up, or NULL): the
 * cheapest candidate in *best (*has_best 0: none priced), kcoll's in *alt,
 * how many were priced in *n (-1: a known decision was taken). 0, or -1
 * where the sharing failed (split->failed set). */
static int kcoll_split_price(kcoll_split_t *split, const kcoll_pcall_t *pc, int host_ok,
                             const kcoll_cand_t *known, const kcoll_cand_t *known_alt,
                             kcoll_cand_t *best, int *has_best, kcoll_cand_t *alt, int *has_alt,
                             int *n)
{
    const int V = KCOLL_SPLIT_VALS, q = split->q;
    float mine[KCOLL_SPLIT_VALS] = {0};
    if (known) {
        mine[0] = 1;
        kcoll_split_put(mine + 2, known);
        kcoll_split_put(mine + 2 + KCOLL_SPLIT_CAND, known_alt);
    } else {
        kcoll_split_ctx_t x = {.m = &kcoll_tuning()->m, .c = pc, .q = q, .me = split->me};
        /* relaxed: counts for tests and the statistics, ordering nothing */
        atomic_fetch_add_explicit(&kcoll_model_priced, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&kcoll_model_split_n, 1, memory_order_relaxed);
        kcoll_model_each(pc, host_ok, kcoll_split_one, &x);
        mine[1] = (float)x.n;
        kcoll_split_put(mine + 2, x.has_best ? &x.best : NULL);
        kcoll_split_put(mine + 2 + KCOLL_SPLIT_CAND, x.has_alt ? &x.alt : NULL);
    }
    float *all = malloc((size_t)q * (size_t)V * sizeof *all);
    if (!all || split->share(split->ctx, mine, all)) {
        free(all);
        split->failed = 1;
        return -1;
    }
    int from = -1; /* the first rank that knew the decision */
    for (int r = 0; r < q && from < 0; r++)
        if (all[r * V] == 1)
            from = r;
    *has_best = *has_alt = 0;
    *n = 0;
    for (int r = 0; r < q; r++) {
        const float *v = all + (size_t)r * V;
        kcoll_cand_t c;
        if (from >= 0 && r != from)
            continue;
        *n += (int)v[1];
        if (kcoll_split_get(v + 2, &c))
            kcoll_cand_keep(&c, best, has_best);
        if (kcoll_split_get(v + 2 + KCOLL_SPLIT_CAND, &c))
            kcoll_cand_keep(&c, alt, has_alt);
    }
    if (from >= 0)
        *n = -1;
    free(all);
    return 0;
}

int kcoll_model_low_end(const kcoll_machine_t *m, const kcoll_pcall_t *pc, size_t bytes,
                        const kcoll_choice_t *pick, double *host_t, double *pick_t)
{
    const int c = kcoll_size_class(bytes);
    if (!pick->algo || bytes == KCOLL_BYTES_UNKNOWN || c <= 1 || c >= 63)
        return 0;
    kcoll_pcall_t low = *pc;
    low.bytes = (size_t)1 << (c - 1);
    kcoll_choice_t host;
    memset(&host, 0, sizeof host);
    host.engine = -1;
    kcoll_cand_t h, k;
    if (low.bytes == pc->bytes || kcoll_model_price_one(m, &low, &host, &h) ||
        kcoll_model_price_one(m, &low, pick, &k))
        return 0;
    *host_t = h.t;
    *pick_t = k.t;
    return h.t < k.t;
}

/* The lower end's say in a decision (kcoll_model_low_end, select.h: why):
 * where kcoll's pick (*best) is dearer than the host there, the host
 * takes the class and kcoll's pick is the runner-up (*alt) that the check
 * by measurement (call/adapt.c) times against it. pc: the call priced at
 * the middle of the class of bytes; hok: the host is a candidate. */
static void kcoll_select_low_end(const kcoll_pcall_t *pc, size_t bytes, int hok,
                                 kcoll_cand_t *best, kcoll_cand_t *alt, int *has_alt)
{
    const kcoll_machine_t *m = &kcoll_tuning()->m;
    kcoll_choice_t host;
    memset(&host, 0, sizeof host);
    host.engine = -1;
    kcoll_cand_t h;
    double ht, kt;
    if (!hok || !kcoll_model_low_end(m, pc, bytes, &best->ch, &ht, &kt) ||
        kcoll_model_price_one(m, pc, &host, &h))
        return;
    *alt = *best;
    *has_alt = 1;
    *best = h;
}

/* The model's choice for a call with steps on `engine`: the cheapest
 * candidate, its predicted time in *t; priced with split's ranks where
 * split is not NULL (every one of them calls this alike), else alone. */
static kcoll_select_t kcoll_select_model(kcoll_coll_t c, int p, const kcoll_levels_t *lv,
                                         int host_ok, size_t bytes, int engine,
                                         kcoll_split_t *split, kcoll_choice_t *out, double *t)
{
    const int base = (int)c * 65 + kcoll_size_class(bytes);
    const kcoll_memo_key_t k = {.gen = kcoll_params_generation_model(),
                                .lvh = kcoll_levels_hash(lv),
                                .p = p,
                                .cores = kcoll_wait_cores(),
                                .engine = engine,
                                .key = base * 2 + !!host_ok + 1};
    kcoll_memo_key_t ko = k; /* kcoll's cheapest: the decision without the host */
    ko.key = base * 2 + 1;
    kcoll_cand_t best, alt, known, known_alt;
    int has_best = 0, has_alt = 0, n = 0;
    pthread_mutex_lock(&kcoll_model_memo_lock);
    const int hit = kcoll_model_memo_get(&k, &known);
    const int hit_alt = hit && host_ok && kcoll_model_memo_get(&ko, &known_alt);
    pthread_mutex_unlock(&kcoll_model_memo_lock);
    int hok = host_ok;
    const kcoll_pcall_t pc = kcoll_select_pcall(c, p, lv, &hok, bytes, engine);
    int shared = 0;
    if (split && split->q > 1 && !split->failed) {
        int all = 0;
        kcoll_model_each(&pc, hok, kcoll_count_one, &all);
        shared = all <= KCOLL_MAX_CANDS &&
                 !kcoll_split_price(split, &pc, hok, hit ? &known : NULL,
                                    hit_alt ? &known_alt : NULL, &best, &has_best, &alt,
                                    &has_alt, &n);
    }
    if (!shared && hit) {
        *out = known.ch;
        *t = known.t;
        return out->algo ? KCOLL_SELECT_KCOLL : KCOLL_SELECT_HOST;
    }
    if (!shared) {
        /* alone: every candidate up to the model's cut, the cheapest kept
         * as the sort of them all would put it first (kcoll_model_rank) */
        kcoll_split_ctx_t x = {.m = &kcoll_tuning()->m, .c = &pc, .q = 1, .max = KCOLL_MAX_CANDS};
        /* relaxed: a count for tests, ordering nothing */
        atomic_fetch_add_explicit(&kcoll_model_priced, 1, memory_order_relaxed);
        kcoll_model_each(&pc, hok, kcoll_split_one, &x);
        n = x.n;
        has_best = x.has_best;
        best = x.best;
        has_alt = x.has_alt;
        alt = x.alt;
    }
    if (!has_best) { /* nothing priced: the host */
        memset(&best, 0, sizeof best);
        best.ch.engine = -1;
    }
    kcoll_select_low_end(&pc, bytes, hok, &best, &alt, &has_alt);
    /* kcoll's cheapest of the same candidates is kept where the host was
     * among them and no candidate was left out */
    const int keep_alt = has_alt && host_ok && bytes != KCOLL_BYTES_UNKNOWN && n < KCOLL_MAX_CANDS;
    pthread_mutex_lock(&kcoll_model_memo_lock);
    kcoll_model_memo_put(&k, &best);
    if (keep_alt)
        kcoll_model_memo_put(&ko, &alt);
    pthread_mutex_unlock(&kcoll_model_memo_lock);
    *out = best.ch;
    out->forced = 0;
    out->engine = -1; /* the caller says which engine it priced */
    *t = best.t;
    return out->algo ? KCOLL_SELECT_KCOLL : KCOLL_SELECT_HOST;
}

/* kcoll_select_unforced, the model's pricing shared by split's ranks
 * where split is not NULL. */
static kcoll_select_t kcoll_select_split(kcoll_coll_t c, int p, const kcoll_levels_t *lv,
                                         int host_ok, size_t bytes, kcoll_cache_t cache,
                                         const kcoll_decisions_t *d, kcoll_split_t *split,
                                         kcoll_choice_t *out)
{
    const kcoll_coll_t family = kcoll_coll_family(c);
    const int hot = cache == KCOLL_CACHE_HOT;
    kcoll_select_t res;
    out->algo = NULL;
    memset(&out->prm, 0, sizeof out->prm);
    out->forced = 0;
    out->engine = -1;
    if (!kcoll_select_rules(
            kcoll_tuning(), family, p, kcoll_class_bytes(bytes), hot ? cache : KCOLL_CACHE_COLD,
            host_ok && kcoll_select_sized(c, bytes), d, &res,
            out)) {
        double t;
        res = kcoll_select_model(c, p, lv, host_ok, bytes, d->engine, split, out, &t);
        /* the same call on each engine the team may switch to: its best
         * runs where it undercuts the team's engine's (the host MPI, among
         * both, costs the same in each) */
        for (int e = 0; e < KCOLL_NENGINES; e++) {
            kcoll_choice_t alt;
            double te;
            if (e == d->engine || !(d->percall & KCOLL_ENGINE_BIT(e)))
                continue;
            const int kcoll =
                kcoll_select_model(c, p, lv, host_ok, bytes, e, split, &alt, &te) ==
                KCOLL_SELECT_KCOLL;
            if (kcoll_percall_takes(kcoll, te, t)) {
                *out = alt;
                out->engine = e;
                res = KCOLL_SELECT_KCOLL;
                t = te;
            }
        }
    }
    if (res != KCOLL_SELECT_KCOLL) {
        out->algo = NULL;
        out->engine = -1;
    }
    return res;
}

kcoll_select_t kcoll_select_unforced(kcoll_coll_t c, int p, const kcoll_levels_t *lv, int host_ok,
                                     size_t bytes, kcoll_cache_t cache, const kcoll_decisions_t *d,
                                     kcoll_choice_t *out)
{
    return kcoll_select_split(c, p, lv, host_ok, bytes, cache, d, NULL, out);
}

kcoll_select_t kcoll_select(kcoll_decisions_t *d, kcoll_coll_t c, int p,
                            const kcoll_levels_t *lv, int host_ok, size_t bytes,
                            kcoll_choice_t *out)
{
    return kcoll_select_cache(d, c, p, lv, host_ok, bytes, KCOLL_CACHE_COLD, out);
}

/* d's decisions, emptied where they are for another model generation or
 * process count; its forced specs, where they are for another parameter
 * generation. */
static void kcoll_decisions_fresh(kcoll_decisions_t *d, int p)
{
    const uint64_t gen = kcoll_params_generation_model();
    if (d->gen != gen || d->p != p) {
        const int engine = d->engine;
        const unsigned percall = d->percall;
        memset(d, 0, sizeof *d);
        d->gen = gen;
        d->p = p;
        d->engine = engine;
        d->percall = percall;
    }
    const uint64_t all = kcoll_params_generation();
    if (d->forced_gen != all) {
        memset(d->forced, 0, sizeof d->forced);
        d->forced_gen = all;
    }
}

/* The forced spec of family in d (fresh), parsed and checked for d's p if
 * it was not yet (a spec that is invalid, or not for p, is warned of
 * once). */
static __typeof__(((kcoll_decisions_t *)0)->forced[0]) *kcoll_decisions_forced(
    kcoll_decisions_t *d, kcoll_coll_t family)
{
    __typeof__(d->forced[0]) *f = &d->forced[family];
    if (!f->state) {
        const char *spec = kcoll_param_str(kcoll_algo_param_of(family));
        const kcoll_algo_t *a;
        char err[256];
        if (kcoll_algo_parse(family, spec, &a, &f->prm, err, sizeof err)) {
            f->state = 3;
            kcoll_select_warn(family, spec, 0, err);
        } else if (a && a->check && a->check(d->p, &f->prm, err, sizeof err)) {
            f->state = 3;
            kcoll_select_warn(family, spec, d->p, err);
        } else {
            f->state = a ? 2 : 1;
            f->algo = a ? (int16_t)kcoll_algo_index(a) : -1;
        }
    }
    return f;
}

int kcoll_select_decided(kcoll_decisions_t *d, kcoll_coll_t c, int p, int host_ok, size_t bytes,
                         kcoll_cache_t cache)
{
    const int key = kcoll_decision_key(c, bytes, host_ok, cache == KCOLL_CACHE_HOT);
    kcoll_decisions_fresh(d, p);
    return kcoll_decisions_forced(d, kcoll_coll_family(c))->state != 1 ||
           d->e[key % KCOLL_DECISIONS].key == key;
}

int kcoll_select_warm(const kcoll_decisions_t *d, kcoll_coll_t c, int p, const kcoll_levels_t *lv,
                      int host_ok, size_t bytes, kcoll_cache_t cache, kcoll_split_t *split)
{
    /* what kcoll_select_cache prices for a family left to the model: the
     * choice, and where that is the host MPI, the runner-up its check
     * needs (most often the same pricing's, from the memo; shared all the
     * same, since another rank's memo may not have it) */
    kcoll_choice_t ch;
    if (kcoll_select_split(c, p, lv, host_ok, bytes, cache, d, split, &ch) == KCOLL_SELECT_HOST &&
        host_ok && kcoll_select_sized(c, bytes) && kcoll_param_int(KCOLL_P_ADAPT))
        kcoll_select_split(c, p, lv, 0, bytes, cache, d, split, &ch);
    return split->failed ? -1 : 0;
}

kcoll_select_t kcoll_select_cache(kcoll_decisions_t *d, kcoll_coll_t c, int p,
                                  const kcoll_levels_t *lv, int host_ok, size_t bytes,
                                  kcoll_cache_t cache, kcoll_choice_t *out)
{
    const int key = kcoll_decision_key(c, bytes, host_ok, cache == KCOLL_CACHE_HOT);
    kcoll_decisions_fresh(d, p);
    const __typeof__(d->forced[0]) *f = kcoll_decisions_forced(d, kcoll_coll_family(c));
    memset(out, 0, sizeof *out);
    out->engine = -1;
    if (f->state != 1) { /* forced: not the cache's */
        out->forced = 1;
        if (f->state == 3)
            return KCOLL_SELECT_BAD;
        out->algo = &kcoll_algos[f->algo];
        out->prm = f->prm;
        return KCOLL_SELECT_KCOLL;
    }
    __typeof__(d->e[0]) *e = &d->e[key % KCOLL_DECISIONS];
    if (e->key == key) {
        out->algo = e->algo >= 0 ? &kcoll_algos[e->algo] : NULL;
        out->prm = e->prm;
        out->engine = e->engine;
        return (kcoll_select_t)e->result;
    }

    const kcoll_select_t res = kcoll_select_unforced(c, p, lv, host_ok, bytes, cache, d, out);
    if (res != KCOLL_SELECT_KCOLL)
        out->algo = NULL;
    memset(e, 0, sizeof *e);
    e->key = (int16_t)key;
    e->algo = out->algo ? (int16_t)kcoll_algo_index(out->algo) : -1;
    e->prm = out->prm;
    e->engine = (int8_t)out->engine;
    e->result = (int8_t)res;
    /* the runner-up of the other kind, where the model (or a rule) chose
     * and the decision may be checked */
    e->alt_algo = -1;
    if (host_ok && kcoll_select_sized(c, bytes) && kcoll_param_int(KCOLL_P_ADAPT)) {
        if (res == KCOLL_SELECT_KCOLL) {
            e->has_alt = 1;
            e->alt_result = KCOLL_SELECT_HOST;
            e->alt_engine = -1;
        } else if (res == KCOLL_SELECT_HOST) {
            kcoll_choice_t alt;
            if (kcoll_select_unforced(c, p, lv, 0, bytes, cache, d, &alt) == KCOLL_SELECT_KCOLL) {
                e->has_alt = 1;
                e->alt_result = KCOLL_SELECT_KCOLL;
                e->alt_algo = (int16_t)kcoll_algo_index(alt.algo);
                e->alt_prm = alt.prm;
                e->alt_engine = (int8_t)alt.engine;
            }
        }
    }
    return res;
}

int kcoll_model_predict(const kcoll_pcall_t *c, const char *spec, int host_ok,
                        kcoll_choice_t *ch, double *t)
{
    const kcoll_machine_t *m = &kcoll_tuning()->m;
    memset(ch, 0, sizeof *ch);
    ch->engine = -1;
    if (spec && !strcmp(spec, "host")) {
        *t = kcoll_price_host(m, c);
        return 0;
    }
    if (!spec || !*spec || !strcmp(spec, "auto")) {
        /* the selector's own decision, through a cache of its own */
        kcoll_decisions_t d;
        memset(&d, 0, sizeof d);
        d.engine = c->engine;
        d.percall = c->percall;
        if (kcoll_select(&d, c->coll, c->p, c->lv, host_ok, c->bytes, ch) != KCOLL_SELECT_KCOLL) {
            ch->algo = NULL;
            *t = kcoll_price_host(m, c);
            return 0;
        }
    } else {
        char err[256];
        if (kcoll_algo_parse(kcoll_coll_family(c->coll), spec, &ch->algo, &ch->prm, err,
                             sizeof err) ||
            !ch->algo || (ch->algo->check && ch->algo->check(c->p, &ch->prm, err, sizeof err)))
            return -1;
    }
    kcoll_price_t pr;
    kcoll_pcall_t on = *c;
    if (ch->engine >= 0)
        on.engine = ch->engine; /* the engine the selector chose for this call */
    if (kcoll_price_capped(m, ch->algo, &ch->prm, &on, &pr))
        return -1;
    *t = pr.t;
    return 0;
}
