/* Helpers shared by kcoll's MPI test programs (see mpitest.h). */
#include <stdarg.h>
#include <stdio.h>

#include "mpitest.h"

static long mt_passed, mt_failed;

void mt_shapes(MPI_Comm comms[MT_NSHAPES], const char *names[MT_NSHAPES])
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    comms[0] = MPI_COMM_WORLD;
    names[0] = "world";
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    names[1] = "dup";
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]);
    names[2] = "odd/even split";
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &comms[3]);
    names[3] = "reversed split";
}

void mt_free_shapes(MPI_Comm comms[MT_NSHAPES])
{
    for (int i = 1; i < MT_NSHAPES; i++)
        MPI_Comm_free(&comms[i]);
}

uint64_t mt_calls(const char *coll, const char *path)
{
    uint64_t calls = 0, bytes = 0;
    if (kcoll_stats_get(coll, path, &calls, &bytes))
        return 0;
    return calls;
}

void mt_fail(const char *fmt, ...)
{
    if (mt_failed++ < 20) {
        int rank;
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "world rank %d: FAIL: %s\n", rank, line);
    }
}

void mt_pass(void)
{
    mt_passed++;
}

int mt_finish(const char *name)
{
    long mine[2] = {mt_passed, mt_failed}, sum[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s (%d ranks): %ld passed, %ld failed\n", name, size, sum[0], sum[1]);
        fflush(stdout);
    }
    return sum[1] ? 1 : 0;
}
