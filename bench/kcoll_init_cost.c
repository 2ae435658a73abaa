/* kcoll-init-cost: what MPI_Init costs, as a program sees it.
 *
 * A program of one MPI_Init (and MPI_Finalize). Each rank reads a
 * monotonic clock right before MPI_Init and right after it; the time of
 * the slowest rank is the job's (every rank waits for it at its first
 * collective). Rank 0 prints it in milliseconds, one number on a line,
 * so a script can run the program many times alternating the host MPI
 * alone (no LD_PRELOAD) and with kcoll preloaded, with its cache folder
 * warm or empty (scripts/init_cost.sh). It is a plain MPI program linked
 * against the host MPI only, and it reduces with PMPI_Reduce, so kcoll
 * adds nothing to what it measures but its own MPI_Init.
 *
 * A host MPI sets much of itself up lazily, at its first collective on a
 * communicator, where kcoll's start-up makes its first host calls inside
 * MPI_Init (the node map, the tuning's broadcast, the world team's
 * exchange): part of what kcoll adds to MPI_Init a program without it
 * pays a little later. So the program also times MPI_Init followed by
 * one MPI_Barrier on MPI_COMM_WORLD (kcoll's, when preloaded), the
 * slowest rank's time from before MPI_Init to the barrier's return.
 *
 * usage: kcoll-init-cost
 * prints: init_ms <MPI_Init, ms> first_ms <MPI_Init and a first barrier, ms>
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    const double t0 = now_ms();
    MPI_Init(&argc, &argv);
    double mine[2] = {now_ms() - t0, 0}, slowest[2] = {0, 0};
    MPI_Barrier(MPI_COMM_WORLD);
    mine[1] = now_ms() - t0;
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("init_ms %.3f first_ms %.3f\n", slowest[0], slowest[1]);
    MPI_Finalize();
    return 0;
}
