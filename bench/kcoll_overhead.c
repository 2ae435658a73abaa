/* kcoll-overhead: what one call costs when nothing else does.
 *
 * kcoll-bench times each call alone (a barrier before it, cold buffers):
 * the honest figure for moving data. This program measures the other end,
 * the fixed cost of a call: the same collective called back to back on a
 * small, cache-hot buffer, n times in a row, with no barrier in between,
 * so the time per call is what the library spends deciding, describing,
 * agreeing and waiting, plus the copy of a few cache lines. kcoll
 * (MPI_<coll>) and the host (PMPI_<coll>) alternate within every
 * repetition; the best of the repetitions is printed per variant, since
 * noise only ever adds time. The 16 KiB MPI_Reduce and MPI_Allreduce (ints,
 * MPI_SUM) are sizes the built-in tuning hands to the host MPI under one
 * MPI or the other: there the kcoll column is the host's call through
 * kcoll's wrapper (KCOLL_STATS=1 says which path each took). So are the
 * 8-byte MPI_Gatherv and MPI_Alltoallv (8 bytes per rank), which decide
 * only after the ranks agree: what their host streak leaves of that
 * (docs/adapt.md).
 *
 * usage: kcoll-overhead [-n CALLS] [-r REPETITIONS]
 * prints one line per case: case, kcoll us/call, host us/call, host/kcoll.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    C_BARRIER,
    C_BCAST16K,
    C_BCAST64K,
    C_ALLREDUCE8,
    C_REDUCE16K,
    C_ALLREDUCE16K,
    C_GATHERV8,
    C_ALLTOALLV8,
    NCASES
};
static const char *case_name[NCASES] = {"MPI_Barrier",       "MPI_Bcast 16 KiB",
                                        "MPI_Bcast 64 KiB",  "MPI_Allreduce 8 B",
                                        "MPI_Reduce 16 KiB", "MPI_Allreduce 16 KiB",
                                        "MPI_Gatherv 8 B",   "MPI_Alltoallv 8 B"};

/* the v-variants' counts and displacements: 8 bytes per rank */
static int *vcounts, *vdispls;

static void one_call(int c, int host, char *buf, double *x)
{
    int *in = (int *)(void *)buf, *out = in + 4096; /* 16 KiB each, in buf's 64 KiB */
    switch (c) {
    case C_GATHERV8:
        (host ? PMPI_Gatherv : MPI_Gatherv)(in, 8, MPI_BYTE, out, vcounts, vdispls, MPI_BYTE, 0,
                                            MPI_COMM_WORLD);
        break;
    case C_ALLTOALLV8:
        (host ? PMPI_Alltoallv : MPI_Alltoallv)(in, vcounts, vdispls, MPI_BYTE, out, vcounts,
                                                vdispls, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case C_BARRIER:
        (host ? PMPI_Barrier : MPI_Barrier)(MPI_COMM_WORLD);
        break;
    case C_BCAST16K:
    case C_BCAST64K:
        (host ? PMPI_Bcast : MPI_Bcast)(buf, c == C_BCAST16K ? 16384 : 65536, MPI_BYTE, 0,
                                        MPI_COMM_WORLD);
        break;
    case C_REDUCE16K:
        (host ? PMPI_Reduce : MPI_Reduce)(in, out, 4096, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case C_ALLREDUCE16K:
        (host ? PMPI_Allreduce : MPI_Allreduce)(in, out, 4096, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    default:
        (host ? PMPI_Allreduce : MPI_Allreduce)(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM,
                                                MPI_COMM_WORLD);
        x[0] = 1.0; /* keeps the value finite over many calls */
        break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = 100000, reps = 7, opt;
    while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'r')
            reps = atoi(optarg);
        else {
            if (!rank)
                fprintf(stderr, "usage: kcoll-overhead [-n CALLS] [-r REPETITIONS]\n");
            MPI_Finalize();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (n < 8 || reps < 1) {
        if (!rank)
            fprintf(stderr, "kcoll-overhead: need -n >= 8 and -r >= 1\n");
        MPI_Finalize();
        return 2;
    }
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    vcounts = malloc((size_t)p * sizeof *vcounts);
    vdispls = malloc((size_t)p * sizeof *vdispls);
    if (!vcounts || !vdispls || 8 * p > 16384) {
        if (!rank)
            fprintf(stderr, "kcoll-overhead: at most 2048 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int q = 0; q < p; q++) {
        vcounts[q] = 8;
        vdispls[q] = 8 * q;
    }
    static int words[16384]; /* 64 KiB, int-aligned for the reductions */
    char *buf = (char *)words;
    double x[1] = {1.0};
    double best[NCASES][2];
    for (int c = 0; c < NCASES; c++)
        best[c][0] = best[c][1] = 1e30;
    for (int r = 0; r < reps; r++)
        for (int c = 0; c < NCASES; c++)
            for (int h = 0; h < 2; h++) {
                /* the larger broadcasts take longer per call: fewer calls */
                int calls = c == C_BARRIER || c == C_ALLREDUCE8 ? n : n / 8;
                PMPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                for (int i = 0; i < calls; i++)
                    one_call(c, h, buf, x);
                t = (MPI_Wtime() - t) / calls * 1e6;
                /* the slowest rank's time is the call's time */
                double tmax;
                PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (tmax < best[c][h])
                    best[c][h] = tmax;
            }
    if (!rank) {
        printf("# kcoll-overhead: %d ranks, %d calls back to back (broadcasts %d), best of %d, "
               "us per call\n",
               p, n, n / 8, reps);
        printf("# %-20s %10s %10s %10s\n", "case", "kcoll_us", "host_us", "host/kcoll");
        for (int c = 0; c < NCASES; c++)
            printf("  %-20s %10.3f %10.3f %9.2fx\n", case_name[c], best[c][0], best[c][1],
                   best[c][1] / best[c][0]);
    }
    free(vcounts);
    free(vdispls);
    MPI_Finalize();
    return 0;
}
