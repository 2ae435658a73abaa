/* Decisions kept between jobs (model/keep.h), in one process standing for
 * several jobs: decisions made and kept are read back (the memo forgotten
 * in between) and answer what pricing answered, pricing nothing; a job
 * that priced nothing new writes nothing; another model parameter or
 * another tuning reads none, and the same ones again read them all; the
 * memo takes no record that names an algorithm of another collective or
 * parameters its algorithm refuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "base/params.h"
#include "model/keep.h"
#include "model/machine.h"
#include "model/select.h"
#include "model/tuning.h"

/* A new parameter generation with the same values: the memo forgets. */
static void forget(void)
{
    static int flip;
    kcoll_params_set("SHM_CELL", (flip ^= 1) ? "65536" : "64KiB");
}

static const kcoll_coll_t colls[] = {KCOLL_COLL_ALLREDUCE, KCOLL_COLL_BCAST,
                                     KCOLL_COLL_ALLGATHER, KCOLL_COLL_REDUCE};
#define NSIZES 6
static const size_t sizes[NSIZES] = {8, 1000, 40000, 300000, 3u << 20, 20u << 20};

/* Every decision of the matrix through a fresh cache, into ch (4 x NSIZES
 * x 2 process counts). */
static void decide(kcoll_choice_t *ch, kcoll_select_t *res)
{
    int i = 0;
    for (int p = 3; p <= 8; p += 5)
        for (int c = 0; c < 4; c++)
            for (int s = 0; s < NSIZES; s++, i++) {
                kcoll_decisions_t d = {0};
                res[i] = kcoll_select(&d, colls[c], p, NULL, 1, sizes[s], &ch[i]);
            }
}
#define NDEC (2 * 4 * NSIZES)

int main(void)
{
    char dir[] = "/tmp/kcoll-test-keep-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a folder");
    kcoll_params_set("CACHE_DIR", dir);
    kcoll_params_set("KEEP_DECISIONS", "1");
    static kcoll_tuning_t plain; /* the built-in machine, no rules: the model decides */
    kcoll_machine_defaults(&plain.m);
    kcoll_tuning_set(&plain);

    static kcoll_choice_t first[NDEC], again[NDEC];
    static kcoll_select_t r1[NDEC], r2[NDEC];
    forget();
    decide(first, r1);
    const int saved = kcoll_keep_save();
    CHECK(saved >= NDEC, "a job's decisions are kept (%d written)", saved);
    CHECK(kcoll_keep_save() == saved, "kept again with the file's (%d)", kcoll_keep_save());

    forget();
    CHECK(kcoll_keep_load() == saved, "the next job reads them all");
    CHECK(kcoll_keep_save() == 0, "a job that priced nothing new writes nothing");
    const uint64_t before = kcoll_model_pricings();
    decide(again, r2);
    CHECK(kcoll_model_pricings() == before, "read decisions price nothing (%llu pricings)",
          (unsigned long long)(kcoll_model_pricings() - before));
    int same = 1;
    for (int i = 0; i < NDEC; i++)
        same &= r1[i] == r2[i] && first[i].algo == again[i].algo &&
                !memcmp(&first[i].prm, &again[i].prm, sizeof first[i].prm);
    CHECK(same, "read decisions are the ones priced");

    /* another model parameter, another tuning: none read */
    kcoll_params_set("SHM_CELL", "32KiB");
    CHECK(kcoll_keep_load() == 0, "another model parameter reads none");
    kcoll_params_set("SHM_CELL", "64KiB");
    static kcoll_tuning_t other;
    kcoll_machine_defaults(&other.m);
    other.m.alpha *= 2;
    kcoll_tuning_set(&other);
    CHECK(kcoll_keep_load() == 0, "another tuning reads none");
    kcoll_tuning_set(&plain);
    CHECK(kcoll_keep_load() == saved, "the same build, tuning and parameters read them all");
    kcoll_params_set("KEEP_DECISIONS", "0");
    forget();
    CHECK(kcoll_keep_load() == 0, "KCOLL_KEEP_DECISIONS=0 reads none");
    kcoll_params_set("KEEP_DECISIONS", "1");

    /* the memo's checks of a record */
    forget();
    decide(first, r1);
    kcoll_memo_rec_t *recs = malloc(2048 * sizeof *recs);
    int fresh, good = -1, n = kcoll_model_memo_export(recs, 2048, &fresh);
    CHECK(n > 0 && fresh == n, "the memo's decisions, all priced here (%d of %d)", fresh, n);
    for (int i = 0; i < n && good < 0; i++)
        if (recs[i].algo >= 0)
            good = i;
    CHECK(good >= 0, "some decision is one of kcoll's algorithms");
    if (good >= 0) {
        kcoll_memo_rec_t bad[3] = {recs[good], recs[good], recs[good]};
        for (int a = 0; a < kcoll_nalgos; a++)
            if (kcoll_algos[a].family != kcoll_algos[recs[good].algo].family) {
                bad[0].algo = a; /* another collective's algorithm */
                break;
            }
        bad[1].algo = kcoll_nalgos; /* none */
        bad[2].engine = 99;
        forget();
        CHECK(kcoll_model_memo_import(bad, 3) == 0, "records that cannot be are not taken");
        CHECK(kcoll_model_memo_import(&recs[good], 1) == 1, "a good one is");
    }
    free(recs);

    char path[200];
    snprintf(path, sizeof path, "%s/decisions.bin", dir);
    unlink(path);
    rmdir(dir);
    return check_report("test_keep");
}
