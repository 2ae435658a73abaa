/* kcoll-bench-dtype: collectives on a derived datatype, the host MPI
 * against kcoll in the same run.
 *
 * The datatype is a "column": rows blocks of `piece` bytes (doubles), one
 * every `stride` bytes, as a column (piece 8) or a block of columns of a
 * row-major matrix. For each piece size the message stays the same (4 MiB
 * of data by default), so what changes is how finely the data is cut.
 * MPI_Bcast moves one column; MPI_Alltoall one column per destination
 * (count 1 of the column type per block). Every iteration calls PMPI_*
 * (the host MPI) and then MPI_* (kcoll, when preloaded) on the same
 * buffers, each after a barrier; the table gives the median of each and
 * the speed-up, host / kcoll, as kcoll-bench does.
 *
 *   mpirun -np 2 -x LD_PRELOAD=.../libkcoll.so kcoll-bench-dtype [-b BYTES] [-i ITERS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    size_t bytes = 4u << 20;
    int iters = 30;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b"))
            bytes = (size_t)strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "-i"))
            iters = atoi(argv[i + 1]);
    }
    if (iters < 1)
        iters = 1;
    static const int pieces[] = {8, 64, 512, 4096, 32768};
    double *th = malloc(sizeof(double) * (size_t)iters), *tk = malloc(sizeof(double) * (size_t)iters);
    if (rank == 0) {
        printf("# kcoll-bench-dtype: %d processes, %zu bytes of data per column, median of %d\n",
               p, bytes, iters);
        printf("# %-14s %8s %10s %12s %12s %9s\n", "collective", "piece", "pieces", "host_us",
               "kcoll_us", "speedup");
    }
    for (int c = 0; c < 2; c++)
        for (size_t pi = 0; pi < sizeof pieces / sizeof pieces[0]; pi++) {
            const int piece = pieces[pi], rows = (int)(bytes / (size_t)piece);
            const int blen = piece / 8, stride = 2 * blen; /* half of the memory is the column */
            MPI_Datatype col;
            MPI_Type_vector(rows, blen, stride, MPI_DOUBLE, &col);
            MPI_Type_commit(&col);
            MPI_Aint lb, ext;
            MPI_Type_get_extent(col, &lb, &ext);
            const size_t nblocks = c ? (size_t)p : 1, span = (size_t)ext * nblocks;
            char *a = malloc(span), *b = malloc(span);
            memset(a, rank + 1, span);
            memset(b, 0, span);
            for (int it = 0; it < iters; it++) {
                double t0;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                if (c)
                    PMPI_Alltoall(a, 1, col, b, 1, col, MPI_COMM_WORLD);
                else
                    PMPI_Bcast(a, 1, col, 0, MPI_COMM_WORLD);
                th[it] = MPI_Wtime() - t0;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                if (c)
                    MPI_Alltoall(a, 1, col, b, 1, col, MPI_COMM_WORLD);
                else
                    MPI_Bcast(a, 1, col, 0, MPI_COMM_WORLD);
                tk[it] = MPI_Wtime() - t0;
            }
            /* the slowest rank's median decides */
            double mh = median(th, iters), mk = median(tk, iters), m[2] = {mh, mk}, g[2];
            MPI_Reduce(m, g, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("  %-14s %8d %10d %12.1f %12.1f %8.2fx\n", c ? "MPI_Alltoall" : "MPI_Bcast",
                       piece, rows, g[0] * 1e6, g[1] * 1e6, g[0] / g[1]);
            free(a);
            free(b);
            MPI_Type_free(&col);
        }
    free(th);
    free(tk);
    MPI_Finalize();
    return 0;
}
