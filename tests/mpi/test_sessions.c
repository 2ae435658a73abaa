/* MPI-4 sessions (where the MPI declares them: Open MPI 5, MPICH 4+).
 *
 * With MPI_Init (the world model, which starts kcoll): a communicator made
 * with MPI_Comm_create_from_group from a session's "mpi://WORLD" process
 * set gets a team, so its blocking and non-blocking collectives run on
 * kcoll's paths, with the host's results; a second one from a group of
 * half the ranks too; both freed before the session is finalized.
 *
 * --sessions-only: a program that never calls MPI_Init (kcoll, which
 * starts there, stays idle): the same collectives through the host MPI,
 * right, and nothing of kcoll's in the way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#ifdef KCOLL_HAVE_SESSIONS

#define N (256 * 1024) /* ints: 1 MiB, well above the host's crossover */

static int fails, passes;

static void check(int ok, const char *what, int rank)
{
    if (ok) {
        passes++;
        return;
    }
    fails++;
    fprintf(stderr, "test_sessions: rank %d: FAIL: %s\n", rank, what);
}

/* Allreduce and Ibcast on comm against the host's own calls; kcoll's
 * statistics must grow where kcoll runs (expect_kcoll). */
static void collectives_on(MPI_Comm comm, const char *name, int expect_kcoll)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    int *s = malloc(sizeof(int) * N), *r = malloc(sizeof(int) * N), *ref = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++)
        s[i] = me * 7 + i;
    const uint64_t a0 = expect_kcoll ? mt_calls("MPI_Allreduce", "kcoll:partitioned") +
                                           mt_calls("MPI_Allreduce", "kcoll:reduce_bcast")
                                     : 0;
    PMPI_Allreduce(s, ref, N, MPI_INT, MPI_SUM, comm);
    MPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, comm);
    char what[160];
    snprintf(what, sizeof what, "MPI_Allreduce on %s differs from the host's", name);
    check(!memcmp(r, ref, sizeof(int) * N), what, me);
    if (expect_kcoll && p > 1) {
        const uint64_t a1 = mt_calls("MPI_Allreduce", "kcoll:partitioned") +
                            mt_calls("MPI_Allreduce", "kcoll:reduce_bcast");
        snprintf(what, sizeof what, "MPI_Allreduce on %s did not run on kcoll's path", name);
        check(a1 == a0 + 1, what, me);
    }
    MPI_Request q;
    for (int i = 0; i < N; i++)
        r[i] = me == 0 ? ref[i] : -1;
    MPI_Ibcast(r, N, MPI_INT, 0, comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "MPI_Ibcast on %s differs from the root's data", name);
    check(!memcmp(r, ref, sizeof(int) * N), what, me);
    free(s);
    free(r);
    free(ref);
}

static void from_session(int expect_kcoll)
{
    MPI_Session session;
    MPI_Group world, half;
    MPI_Comm all, part;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
    MPI_Comm_create_from_group(world, "kcoll.test.all", MPI_INFO_NULL, MPI_ERRORS_RETURN, &all);
    collectives_on(all, "a communicator from the session's mpi://WORLD", expect_kcoll);
    int p, me;
    MPI_Comm_size(all, &p);
    MPI_Comm_rank(all, &me);
    int range[1][3] = {{0, (p - 1) / 2 * 2, 2}}; /* the even ranks */
    MPI_Group_range_incl(world, 1, range, &half);
    if (me % 2 == 0) {
        MPI_Comm_create_from_group(half, "kcoll.test.even", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                   &part);
        collectives_on(part, "a communicator of the even ranks, from a group", expect_kcoll);
        MPI_Comm_free(&part);
    }
    MPI_Comm_free(&all);
    MPI_Group_free(&half);
    MPI_Group_free(&world);
    MPI_Session_finalize(&session);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--sessions-only")) {
        from_session(0);
        printf("test_sessions (sessions only): %d passed, %d failed\n", passes, fails);
        return fails != 0;
    }
    MPI_Init(&argc, &argv);
    from_session(1);
    if (fails)
        mt_fail("%d checks failed (see above)", fails);
    else
        mt_pass();
    int rc = mt_finish("test_sessions");
    MPI_Finalize();
    return rc;
}

#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0)
        printf("test_sessions: this MPI declares no sessions (MPI_Comm_create_from_group): "
               "nothing to test\n");
    MPI_Finalize();
    (void)argc;
    (void)argv;
    return 0;
}
#endif
