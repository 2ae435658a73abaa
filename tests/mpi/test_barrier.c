/* MPI_Barrier through kcoll: nobody may leave before everybody entered.
 *
 * Every communicator shape gets a counter in a shared-memory window
 * (MPI_Win_allocate_shared). In round k every rank adds 1 to it, then
 * calls MPI_Barrier, then reads it: it must be at least p*k, i.e. every
 * rank's increment of this round (made before that rank entered) must be
 * visible to every rank after it left. One rank per round, a different
 * one each time, enters late (it sleeps first), so a barrier that let
 * ranks through early would be caught reading too small a count. The
 * same is checked with each algorithm forced (hier: the tree of the
 * topology levels, flat without them; KCOLL_TOPO_SYNTHETIC gives it
 * levels, see tests/CMakeLists.txt), with an invalid forced
 * algorithm (host MPI, counted as mpi:bad_algo) and, as a control, with
 * PMPI_Barrier. The statistics must show which path each call took. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpitest.h"

#define ROUNDS 30
/* -q (MPICH above 3 ranks: its own barrier busy-polls, milliseconds per
 * call when oversubscribed): fewer rounds, two communicator shapes */
static int rounds = ROUNDS;

static const char *const algos[] = {"auto", "dissemination", "hier", "dissemination:k=3"};
#define NALGOS (int)(sizeof algos / sizeof algos[0])

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* the paths counted below are the cost model's (auto: kcoll's own
     * barrier); the checks by measurement that may hand them to the host
     * MPI are test_adapt's */
    kcoll_param_set("ADAPT", "0");
    if (argc > 1 && !strcmp(argv[1], "-q"))
        rounds = 8;
    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);

    for (int shape = 0; shape < MT_NSHAPES; shape++) {
        if (rounds < ROUNDS && (shape == 1 || shape == 2))
            continue;
        MPI_Comm comm = comms[shape];
        int p, rank;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &rank);
        long *counter;
        MPI_Win win;
        MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long),
                                MPI_INFO_NULL, comm, &counter, &win);
        MPI_Aint wsize;
        int disp;
        MPI_Win_shared_query(win, 0, &wsize, &disp, &counter);
        if (rank == 0)
            __atomic_store_n(counter, 0, __ATOMIC_SEQ_CST);
        PMPI_Barrier(comm);
        long expected = 0;

        for (int ai = 0; ai <= NALGOS; ai++) { /* ai == NALGOS: PMPI_Barrier */
            const int host = ai == NALGOS;
            kcoll_param_set("BARRIER_ALGO", host ? "auto" : algos[ai]);
            const int bad = !host && strchr(algos[ai], ':') != NULL;
            int failed = 0;
            uint64_t before_k = mt_calls("MPI_Barrier", "kcoll:dissemination") +
                                mt_calls("MPI_Barrier", "kcoll:hier");
            uint64_t before_bad = mt_calls("MPI_Barrier", "mpi:bad_algo");
            uint64_t before_model = mt_calls("MPI_Barrier", "mpi:below_min_bytes");
            for (int k = 1; k <= rounds; k++) {
                if (k % p == rank)
                    nap_ms(2);
                /* seq_cst: the increment is ordered before this rank's barrier */
                __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
                expected += p;
                int rc = host ? PMPI_Barrier(comm) : MPI_Barrier(comm);
                /* acquire: pairs with the increments the barrier ordered before it */
                long seen = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
                if (rc != MPI_SUCCESS || seen < expected) {
                    if (!failed)
                        mt_fail("%s, %s: round %d: rank %d left the barrier seeing %ld of %ld "
                                "entries (rc %d)",
                                names[shape], host ? "PMPI_Barrier" : algos[ai], k, rank, seen,
                                expected, rc);
                    failed = 1;
                }
            }
            uint64_t after_k = mt_calls("MPI_Barrier", "kcoll:dissemination") +
                               mt_calls("MPI_Barrier", "kcoll:hier");
            uint64_t after_bad = mt_calls("MPI_Barrier", "mpi:bad_algo");
            uint64_t want_k = p > 1 && !host && !bad ? (uint64_t)rounds : 0;
            /* auto: the model may hand every barrier to the host instead
             * (more ranks than cores: waiters give their cores away, and
             * the host's barrier is then cheaper), but all of them alike */
            if (ai == 0 && p > 1 && after_k == before_k &&
                mt_calls("MPI_Barrier", "mpi:below_min_bytes") - before_model == (uint64_t)rounds)
                want_k = 0;
            if (after_k - before_k != want_k) {
                mt_fail("%s, %s: %llu barriers through kcoll, expected %llu", names[shape],
                        host ? "PMPI_Barrier" : algos[ai],
                        (unsigned long long)(after_k - before_k), (unsigned long long)want_k);
                failed = 1;
            }
            if (p > 1 && bad && after_bad - before_bad != (uint64_t)rounds) {
                mt_fail("%s, %s: invalid algorithm not counted as mpi:bad_algo", names[shape],
                        algos[ai]);
                failed = 1;
            }
            if (!failed)
                mt_pass();
            /* nobody starts the next series (and its increments) before all checked */
            PMPI_Barrier(comm);
        }
        MPI_Win_free(&win);
    }
    kcoll_param_set("BARRIER_ALGO", "auto");
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1 && mt_calls("MPI_Barrier", "mpi:one_rank") == 0)
        mt_fail("no call counted as mpi:one_rank");
    mt_free_shapes(comms);
    int rc = mt_finish("test_barrier");
    MPI_Finalize();
    return rc;
}
