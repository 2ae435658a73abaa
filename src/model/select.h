/* Selection: which algorithm, with which parameters, runs a collective of
 * p processes and a given size, or whether the host MPI does it (DESIGN.md
 * section 7).
 *
 * Precedence: an algorithm forced with KCOLL_<FAMILY>_ALGO, then the rules
 * of the tuning file (model/tuning.h; first match wins), then the cost
 * model: every algorithm of the family that is valid for p, with its
 * parameters swept (k, j, chunk, segments), and the host MPI are priced
 * (model/cost.h) and the cheapest runs. KCOLL_MIN_BYTES set to a size
 * overrides the model's boundary between the host MPI and kcoll: below it
 * the call layer sends calls to the host, from it only kcoll's algorithms
 * are candidates ("auto", the default: the model decides at every size).
 *
 * A decision holds for a whole size class (the bytes' highest set bit):
 * the model prices the class at its geometric middle, so every rank
 * decides alike whatever size of the class comes first (and the host
 * takes a class it is cheaper at the lower end of: kcoll_model_low_end,
 * below). The team caches
 * decisions per (collective, size class, host_ok) in a kcoll_decisions_t and
 * selection costs a table lookup after the first call. A change of any
 * parameter but an algorithm's choice, or of the tuning
 * (kcoll_params_generation_model), empties the cache; a forced spec is
 * parsed (and checked for p) once per parameter generation, and a family
 * forced to an algorithm bypasses the cache: its model decisions and their
 * checks stay for when it is left to the model again (kcoll-bench switches
 * KCOLL_<FAMILY>_ALGO between its columns call by call).
 */
#ifndef KCOLL_MODEL_SELECT_H
#define KCOLL_MODEL_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "model/cost.h"
#include "sched/ctl.h"

/* A choice: an algorithm and its parameters, or the host MPI (algo NULL);
 * forced: KCOLL_<FAMILY>_ALGO names the algorithm (or, with result
 * KCOLL_SELECT_BAD, a spec that is invalid), not the model's choice for
 * the size: no entry of the decision cache is its; engine: the transfer
 * engine its steps run on, -1 for the team's own, or one the model chose
 * for this call instead (see kcoll_decisions_t's percall). */
typedef struct {
    const kcoll_algo_t *algo;
    kcoll_aparam_t prm;
    int forced;
    int engine;
} kcoll_choice_t;

typedef enum {
    KCOLL_SELECT_KCOLL = 0, /* run choice.algo */
    KCOLL_SELECT_HOST,      /* a rule says the host MPI is faster here */
    KCOLL_SELECT_BAD        /* the forced spec is invalid (warned once) */
} kcoll_select_t;

/* The size class of a message: 0 for 0 bytes, else 1 + the highest set
 * bit (1 byte: 1, 2-3 bytes: 2, ...). */
static inline int kcoll_size_class(size_t bytes)
{
    return bytes ? 64 - __builtin_clzll((unsigned long long)bytes) : 0;
}

/* A decision's key in a team's cache: ((coll * 65 + size class) * 2 +
 * host_ok) * 2 + hot + 1 (never 0, the empty entry's); its entry is
 * e[key % KCOLL_DECISIONS]. */
static inline int kcoll_decision_key(kcoll_coll_t c, size_t bytes, int host_ok, int hot)
{
    return (((int)c * 65 + kcoll_size_class(bytes)) * 2 + !!host_ok) * 2 + !!hot + 1;
}

/* The size class of decision key `key`. */
static inline int kcoll_decision_class(int key)
{
    return (key - 1) / 4 % 65;
}

#define KCOLL_DECISIONS 32
/* Times of each candidate a rank keeps while a decision is checked. */
#define KCOLL_ADAPT_SAMPLES 16
/* A team's decision cache (direct-mapped; a collision just decides again). */
typedef struct {
    uint64_t gen; /* kcoll_params_generation_model of the entries; 0: empty */
    int p;        /* the process count they are for (a team's never changes) */
    int engine;   /* the engine the model prices steps for (the team's; 0: cma) */
    /* engines the model may choose for a call instead of `engine`
     * (KCOLL_ENGINE_BIT; 0: none): it prices the call for each and runs
     * the cheapest (an auto team on cma whose bounce cells are resident
     * may run a call on shm, team/team.c) */
    unsigned percall;
    struct {
        int16_t key;   /* kcoll_decision_key; 0: empty */
        int16_t algo;  /* index in kcoll_algos, or -1 */
        int8_t result; /* kcoll_select_t */
        int8_t engine; /* the choice's engine (-1: the team's) */
        kcoll_aparam_t prm;
        /* the runner-up of the other kind, for the run-time check of the
         * decision (call/adapt.h): the host MPI where the choice is one of
         * kcoll's algorithms, kcoll's best where it is the host; has_alt 0:
         * none (a forced algorithm, KCOLL_MIN_BYTES set, a size not known) */
        int8_t has_alt, alt_result, alt_engine;
        int16_t alt_algo;
        kcoll_aparam_t alt_prm;
        /* the check's state, kept by the call layer (call/adapt.c) */
        int8_t phase;  /* KCOLL_ADAPT_NEW, _TRY, _SET, _OFF */
        int8_t cur;    /* which runs now: 0 the choice above, 1 the runner-up */
        int8_t again;  /* checked before: the next check needs no settling */
        uint8_t n[2];  /* this rank's samples of each so far */
        uint32_t calls; /* blocking calls of this decision in its phase */
        float t[2][KCOLL_ADAPT_SAMPLES]; /* this rank's times of each, seconds */
    } e[KCOLL_DECISIONS];
    /* the forced spec of each family, parsed (and checked for p) for
     * parameter generation forced_gen */
    uint64_t forced_gen;
    struct {
        int8_t state;  /* 0 unparsed, 1 auto, 2 forced, 3 invalid or not for p */
        int16_t algo;
        kcoll_aparam_t prm;
    } forced[KCOLL_NCOLL];
} kcoll_decisions_t;

/* The size of a call that has none (Barrier) or whose size the ranks do
 * not know alike before their agreement (the v-variants): the selector
 * decides it without one (a Barrier at 0 bytes; the others among kcoll's
 * algorithms only, priced for large blocks, and decided again with the
 * agreed size). */
#define KCOLL_BYTES_UNKNOWN SIZE_MAX

/* Is a call's size known alike on every rank before any agreement (a
 * Barrier has none, and needs none)? Only then is the host MPI priced as
 * a candidate, and only then is a decision checked (call/adapt.h). */
static inline int kcoll_select_sized(kcoll_coll_t c, size_t bytes)
{
    return bytes != KCOLL_BYTES_UNKNOWN || kcoll_coll_family(c) == KCOLL_COLL_BARRIER;
}

/* The choice for collective c at p processes and `bytes` (the size the
 * model reads: see the call layer; KCOLL_BYTES_UNKNOWN: none yet), on a
 * team with topology levels lv (NULL: flat; a team's never change),
 * through the cache d. host_ok: the host MPI is a candidate
 * (KCOLL_MIN_BYTES is "auto"). */
kcoll_select_t kcoll_select(kcoll_decisions_t *d, kcoll_coll_t c, int p,
                            const kcoll_levels_t *lv, int host_ok, size_t bytes,
                            kcoll_choice_t *out);
/* kcoll_select for a call whose data is estimated to be in cache state
 * `cache` (KCOLL_CACHE_COLD or _HOT; kcoll_select: cold). The model's
 * prices are off-cache ones (its terms and the host's times are measured
 * so); the cache state chooses among the tuning's rules (a rule's "cache"
 * condition) and has decisions of its own. */
kcoll_select_t kcoll_select_cache(kcoll_decisions_t *d, kcoll_coll_t c, int p,
                                  const kcoll_levels_t *lv, int host_ok, size_t bytes,
                                  kcoll_cache_t cache, kcoll_choice_t *out);
/* The same without a forced algorithm and without the cache of decisions:
 * the tuning file's rules, else the cost model (pricing steps for
 * d->engine, and for each of d->percall: the cheapest engine runs the
 * call where it undercuts d->engine's best by KCOLL_PERCALL_MARGIN). For
 * a call whose size is known only after its agreement, chosen then with
 * what was forced at its start (call/request.c). */
kcoll_select_t kcoll_select_unforced(kcoll_coll_t c, int p, const kcoll_levels_t *lv, int host_ok,
                                     size_t bytes, kcoll_cache_t cache, const kcoll_decisions_t *d,
                                     kcoll_choice_t *out);

/* Pricing shared by the ranks of a team. Every rank of a node prices the
 * same candidates for a decision and finds the same one; on a node of many
 * ranks a reduction's first call of a size class waited for all of them
 * on every rank (docs/model.md, "What a decision costs"). Shared, each of
 * the q ranks prices every q-th candidate and the ranks exchange their
 * cheapest (select.c says why that is the decision each would find
 * alone). share(ctx, mine, all) posts this rank's KCOLL_SPLIT_VALS values
 * and fills all[r * KCOLL_SPLIT_VALS + i] with rank r's (0 on success):
 * a sharing of the team's control segment (sched/share.h) as it is;
 * every rank of the team must reach it at the same point, so a sharing
 * happens only where each decides to share alike (kcoll_select_decided). */
#define KCOLL_SPLIT_VALS KCOLL_SHARE_VALS
typedef struct {
    int q, me; /* ranks pricing together, this one's number among them */
    int (*share)(void *ctx, const float *mine, float *all);
    void *ctx;
    int failed; /* set where a sharing failed (then the rest is priced alone) */
} kcoll_split_t;

/* Under the team's lock: will kcoll_select_cache answer a call (c, p,
 * host_ok, bytes, cache) without the model: from d's cache, or a forced
 * spec (a rule of the tuning file is not looked at: a decision that a rule
 * makes prices nothing, shared or not)? The same on every rank of a team
 * at the same call (every rank fills its cache at the same calls). */
int kcoll_select_decided(kcoll_decisions_t *d, kcoll_coll_t c, int p, int host_ok, size_t bytes,
                         kcoll_cache_t cache);
/* Without the team's lock, every rank of split's team at the same call
 * where kcoll_select_decided said 0: prices what kcoll_select_cache will
 * price for the call, the work shared among the ranks, into the model's
 * memo, so that kcoll_select_cache then finds it there. Returns 0, or -1
 * where a sharing failed (a peer gone; the share callback's message). */
int kcoll_select_warm(const kcoll_decisions_t *d, kcoll_coll_t c, int p, const kcoll_levels_t *lv,
                      int host_ok, size_t bytes, kcoll_cache_t cache, kcoll_split_t *split);
/* A decision of the model's memo as kept between jobs (model/keep.h):
 * its key (as the memo's, but the parameter generation, which the kept
 * file's hash stands for) and the candidate. */
typedef struct {
    uint64_t lvh;
    int32_t p, cores, engine, key;
    int32_t algo; /* index in kcoll_algos, -1: the host MPI */
    kcoll_aparam_t prm;
    double t;
} kcoll_memo_rec_t;
/* The memo's decisions for the present parameters into out (at most max):
 * how many; *fresh: how many of them this process priced (not read). */
int kcoll_model_memo_export(kcoll_memo_rec_t *out, int max, int *fresh);
/* Kept decisions into the memo, for the present parameters, where their
 * entry holds none of them: how many were taken. */
int kcoll_model_memo_import(const kcoll_memo_rec_t *in, int n);

/* Decisions this process priced shared with other ranks (the statistics). */
uint64_t kcoll_model_shared(void);

/* How much cheaper (a fraction of the price) another engine's best must
 * be priced than the team's engine's for a call to run on it: prices
 * within a few percent are the model's noise, and a call switching
 * engines on them would only make its times harder to read. */
#define KCOLL_PERCALL_MARGIN 0.10
/* Does another engine's best, priced t_alt (a kcoll algorithm: alt_kcoll),
 * take a call whose best on the team's engine is priced t_team? */
static inline int kcoll_percall_takes(int alt_kcoll, double t_alt, double t_team)
{
    return alt_kcoll && t_alt < t_team * (1 - KCOLL_PERCALL_MARGIN);
}

/* A choice as a spec: "host" for the host MPI, else the algorithm's spec
 * ("partitioned:chunk=256"), with "@engine" where the call runs on another
 * engine than the team's ("...@shm"). */
void kcoll_choice_spec(const kcoll_choice_t *ch, char *out, size_t len);

/* The size the model prices a size class at (see above). */
size_t kcoll_class_bytes(size_t bytes);

/* A priced candidate: an algorithm with parameters, or the host MPI
 * (ch.algo NULL). */
typedef struct {
    kcoll_choice_t ch;
    double t;           /* predicted seconds */
    kcoll_price_t pr;   /* the model's terms (kcoll algorithms) */
} kcoll_cand_t;

#define KCOLL_MAX_CANDS 128
/* A decision's lower end. The model prices a size class at its geometric
 * middle, but its lower end, a power of two, is the size programs and
 * benchmarks call most, and the host's price between two sizes it was
 * measured at is interpolated: where the host changes protocol between
 * them (Open MPI 4.1's Alltoall and Gather at 2 ranks, measured 0.9 us at
 * 1 KiB and 7.3 us at 4 KiB), the middle of the class below the step
 * (2896 bytes) is priced with part of the step, and kcoll took the 2 KiB
 * class, whose 2 KiB calls the host did in 1.8-2.5 us against kcoll's
 * 2.7-3.3. So where kcoll's pick for the class of bytes (pc: that call at
 * the class's middle on machine m) is dearer than the host at the class's
 * lower end, the host takes the class: returns 1 (the two prices there in
 * *host_t, *pick_t), else 0. A class the host may win starts on the host,
 * and the check by measurement (call/adapt.c) times kcoll's pick against
 * it. kcoll-info --explain says so. */
int kcoll_model_low_end(const kcoll_machine_t *m, const kcoll_pcall_t *pc, size_t bytes,
                        const kcoll_choice_t *pick, double *host_t, double *pick_t);
/* How many decisions the model has priced in this process (each prices
 * every candidate; a decision it already knows is not priced again:
 * select.c, the memo). For tests. */
uint64_t kcoll_model_pricings(void);
/* Every candidate for call c on machine m, priced, cheapest first (ties:
 * registry order, then smaller parameters); the host MPI among them when
 * host_ok. Returns how many (at most max). */
int kcoll_model_rank(const kcoll_machine_t *m, const kcoll_pcall_t *c, int host_ok,
                     kcoll_cand_t *out, int max);

/* The first rule of tuning t that matches (family, p, bytes, cache state;
 * KCOLL_CACHE_ANY: a rule of either state matches): its number (1-based),
 * with *res KCOLL_SELECT_HOST for a rule naming "host" (only when host_ok)
 * or KCOLL_SELECT_KCOLL and *out; 0 when none matches. A rule whose
 * algorithm cannot run at p is skipped, and so is one that names an
 * engine ("partitioned@shm") the team cannot run its calls on: neither
 * d->engine nor one of d->percall. */
int kcoll_select_rules(const kcoll_tuning_t *t, kcoll_coll_t family, int p, size_t bytes,
                       kcoll_cache_t cache, int host_ok, const kcoll_decisions_t *d,
                       kcoll_select_t *res, kcoll_choice_t *out);

/* A rule's spec "ALGO[@ENGINE]": the algorithm part into algo, and the
 * engine's id, -1 when it names none, or -2 for an unknown engine. */
int kcoll_spec_engine(const char *spec, char *algo, size_t len);

/* The model's time for call c run as spec says: NULL or "auto", what the
 * selector decides for it (forced spec, rules, model; the host MPI's time
 * when that is the host, ch->algo then NULL); "host", the host MPI; else
 * that algorithm spec ("knomial:k=4"). Priced at c->bytes itself, not at
 * its class's middle. Returns 0, or -1 for a spec that is invalid or
 * cannot run at c->p. */
int kcoll_model_predict(const kcoll_pcall_t *c, const char *spec, int host_ok,
                        kcoll_choice_t *ch, double *t);

#endif
