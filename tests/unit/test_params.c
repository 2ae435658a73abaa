/* Parameters, algorithm specs and selection: parsing, defaults, the
 * environment, invalid values rejected with the default kept; every
 * descriptor's spec round-trips; the model's decisions are valid, cached,
 * alike for a whole size class and the cheapest candidate; precedence
 * environment > tuning rules > model; the cache follows parameter and
 * tuning changes. */
#include <stdlib.h>
#include <string.h>

#include "base/params.h"
#include "check.h"
#include "coll/coll.h"
#include "model/machine.h"
#include "model/select.h"
#include "xfer/engine.h"
#include "levels_fixture.h"

/* The model's decision for the class of bytes, priced afresh: the cheapest
 * candidate at the class's middle (mid: that call), but the host where
 * that is kcoll's and the host is cheaper than it at the class's lower end
 * (select.c, kcoll_select_low_end). Sets *flipped where the lower end
 * decided. Returns the decision as a candidate (NULL algo: the host). */
static kcoll_choice_t fresh_decision(const kcoll_pcall_t *mid, size_t bytes, int *flipped)
{
    static kcoll_cand_t cand[KCOLL_MAX_CANDS], low[KCOLL_MAX_CANDS];
    const kcoll_machine_t *m = &kcoll_tuning()->m;
    kcoll_choice_t none = {.engine = -1};
    *flipped = 0;
    if (kcoll_model_rank(m, mid, 1, cand, KCOLL_MAX_CANDS) < 1)
        return none;
    if (!cand[0].ch.algo || kcoll_size_class(bytes) <= 1)
        return cand[0].ch;
    kcoll_pcall_t at = *mid;
    at.bytes = (size_t)1 << (kcoll_size_class(bytes) - 1);
    const int n = kcoll_model_rank(m, &at, 1, low, KCOLL_MAX_CANDS);
    double host = -1, pick = -1;
    for (int i = 0; i < n; i++) {
        if (!low[i].ch.algo)
            host = low[i].t;
        else if (low[i].ch.algo == cand[0].ch.algo &&
                 !memcmp(&low[i].ch.prm, &cand[0].ch.prm, sizeof low[i].ch.prm))
            pick = low[i].t;
    }
    if (at.bytes != mid->bytes && host >= 0 && pick >= 0 && host < pick) {
        *flipped = 1;
        return none;
    }
    return cand[0].ch;
}

int main(void)
{
    int64_t v;
    CHECK(kcoll_parse_size("16384", &v) == 0 && v == 16384, "plain");
    CHECK(kcoll_parse_size("16k", &v) == 0 && v == 16384, "k");
    CHECK(kcoll_parse_size("16KiB", &v) == 0 && v == 16384, "KiB");
    CHECK(kcoll_parse_size("2M", &v) == 0 && v == 2 << 20, "M");
    CHECK(kcoll_parse_size("1GB", &v) == 0 && v == 1 << 30, "GB");
    CHECK(kcoll_parse_size("0", &v) == 0 && v == 0, "zero");
    CHECK(kcoll_parse_size("-1", &v) != 0, "negative");
    CHECK(kcoll_parse_size("12q", &v) != 0, "junk suffix");
    CHECK(kcoll_parse_size("", &v) != 0, "empty");

    setenv("KCOLL_MIN_BYTES", "64k", 1);
    setenv("KCOLL_STATS", "yes", 1);
    setenv("KCOLL_SPIN", "notanumber", 1);
    setenv("KCOLL_WARN", "0", 1); /* the warning about KCOLL_SPIN stays quiet */
    kcoll_params_load();
    CHECK(kcoll_param_int(KCOLL_P_MIN_BYTES) == 65536, "env size");
    CHECK(kcoll_param_int(KCOLL_P_STATS) == 1, "env bool");
    CHECK(kcoll_param_int(KCOLL_P_SPIN) == atoi(kcoll_param_desc[KCOLL_P_SPIN].def),
          "bad value keeps default");
    CHECK(!strcmp(kcoll_param_str(KCOLL_P_BCAST_ALGO), "auto"), "string default");

    CHECK(kcoll_params_set("BCAST_ALGO", "knomial:k=8") == 0, "set by short name");
    CHECK(!strcmp(kcoll_params_get("KCOLL_BCAST_ALGO"), "knomial:k=8"), "get by long name");
    CHECK(kcoll_params_set("NO_SUCH_PARAM", "1") == -1, "unknown name");
    CHECK(kcoll_params_set("DISABLE", "maybe") == -1, "bad bool");
    CHECK(kcoll_param_int(KCOLL_P_DISABLE) == 0, "bad set keeps value");

    const kcoll_algo_t *a;
    kcoll_aparam_t prm;
    char err[256];
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "auto", &a, &prm, err, sizeof err) == 0 && !a,
          "auto");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "", &a, &prm, err, sizeof err) == 0 && !a, "empty");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial", &a, &prm, err, sizeof err) == 0 && a &&
              prm.k == a->params[0].def && prm.k == 4,
          "default k");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:k=7", &a, &prm, err, sizeof err) == 0 &&
              prm.k == 7,
          "k=7");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:k=1", &a, &prm, err, sizeof err) == -1 &&
              strstr(err, "from 2"),
          "k=1 refused: %s", err);
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:j=3", &a, &prm, err, sizeof err) == -1 &&
              strstr(err, "k=N"),
          "wrong parameter name: %s", err);
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:k=4,k=", &a, &prm, err, sizeof err) == -1,
          "empty value refused");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "direct_read:k=3", &a, &prm, err, sizeof err) ==
                  -1 &&
              strstr(err, "no parameter"),
          "parameter to a parameterless algorithm: %s", err);
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "fastest", &a, &prm, err, sizeof err) == -1 &&
              strstr(err, "split_rw"),
          "unknown name lists the known ones: %s", err);
    CHECK(kcoll_algo_parse(KCOLL_COLL_ALLREDUCE, "partitioned:chunk=64", &a, &prm, err,
                           sizeof err) == 0 &&
              prm.chunk == 64 && prm.k == 0,
          "named parameters land in their own fields");
    CHECK(kcoll_algo_parse(KCOLL_COLL_ALLGATHERV, "ring_neighbor:j=3", &a, &prm, err,
                           sizeof err) == 0 &&
              a && a->family == KCOLL_COLL_ALLGATHER && prm.j == 3,
          "a v-variant parses its family's algorithms");
    for (int i = 0; i < kcoll_nalgos; i++) {
        char spec[96];
        kcoll_aparam_t def, back;
        kcoll_algo_defaults(&kcoll_algos[i], &def);
        kcoll_algo_spec(&kcoll_algos[i], &def, spec, sizeof spec);
        CHECK(kcoll_algo_parse(kcoll_algos[i].family, spec, &a, &back, err, sizeof err) == 0 &&
                  a == &kcoll_algos[i] && !memcmp(&back, &def, sizeof def),
              "descriptor %s round-trips through its spec '%s'", kcoll_algos[i].name, spec);
        CHECK(kcoll_algos[i].engines & KCOLL_ENGINE_BIT(KCOLL_ENGINE_CMA),
              "%s runs on cma", kcoll_algos[i].name);
    }

    /* the model: every decision valid for its family, the same from the
     * cache, and alike for a whole size class (first and last byte count) */
    static const kcoll_coll_t fams[] = {KCOLL_COLL_BCAST, KCOLL_COLL_SCATTER, KCOLL_COLL_GATHER,
                                        KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLTOALL,
                                        KCOLL_COLL_BARRIER, KCOLL_COLL_REDUCE,
                                        KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE_SCATTER};
    static const int ps[] = {2, 3, 5, 8, 16};
    kcoll_params_set("BCAST_ALGO", "auto"); /* forced above */
    kcoll_decisions_t *d = calloc(1, sizeof *d);
    for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++)
        for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
            for (size_t n = 1; n <= ((size_t)16 << 20); n = n * 5 + 3) {
                const int p = ps[pi];
                for (int host_ok = 0; host_ok < 2; host_ok++) {
                    kcoll_choice_t ch, again;
                    memset(d, 0, sizeof *d);
                    kcoll_select_t r1 = kcoll_select(d, fams[f], p, NULL, host_ok, n, &ch);
                    kcoll_select_t r2 = kcoll_select(d, fams[f], p, NULL, host_ok, n, &again);
                    CHECK((r1 == KCOLL_SELECT_HOST && host_ok) ||
                              (r1 == KCOLL_SELECT_KCOLL && ch.algo && ch.algo->family == fams[f] &&
                               (!ch.algo->check || !ch.algo->check(p, &ch.prm, err, sizeof err))),
                          "select %s p=%d n=%zu host_ok=%d", kcoll_coll_name(fams[f]), p, n,
                          host_ok);
                    CHECK(r2 == r1 && again.algo == ch.algo &&
                              !memcmp(&again.prm, &ch.prm, sizeof ch.prm),
                          "cached decision %s p=%d n=%zu", kcoll_coll_name(fams[f]), p, n);
                    size_t lo = (size_t)1 << (kcoll_size_class(n) - 1), hi = 2 * lo - 1;
                    kcoll_decisions_t fresh = {0};
                    kcoll_choice_t cl, ch2;
                    CHECK(kcoll_select(&fresh, fams[f], p, NULL, host_ok, lo, &cl) == r1 &&
                              kcoll_select(&fresh, fams[f], p, NULL, host_ok, hi, &ch2) == r1 &&
                              cl.algo == ch.algo && ch2.algo == ch.algo,
                          "size class of %zu (%zu..%zu) decides alike", n, lo, hi);
                }
            }

    /* the model's choice is the cheapest candidate it prices at the size
     * class's middle, or the host where that is kcoll's and the host is
     * cheaper than it at the class's lower end: over families, process
     * counts and sizes the selector answers what pricing afresh answers,
     * and somewhere the lower end decided */
    kcoll_choice_t ch;
    int flips = 0;
    for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
        static kcoll_cand_t cand[KCOLL_MAX_CANDS];
        kcoll_pcall_t pc = {.coll = fams[f], .p = 4, .bytes = kcoll_class_bytes(1 << 20)};
        int nc = kcoll_model_rank(&kcoll_tuning()->m, &pc, 1, cand, KCOLL_MAX_CANDS);
        CHECK(nc > 1, "%s: candidates priced", kcoll_coll_name(fams[f]));
        for (int i = 1; i < nc; i++)
            CHECK(cand[i].t >= cand[i - 1].t, "candidates sorted");
        for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
            for (size_t n = 8; n <= ((size_t)16 << 20); n *= 4) {
                int flipped = 0;
                pc.p = ps[pi];
                pc.bytes = kcoll_class_bytes(n);
                const kcoll_choice_t want = fresh_decision(&pc, n, &flipped);
                memset(d, 0, sizeof *d);
                kcoll_select_t r = kcoll_select(d, fams[f], ps[pi], NULL, 1, n, &ch);
                flips += flipped;
                CHECK(r == KCOLL_SELECT_HOST ? !want.algo
                                             : want.algo == ch.algo &&
                                                   !memcmp(&want.prm, &ch.prm, sizeof ch.prm),
                      "%s p=%d %zu B: the selector decides as the model priced afresh",
                      kcoll_coll_name(fams[f]), ps[pi], n);
            }
    }
    CHECK(flips > 0, "the class's lower end decided somewhere (%d)", flips);

    /* a tuning file's rules come before the model, an invalid or
     * non-matching rule is passed over, and setting a tuning empties the
     * decision cache */
    static kcoll_tuning_t tu;
    kcoll_machine_defaults(&tu.m);
    tu.nrules = 4;
    tu.rules[0] = (kcoll_trule_t){KCOLL_COLL_BCAST, 3, 0, 0, 1 << 20, KCOLL_CACHE_ANY,
                                  "direct_write"};
    tu.rules[1] = (kcoll_trule_t){KCOLL_COLL_ALLGATHER, 2, 0, 0, 0, KCOLL_CACHE_ANY,
                                  "ring_neighbor:j=2"};
    tu.rules[2] = (kcoll_trule_t){KCOLL_COLL_REDUCE, 2, 0, 0, 0, KCOLL_CACHE_ANY, "host"};
    /* on-cache calls only: the model decides the off-cache ones */
    tu.rules[3] = (kcoll_trule_t){KCOLL_COLL_ALLTOALL, 2, 0, 0, 0, KCOLL_CACHE_HOT, "host"};
    memset(d, 0, sizeof *d);
    kcoll_select(d, KCOLL_COLL_BCAST, 8, NULL, 1, 4096, &ch); /* cached before the tuning */
    kcoll_tuning_set(&tu);
    CHECK(kcoll_select(d, KCOLL_COLL_BCAST, 8, NULL, 1, 4096, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "direct_write"),
          "rule: Bcast at 8 ranks below 1 MiB is direct_write");
    CHECK(kcoll_select(d, KCOLL_COLL_BCAST, 2, NULL, 1, 4096, &ch) != KCOLL_SELECT_KCOLL ||
              strcmp(ch.algo->name, "direct_write"),
          "rule: not at 2 ranks");
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 4, NULL, 1, 1 << 20, &ch) == KCOLL_SELECT_HOST ||
              strcmp(ch.algo->name, "ring_neighbor"),
          "rule: j=2 is invalid at 4 ranks and passed over");
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 5, NULL, 1, 1 << 20, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "ring_neighbor") && ch.prm.j == 2,
          "rule: j=2 at 5 ranks");
    CHECK(kcoll_select(d, KCOLL_COLL_REDUCE, 4, NULL, 1, 1 << 20, &ch) == KCOLL_SELECT_HOST,
          "rule: host");
    CHECK(kcoll_select(d, KCOLL_COLL_REDUCE, 4, NULL, 0, 1 << 20, &ch) == KCOLL_SELECT_KCOLL,
          "rule: host passed over where KCOLL_MIN_BYTES says kcoll");
    CHECK(kcoll_select_cache(d, KCOLL_COLL_ALLTOALLV, 2, NULL, 1, 1 << 20, KCOLL_CACHE_HOT, &ch) ==
              KCOLL_SELECT_HOST,
          "rule: an on-cache call matches the hot rule");
    CHECK(kcoll_select_cache(d, KCOLL_COLL_ALLTOALLV, 2, NULL, 1, 1 << 20, KCOLL_CACHE_COLD,
                             &ch) == KCOLL_SELECT_KCOLL &&
              kcoll_select(d, KCOLL_COLL_ALLTOALLV, 2, NULL, 1, 1 << 20, &ch) ==
                  KCOLL_SELECT_KCOLL,
          "rule: an off-cache call does not (the model's pick, kcoll at 1 MiB)");
    kcoll_params_set("BCAST_ALGO", "knomial:k=3");
    CHECK(kcoll_select(d, KCOLL_COLL_BCAST, 8, NULL, 1, 4096, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "knomial") && ch.prm.k == 3,
          "the environment variable before the rules");
    kcoll_params_set("BCAST_ALGO", "auto");

    /* one engine per call (docs/engines.md): a rule naming an engine
     * applies to teams that may run calls on it, its choice carries the
     * engine; a team that may not passes it over */
    tu.nrules = 1;
    tu.rules[0] = (kcoll_trule_t){KCOLL_COLL_ALLREDUCE, 2, 2, 0, 0, KCOLL_CACHE_ANY,
                                  "partitioned:chunk=64@shm"};
    kcoll_tuning_set(&tu);
    kcoll_decisions_t *pd = calloc(1, sizeof *pd);
    CHECK(pd != NULL, "memory");
    pd->percall = KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM);
    CHECK(kcoll_select(pd, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 8192, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "partitioned") && ch.prm.chunk == 64 &&
              ch.engine == KCOLL_ENGINE_SHM,
          "rule with @shm: the call runs on shm (engine %d)", ch.engine);
    CHECK(kcoll_select(pd, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 8192, &ch) == KCOLL_SELECT_KCOLL &&
              ch.engine == KCOLL_ENGINE_SHM,
          "rule with @shm: the same from the decision cache");
    memset(d, 0, sizeof *d);
    CHECK(kcoll_select(d, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 8192, &ch) != KCOLL_SELECT_KCOLL ||
              ch.engine == -1,
          "rule with @shm: passed over by a team without shm per call");
    pd->engine = KCOLL_ENGINE_SHM;
    pd->percall = 0;
    pd->gen = 0;
    CHECK(kcoll_select(pd, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 8192, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "partitioned") && ch.engine == -1,
          "rule with @shm on a team on shm: its own engine");
    /* the model: a two-copy engine priced far below cma takes the call,
     * one priced above leaves it on cma; a team without it stays on cma */
    tu.nrules = 0;
    tu.m.shm_alpha = 0.01e-6;
    tu.m.shm_beta = 0.001e-9;
    kcoll_tuning_set(&tu);
    memset(pd, 0, sizeof *pd);
    pd->percall = KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM);
    CHECK(kcoll_select(pd, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 1 << 20, &ch) == KCOLL_SELECT_KCOLL &&
              ch.engine == KCOLL_ENGINE_SHM,
          "model: shm priced far cheaper runs the call (engine %d)", ch.engine);
    memset(d, 0, sizeof *d);
    CHECK(kcoll_select(d, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 1 << 20, &ch) != KCOLL_SELECT_KCOLL ||
              ch.engine == -1,
          "model: a team without shm per call stays on its engine");
    tu.m.shm_alpha = 50e-6;
    tu.m.shm_beta = 10e-9;
    kcoll_tuning_set(&tu);
    CHECK(kcoll_select(pd, KCOLL_COLL_ALLREDUCE, 2, NULL, 1, 1 << 20, &ch) != KCOLL_SELECT_KCOLL ||
              ch.engine == -1,
          "model: shm priced dearer leaves the call on cma (engine %d)", ch.engine);
    free(pd);
    kcoll_machine_defaults(&tu.m);
    tu.nrules = 0;
    kcoll_tuning_set(&tu);

    /* KCOLL_MIN_BYTES: "auto" is -1 (the model decides), sizes as before */
    CHECK(kcoll_params_set("MIN_BYTES", "auto") == 0 && kcoll_param_int(KCOLL_P_MIN_BYTES) == -1,
          "MIN_BYTES=auto");
    CHECK(kcoll_params_set("MIN_BYTES", "4k") == 0 && kcoll_param_int(KCOLL_P_MIN_BYTES) == 4096,
          "MIN_BYTES=4k");

    /* a forced spec wins, is re-read when a parameter changes, and an
     * invalid one (here: j sharing a factor with p) sends the call to the
     * host */
    kcoll_params_set("WARN", "0");
    kcoll_params_set("ALLGATHER_ALGO", "ring_neighbor:j=3");
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 4, NULL, 0, 1 << 20, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "ring_neighbor") && ch.prm.j == 3,
          "forced ring_neighbor:j=3 at p=4");
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 6, NULL, 0, 1 << 20, &ch) == KCOLL_SELECT_BAD,
          "j=3 at p=6 is invalid");
    kcoll_params_set("ALLGATHER_ALGO", "bruck");
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 4, NULL, 0, 1 << 20, &ch) == KCOLL_SELECT_KCOLL &&
              !strcmp(ch.algo->name, "bruck"),
          "a changed parameter empties the cache");
    kcoll_params_set("ALLGATHER_ALGO", "no_such");
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 4, NULL, 0, 1 << 20, &ch) == KCOLL_SELECT_BAD,
          "unknown algorithm: bad");
    kcoll_params_set("ALLGATHER_ALGO", "auto");
    kcoll_choice_t model;
    kcoll_decisions_t fresh = {0};
    CHECK(kcoll_select(d, KCOLL_COLL_ALLGATHER, 4, NULL, 0, 1 << 20, &ch) == KCOLL_SELECT_KCOLL &&
              kcoll_select(&fresh, KCOLL_COLL_ALLGATHER, 4, NULL, 0, 1 << 20, &model) ==
                  KCOLL_SELECT_KCOLL && ch.algo == model.algo,
          "auto again: the model");
    free(d);

    /* the model's memo (select.c): a decision priced once per process.
     * The other cache state of a size class, a second team with the same
     * levels and, where the host MPI won, the runner-up without it price
     * nothing again, and each answers what pricing afresh answers; other
     * levels, another size class price anew. */
    {
        static kcoll_tuning_t plain; /* the built-in machine, no rules: the model decides */
        kcoll_machine_defaults(&plain.m);
        kcoll_tuning_set(&plain);
        kcoll_levels_t lv1, lv2, lv3;
        levels_fixture(&lv1, 16, 1);
        levels_fixture(&lv2, 16, 1); /* the same placement, another team's copy */
        levels_fixture(&lv3, 16, 2);
        kcoll_decisions_t *t1 = calloc(1, sizeof *t1), *t2 = calloc(1, sizeof *t2),
                          *t3 = calloc(1, sizeof *t3);
        CHECK(t1 && t2 && t3 && lv1.n > 0 && lv3.n > 0, "memory, levels");
        const size_t n = 3 << 20;
        kcoll_choice_t c1, c2, c3;
        uint64_t k0 = kcoll_model_pricings();
        kcoll_select_t r1 = kcoll_select_cache(t1, KCOLL_COLL_ALLREDUCE, 16, &lv1, 1, n,
                                               KCOLL_CACHE_COLD, &c1);
        const uint64_t k1 = kcoll_model_pricings();
        CHECK(k1 > k0, "a first decision is priced");
        CHECK(kcoll_select_cache(t1, KCOLL_COLL_ALLREDUCE, 16, &lv1, 1, n, KCOLL_CACHE_HOT,
                                 &c2) == r1 &&
                  kcoll_model_pricings() == k1 && c2.algo == c1.algo &&
                  !memcmp(&c2.prm, &c1.prm, sizeof c1.prm),
              "the other cache state: the same, not priced again (%llu pricings)",
              (unsigned long long)(kcoll_model_pricings() - k1));
        CHECK(kcoll_select(t2, KCOLL_COLL_ALLREDUCE, 16, &lv2, 1, n, &c2) == r1 &&
                  kcoll_model_pricings() == k1 && c2.algo == c1.algo &&
                  !memcmp(&c2.prm, &c1.prm, sizeof c1.prm),
              "another team with the same levels: the same, not priced again");
        /* priced afresh: the cheapest candidate at these levels (or the
         * host, cheaper at the class's lower end) */
        static kcoll_cand_t cand[KCOLL_MAX_CANDS];
        kcoll_pcall_t pc = {.coll = KCOLL_COLL_ALLREDUCE, .p = 16, .bytes = kcoll_class_bytes(n),
                            .lv = &lv1};
        int flipped = 0;
        const kcoll_choice_t afresh = fresh_decision(&pc, n, &flipped);
        CHECK(r1 == KCOLL_SELECT_HOST ? !afresh.algo
                                      : afresh.algo == c1.algo &&
                                            !memcmp(&afresh.prm, &c1.prm, sizeof c1.prm),
              "the memo's decision is the one priced afresh");
        kcoll_select(t3, KCOLL_COLL_ALLREDUCE, 16, &lv3, 1, n, &c3);
        const uint64_t k2 = kcoll_model_pricings();
        CHECK(k2 > k1, "other levels are priced anew");
        kcoll_select(t3, KCOLL_COLL_ALLREDUCE, 16, &lv3, 1, 2 * n, &c3);
        CHECK(kcoll_model_pricings() > k2, "another size class is priced anew");
        /* where the host MPI wins, its runner-up (kcoll's cheapest) comes
         * from the same pricing; it is kcoll's cheapest candidate afresh */
        int host_won = 0;
        for (size_t b = 8; b <= (1 << 20) && !host_won; b *= 4) {
            memset(t1, 0, sizeof *t1);
            const uint64_t before = kcoll_model_pricings();
            if (kcoll_select(t1, KCOLL_COLL_ALLREDUCE, 16, &lv1, 1, b, &c1) != KCOLL_SELECT_HOST)
                continue;
            host_won = 1;
            CHECK(kcoll_model_pricings() == before + 1,
                  "a host decision and its runner-up: one pricing (%llu)",
                  (unsigned long long)(kcoll_model_pricings() - before));
            kcoll_pcall_t hc = {.coll = KCOLL_COLL_ALLREDUCE, .p = 16,
                                .bytes = kcoll_class_bytes(b), .lv = &lv1};
            int hn = kcoll_model_rank(&kcoll_tuning()->m, &hc, 0, cand, KCOLL_MAX_CANDS);
            CHECK(kcoll_select(t2, KCOLL_COLL_ALLREDUCE, 16, &lv2, 0, b, &c2) ==
                          KCOLL_SELECT_KCOLL &&
                      hn > 0 && cand[0].ch.algo == c2.algo &&
                      !memcmp(&cand[0].ch.prm, &c2.prm, sizeof c2.prm),
                  "the runner-up kept is kcoll's cheapest candidate priced afresh");
        }
        CHECK(host_won, "the host MPI wins some small Allreduce at 16 ranks");
        kcoll_levels_free(&lv1);
        kcoll_levels_free(&lv2);
        kcoll_levels_free(&lv3);
        free(t1);
        free(t2);
        free(t3);
    }

    /* kcoll_split covers [0, n) exactly, in order */
    for (size_t n = 0; n < 200000; n = n * 3 + 1)
        for (int parts = 1; parts <= 9; parts++) {
            size_t next = 0;
            for (int i = 0; i < parts; i++) {
                size_t off, len;
                kcoll_split(n, parts, i, &off, &len);
                CHECK(off == next, "split n=%zu parts=%d i=%d", n, parts, i);
                next = off + len;
            }
            CHECK(next == n, "split covers n=%zu parts=%d", n, parts);
        }
    return check_report("test_params");
}
