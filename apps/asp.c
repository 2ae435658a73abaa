/* asp: all-pairs shortest paths with Floyd-Warshall, the application of
 * paper 000 (000_6e144b160859ba8b.txt, section VI.E: "the main MPI
 * collective operation used in this application is MPI_Bcast").
 *
 * The n x n matrix of 32-bit distances is distributed by blocks of rows
 * (rank r holds rows lo..hi-1, the first n % p ranks one row more). Step
 * k of n: the owner of row k broadcasts it (n ints) with MPI_Bcast, and
 * every rank relaxes its rows through vertex k:
 *     d[i][j] = min(d[i][j], d[i][k] + d[k][j]).
 * Row k itself does not change in step k (d[k][k] = 0), so the owner
 * broadcasts straight from its matrix. The computation is n^3 / p
 * additions per rank, the communication n broadcasts of 4n bytes: at 2
 * ranks the broadcasts are a small share of the time (docs/applications.md
 * says how much).
 *
 * The graph: an edge i -> j (i != j) with probability 3/10, of weight
 * 1..1000, both from a hash of (seed, i, j); no edge is INF = 2^29, so that
 * INF + INF does not overflow. Checked (--check, and by default for
 * n <= 1024): rank 0 gathers the result and compares every entry with a
 * sequential Floyd-Warshall of the same graph. Always printed: a checksum
 * (the sum of all distances), which must be the same with and without
 * kcoll (scripts/apps.sh compares it between runs).
 *
 * usage: asp [-n N] [-s SEED] [--check | --no-check]
 * prints one line: RESULT app=asp size=n<N> ranks=<p> time=<s> coll=<s>
 *   share=<%> checksum=<hex> check=<passed|FAILED|skipped> kcoll_calls=<n|none>
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define INF (1 << 29)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int32_t edge(uint64_t seed, int i, int j, int n)
{
    if (i == j)
        return 0;
    uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * (uint64_t)n + (uint64_t)j);
    return h % 10 < 3 ? (int32_t)(1 + (h >> 8) % 1000) : INF;
}

/* First row of rank r. */
static int first_row(int r, int n, int p)
{
    return r * (n / p) + (r < n % p ? r : n % p);
}

/* Relax rows [0, rows) of d (row length n) through a row rk of vertex k. */
static void relax(int32_t *d, int rows, int n, int k, const int32_t *rk)
{
    for (int i = 0; i < rows; i++) {
        int32_t *di = d + (size_t)i * (size_t)n;
        const int32_t dik = di[k];
        if (dik >= INF)
            continue;
        for (int j = 0; j < n; j++) {
            int32_t v = dik + rk[j];
            di[j] = v < di[j] ? v : di[j];
        }
    }
}

int main(int argc, char **argv)
{
    int n = 2048, check = -1;
    uint64_t seed = 1;
    MPI_Init(&argc, &argv);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc)
            n = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-s") && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 0);
        else if (!strcmp(argv[a], "--check"))
            check = 1;
        else if (!strcmp(argv[a], "--no-check"))
            check = 0;
        else {
            fprintf(stderr, "usage: asp [-n N] [-s SEED] [--check | --no-check]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (check < 0)
        check = n <= 1024;
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (n < p) {
        if (!rank)
            fprintf(stderr, "asp: n (%d) must be at least the number of ranks (%d)\n", n, p);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int lo = first_row(rank, n, p), rows = first_row(rank + 1, n, p) - lo;
    int32_t *d = malloc((size_t)rows * (size_t)n * sizeof *d);
    int32_t *rowk = malloc((size_t)n * sizeof *rowk);
    if (!d || !rowk) {
        fprintf(stderr, "asp: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < n; j++)
            d[(size_t)i * (size_t)n + (size_t)j] = edge(seed, lo + i, j, n);

    double coll = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int k = 0, owner = 0; k < n; k++) {
        while (owner + 1 < p && first_row(owner + 1, n, p) <= k)
            owner++;
        int32_t *rk = owner == rank ? d + (size_t)(k - lo) * (size_t)n : rowk;
        const double c0 = MPI_Wtime();
        MPI_Bcast(rk, n, MPI_INT, owner, MPI_COMM_WORLD);
        coll += MPI_Wtime() - c0;
        relax(d, rows, n, k, rk);
    }
    const double total = MPI_Wtime() - t0;
    const long long kc = app_kcoll_calls("MPI_Bcast");
    const app_times_t tm = app_reduce_times(total, coll, MPI_COMM_WORLD);

    uint64_t sum = 0, all = 0;
    for (size_t x = 0; x < (size_t)rows * (size_t)n; x++)
        sum += (uint64_t)d[x];
    MPI_Reduce(&sum, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

    const char *verdict = "skipped";
    if (check) {
        int32_t *full = NULL, *ref = NULL;
        int *counts = NULL, *displs = NULL;
        if (rank == 0) {
            full = malloc((size_t)n * (size_t)n * sizeof *full);
            ref = malloc((size_t)n * (size_t)n * sizeof *ref);
            counts = malloc((size_t)p * sizeof *counts);
            displs = malloc((size_t)p * sizeof *displs);
            if (!full || !ref || !counts || !displs) {
                fprintf(stderr, "asp: out of memory for the check\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            for (int r = 0; r < p; r++) {
                displs[r] = first_row(r, n, p) * n;
                counts[r] = (first_row(r + 1, n, p) - first_row(r, n, p)) * n;
            }
        }
        MPI_Gatherv(d, rows * n, MPI_INT, full, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    ref[(size_t)i * (size_t)n + (size_t)j] = edge(seed, i, j, n);
            for (int k = 0; k < n; k++) {
                memcpy(rowk, ref + (size_t)k * (size_t)n, (size_t)n * sizeof *rowk);
                relax(ref, n, n, k, rowk);
            }
            verdict = memcmp(full, ref, (size_t)n * (size_t)n * sizeof *ref) ? "FAILED" : "passed";
        }
        free(full);
        free(ref);
        free(counts);
        free(displs);
    }
    if (rank == 0) {
        char calls[32] = "none";
        if (kc >= 0)
            snprintf(calls, sizeof calls, "%lld", kc);
        printf("RESULT app=asp size=n%d ranks=%d time=%.6f coll=%.6f share=%.2f checksum=%016llx "
               "check=%s kcoll_calls=%s\n",
               n, p, tm.total, tm.coll, 100.0 * tm.coll / tm.total, (unsigned long long)all,
               verdict, calls);
        fflush(stdout);
    }
    free(d);
    free(rowk);
    MPI_Finalize();
    return strcmp(verdict, "FAILED") == 0;
}
