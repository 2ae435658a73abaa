/* A small MPI program for the install test (run_install.sh), built two
 * ways: against the installed kcoll through pkg-config (-DKCOLL_LINKED:
 * it calls kcoll.h's functions directly), and plain, getting kcoll from
 * kcoll-run's LD_PRELOAD (it finds them with dlsym). Either way its
 * MPI_Bcast and MPI_Allreduce must give the values computed here and be
 * counted on kcoll's paths in this process's statistics; the run needs
 * KCOLL_MIN_BYTES=0 so that the size does not decide. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcoll.h"

#define N 100003

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, fail = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef KCOLL_LINKED
    __typeof__(kcoll_stats_get) *stats_get = kcoll_stats_get;
    const char *version = kcoll_version();
#else
    __typeof__(kcoll_stats_get) *stats_get =
        (__typeof__(kcoll_stats_get) *)dlsym(RTLD_DEFAULT, "kcoll_stats_get");
    __typeof__(kcoll_version) *version_get =
        (__typeof__(kcoll_version) *)dlsym(RTLD_DEFAULT, "kcoll_version");
    const char *version = version_get ? version_get() : NULL;
#endif
    if (!stats_get || !version || strcmp(version, KCOLL_VERSION)) {
        fprintf(stderr, "rank %d: kcoll %s is not loaded or not the header's %s\n", rank,
                version ? version : "(none)", KCOLL_VERSION);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    int *buf = malloc(N * sizeof *buf), *sum = malloc(N * sizeof *sum);
    for (int i = 0; i < N; i++)
        buf[i] = rank == 1 ? i * 3 - 7 : 0;
    MPI_Bcast(buf, N, MPI_INT, 1, MPI_COMM_WORLD);
    for (int i = 0; i < N && !fail; i++)
        if (buf[i] != i * 3 - 7) {
            fprintf(stderr, "rank %d: MPI_Bcast: element %d is %d, expected %d\n", rank, i,
                    buf[i], i * 3 - 7);
            fail = 1;
        }
    for (int i = 0; i < N; i++)
        buf[i] = i % 1000 + rank;
    MPI_Allreduce(buf, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N && !fail; i++)
        if (sum[i] != size * (i % 1000) + size * (size - 1) / 2) {
            fprintf(stderr, "rank %d: MPI_Allreduce: element %d is %d\n", rank, i, sum[i]);
            fail = 1;
        }

    static const char *const colls[] = {"MPI_Bcast", "MPI_Allreduce"};
    for (int k = 0; k < 2; k++) {
        uint64_t calls = 0, bytes = 0, host = 0;
        if (stats_get(colls[k], "kcoll:*", &calls, &bytes) || calls != 1 ||
            bytes != N * sizeof(int) || stats_get(colls[k], "mpi:*", &host, &bytes) || host) {
            fprintf(stderr, "rank %d: %s: %llu kcoll calls and %llu host MPI calls, expected 1 and 0\n",
                    rank, colls[k], (unsigned long long)calls, (unsigned long long)host);
            fail = 1;
        }
    }
    int any;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hello_kcoll: kcoll %s, %d ranks: %s\n", version, size, any ? "FAILED" : "passed");
    free(buf);
    free(sum);
    MPI_Finalize();
    return any;
}
