/* isort: the integer sort of the NAS Parallel Benchmarks (IS), the
 * application of paper 001 (001_7c7b28ca11c19b80.txt, section 4.4: "IS,
 * which is known to use very large messages, shows a 25% performance
 * improvement"), written here from the benchmark's published description.
 *
 * The problem (NPB's IS specification): N keys in [0, MAX_KEY), ranked ten
 * times; before ranking i (i = 1..10) key i is set to i and key i + 10 to
 * MAX_KEY - i. Classes (N, MAX_KEY, buckets):
 *     S 2^16, 2^11, 2^9     W 2^20, 2^16, 2^10
 *     A 2^23, 2^19, 2^10    B 2^25, 2^21, 2^10
 * Keys: the linear congruential generator x_{j+1} = a x_j mod 2^46 with
 * a = 5^13 and x_0 = 314159265 (NPB's randlc, whose value is x_j / 2^46);
 * key i = floor(MAX_KEY/4 * (x_{4i+1} + x_{4i+2} + x_{4i+3} + x_{4i+4}) / 2^46),
 * computed here exactly in integers as (x_{4i+1} + ... + x_{4i+4}) >> (48 -
 * log2 MAX_KEY). Rank r generates keys r N / p .. (r + 1) N / p - 1,
 * starting from x_{4 r N / p} = a^(4 r N / p) x_0 (square and multiply),
 * so the key sequence does not depend on the number of ranks.
 *
 * One ranking (NPB IS's bucket version, in the MPI form paper 001 runs):
 *  1. each rank counts its keys per bucket (the top log2(buckets) bits of
 *     the key) and groups them by bucket;
 *  2. MPI_Allreduce (sum) of the bucket counts, with the values of the
 *     five test keys (each contributed by the rank that holds it);
 *  3. buckets are dealt out in order, rank j taking buckets until the
 *     running total reaches (j + 1) N / p;
 *  4. MPI_Alltoall of the number of keys each rank sends each other one;
 *  5. MPI_Alltoallv of the keys (at 2 ranks half of them cross);
 *  6. each rank counts its keys per key value over its own key range and
 *     sums the counts up: the rank of a key is the number of keys below
 *     its range (from the totals) plus its local count.
 * One untimed ranking first, then ten timed (as NPB does).
 *
 * Verification (as NPB verifies IS):
 *  - partial: in every ranking, the rank of the keys at the five test
 *    positions NPB IS defines for the class (the number of keys smaller
 *    than the key there) is compared with a reference that rank 0 computes
 *    independently, outside the timed part: it generates all N keys
 *    itself into a histogram and applies each ranking's two changed keys;
 *  - full: after the last ranking each rank places its keys at their
 *    ranks (a counting sort by the computed counts), checks they are in
 *    order and as many as its buckets hold, the ranks' key ranges follow
 *    each other in order, and the sum and the sum of squares of all sorted
 *    keys equal those of the generated sequence (the same multiset).
 *
 * usage: isort [-c S|W|A|B]
 * prints one line: RESULT app=isort size=<class> ranks=<p> time=<s> coll=<s>
 *   share=<%> mops=<keys ranked per us> check=<passed|FAILED> kcoll_calls=<n|none>
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define ITERATIONS 10
#define NTEST 5

typedef struct {
    char name;
    int keys_log2, max_key_log2, buckets_log2;
    long test_index[NTEST]; /* the positions whose ranks NPB IS checks */
} isort_class_t;

static const isort_class_t classes[] = {
    {'S', 16, 11, 9, {48427, 17148, 23627, 62548, 4431}},
    {'W', 20, 16, 10, {357773, 934767, 875723, 898999, 404505}},
    {'A', 23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760}},
    {'B', 25, 21, 10, {41869, 812306, 5102857, 18232239, 26860214}},
};

/* ---- the generator ---------------------------------------------------- */

#define LCG_A 1220703125ull /* 5^13 */
#define LCG_SEED 314159265ull
#define LCG_MASK ((1ull << 46) - 1)

/* x y mod 2^46 for x, y < 2^46: the product mod 2^64, which 2^46 divides */
static uint64_t lcg_mul(uint64_t x, uint64_t y)
{
    return (x * y) & LCG_MASK;
}

/* x_j = a^j x_0 */
static uint64_t lcg_at(uint64_t j)
{
    uint64_t r = 1, b = LCG_A;
    for (; j; j >>= 1, b = lcg_mul(b, b))
        if (j & 1)
            r = lcg_mul(r, b);
    return lcg_mul(r, LCG_SEED);
}

/* Keys first .. first + n - 1 into out. */
static void make_keys(int32_t *out, long first, long n, int max_key_log2)
{
    uint64_t x = lcg_at(4 * (uint64_t)first);
    const int shift = 48 - max_key_log2;
    for (long i = 0; i < n; i++) {
        uint64_t s = 0;
        for (int r = 0; r < 4; r++) {
            x = lcg_mul(x, LCG_A);
            s += x;
        }
        out[i] = (int32_t)(s >> shift);
    }
}

/* The key NPB IS puts at position i before ranking `it` (i = 1..it: i;
 * i = 11..10+it: MAX_KEY - (i - 10)), or -1 where the generated one stays. */
static long changed_key(long i, int it, long max_key)
{
    if (i >= 1 && i <= it)
        return i;
    if (i >= ITERATIONS + 1 && i <= ITERATIONS + it)
        return max_key - (i - ITERATIONS);
    return -1;
}

/* ---- the reference (rank 0, untimed) ---------------------------------- */

typedef struct {
    long rank[ITERATIONS + 1][NTEST]; /* -1: NPB checks none (key 0) */
    uint64_t sum, sum2;                /* of the keys of the last ranking */
} isort_ref_t;

static int isort_reference(const isort_class_t *c, isort_ref_t *ref)
{
    const long n = 1l << c->keys_log2, max_key = 1l << c->max_key_log2;
    uint64_t *below = calloc((size_t)max_key + 1, sizeof *below); /* below[v]: keys < v */
    int32_t *chunk = malloc(65536 * sizeof *chunk);
    int32_t first[2 * ITERATIONS + 1], at_test[NTEST];
    if (!below || !chunk) {
        free(below);
        free(chunk);
        return -1;
    }
    uint64_t sum = 0, sum2 = 0;
    for (long i0 = 0; i0 < n; i0 += 65536) {
        long m = n - i0 < 65536 ? n - i0 : 65536;
        make_keys(chunk, i0, m, c->max_key_log2);
        for (long i = 0; i < m; i++) {
            const uint64_t k = (uint64_t)chunk[i];
            below[k + 1]++;
            sum += k;
            sum2 += k * k;
            if (i0 + i <= 2 * ITERATIONS)
                first[i0 + i] = chunk[i];
            for (int t = 0; t < NTEST; t++)
                if (i0 + i == c->test_index[t])
                    at_test[t] = chunk[i];
        }
    }
    for (long v = 1; v <= max_key; v++)
        below[v] += below[v - 1];
    for (int it = 1; it <= ITERATIONS; it++)
        for (int t = 0; t < NTEST; t++) {
            const long ti = c->test_index[t], ch = changed_key(ti, it, max_key);
            const long k = ch >= 0 ? ch : at_test[t];
            long r = (long)below[k];
            for (long i = 1; i <= 2 * ITERATIONS; i++) {
                const long now = changed_key(i, it, max_key);
                if (now < 0)
                    continue;
                r -= first[i] < k; /* the generated key is gone... */
                r += now < k;      /* ...the changed one is there */
            }
            ref->rank[it][t] = k > 0 ? r : -1;
        }
    for (long i = 1; i <= 2 * ITERATIONS; i++) {
        const uint64_t was = (uint64_t)first[i], now = (uint64_t)changed_key(i, ITERATIONS, max_key);
        sum += now - was;
        sum2 += now * now - was * was;
    }
    ref->sum = sum;
    ref->sum2 = sum2;
    free(below);
    free(chunk);
    return 0;
}

/* ---- the distributed sort --------------------------------------------- */

typedef struct {
    const isort_class_t *c;
    int rank, p;
    long n, max_key, lo, nlocal;
    int nb, shift;
    int32_t *keys;           /* this rank's generated keys (positions lo..) */
    int32_t *grouped;        /* keys grouped by bucket */
    int32_t *got;            /* keys received: this rank's bucket range */
    long got_cap, ngot;
    int32_t *count;          /* per key value of this rank's range, then summed */
    int *bsize, *totals;     /* per bucket (+ NTEST test keys): local and summed */
    int *bptr;
    int *scount, *sdispl, *rcount, *rdispl;
    long min_key, max_key_here; /* this rank's key range (empty: min > max) */
    long lesser;                 /* keys below that range */
    long found[ITERATIONS + 1][NTEST];
    double coll;
} isort_t;

static void die(const char *what)
{
    fprintf(stderr, "isort: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* One ranking (NPB's iteration `it`). */
static void isort_rank(isort_t *s, int it)
{
    const int p = s->p, nb = s->nb;
    for (long i = 1; i <= 2 * ITERATIONS; i++) {
        const long now = changed_key(i, it, s->max_key);
        if (now >= 0 && i >= s->lo && i < s->lo + s->nlocal)
            s->keys[i - s->lo] = (int32_t)now;
    }
    /* 1. count and group by bucket */
    memset(s->bsize, 0, (size_t)(nb + NTEST) * sizeof *s->bsize);
    for (long i = 0; i < s->nlocal; i++)
        s->bsize[s->keys[i] >> s->shift]++;
    for (int t = 0; t < NTEST; t++) {
        const long ti = s->c->test_index[t];
        if (ti >= s->lo && ti < s->lo + s->nlocal)
            s->bsize[nb + t] = s->keys[ti - s->lo];
    }
    s->bptr[0] = 0;
    for (int b = 1; b < nb; b++)
        s->bptr[b] = s->bptr[b - 1] + s->bsize[b - 1];
    for (long i = 0; i < s->nlocal; i++)
        s->grouped[s->bptr[s->keys[i] >> s->shift]++] = s->keys[i];

    /* 2. the totals, and the test keys' values */
    double c0 = MPI_Wtime();
    MPI_Allreduce(s->bsize, s->totals, nb + NTEST, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    s->coll += MPI_Wtime() - c0;

    /* 3. deal the buckets out: rank j's end is the first bucket at which
     * the running total reaches (j + 1) N / p */
    long run = 0, mine = 0;
    int j = 0, first_b = 0, last_b = -1;
    for (int b = 0; b < nb; b++) {
        run += s->totals[b];
        mine += s->bsize[b];
        while (j < p && run >= (long)(((int64_t)(j + 1) * s->n) / p)) {
            s->scount[j] = (int)mine;
            mine = 0;
            if (j == s->rank)
                last_b = b;
            if (j == s->rank - 1)
                first_b = b + 1;
            j++;
        }
    }
    if (s->rank > 0 && j <= s->rank - 1)
        die("bucket assignment did not reach every rank");
    s->sdispl[0] = 0;
    for (int q = 1; q < p; q++)
        s->sdispl[q] = s->sdispl[q - 1] + s->scount[q - 1];

    /* 4-5. how many, then the keys */
    c0 = MPI_Wtime();
    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, MPI_COMM_WORLD);
    s->coll += MPI_Wtime() - c0;
    long ngot = 0;
    for (int q = 0; q < p; q++) {
        s->rdispl[q] = (int)ngot;
        ngot += s->rcount[q];
    }
    if (ngot > s->got_cap) {
        free(s->got);
        s->got_cap = ngot + ngot / 8;
        if (!(s->got = malloc((size_t)s->got_cap * sizeof *s->got)))
            die("out of memory");
    }
    s->ngot = ngot;
    c0 = MPI_Wtime();
    MPI_Alltoallv(s->grouped, s->scount, s->sdispl, MPI_INT, s->got, s->rcount, s->rdispl,
                  MPI_INT, MPI_COMM_WORLD);
    s->coll += MPI_Wtime() - c0;

    /* 6. count per key value over this rank's range, summed up */
    s->min_key = (long)first_b << s->shift;
    s->max_key_here = ((long)(last_b + 1) << s->shift) - 1;
    s->lesser = 0;
    for (int b = 0; b < first_b; b++)
        s->lesser += s->totals[b];
    const long width = s->max_key_here - s->min_key + 1;
    if (width > 0) {
        int32_t *cnt = s->count;
        memset(cnt, 0, (size_t)width * sizeof *cnt);
        for (long i = 0; i < ngot; i++)
            cnt[s->got[i] - s->min_key]++;
        for (long v = 1; v < width; v++)
            cnt[v] += cnt[v - 1];
    }
    /* partial verification: the rank of each test key in this range */
    for (int t = 0; t < NTEST; t++) {
        const long k = s->totals[nb + t];
        s->found[it][t] = -1;
        if (k > 0 && k >= s->min_key && k <= s->max_key_here)
            s->found[it][t] = s->lesser + (k > s->min_key ? s->count[k - 1 - s->min_key] : 0);
    }
}

/* NPB's full verification after the last ranking, and the multiset. */
static int isort_full_verify(isort_t *s, const isort_ref_t *ref)
{
    const long width = s->max_key_here - s->min_key + 1;
    int32_t *sorted = malloc((size_t)(s->ngot ? s->ngot : 1) * sizeof *sorted);
    long bad = 0, expected = 0;
    uint64_t sums[2] = {0, 0}, all[2];
    if (!sorted)
        die("out of memory");
    for (long b = s->min_key >> s->shift; width > 0 && b <= s->max_key_here >> s->shift; b++)
        expected += s->totals[b]; /* the keys the totals put in this range */
    if (expected != s->ngot)
        bad++;
    for (long i = 0; i < s->ngot && !bad; i++) { /* place each key at its rank */
        const long pos = --s->count[s->got[i] - s->min_key];
        if (pos < 0 || pos >= s->ngot) {
            bad++;
            break;
        }
        sorted[pos] = s->got[i];
    }
    for (long i = 1; i < s->ngot && !bad; i++)
        bad += sorted[i - 1] > sorted[i];
    for (long i = 0; i < s->ngot; i++) {
        sums[0] += (uint64_t)sorted[i];
        sums[1] += (uint64_t)sorted[i] * (uint64_t)sorted[i];
    }
    /* the ranges follow each other: (count, first, last) of every rank */
    long mine[3] = {s->ngot, s->ngot ? sorted[0] : 0, s->ngot ? sorted[s->ngot - 1] : 0};
    long *every = malloc(3 * (size_t)s->p * sizeof *every);
    if (!every)
        die("out of memory");
    MPI_Allgather(mine, 3, MPI_LONG, every, 3, MPI_LONG, MPI_COMM_WORLD);
    long total = 0, last = -1;
    for (int q = 0; q < s->p; q++) {
        total += every[3 * q];
        if (every[3 * q] && every[3 * q + 1] < last)
            bad++;
        if (every[3 * q])
            last = every[3 * q + 2];
    }
    bad += total != s->n;
    MPI_Reduce(sums, all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (s->rank == 0 && (all[0] != ref->sum || all[1] != ref->sum2)) {
        fprintf(stderr, "isort: the sorted keys are not the generated ones (sum %llu, expected %llu)\n",
                (unsigned long long)all[0], (unsigned long long)ref->sum);
        bad++;
    }
    free(every);
    free(sorted);
    long anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (anybad && s->rank == 0)
        fprintf(stderr, "isort: full verification failed (%ld problems)\n", anybad);
    return anybad == 0;
}

/* Partial verification: every test key's rank, found by exactly one rank,
 * equals the reference. */
static int isort_partial_verify(isort_t *s, const isort_ref_t *ref)
{
    const int cells = (ITERATIONS + 1) * NTEST;
    long *best = malloc(3 * (size_t)cells * sizeof *best), *have = best + cells, *who = have + cells;
    int ok = 1;
    if (!best)
        die("out of memory");
    for (int i = 0; i < cells; i++)
        have[i] = (&s->found[0][0])[i] >= 0;
    MPI_Reduce(&s->found[0][0], best, cells, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(have, who, cells, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (s->rank == 0)
        for (int it = 1; it <= ITERATIONS; it++)
            for (int t = 0; t < NTEST; t++) {
                const long want = ref->rank[it][t], got = best[it * NTEST + t];
                const long nwho = who[it * NTEST + t];
                if (want != got || nwho != (want >= 0)) {
                    fprintf(stderr, "isort: partial verification failed: ranking %d, test key %d: "
                            "rank %ld, expected %ld\n", it, t, got, want);
                    ok = 0;
                }
            }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(best);
    return ok;
}

int main(int argc, char **argv)
{
    char cname = 'S';
    MPI_Init(&argc, &argv);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-c") && a + 1 < argc)
            cname = argv[++a][0];
        else
            die("usage: isort [-c S|W|A|B]");
    }
    const isort_class_t *c = NULL;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (classes[i].name == cname)
            c = &classes[i];
    if (!c)
        die("unknown class (S, W, A or B)");

    isort_t s;
    memset(&s, 0, sizeof s);
    s.c = c;
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.p);
    s.n = 1l << c->keys_log2;
    s.max_key = 1l << c->max_key_log2;
    s.nb = 1 << c->buckets_log2;
    s.shift = c->max_key_log2 - c->buckets_log2;
    s.lo = (long)(((int64_t)s.rank * s.n) / s.p);
    s.nlocal = (long)(((int64_t)(s.rank + 1) * s.n) / s.p) - s.lo;
    s.keys = malloc((size_t)(s.nlocal ? s.nlocal : 1) * sizeof *s.keys);
    s.grouped = malloc((size_t)(s.nlocal ? s.nlocal : 1) * sizeof *s.grouped);
    s.count = malloc((size_t)s.max_key * sizeof *s.count);
    s.bsize = calloc((size_t)(s.nb + NTEST), sizeof *s.bsize);
    s.totals = calloc((size_t)(s.nb + NTEST), sizeof *s.totals);
    s.bptr = calloc((size_t)s.nb, sizeof *s.bptr);
    s.scount = calloc(4 * (size_t)s.p, sizeof *s.scount);
    if (!s.keys || !s.grouped || !s.count || !s.bsize || !s.totals || !s.bptr || !s.scount)
        die("out of memory");
    s.sdispl = s.scount + s.p;
    s.rcount = s.sdispl + s.p;
    s.rdispl = s.rcount + s.p;
    make_keys(s.keys, s.lo, s.nlocal, c->max_key_log2);

    isort_ref_t ref;
    memset(&ref, 0, sizeof ref);
    int ref_ok = s.rank != 0 || isort_reference(c, &ref) == 0;
    MPI_Bcast(&ref_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ref_ok)
        die("out of memory for the reference");

    isort_rank(&s, 1); /* untimed, as NPB: pages touched, tables made */
    s.coll = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int it = 1; it <= ITERATIONS; it++)
        isort_rank(&s, it);
    const double total = MPI_Wtime() - t0;
    long long kc[3] = {app_kcoll_calls("MPI_Alltoallv"), app_kcoll_calls("MPI_Alltoall"),
                       app_kcoll_calls("MPI_Allreduce")};
    const app_times_t tm = app_reduce_times(total, s.coll, MPI_COMM_WORLD);

    int ok = isort_partial_verify(&s, &ref);
    ok = isort_full_verify(&s, &ref) && ok;
    if (s.rank == 0) {
        char calls[96] = "none";
        if (kc[0] >= 0)
            snprintf(calls, sizeof calls, "%lld(alltoallv:%lld,alltoall:%lld,allreduce:%lld)",
                     kc[0] + kc[1] + kc[2], kc[0], kc[1], kc[2]);
        printf("RESULT app=isort size=%c ranks=%d time=%.6f coll=%.6f share=%.2f mops=%.2f "
               "check=%s kcoll_calls=%s\n",
               c->name, s.p, tm.total, tm.coll, 100.0 * tm.coll / tm.total,
               (double)ITERATIONS * (double)s.n / tm.total / 1e6, ok ? "passed" : "FAILED",
               calls);
        fflush(stdout);
    }
    free(s.keys);
    free(s.grouped);
    free(s.got);
    free(s.count);
    free(s.bsize);
    free(s.totals);
    free(s.bptr);
    free(s.scount);
    MPI_Finalize();
    return !ok;
}
