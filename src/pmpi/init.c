/* MPI_Init, MPI_Init_thread and MPI_Finalize: set kcoll up after the host
 * MPI is initialized, and at the end print the statistics and release
 * every team before the host MPI finalizes. */
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

#include "core/log.h"
#include "core/params.h"
#include "core/stats.h"
#include "core/team_mpi.h"
#include "pmpi/pmpi.h"

/* 0: not set up, 1: ready, 2: finalized */
static _Atomic int kcoll_state;

static void kcoll_startup(void)
{
    kcoll_params_load();
    if (kcoll_teams_init() != 0) {
        kcoll_warn("could not create an attribute keyval; every call uses the host MPI");
        return;
    }
    /* release: the parameters and keyval above are set before anyone sees "ready" */
    atomic_store_explicit(&kcoll_state, 1, memory_order_release);
}

int kcoll_ready(void)
{
    /* acquire: pairs with the release in kcoll_startup */
    int s = atomic_load_explicit(&kcoll_state, memory_order_acquire);
    if (s == 0) {
        /* The program called PMPI_Init itself; set up now, once. */
        int init = 0, fin = 0;
        PMPI_Initialized(&init);
        PMPI_Finalized(&fin);
        if (init && !fin) {
            static _Atomic int once;
            int expected = 0;
            /* acq_rel: exactly one thread runs the setup */
            if (atomic_compare_exchange_strong_explicit(&once, &expected, 1, memory_order_acq_rel,
                                                        memory_order_acquire))
                kcoll_startup();
        }
        /* acquire: pairs with the release in kcoll_startup */
        s = atomic_load_explicit(&kcoll_state, memory_order_acquire);
    }
    return s == 1;
}

KCOLL_PUBLIC int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        kcoll_startup();
    return rc;
}

KCOLL_PUBLIC int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        kcoll_startup();
    return rc;
}

static void kcoll_stats_report(void)
{
    uint64_t mine[KCOLL_STATS_LEN], sum[KCOLL_STATS_LEN];
    int rank, size;
    kcoll_stats_snapshot(mine);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Reduce(mine, sum, KCOLL_STATS_LEN, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        kcoll_stats_print(sum, size, stdout);
}

KCOLL_PUBLIC int MPI_Finalize(void)
{
    /* acquire: pairs with the release in kcoll_startup */
    if (atomic_load_explicit(&kcoll_state, memory_order_acquire) == 1) {
        if (kcoll_param_int(KCOLL_P_STATS))
            kcoll_stats_report();
        kcoll_teams_finalize();
        /* release: later calls see "finalized" and go to the host MPI */
        atomic_store_explicit(&kcoll_state, 2, memory_order_release);
    }
    return PMPI_Finalize();
}

int kcoll_dtype_contig(MPI_Datatype dt, int count, MPI_Aint *lb)
{
    int size;
    MPI_Aint xlb, extent, tlb, textent;
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &xlb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
        return 0;
    *lb = 0;
    if (size == 0 || count == 0)
        return 1;
    if (textent != size) /* holes inside one element */
        return 0;
    if (count > 1 && extent != size) /* gaps (or overlap) between elements */
        return 0;
    *lb = tlb;
    return 1;
}

/* KCOLL_<FAMILY>_ALGO of each collective family. */
static kcoll_param_id_t kcoll_algo_param_of(kcoll_coll_t c)
{
    switch (kcoll_coll_family(c)) {
    case KCOLL_COLL_SCATTER: return KCOLL_P_SCATTER_ALGO;
    case KCOLL_COLL_GATHER: return KCOLL_P_GATHER_ALGO;
    case KCOLL_COLL_ALLGATHER: return KCOLL_P_ALLGATHER_ALGO;
    case KCOLL_COLL_ALLTOALL: return KCOLL_P_ALLTOALL_ALGO;
    case KCOLL_COLL_BARRIER: return KCOLL_P_BARRIER_ALGO;
    case KCOLL_COLL_REDUCE: return KCOLL_P_REDUCE_ALGO;
    case KCOLL_COLL_ALLREDUCE: return KCOLL_P_ALLREDUCE_ALGO;
    case KCOLL_COLL_REDUCE_SCATTER: return KCOLL_P_REDUCE_SCATTER_ALGO;
    default: return KCOLL_P_BCAST_ALGO;
    }
}

int kcoll_algo_forced(kcoll_coll_t c, const kcoll_algo_t **algo, int *param)
{
    static char bad[KCOLL_NCOLL][128]; /* the last spec warned about, per collective */
    const char *spec = kcoll_param_str(kcoll_algo_param_of(c));
    char err[256];
    if (kcoll_algo_parse(c, spec, algo, param, err, sizeof err) == 0)
        return 0;
    if (strncmp(bad[c], spec, sizeof bad[c] - 1)) {
        snprintf(bad[c], sizeof bad[c], "%s", spec);
        kcoll_warn("KCOLL_%s_ALGO: %s; %s uses the host MPI", kcoll_coll_env(c), err,
                   kcoll_coll_name(c));
    }
    return -1;
}

int kcoll_fail(MPI_Comm comm, kcoll_coll_t c, const char *what)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    kcoll_error("%s failed on MPI_COMM_WORLD rank %d: %s", kcoll_coll_name(c), rank, what);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}
