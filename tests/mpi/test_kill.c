/* A rank is killed with SIGKILL in the middle of a job that uses kcoll.
 * The job must end (not hang) and, checked by run_kill.sh, leave nothing
 * in /dev/shm. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define BYTES (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(1, BYTES);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Bcast(buf, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD); /* teams exist now */
    MPI_Bcast(buf, BYTES, MPI_BYTE, 0, c);
    if (rank == 1)
        raise(SIGKILL);
    /* rank 0 now waits for rank 1 in kcoll's protocol: it must notice */
    for (int i = 0; i < 1000; i++)
        MPI_Bcast(buf, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(buf);
    MPI_Finalize();
    return 0;
}
