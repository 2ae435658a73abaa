/* The shortcut of repeated host calls (call/shortcut.h): a blocking call
 * that repeats its previous one argument for argument, where that one went
 * to the host MPI, goes to the host without being decided again. It must
 * change nothing but the time:
 *  1. the same statistics: a mix of every collective without v arrays
 *     (in place, other roots, buffers that odd ranks move every other
 *     call, arguments a rank need not pass alike changing, runs of
 *     repeats and interleaved calls, calls kcoll takes among them) counts the same calls on the same paths with KCOLL_SHORTCUT=0
 *     and =1 (each on a fresh communicator, the model's decisions alone:
 *     KCOLL_ADAPT=0), every result right, and with =1 the shortcut took
 *     calls (path "shortcut", counted when the communicator goes);
 *  2. a parameter change is seen at the next call: repeats of an 8-byte
 *     Allreduce the host runs, then a forced algorithm: the very next
 *     repeat runs on kcoll;
 *  3. a freed communicator's handle, reused by a new one, is not taken
 *     for the old one: repeats on a duplicate of MPI_COMM_WORLD, freed, then
 *     the same call on a one-rank communicator (which MPI hands the same
 *     handle here) is counted as one rank's (mpi:one_rank);
 *  4. a freed datatype's handle, reused by a new one of another size, is
 *     not taken for the old one: repeats of a Bcast of 4 elements of 8
 *     bytes (the host's), the type freed, then 4 elements of 128 KiB
 *     (kcoll's where a fresh communicator says so) on the same buffer;
 *  5. the checks of decisions (call/adapt.h) come as often, and every rank
 *     takes the same path at every call: 400 repeats with a check every
 *     30 calls, the same number of checks closed with and without the
 *     shortcut; an Allreduce (odd ranks moving their buffers every other
 *     call, which neither the memo nor the shortcut looks at), and a
 *     Gather whose non-roots change their receive arguments every call
 *     (not significant there: the call layer's memo holds and the
 *     shortcut misses on them, while the root's shortcut is taken).
 *  6. MPI_Reduce_scatter and MPI_Allgatherv, whose v arrays the memo and
 *     the shortcut compare whole: in part 1's mix one int per rank
 *     repeated, and arrays whose contents change between one int and
 *     128 KiB per rank (the same addresses every call): every 128 KiB call
 *     takes the path a fresh communicator's first such call takes, with
 *     and without the shortcut.
 *  7. with kcoll disabled (KCOLL_DISABLE=1), repeats take the shortcut,
 *     every one counted under mpi:disabled, and the call after
 *     KCOLL_DISABLE=0 is decided again (not counted as disabled).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static const char *const rows[] = {"MPI_Allreduce", "MPI_Bcast",   "MPI_Reduce",
                                   "MPI_Allgather", "MPI_Alltoall", "MPI_Gather",
                                   "MPI_Scatter",   "MPI_Barrier", "MPI_Reduce_scatter_block",
                                   "MPI_Reduce_scatter", "MPI_Allgatherv"};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))
static const char *const paths[] = {"kcoll:*", "mpi:*", "adapt:checked"};
#define NPATHS ((int)(sizeof paths / sizeof paths[0]))

typedef struct {
    uint64_t c[NROWS][NPATHS];
    uint64_t shortcut;
} counts_t;

static counts_t counts_now(void)
{
    counts_t k;
    k.shortcut = 0;
    for (int r = 0; r < NROWS; r++) {
        for (int q = 0; q < NPATHS; q++)
            k.c[r][q] = mt_calls(rows[r], paths[q]);
        k.shortcut += mt_calls(rows[r], "shortcut");
    }
    return k;
}

static counts_t counts_since(counts_t a)
{
    counts_t b = counts_now();
    for (int r = 0; r < NROWS; r++)
        for (int q = 0; q < NPATHS; q++)
            b.c[r][q] -= a.c[r][q];
    b.shortcut -= a.shortcut;
    return b;
}

#define BIG (64 * 1024)
/* two send and two receive buffers of BIG * 2 * max(p, 4) bytes (patterns
 * 13 and 15: BIG / 2 ints from or to each of p ranks) */
static char *sa, *sb, *ra, *rb;
/* patterns 13 and 15: one counts and one displacements array, contents
 * changing; their calls of 128 KiB per rank so far, and those on kcoll */
static int *v_counts, *v_displs;
static long v_big[2], v_big_kcoll[2];

/* One call of pattern k on comm, round it, checked. */
static void one_call(int k, MPI_Comm comm, int it)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const int moved = (me & 1) && (it & 1); /* odd ranks: other buffers every other call */
    char *s = moved ? sb : sa, *r = moved ? rb : ra;
    int *si = (int *)s, *ri = (int *)r;
    double *sd = (double *)s, *rd = (double *)r;
    int bad = 0;
    switch (k) {
    case 0: /* Allreduce, one double */
        sd[0] = me + it;
        MPI_Allreduce(sd, rd, 1, MPI_DOUBLE, MPI_SUM, comm);
        bad = rd[0] != (double)p * it + p * (p - 1) / 2;
        break;
    case 1: /* Allreduce in place, two ints */
        ri[0] = me, ri[1] = it;
        MPI_Allreduce(MPI_IN_PLACE, ri, 2, MPI_INT, MPI_SUM, comm);
        bad = ri[0] != p * (p - 1) / 2 || ri[1] != p * it;
        break;
    case 2: /* Bcast 64 bytes from the last rank */
        for (int i = 0; i < 64; i++)
            r[i] = me == p - 1 ? (char)(it + i) : 0;
        MPI_Bcast(r, 64, MPI_BYTE, p - 1, comm);
        for (int i = 0; i < 64 && !bad; i++)
            bad = r[i] != (char)(it + i);
        break;
    case 3: /* Reduce one int to rank 0 */
        si[0] = me * it;
        ri[0] = -1;
        MPI_Reduce(si, ri, 1, MPI_INT, MPI_SUM, 0, comm);
        bad = me == 0 && ri[0] != it * p * (p - 1) / 2;
        break;
    case 4: /* Allgather 8 bytes */
    case 5: /* Alltoall 8 bytes */
        for (int q = 0; q < p; q++)
            for (int i = 0; i < 8; i++)
                s[q * 8 + i] = (char)(me * 31 + q * 7 + i + it);
        if (k == 4)
            MPI_Allgather(s, 8, MPI_BYTE, r, 8, MPI_BYTE, comm);
        else
            MPI_Alltoall(s, 8, MPI_BYTE, r, 8, MPI_BYTE, comm);
        for (int q = 0; q < p && !bad; q++)
            for (int i = 0; i < 8 && !bad; i++)
                bad = r[q * 8 + i] !=
                      (char)(k == 4 ? q * 31 + i + it : q * 31 + me * 7 + i + it);
        break;
    case 6: /* Gather one int to rank 0 */
        si[0] = me + it;
        MPI_Gather(si, 1, MPI_INT, ri, 1, MPI_INT, 0, comm);
        for (int q = 0; me == 0 && q < p && !bad; q++)
            bad = ri[q] != q + it;
        break;
    case 7: /* Scatter one int from the last rank */
        if (me == p - 1)
            for (int q = 0; q < p; q++)
                si[q] = q * 3 + it;
        MPI_Scatter(si, 1, MPI_INT, ri, 1, MPI_INT, p - 1, comm);
        bad = ri[0] != me * 3 + it;
        break;
    case 8:
        MPI_Barrier(comm);
        break;
    case 9: /* Reduce_scatter_block, one int each */
        for (int q = 0; q < p; q++)
            si[q] = q + me + it;
        MPI_Reduce_scatter_block(si, ri, 1, MPI_INT, MPI_SUM, comm);
        bad = ri[0] != p * (me + it) + p * (p - 1) / 2;
        break;
    case 11: /* Gather as 6, the non-roots' receive arguments (not significant there) changing */
        si[0] = me * 2 + it;
        MPI_Gather(si, 1, MPI_INT, ri, me == 0 ? 1 : 1 + (it & 3), me == 0 ? MPI_INT : MPI_BYTE,
                   0, comm);
        for (int q = 0; me == 0 && q < p && !bad; q++)
            bad = ri[q] != q * 2 + it;
        break;
    case 12: /* Reduce_scatter, one int each */
    case 13: /* Reduce_scatter, one int or 128 KiB each (every third call), one counts array */
    case 14: /* Allgatherv, one int each */
    case 15: /* Allgatherv as 13 in place (sendcount 0 whatever the counts say),
              * one counts and one displacements array */
    {
        int one[16], dis[16];
        if (p > 16)
            break;
        const int rs = k < 14, n = (k == 13 || k == 15) && it % 3 == 2 ? BIG / 2 : 1;
        int *cnt = k == 12 || k == 14 ? one : v_counts, *dsp = k == 14 ? dis : v_displs;
        const char *row = rs ? "MPI_Reduce_scatter" : "MPI_Allgatherv";
        for (int q = 0; q < p; q++)
            cnt[q] = n, dsp[q] = (p - 1 - q) * (BIG / 2); /* reverse order, the same every call */
        v_big[!rs] += n > 1;
        for (int i = 0; i < n * p; i++)
            si[i] = i + me + it;
        const uint64_t k0 = mt_calls(row, "kcoll:*");
        if (rs)
            MPI_Reduce_scatter(si, ri, cnt, MPI_INT, MPI_SUM, comm);
        else if (k == 14)
            MPI_Allgatherv(si, n, MPI_INT, ri, cnt, dsp, MPI_INT, comm);
        else {
            for (int i = 0; i < n; i++)
                ri[dsp[me] + i] = i + me + it;
            MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ri, cnt, dsp, MPI_INT, comm);
        }
        v_big_kcoll[!rs] += n > 1 && mt_calls(row, "kcoll:*") != k0;
        for (int i = 0; rs && i < n && !bad; i++)
            bad = ri[i] != p * (me * n + i + it) + p * (p - 1) / 2;
        for (int q = 0; !rs && q < p && !bad; q++)
            for (int i = 0; i < n && !bad; i++)
                bad = ri[dsp[q] + i] != i + q + it;
        break;
    }
    case 10: /* Allreduce of 512 KiB: kcoll's, among the host's */
        for (int i = 0; i < BIG * 2; i++)
            si[i] = i + me + it;
        MPI_Allreduce(si, ri, BIG * 2, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < BIG * 2 && !bad; i++)
            bad = ri[i] != p * (i + it) + p * (p - 1) / 2;
        break;
    }
    if (bad)
        mt_fail("pattern %d call %d: wrong result", k, it);
}
#define NPATTERNS 16

/* The mix of part 1 on a fresh duplicate of MPI_COMM_WORLD; the counts
 * it made (the shortcut's are added when the communicator is freed). */
static counts_t mix(const char *shortcut)
{
    MPI_Comm comm;
    kcoll_param_set("SHORTCUT", shortcut);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const counts_t before = counts_now();
    int it = 0;
    for (int k = 0; k < NPATTERNS; k++) /* runs of repeats */
        for (int i = 0; i < 12; i++)
            one_call(k, comm, it++);
    for (int i = 0; i < 60; i++) /* interleaved: 0 1 0 2 0 3 ... */
        one_call(i & 1 ? 1 + (i / 2) % (NPATTERNS - 1) : 0, comm, i < 30 ? 0 : it++);
    for (int k = NPATTERNS - 1; k >= 0; k--) /* runs again, backwards */
        for (int i = 0; i < 12; i++)
            one_call(k, comm, 7);
    MPI_Comm_free(&comm);
    return counts_since(before);
}

/* Does the first call of pattern 13 (v 0) or 15 (v 1) of 128 KiB per
 * rank on a fresh communicator run on kcoll? */
static int v_big_kcoll_first(int v)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const long k = v_big_kcoll[v];
    one_call(v ? 15 : 13, comm, 2);
    MPI_Comm_free(&comm);
    return v_big_kcoll[v] != k;
}

static void part1(void)
{
    kcoll_param_set("ADAPT", "0");
    /* the small calls the host's, whatever the model would say of them (at
     * 2 ranks it gives a one-int Reduce_scatter to kcoll), so that the
     * memo and the shortcut hold them; the 128 KiB ones the model's */
    kcoll_param_set("MIN_BYTES", "4096");
    static const char *const vname[2] = {"Reduce_scatter", "Allgatherv"};
    const int first_kcoll[2] = {v_big_kcoll_first(0), v_big_kcoll_first(1)};
    long big[2][2], on_kcoll[2][2];
    counts_t got[2];
    for (int i = 0; i < 2; i++) {
        long b0[2], k0[2];
        memcpy(b0, v_big, sizeof b0);
        memcpy(k0, v_big_kcoll, sizeof k0);
        got[i] = mix(i ? "1" : "0");
        for (int v = 0; v < 2; v++) {
            big[i][v] = v_big[v] - b0[v];
            on_kcoll[i][v] = v_big_kcoll[v] - k0[v];
            if (on_kcoll[i][v] != (first_kcoll[v] ? big[i][v] : 0))
                mt_fail("shortcut %d: %ld of %ld %s calls of 128 KiB per rank on kcoll, a fresh "
                        "communicator's first on %s",
                        i, on_kcoll[i][v], big[i][v], vname[v],
                        first_kcoll[v] ? "kcoll" : "the host");
        }
    }
    const counts_t off = got[0], on = got[1];
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int v = 0; v < 2 && me == 0; v++)
        printf("# part 1: %ld %s calls of 128 KiB per rank among the repeats, on %s\n", big[1][v],
               vname[v], first_kcoll[v] ? "kcoll" : "the host");
    for (int r = 0; r < NROWS; r++)
        for (int q = 0; q < NPATHS; q++)
            if (off.c[r][q] != on.c[r][q])
                mt_fail("%s %s: %llu calls without the shortcut, %llu with it", rows[r], paths[q],
                        (unsigned long long)off.c[r][q], (unsigned long long)on.c[r][q]);
    if (off.shortcut != 0)
        mt_fail("KCOLL_SHORTCUT=0 took %llu calls", (unsigned long long)off.shortcut);
    if (on.shortcut == 0)
        mt_fail("the shortcut took no call of the mix");
    kcoll_param_set("MIN_BYTES", "auto");
    kcoll_param_set("ADAPT", "1");
}

static void part2(void)
{
    MPI_Comm comm;
    char algos[512];
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    kcoll_param_set("ADAPT", "0");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int i = 0; i < 20; i++)
        one_call(0, comm, 5);
    uint64_t k0 = mt_calls("MPI_Allreduce", "kcoll:*");
    one_call(0, comm, 5);
    if (mt_calls("MPI_Allreduce", "kcoll:*") != k0) {
        printf("# part 2: the model runs the 8-byte Allreduce on kcoll here; skipped\n");
    } else if (kcoll_algorithms("MPI_Allreduce", p, algos, sizeof algos) > 0) {
        algos[strcspn(algos, ", ")] = '\0'; /* the first one */
        kcoll_param_set("ALLREDUCE_ALGO", algos);
        one_call(0, comm, 5);
        if (mt_calls("MPI_Allreduce", "kcoll:*") != k0 + 1)
            mt_fail("after KCOLL_ALLREDUCE_ALGO=%s the repeated call did not run on kcoll",
                    algos);
        kcoll_param_set("ALLREDUCE_ALGO", "auto");
        one_call(0, comm, 5);
        one_call(0, comm, 5);
        if (mt_calls("MPI_Allreduce", "kcoll:*") != k0 + 1)
            mt_fail("after KCOLL_ALLREDUCE_ALGO=auto the repeated calls did not go to the host");
    } else {
        mt_fail("no Allreduce algorithm listed for %d ranks", p);
    }
    MPI_Comm_free(&comm);
    kcoll_param_set("ADAPT", "1");
}

static void part3(void)
{
    MPI_Comm a, b;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    kcoll_param_set("ADAPT", "0");
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    for (int i = 0; i < 20; i++)
        one_call(0, a, 3);
    const MPI_Comm old = a;
    MPI_Comm_free(&a);
    MPI_Comm_split(MPI_COMM_WORLD, me, 0, &b);
    const uint64_t one = mt_calls("MPI_Allreduce", "mpi:one_rank");
    one_call(0, b, 3);
    if (mt_calls("MPI_Allreduce", "mpi:one_rank") != one + 1)
        mt_fail("the call on a one-rank communicator (%s handle) was not counted as one "
                "rank's",
                b == old ? "the freed one's" : "a new");
    if (me == 0)
        printf("# part 3: the one-rank communicator %s the freed one's handle\n",
               b == old ? "has" : "does not have");
    MPI_Comm_free(&b);
    kcoll_param_set("ADAPT", "1");
}

/* One Bcast of 4 elements of dt from rank 0 on comm, checked; 1 if it
 * ran on kcoll. */
static int bcast_dt(MPI_Comm comm, MPI_Datatype dt, int ints, int it)
{
    int me;
    MPI_Comm_rank(comm, &me);
    int *v = (int *)ra;
    for (int i = 0; i < 4 * ints; i++)
        v[i] = me == 0 ? i * 5 + it : -1;
    const uint64_t k = mt_calls("MPI_Bcast", "kcoll:*");
    MPI_Bcast(v, 4, dt, 0, comm);
    for (int i = 0; i < 4 * ints; i++)
        if (v[i] != i * 5 + it) {
            mt_fail("Bcast of 4 x %d ints, call %d: wrong result", ints, it);
            break;
        }
    return mt_calls("MPI_Bcast", "kcoll:*") != k;
}

static void part4(void)
{
    enum { LARGE = 32768 }; /* ints: 4 of them fill ra */
    MPI_Comm comm, fresh;
    MPI_Datatype small, large;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    kcoll_param_set("ADAPT", "0");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    MPI_Type_contiguous(2, MPI_INT, &small);
    MPI_Type_commit(&small);
    for (int i = 0; i < 20; i++)
        bcast_dt(comm, small, 2, i);
    const MPI_Datatype old = small;
    MPI_Type_free(&small);
    MPI_Type_contiguous(LARGE, MPI_INT, &large);
    MPI_Type_commit(&large);
    const int got = bcast_dt(comm, large, LARGE, 1), want = bcast_dt(fresh, large, LARGE, 2);
    if (got != want)
        mt_fail("a Bcast of 4 x 128 KiB ran on %s after repeats of 4 x 8 bytes (the type %s "
                "handle), on %s on a fresh communicator",
                got ? "kcoll" : "the host", large == old ? "with the freed one's" : "with a new",
                want ? "kcoll" : "the host");
    if (me == 0)
        printf("# part 4: the new datatype %s the freed one's handle\n",
               large == old ? "has" : "does not have");
    MPI_Type_free(&large);
    MPI_Comm_free(&fresh);
    MPI_Comm_free(&comm);
    kcoll_param_set("ADAPT", "1");
}

/* Part 5 with the shortcut on or off, on pattern k (0 or 11): the checks
 * closed. */
static uint64_t checks(const char *shortcut, int k)
{
    enum { N = 400 };
    MPI_Comm comm;
    int p, me;
    unsigned char path[N];
    kcoll_param_set("SHORTCUT", shortcut);
    kcoll_param_set("ADAPT_CALLS", "8");
    kcoll_param_set("ADAPT_RECHECK", "30");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const char *row = k ? "MPI_Gather" : "MPI_Allreduce";
    const uint64_t c0 = mt_calls(row, "adapt:checked");
    for (int i = 0; i < N; i++) {
        const uint64_t before = mt_calls(row, "kcoll:*");
        one_call(k, comm, i);
        path[i] = mt_calls(row, "kcoll:*") != before;
    }
    const uint64_t closed = mt_calls(row, "adapt:checked") - c0;
    unsigned char *all = me == 0 ? malloc((size_t)N * (size_t)p) : NULL;
    MPI_Gather(path, N, MPI_BYTE, all, N, MPI_BYTE, 0, comm);
    for (int q = 1; me == 0 && q < p; q++)
        for (int i = 0; i < N; i++)
            if (all[q * N + i] != all[i]) {
                mt_fail("%s, shortcut %s: call %d ran on %s on rank 0 and on %s on rank %d", row,
                        shortcut, i, all[i] ? "kcoll" : "the host",
                        all[q * N + i] ? "kcoll" : "the host", q);
                break;
            }
    free(all);
    MPI_Comm_free(&comm);
    kcoll_param_set("ADAPT_RECHECK", "100000");
    return closed;
}

static void part5(void)
{
    for (int k = 0; k < 2; k++) {
        const int pattern = k ? 11 : 0;
        const uint64_t off = checks("0", pattern), on = checks("1", pattern);
        if (off != on)
            mt_fail("pattern %d: %llu checks closed without the shortcut, %llu with it", pattern,
                    (unsigned long long)off, (unsigned long long)on);
        if (on < 3)
            mt_fail("pattern %d: only %llu checks closed in 400 calls with a check every 30",
                    pattern, (unsigned long long)on);
    }
}

static void part7(void)
{
    MPI_Comm comm;
    kcoll_param_set("DISABLE", "1");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const uint64_t d0 = mt_calls("MPI_Allreduce", "mpi:disabled");
    const uint64_t s0 = mt_calls("MPI_Allreduce", "shortcut");
    for (int i = 0; i < 30; i++)
        one_call(0, comm, 5);
    if (mt_calls("MPI_Allreduce", "mpi:disabled") - d0 != 30)
        mt_fail("30 Allreduces with kcoll disabled, %llu counted as disabled",
                (unsigned long long)(mt_calls("MPI_Allreduce", "mpi:disabled") - d0));
    kcoll_param_set("DISABLE", "0");
    one_call(0, comm, 5); /* decided again: not disabled */
    if (mt_calls("MPI_Allreduce", "mpi:disabled") - d0 != 30)
        mt_fail("the Allreduce after KCOLL_DISABLE=0 was counted as disabled");
    MPI_Comm_free(&comm);
    /* (the calls the shortcut took are counted by the time the call after
     * the change reached the call layer) */
    if (mt_calls("MPI_Allreduce", "shortcut") - s0 < 28)
        mt_fail("with kcoll disabled the shortcut took %llu of 29 repeats",
                (unsigned long long)(mt_calls("MPI_Allreduce", "shortcut") - s0));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const size_t len = (size_t)(p > 4 ? p : 4) * 2;
    sa = calloc(len, BIG), sb = calloc(len, BIG), ra = calloc(len, BIG), rb = calloc(len, BIG);
    v_counts = calloc((size_t)p, sizeof *v_counts);
    v_displs = calloc((size_t)p, sizeof *v_displs);
    void (*const parts[])(void) = {part1, part2, part3, part4, part5, part7};
    for (int i = 0; i < 6; i++) {
        const long failed = mt_failures();
        parts[i]();
        if (mt_failures() == failed)
            mt_pass();
    }
    free(sa), free(sb), free(ra), free(rb), free(v_counts), free(v_displs);
    const int rc = mt_finish("test_shortcut");
    MPI_Finalize();
    return rc;
}
