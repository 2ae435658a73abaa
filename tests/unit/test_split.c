/* Pricing shared by the ranks of a team (model/select.h, kcoll_split_t):
 * q threads stand for the ranks of a node, sharing through a board and a
 * barrier where the library shares through the team's control segment.
 * For every collective, at several sizes (and none: a v-variant's first
 * decision), process counts, with the host MPI a candidate or not, flat
 * and with levels, on a team that may run calls on a second engine, each
 * "rank" prices its share (kcoll_select_warm) and then decides through
 * its own cache of decisions (kcoll_select_cache): every rank's decision,
 * its engine and its runner-up must be exactly the one a rank pricing
 * alone makes, each rank must have shared as often as the others, and
 * the cache must then price nothing. A sharing that fails is reported
 * and the decision is still the one priced alone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/params.h"
#include "levels_fixture.h"
#include "model/machine.h"
#include "model/select.h"
#include "model/tuning.h"
#include "xfer/engine.h"

#define MAXQ 16

/* CHECK, and ok cleared where cond fails */
#define EXPECT(cond, ...)                                                                  \
    do {                                                                                   \
        const int expect_ = (cond);                                                        \
        CHECK(expect_, __VA_ARGS__);                                                       \
        ok &= expect_;                                                                     \
    } while (0)

typedef struct {
    pthread_barrier_t bar;
    int q;
    float vals[MAXQ * KCOLL_SPLIT_VALS];
} board_t;

typedef struct {
    board_t *b;
    int me, shares;
} rank_t;

static int board_share(void *ctx, const float *mine, float *all)
{
    rank_t *r = ctx;
    board_t *b = r->b;
    memcpy(b->vals + (size_t)r->me * KCOLL_SPLIT_VALS, mine, KCOLL_SPLIT_VALS * sizeof *mine);
    pthread_barrier_wait(&b->bar);
    memcpy(all, b->vals, (size_t)b->q * KCOLL_SPLIT_VALS * sizeof *all);
    pthread_barrier_wait(&b->bar); /* nobody posts the next one before all have read */
    r->shares++;
    return 0;
}

static int fail_share(void *ctx, const float *mine, float *all)
{
    (void)ctx, (void)mine, (void)all;
    return -1;
}

/* one case */
typedef struct {
    kcoll_coll_t c;
    int p, host_ok;
    size_t bytes;
    const kcoll_levels_t *lv;
    int engine;
    unsigned percall;
} case_t;

typedef struct {
    const case_t *k;
    rank_t rank;
    kcoll_decisions_t d;
    kcoll_select_t res;
    kcoll_choice_t ch;
    int decided, warm;
    uint64_t priced_after; /* pricings by kcoll_select_cache after the warm-up */
} job_t;

static void *run_rank(void *arg)
{
    job_t *j = arg;
    const case_t *k = j->k;
    j->d.engine = k->engine;
    j->d.percall = k->percall;
    j->decided = kcoll_select_decided(&j->d, k->c, k->p, k->host_ok, k->bytes, KCOLL_CACHE_COLD);
    kcoll_split_t s = {.q = j->rank.b->q, .me = j->rank.me, .share = board_share, .ctx = &j->rank};
    j->warm = kcoll_select_warm(&j->d, k->c, k->p, k->lv, k->host_ok, k->bytes, KCOLL_CACHE_COLD,
                                &s);
    /* every rank past its warm-up before any decides through its cache:
     * the count of pricings below is the process's */
    pthread_barrier_wait(&j->rank.b->bar);
    const uint64_t before = kcoll_model_pricings();
    j->res = kcoll_select_cache(&j->d, k->c, k->p, k->lv, k->host_ok, k->bytes, KCOLL_CACHE_COLD,
                                &j->ch);
    j->priced_after = kcoll_model_pricings() - before;
    return NULL;
}

/* The memo forgets: a parameter the model reads changes its generation
 * (the value is the default's, alternately written two ways). */
static void forget(void)
{
    static int flip;
    kcoll_params_set("SHM_CELL", (flip ^= 1) ? "65536" : "64KiB");
}

static int same_entry(const kcoll_decisions_t *a, const kcoll_decisions_t *b, int key)
{
    const __typeof__(a->e[0]) *x = &a->e[key % KCOLL_DECISIONS], *y = &b->e[key % KCOLL_DECISIONS];
    return x->key == key && y->key == key && x->algo == y->algo && x->result == y->result &&
           x->engine == y->engine && !memcmp(&x->prm, &y->prm, sizeof x->prm) &&
           x->has_alt == y->has_alt && x->alt_result == y->alt_result &&
           x->alt_engine == y->alt_engine && x->alt_algo == y->alt_algo &&
           !memcmp(&x->alt_prm, &y->alt_prm, sizeof x->alt_prm);
}

static int check_case(const case_t *k, int q)
{
    char what[160], spec[64];
    snprintf(what, sizeof what, "%s p=%d %zu bytes host_ok=%d %s engine %d percall %u q=%d",
             kcoll_coll_name(k->c), k->p, k->bytes, k->host_ok, k->lv ? "levels" : "flat",
             k->engine, k->percall, q);
    const int key = kcoll_decision_key(k->c, k->bytes, k->host_ok, 0);

    /* alone */
    forget();
    kcoll_decisions_t alone = {0};
    alone.engine = k->engine;
    alone.percall = k->percall;
    kcoll_choice_t ch0;
    const kcoll_select_t r0 =
        kcoll_select_cache(&alone, k->c, k->p, k->lv, k->host_ok, k->bytes, KCOLL_CACHE_COLD, &ch0);

    /* shared */
    forget();
    board_t b = {.q = q};
    pthread_barrier_init(&b.bar, NULL, (unsigned)q);
    job_t *jobs = calloc((size_t)q, sizeof *jobs);
    pthread_t th[MAXQ];
    const uint64_t shared0 = kcoll_model_shared();
    for (int i = 0; i < q; i++) {
        jobs[i].k = k;
        jobs[i].rank.b = &b;
        jobs[i].rank.me = i;
        pthread_create(&th[i], NULL, run_rank, &jobs[i]);
    }
    for (int i = 0; i < q; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&b.bar);
    int ok = 1;
    for (int i = 0; i < q; i++) {
        const job_t *j = &jobs[i];
        EXPECT(!j->decided && !j->warm, "%s: rank %d decided %d, warm-up %d", what, i,
                    j->decided, j->warm);
        kcoll_choice_spec(&j->ch, spec, sizeof spec);
        EXPECT(j->res == r0 && j->ch.algo == ch0.algo && j->ch.engine == ch0.engine &&
                        !memcmp(&j->ch.prm, &ch0.prm, sizeof ch0.prm) &&
                        same_entry(&alone, &j->d, key),
                    "%s: rank %d decided %s (%d), alone the same call decides otherwise", what,
                    i, spec, (int)j->res);
        EXPECT(j->rank.shares == jobs[0].rank.shares && j->rank.shares > 0,
                    "%s: rank %d shared %d times, rank 0 %d", what, i, j->rank.shares,
                    jobs[0].rank.shares);
        EXPECT(j->priced_after == 0, "%s: the cache priced %llu decisions after the warm-up",
                    what, (unsigned long long)j->priced_after);
    }
    EXPECT(kcoll_model_shared() > shared0, "%s: nothing was priced shared", what);
    free(jobs);
    return ok;
}

int main(void)
{
    static kcoll_tuning_t plain; /* the built-in machine, no rules: the model decides */
    kcoll_machine_defaults(&plain.m);
    kcoll_tuning_set(&plain);
    static const kcoll_coll_t colls[] = {
        KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE,  KCOLL_COLL_BCAST,
        KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLTOALL, KCOLL_COLL_GATHER,
        KCOLL_COLL_SCATTER,   KCOLL_COLL_REDUCE_SCATTER_BLOCK, KCOLL_COLL_BARRIER,
        KCOLL_COLL_GATHERV};
    static const size_t sizes[] = {8, 4096, 300000, 3u << 20, KCOLL_BYTES_UNKNOWN};
    static const int ps[] = {3, 8};
    int cases = 0, good = 0;
    for (int pi = 0; pi < 2; pi++) {
        const int p = ps[pi];
        kcoll_levels_t lv;
        levels_fixture(&lv, p, 2);
        for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (int v = 0; v < 4; v++) {
                    /* v: host_ok, levels, and a second engine per call */
                    const case_t k = {.c = colls[ci], .p = p, .host_ok = !(v & 1),
                                      .bytes = sizes[si], .lv = v & 2 ? &lv : NULL,
                                      .engine = KCOLL_ENGINE_CMA,
                                      .percall = v == 2 ? KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM) : 0};
                    cases++;
                    good += check_case(&k, p);
                }
        kcoll_levels_free(&lv);
    }
    /* fewer ranks pricing than the team has, and more than candidates */
    {
        const case_t k = {.c = KCOLL_COLL_ALLREDUCE, .p = 16, .host_ok = 1, .bytes = 1 << 20,
                          .engine = KCOLL_ENGINE_CMA};
        cases += 2;
        good += check_case(&k, 2);
        good += check_case(&k, MAXQ);
    }
    CHECK(good == cases, "%d of %d cases decided as alone", good, cases);

    /* a sharing that fails: reported; the decision is still the one priced alone */
    {
        forget();
        kcoll_decisions_t a = {0}, b = {0};
        kcoll_choice_t c1, c2;
        const kcoll_select_t r1 =
            kcoll_select_cache(&a, KCOLL_COLL_ALLREDUCE, 8, NULL, 1, 4096, KCOLL_CACHE_COLD, &c1);
        forget();
        kcoll_split_t s = {.q = 2, .me = 0, .share = fail_share};
        CHECK(!kcoll_select_decided(&b, KCOLL_COLL_ALLREDUCE, 8, 1, 4096, KCOLL_CACHE_COLD) &&
                  kcoll_select_warm(&b, KCOLL_COLL_ALLREDUCE, 8, NULL, 1, 4096, KCOLL_CACHE_COLD,
                                    &s) == -1 &&
                  s.failed,
              "a failed sharing is reported");
        CHECK(kcoll_select_cache(&b, KCOLL_COLL_ALLREDUCE, 8, NULL, 1, 4096, KCOLL_CACHE_COLD,
                                 &c2) == r1 &&
                  c1.algo == c2.algo && !memcmp(&c1.prm, &c2.prm, sizeof c1.prm),
              "after a failed sharing, the decision priced alone");
        /* a decided call needs no pricing; a forced family neither */
        CHECK(kcoll_select_decided(&b, KCOLL_COLL_ALLREDUCE, 8, 1, 4096, KCOLL_CACHE_COLD),
              "a decision in the cache is decided");
        kcoll_params_set("BCAST_ALGO", "knomial");
        CHECK(kcoll_select_decided(&b, KCOLL_COLL_BCAST, 8, 1, 4096, KCOLL_CACHE_COLD),
              "a forced family is decided");
        kcoll_params_set("BCAST_ALGO", "auto");
        CHECK(!kcoll_select_decided(&b, KCOLL_COLL_BCAST, 8, 1, 4096, KCOLL_CACHE_COLD),
              "an auto family's new size class is not");
    }
    return check_report("test_split");
}
