/* Error and fallback paths:
 *  - invalid arguments (bad root, negative count, MPI_DATATYPE_NULL) reach
 *    the host MPI, which reports the same error class as PMPI_Bcast does;
 *  - an invalid forced algorithm warns and falls back, still correct;
 *  - KCOLL_DISABLE at run time falls back, still correct;
 *  - an inter-communicator falls back, still correct;
 *  - each of these is counted under its reason in the statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define BYTES (256 << 10)

static int err_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static void same_error(const char *what, int rc_host, int rc_kcoll)
{
    if (rc_host == MPI_SUCCESS || err_class(rc_host) != err_class(rc_kcoll))
        mt_fail("%s: host error class %d, through kcoll %d", what, err_class(rc_host),
                err_class(rc_kcoll));
    else
        mt_pass();
}

/* A correct broadcast from root 0 that must take the path `path`. */
static void bcast_via(const char *what, MPI_Comm comm, const char *path)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    char *ref = malloc(BYTES), *got = malloc(BYTES);
    for (int i = 0; i < BYTES; i++)
        ref[i] = got[i] = rank == 0 ? (char)(i * 13) : 0;
    uint64_t before = mt_calls("MPI_Bcast", path);
    PMPI_Bcast(ref, BYTES, MPI_BYTE, 0, comm);
    MPI_Bcast(got, BYTES, MPI_BYTE, 0, comm);
    if (memcmp(ref, got, BYTES))
        mt_fail("%s: result differs from PMPI_Bcast", what);
    else if (mt_calls("MPI_Bcast", path) != before + 1)
        mt_fail("%s: not counted as %s", what, path);
    else
        mt_pass();
    free(ref);
    free(got);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *buf = calloc(1, BYTES);

    uint64_t inv0 = mt_calls("MPI_Bcast", "mpi:invalid_args");
    same_error("root out of range", PMPI_Bcast(buf, BYTES, MPI_BYTE, size + 3, MPI_COMM_WORLD),
               MPI_Bcast(buf, BYTES, MPI_BYTE, size + 3, MPI_COMM_WORLD));
    same_error("negative root", PMPI_Bcast(buf, BYTES, MPI_BYTE, -7, MPI_COMM_WORLD),
               MPI_Bcast(buf, BYTES, MPI_BYTE, -7, MPI_COMM_WORLD));
    same_error("negative count", PMPI_Bcast(buf, -1, MPI_BYTE, 0, MPI_COMM_WORLD),
               MPI_Bcast(buf, -1, MPI_BYTE, 0, MPI_COMM_WORLD));
    same_error("null datatype", PMPI_Bcast(buf, 4, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD),
               MPI_Bcast(buf, 4, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD));
    if (mt_calls("MPI_Bcast", "mpi:invalid_args") != inv0 + 4)
        mt_fail("invalid calls not counted as mpi:invalid_args");
    else
        mt_pass();

    if (size > 1) {
        kcoll_param_set("BCAST_ALGO", "direct_read"); /* a path to look for, whatever auto picks */
        bcast_via("valid call", MPI_COMM_WORLD, "kcoll:direct_read");
        kcoll_param_set("BCAST_ALGO", "knomial:k=1");
        bcast_via("invalid forced algorithm", MPI_COMM_WORLD, "mpi:bad_algo");
        kcoll_param_set("BCAST_ALGO", "no_such_algorithm");
        bcast_via("unknown forced algorithm", MPI_COMM_WORLD, "mpi:bad_algo");
        kcoll_param_set("BCAST_ALGO", "auto");
        kcoll_param_set("DISABLE", "1");
        bcast_via("disabled", MPI_COMM_WORLD, "mpi:disabled");
        kcoll_param_set("DISABLE", "0");
        kcoll_param_set("BCAST_ALGO", "direct_read");
        bcast_via("enabled again", MPI_COMM_WORLD, "kcoll:direct_read");
        kcoll_param_set("BCAST_ALGO", "auto");

        /* inter-communicator between the even and the odd ranks */
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 99, &inter);
        char *ref = malloc(BYTES), *got = malloc(BYTES);
        int lrank;
        MPI_Comm_rank(half, &lrank);
        int root = rank % 2 == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        for (int i = 0; i < BYTES; i++)
            ref[i] = got[i] = root == MPI_ROOT ? (char)(i * 3) : 0;
        uint64_t before = mt_calls("MPI_Bcast", "mpi:intercomm");
        PMPI_Bcast(ref, BYTES, MPI_BYTE, root, inter);
        MPI_Bcast(got, BYTES, MPI_BYTE, root, inter);
        if (memcmp(ref, got, BYTES) || mt_calls("MPI_Bcast", "mpi:intercomm") != before + 1)
            mt_fail("inter-communicator: wrong result or not counted as mpi:intercomm");
        else
            mt_pass();
        free(ref);
        free(got);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    free(buf);
    int rc = mt_finish("test_errors");
    MPI_Finalize();
    return rc;
}
