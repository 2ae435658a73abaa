/* kcoll-bench --tune (tune.h). kcoll decides per size class (the highest
 * set bit of the size) and the rules of a tuning file are matched at the
 * class, so a row of `bytes` speaks for its whole class [2^(c-1), 2^c);
 * adjacent classes with the same winner become one rule. The file is read
 * and written with kcoll's own tuning code (model/tuning.c), which this
 * program carries hidden: the rules it writes are the ones kcoll reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/select.h"
#include "model/tuning.h"
#include "tune.h"

typedef struct {
    size_t bytes;
    int best;       /* the fastest variant other than auto */
    double best_us, auto_us;
    char pick[64];  /* what auto ran */
} bench_tune_row_t;

struct bench_tune {
    kcoll_coll_t family;
    int p, nv, auto_v;
    int cache; /* the rules' state: KCOLL_CACHE_HOT, or _ANY for an off-cache run */
    const char *const *algos;
    bench_tune_row_t *rows;
    int nrows, cap;
};

bench_tune_t *bench_tune_new(const char *mpi_name, int nranks, int nvariants,
                             const char *const *algos, int hot)
{
    const kcoll_coll_t c = kcoll_coll_by_name(mpi_name);
    bench_tune_t *t = calloc(1, sizeof *t);
    if (!t || c == KCOLL_NCOLL) {
        free(t);
        return NULL;
    }
    t->family = kcoll_coll_family(c);
    t->p = nranks;
    t->cache = hot ? KCOLL_CACHE_HOT : KCOLL_CACHE_ANY;
    t->nv = nvariants;
    t->algos = algos;
    t->auto_v = -1;
    for (int v = 1; v < nvariants && t->auto_v < 0; v++)
        if (!strcmp(algos[v - 1], "auto"))
            t->auto_v = v;
    return t;
}

void bench_tune_add(bench_tune_t *t, size_t bytes, const double *median_us, const int *failed,
                    const char *auto_pick)
{
    if (!t || t->auto_v < 0 || failed[t->auto_v])
        return;
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        bench_tune_row_t *rows = realloc(t->rows, (size_t)cap * sizeof *rows);
        if (!rows)
            return;
        t->rows = rows;
        t->cap = cap;
    }
    bench_tune_row_t *r = &t->rows[t->nrows++];
    r->bytes = bytes;
    r->auto_us = median_us[t->auto_v];
    r->best = -1;
    snprintf(r->pick, sizeof r->pick, "%s", auto_pick);
    for (int v = 0; v < t->nv; v++) {
        if (failed[v] || v == t->auto_v || (v > 0 && !strcmp(t->algos[v - 1], "auto")))
            continue;
        if (r->best < 0 || median_us[v] < r->best_us) {
            r->best = v;
            r->best_us = median_us[v];
        }
    }
}

/* The spec a row's rule pins, or NULL where auto is within the margin. */
static const char *bench_tune_winner(const bench_tune_t *t, const bench_tune_row_t *r)
{
    if (r->best < 0 || r->best_us >= (1.0 - BENCH_TUNE_MARGIN) * r->auto_us)
        return NULL;
    return r->best == 0 ? "host" : t->algos[r->best - 1];
}

/* A size class's bounds: [lo, hi). */
static void bench_tune_class(size_t bytes, double *lo, double *hi)
{
    const int c = kcoll_size_class(bytes);
    *lo = c ? (double)((size_t)1 << (c - 1)) : 0;
    *hi = c ? 2 * *lo : 1;
}

/* The tuning to add the rules to: the file itself if it exists, else the
 * one kcoll reads (KCOLL_TUNING), else the built-in defaults. */
static int bench_tune_base(const char *path, kcoll_tuning_t *base)
{
    char err[512];
    FILE *f = fopen(path, "r");
    const char *from = f ? path : getenv("KCOLL_TUNING");
    if (f)
        fclose(f);
    if (from && *from) {
        if (kcoll_tuning_load(from, base, err, sizeof err)) {
            fprintf(stderr, "kcoll-bench: --tune: %s\n", err);
            return -1;
        }
        return 0;
    }
    kcoll_tuning_defaults(base);
    return 0;
}

int bench_tune_write(bench_tune_t *t, const char *path)
{
    static kcoll_tuning_t base, out;
    if (bench_tune_base(path, &base))
        return -1;
    memset(&out, 0, sizeof out);
    out.m = base.m;

    /* An off-cache run's rules hold for both states: the on-cache rules of
     * this collective and process count stay before them */
    const char *name = kcoll_coll_name(t->family);
    int nnew = 0, first = 0;
    for (int i = 0; t->cache != KCOLL_CACHE_HOT && i < base.nrules; i++) {
        const kcoll_trule_t *r = &base.rules[i];
        if (r->coll == (int)t->family && r->pmin == t->p && r->pmax == t->p &&
            r->cache == KCOLL_CACHE_HOT)
            out.rules[first++] = *r;
    }
    nnew = first;
    /* the new rules: adjacent classes with the same winner merged */
    for (int i = 0; i < t->nrows; i++) {
        const bench_tune_row_t *r = &t->rows[i];
        const char *w = bench_tune_winner(t, r);
        if (w)
            printf("# tune: %s, %d ranks, %zu bytes: %s %.2f us beats auto (%s) %.2f us by "
                   "%.0f%%\n",
                   name, t->p, r->bytes, w, r->best_us, r->pick, r->auto_us,
                   100.0 * (1.0 - r->best_us / r->auto_us));
        else
            printf("# tune: %s, %d ranks, %zu bytes: auto (%s) %.2f us is within %.0f%% of the "
                   "fastest\n",
                   name, t->p, r->bytes, r->pick, r->auto_us, 100.0 * BENCH_TUNE_MARGIN);
        if (!w)
            continue;
        double lo, hi;
        bench_tune_class(r->bytes, &lo, &hi);
        kcoll_trule_t *prev = nnew > first ? &out.rules[nnew - 1] : NULL;
        if (prev && !strcmp(prev->spec, w) && prev->bmax == lo) {
            prev->bmax = hi;
            continue;
        }
        if (nnew == KCOLL_TUNING_RULES) {
            fprintf(stderr, "kcoll-bench: --tune: more than %d rules\n", KCOLL_TUNING_RULES);
            return -1;
        }
        kcoll_trule_t *nr = &out.rules[nnew++];
        nr->coll = (int)t->family;
        nr->pmin = nr->pmax = t->p;
        nr->bmin = lo;
        nr->bmax = hi;
        nr->cache = t->cache;
        snprintf(nr->spec, sizeof nr->spec, "%s", w);
    }
    /* then the file's other rules, in their order */
    out.nrules = nnew;
    for (int i = 0; i < base.nrules; i++) {
        const kcoll_trule_t *r = &base.rules[i];
        if (r->coll == (int)t->family && r->pmin == t->p && r->pmax == t->p &&
            (r->cache == KCOLL_CACHE_HOT) == (t->cache == KCOLL_CACHE_HOT))
            continue; /* this run's measurements replace them (or were kept above) */
        if (r->coll == (int)t->family && r->pmin == t->p && r->pmax == t->p &&
            t->cache != KCOLL_CACHE_HOT)
            continue; /* an on-cache rule, kept above */
        if (out.nrules == KCOLL_TUNING_RULES) {
            fprintf(stderr, "kcoll-bench: --tune: more than %d rules\n", KCOLL_TUNING_RULES);
            return -1;
        }
        out.rules[out.nrules++] = *r;
    }

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int bad = !f;
    if (f) {
        bad = kcoll_tuning_write(f, &out) != 0;
        bad |= fclose(f) != 0;
        bad = bad || rename(tmp, path) != 0;
    }
    if (bad) {
        fprintf(stderr, "kcoll-bench: --tune: cannot write %s\n", path);
        remove(tmp);
        return -1;
    }
    printf("# tune: %d %srule%s for %s at %d ranks written to %s (%d rules in all)\n",
           nnew - first, t->cache == KCOLL_CACHE_HOT ? "on-cache " : "",
           nnew - first == 1 ? "" : "s", name, t->p, path, out.nrules);
    fflush(stdout);
    return 0;
}

void bench_tune_free(bench_tune_t *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t);
}
