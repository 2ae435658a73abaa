/* The layouts a call across nodes can run, by collective: the one table
 * the request engine (call/request.c) finds a call's builder in. A
 * collective or layout missing here is not run across nodes by kcoll's
 * own schedule (span/run.c asks kcoll_cluster_find before it takes a
 * call). The unrooted builders are reached through wrappers that drop the
 * root. */
#include <stddef.h>

#include "cluster/cluster.h"

#define KCOLL_UNROOTED(name)                                                                     \
    static kcoll_status_t name##_r(const kcoll_args_t *a, const kcoll_cluster_t *cl, int rn,      \
                                   int rl, kcoll_sched_t *s)                                      \
    {                                                                                             \
        (void)rn;                                                                                 \
        (void)rl;                                                                                 \
        return name(a, cl, s);                                                                    \
    }
#define KCOLL_UNROOTED_TMP(name)                                                                 \
    static size_t name##_r(const kcoll_args_t *a, const kcoll_cluster_t *cl, int rn, int rl)     \
    {                                                                                             \
        (void)rn;                                                                                 \
        (void)rl;                                                                                 \
        return name(a, cl);                                                                       \
    }
KCOLL_UNROOTED(kcoll_cluster_allreduce_leaders)
KCOLL_UNROOTED_TMP(kcoll_cluster_allreduce_leaders_tmp)
KCOLL_UNROOTED(kcoll_cluster_allreduce_lanes)
KCOLL_UNROOTED_TMP(kcoll_cluster_allreduce_lanes_tmp)
KCOLL_UNROOTED(kcoll_cluster_rs_lanes)
KCOLL_UNROOTED_TMP(kcoll_cluster_rs_lanes_tmp)
KCOLL_UNROOTED(kcoll_cluster_rs_leaders)
KCOLL_UNROOTED_TMP(kcoll_cluster_rs_leaders_tmp)
KCOLL_UNROOTED(kcoll_cluster_barrier_leaders)
KCOLL_UNROOTED(kcoll_cluster_allgather_leaders)
KCOLL_UNROOTED_TMP(kcoll_cluster_allgather_leaders_tmp)
KCOLL_UNROOTED(kcoll_cluster_allgather_lanes)
KCOLL_UNROOTED_TMP(kcoll_cluster_allgather_lanes_tmp)
KCOLL_UNROOTED(kcoll_cluster_alltoall_lanes)
KCOLL_UNROOTED_TMP(kcoll_cluster_alltoall_lanes_tmp)
#undef KCOLL_UNROOTED
#undef KCOLL_UNROOTED_TMP

static const kcoll_cluster_algo_t kcoll_cluster_algos[] = {
    {KCOLL_COLL_ALLREDUCE, 0, "allreduce leaders", kcoll_cluster_allreduce_leaders_r,
     kcoll_cluster_allreduce_leaders_tmp_r},
    {KCOLL_COLL_ALLREDUCE, 1, "allreduce lanes", kcoll_cluster_allreduce_lanes_r,
     kcoll_cluster_allreduce_lanes_tmp_r},
    {KCOLL_COLL_REDUCE, 0, "reduce leaders", kcoll_cluster_reduce_leaders,
     kcoll_cluster_reduce_leaders_tmp},
    {KCOLL_COLL_REDUCE, 1, "reduce lanes", kcoll_cluster_reduce_lanes,
     kcoll_cluster_reduce_lanes_tmp},
    {KCOLL_COLL_REDUCE_SCATTER_BLOCK, 0, "reduce_scatter_block leaders",
     kcoll_cluster_rs_leaders_r, kcoll_cluster_rs_leaders_tmp_r},
    {KCOLL_COLL_REDUCE_SCATTER_BLOCK, 1, "reduce_scatter_block lanes",
     kcoll_cluster_rs_lanes_r, kcoll_cluster_rs_lanes_tmp_r},
    {KCOLL_COLL_REDUCE_SCATTER, 0, "reduce_scatter leaders", kcoll_cluster_rs_leaders_r,
     kcoll_cluster_rs_leaders_tmp_r},
    {KCOLL_COLL_REDUCE_SCATTER, 1, "reduce_scatter lanes", kcoll_cluster_rs_lanes_r,
     kcoll_cluster_rs_lanes_tmp_r},
    {KCOLL_COLL_BARRIER, 0, "barrier leaders", kcoll_cluster_barrier_leaders_r, NULL},
    {KCOLL_COLL_BCAST, 0, "bcast leaders", kcoll_cluster_bcast_leaders, NULL},
    {KCOLL_COLL_BCAST, 1, "bcast lanes", kcoll_cluster_bcast_lanes, NULL},
    {KCOLL_COLL_GATHER, 0, "gather leaders", kcoll_cluster_gather_leaders,
     kcoll_cluster_gather_leaders_tmp},
    {KCOLL_COLL_SCATTER, 0, "scatter leaders", kcoll_cluster_scatter_leaders,
     kcoll_cluster_scatter_leaders_tmp},
    {KCOLL_COLL_GATHERV, 0, "gatherv leaders", kcoll_cluster_gather_leaders,
     kcoll_cluster_gather_leaders_tmp},
    {KCOLL_COLL_SCATTERV, 0, "scatterv leaders", kcoll_cluster_scatter_leaders,
     kcoll_cluster_scatter_leaders_tmp},
    {KCOLL_COLL_ALLGATHER, 0, "allgather leaders", kcoll_cluster_allgather_leaders_r,
     kcoll_cluster_allgather_leaders_tmp_r},
    {KCOLL_COLL_ALLGATHERV, 0, "allgatherv leaders", kcoll_cluster_allgather_leaders_r,
     kcoll_cluster_allgather_leaders_tmp_r},
    {KCOLL_COLL_ALLGATHER, 1, "allgather lanes", kcoll_cluster_allgather_lanes_r,
     kcoll_cluster_allgather_lanes_tmp_r},
    {KCOLL_COLL_ALLGATHERV, 1, "allgatherv lanes", kcoll_cluster_allgather_lanes_r,
     kcoll_cluster_allgather_lanes_tmp_r},
    {KCOLL_COLL_ALLTOALL, 1, "alltoall lanes", kcoll_cluster_alltoall_lanes_r,
     kcoll_cluster_alltoall_lanes_tmp_r},
    {KCOLL_COLL_ALLTOALLV, 1, "alltoallv lanes", kcoll_cluster_alltoall_lanes_r,
     kcoll_cluster_alltoall_lanes_tmp_r},
};

const kcoll_cluster_algo_t *kcoll_cluster_find(kcoll_coll_t c, int lanes)
{
    for (size_t i = 0; i < sizeof kcoll_cluster_algos / sizeof kcoll_cluster_algos[0]; i++)
        if (kcoll_cluster_algos[i].coll == c && kcoll_cluster_algos[i].lanes == !!lanes)
            return &kcoll_cluster_algos[i];
    return NULL;
}
