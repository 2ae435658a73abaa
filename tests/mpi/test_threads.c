/* MPI_THREAD_MULTIPLE: two threads per process broadcast at the same time,
 * each on its own communicator, so two teams are set up concurrently and
 * their collectives interleave. Every result is compared with PMPI_Bcast on
 * the same communicator, and kcoll must have done every call. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define NTHREADS 2
#define ROUNDS 200

typedef struct {
    MPI_Comm comm;
    int id;
    long bad;
} job_t;

static void *worker(void *arg)
{
    job_t *job = arg;
    int p, rank;
    MPI_Comm_size(job->comm, &p);
    MPI_Comm_rank(job->comm, &rank);
    size_t max = (1 << 20) + 13;
    char *ref = malloc(max), *got = malloc(max);
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = (size_t)16384 << (r % 7);
        n += (size_t)r; /* odd sizes too */
        int root = (r + job->id) % p;
        for (size_t i = 0; i < n; i++)
            ref[i] = got[i] = rank == root ? (char)(i * 3 + (size_t)r + (size_t)job->id) : 0;
        PMPI_Bcast(ref, (int)n, MPI_BYTE, root, job->comm);
        MPI_Bcast(got, (int)n, MPI_BYTE, root, job->comm);
        job->bad += memcmp(ref, got, n) != 0;
    }
    free(ref);
    free(got);
    return NULL;
}

static uint64_t kcoll_calls(void)
{
    static const char *const paths[] = {"kcoll:direct_read", "kcoll:direct_write",
                                        "kcoll:knomial", "kcoll:scatter_allgather",
                                        "kcoll:split_rw"};
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        sum += mt_calls("MPI_Bcast", paths[i]);
    return sum;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("test_threads: the host MPI gives no MPI_THREAD_MULTIPLE; nothing to test\n"
                   "test_threads: 0 passed, 0 failed\n");
        MPI_Finalize();
        return 0;
    }
    job_t jobs[NTHREADS];
    pthread_t threads[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        jobs[t].id = t;
        jobs[t].bad = 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    uint64_t before = kcoll_calls();
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&threads[t], NULL, worker, &jobs[t]);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(threads[t], NULL);
    uint64_t done = kcoll_calls() - before;
    for (int t = 0; t < NTHREADS; t++) {
        if (jobs[t].bad)
            mt_fail("thread %d: %ld results differ from PMPI_Bcast", t, jobs[t].bad);
        else
            mt_pass();
        MPI_Comm_free(&jobs[t].comm);
    }
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1 && done != (uint64_t)NTHREADS * ROUNDS)
        mt_fail("kcoll did %llu of %d broadcasts", (unsigned long long)done, NTHREADS * ROUNDS);
    else
        mt_pass();
    int rc = mt_finish("test_threads");
    MPI_Finalize();
    return rc;
}
