/* The common path of every intercepted collective (see pmpi.h): the
 * checks that come first and last, and running a schedule. */
#include <stdio.h>

#include "core/params.h"
#include "core/team_mpi.h"
#include "pmpi/pmpi.h"
#include "sched/exec.h"

int kcoll_pmpi_comm(MPI_Comm comm, int *p, int *rank, kcoll_reason_t *why)
{
    int inter;
    if (!kcoll_ready()) {
        *why = KCOLL_R_DISABLED;
        return 0;
    }
    *why = KCOLL_R_INVALID;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    if (inter) {
        *why = KCOLL_R_INTERCOMM;
        return 0;
    }
    PMPI_Comm_size(comm, p);
    PMPI_Comm_rank(comm, rank);
    return 1;
}

int kcoll_pmpi_policy(int p, size_t bytes, kcoll_reason_t *why)
{
    if (kcoll_param_int(KCOLL_P_DISABLE)) {
        *why = KCOLL_R_DISABLED;
        return 0;
    }
    if (p == 1) {
        *why = KCOLL_R_ONE_RANK;
        return 0;
    }
    if (bytes < (size_t)kcoll_param_int(KCOLL_P_MIN_BYTES)) {
        *why = KCOLL_R_SMALL;
        return 0;
    }
    return 1;
}

kcoll_team_t *kcoll_pmpi_team(MPI_Comm comm, kcoll_coll_t coll, const kcoll_algo_t **algo,
                              int *param, kcoll_reason_t *why)
{
    if (kcoll_algo_forced(coll, algo, param)) {
        *why = KCOLL_R_BAD_ALGO;
        return NULL;
    }
    return kcoll_team_get(comm, why);
}

int kcoll_pmpi_run(MPI_Comm comm, kcoll_team_t *team, const kcoll_algo_t *algo,
                   const kcoll_args_t *args, void *const bufs[KCOLL_NBUF],
                   const size_t lens[KCOLL_NBUF], size_t stat_bytes)
{
    const kcoll_coll_t coll = args->coll;
    kcoll_sched_reset(&team->sched);
    if (algo->build(args, &team->sched) != KCOLL_OK)
        return kcoll_fail(comm, coll, "building the schedule failed (out of memory?)");
    if (kcoll_param_int(KCOLL_P_TRACE)) {
        fprintf(stderr, "kcoll: trace: %s %s k=%d, %zu bytes, root %d, collective %llu\n",
                kcoll_coll_name(coll), algo->name, args->k, stat_bytes, args->root,
                (unsigned long long)team->seq + 1);
        kcoll_sched_print(&team->sched, args->rank, stderr);
    }
    kcoll_exec_t x;
    kcoll_exec_start(&x, team, &team->sched, bufs, lens, ++team->seq);
    x.op = args->op; /* reductions: what REDUCE steps apply */
    if (kcoll_exec_run(&x) != KCOLL_OK)
        return kcoll_fail(comm, coll, x.errmsg);
    kcoll_stats_count_kcoll(coll, kcoll_algo_index(algo), stat_bytes);
    return MPI_SUCCESS;
}
