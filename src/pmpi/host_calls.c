/* The host MPI's blocking collectives, where the entry points' tail calls
 * find them (call/shortcut.h, kcoll_host_fns; pmpi.h, KCOLL_HOST_CALL):
 * set when the library is loaded, before any MPI call can arm a shortcut
 * or keep a streak that calls them. */
#include "pmpi/pmpi.h"

__attribute__((constructor)) static void kcoll_host_fns_set(void)
{
    kcoll_host_fn_t *f = kcoll_host_fns;
    f[KCOLL_COLL_BCAST] = (kcoll_host_fn_t)PMPI_Bcast;
    f[KCOLL_COLL_SCATTER] = (kcoll_host_fn_t)PMPI_Scatter;
    f[KCOLL_COLL_SCATTERV] = (kcoll_host_fn_t)PMPI_Scatterv;
    f[KCOLL_COLL_GATHER] = (kcoll_host_fn_t)PMPI_Gather;
    f[KCOLL_COLL_GATHERV] = (kcoll_host_fn_t)PMPI_Gatherv;
    f[KCOLL_COLL_ALLGATHER] = (kcoll_host_fn_t)PMPI_Allgather;
    f[KCOLL_COLL_ALLGATHERV] = (kcoll_host_fn_t)PMPI_Allgatherv;
    f[KCOLL_COLL_ALLTOALL] = (kcoll_host_fn_t)PMPI_Alltoall;
    f[KCOLL_COLL_ALLTOALLV] = (kcoll_host_fn_t)PMPI_Alltoallv;
    f[KCOLL_COLL_BARRIER] = (kcoll_host_fn_t)PMPI_Barrier;
    f[KCOLL_COLL_REDUCE] = (kcoll_host_fn_t)PMPI_Reduce;
    f[KCOLL_COLL_ALLREDUCE] = (kcoll_host_fn_t)PMPI_Allreduce;
    f[KCOLL_COLL_REDUCE_SCATTER_BLOCK] = (kcoll_host_fn_t)PMPI_Reduce_scatter_block;
    f[KCOLL_COLL_REDUCE_SCATTER] = (kcoll_host_fn_t)PMPI_Reduce_scatter;
}
