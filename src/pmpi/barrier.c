/* MPI_Barrier: the dissemination barrier on the team's flags.
 *
 * Everything it decides on is known alike to all ranks (communicator,
 * KCOLL_DISABLE, the forced algorithm), so there is no agreement. The
 * minimum-size rule does not apply: a barrier has no bytes. The flags live
 * in the team's shared control segment and are stored with release order
 * and loaded with acquire order (sched/exec.c), so whatever a rank wrote to
 * memory before the barrier is visible to every rank after it.
 */
#include "core/params.h"
#include "core/stats.h"
#include "pmpi/pmpi.h"

KCOLL_PUBLIC int MPI_Barrier(MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_BARRIER;
    kcoll_reason_t why;
    int p, rank, param;
    const kcoll_algo_t *algo;

    if (!kcoll_pmpi_comm(comm, &p, &rank, &why))
        goto host;
    if (kcoll_param_int(KCOLL_P_DISABLE)) {
        why = KCOLL_R_DISABLED;
        goto host;
    }
    if (p == 1) {
        why = KCOLL_R_ONE_RANK;
        goto host;
    }
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, &why);
    if (!team)
        goto host;
    if (!algo)
        algo = kcoll_barrier_select(p, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .k = param};
    void *bufs[KCOLL_NBUF] = {NULL, NULL, NULL};
    size_t lens[KCOLL_NBUF] = {0, 0, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, 0);

host:
    kcoll_stats_count_mpi(coll, why, 0);
    return PMPI_Barrier(comm);
}
