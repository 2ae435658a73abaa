/* MPI_Bcast: decide whether kcoll can do the call, and do it.
 *
 * The decision uses only what every rank of the call knows alike (kcoll
 * enabled, communicator, root, message size in bytes, which MPI requires to
 * match, parameters), plus the datatype's layout, so all ranks take the same
 * path: a rank never runs kcoll's protocol while another calls PMPI_Bcast.
 * (MPI allows ranks to describe the same bytes with differently laid-out
 * datatypes; kcoll assumes all ranks pass contiguous ones or none does, see
 * README "Limitations".) Invalid arguments go to PMPI_Bcast, so the user
 * sees the host MPI's own error.
 */
#include <stdio.h>

#include "core/params.h"
#include "core/stats.h"
#include "core/team_mpi.h"
#include "pmpi/pmpi.h"
#include "sched/exec.h"

KCOLL_PUBLIC int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_BCAST;
    kcoll_reason_t why;
    size_t bytes = 0;
    int p, rank, inter, tsize;
    MPI_Aint lb;

    if (!kcoll_ready()) {
        why = KCOLL_R_DISABLED;
        goto host;
    }
    why = KCOLL_R_INVALID;
    if (comm == MPI_COMM_NULL || count < 0 || datatype == MPI_DATATYPE_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        PMPI_Type_size(datatype, &tsize) != MPI_SUCCESS)
        goto host;
    bytes = (size_t)count * (size_t)tsize;
    if (inter) {
        why = KCOLL_R_INTERCOMM;
        goto host;
    }
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    if (root < 0 || root >= p) {
        bytes = 0;
        goto host;
    }
    if (kcoll_param_int(KCOLL_P_DISABLE)) {
        why = KCOLL_R_DISABLED;
        goto host;
    }
    if (p == 1) {
        why = KCOLL_R_ONE_RANK;
        goto host;
    }
    if (bytes < (size_t)kcoll_param_int(KCOLL_P_MIN_BYTES)) {
        why = KCOLL_R_SMALL;
        goto host;
    }
    if (!kcoll_dtype_contig(datatype, count, &lb)) {
        why = KCOLL_R_NONCONTIG;
        goto host;
    }
    const kcoll_algo_t *algo;
    int param;
    if (kcoll_algo_forced(coll, kcoll_param_str(KCOLL_P_BCAST_ALGO), &algo, &param)) {
        why = KCOLL_R_BAD_ALGO;
        goto host;
    }
    kcoll_team_t *team = kcoll_team_get(comm, &why);
    if (!team)
        goto host;
    if (!algo)
        algo = kcoll_bcast_select(p, bytes, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .root = root, .bytes = bytes,
                         .k = param};
    kcoll_sched_reset(&team->sched);
    if (algo->build(&args, &team->sched) != KCOLL_OK)
        return kcoll_fail(comm, coll, "building the schedule failed (out of memory?)");
    if (kcoll_param_int(KCOLL_P_TRACE)) {
        fprintf(stderr, "kcoll: trace: MPI_Bcast %s k=%d, %zu bytes, root %d, collective %llu\n",
                algo->name, param, bytes, root, (unsigned long long)team->seq + 1);
        kcoll_sched_print(&team->sched, rank, stderr);
    }

    void *bufs[KCOLL_NBUF] = {NULL, (char *)buffer + lb, NULL};
    size_t lens[KCOLL_NBUF] = {0, bytes, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, team, &team->sched, bufs, lens, ++team->seq);
    if (kcoll_exec_run(&x) != KCOLL_OK)
        return kcoll_fail(comm, coll, x.errmsg);
    kcoll_stats_count_kcoll(coll, kcoll_algo_index(algo), bytes);
    return MPI_SUCCESS;

host:
    kcoll_stats_count_mpi(coll, why, bytes);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}
