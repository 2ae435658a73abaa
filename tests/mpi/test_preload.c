/* A plain MPI program, not linked with kcoll, run with
 * LD_PRELOAD=libkcoll.so (run_preload.sh): its MPI_Bcast must be kcoll's
 * (the statistics found with dlsym say so) and give PMPI_Bcast's result. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES ((1 << 20) + 5)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, fail = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int (*stats_get)(const char *, const char *, uint64_t *, uint64_t *) =
        (int (*)(const char *, const char *, uint64_t *, uint64_t *))dlsym(RTLD_DEFAULT,
                                                                             "kcoll_stats_get");
    if (!stats_get) {
        fprintf(stderr, "rank %d: kcoll is not loaded (no kcoll_stats_get)\n", rank);
        fail = 1;
    }
    char *ref = malloc(BYTES), *got = malloc(BYTES);
    for (int i = 0; i < BYTES; i++)
        ref[i] = got[i] = rank == 0 ? (char)(i * 11) : 0;
    PMPI_Bcast(ref, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(got, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (memcmp(ref, got, BYTES)) {
        fprintf(stderr, "rank %d: result differs from PMPI_Bcast\n", rank);
        fail = 1;
    }
    uint64_t calls = 0, bytes = 0;
    if (stats_get && (stats_get("MPI_Bcast", "kcoll:split_rw", &calls, &bytes) || calls != 1 ||
                      bytes != BYTES)) {
        fprintf(stderr, "rank %d: kcoll:split_rw shows %llu calls, %llu bytes\n", rank,
                (unsigned long long)calls, (unsigned long long)bytes);
        fail = 1;
    }
    int any;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_preload: %d passed, %d failed\n", any ? 0 : 1, any ? 1 : 0);
    free(ref);
    free(got);
    MPI_Finalize();
    return any;
}
