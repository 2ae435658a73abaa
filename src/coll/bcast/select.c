/* The default MPI_Bcast algorithm when none is forced with
 * KCOLL_BCAST_ALGO, until the cost model (paper 003 "Tuned CMA") replaces
 * this rule. The reasoning:
 *  - p = 2: split_rw. The root's core would otherwise idle while the one
 *    reader copies; splitting the copy between both cores is the fastest
 *    single-copy broadcast between two processes (docs/benchmarks.md).
 *  - p > 2, n < 1 MiB: knomial with k = 4. Paper 003 (Fig. 11) finds
 *    k-nomial reading better than direct read or write on every machine:
 *    at most k-1 readers per process keeps page-lock contention low while
 *    the tree is only ceil(log_4 p) rounds deep.
 *  - p > 2, n >= 1 MiB: scatter_allgather. For large messages its
 *    contention-free ring of n/p-byte reads wins (paper 003 Fig. 11): each
 *    rank moves n bytes in total but no process is read by more than one
 *    peer after the scatter.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_bcast_select(int p, size_t bytes, int *param)
{
    const kcoll_algo_t *a;
    if (p == 2)
        a = kcoll_algo_find(KCOLL_COLL_BCAST, "split_rw");
    else if (bytes < ((size_t)1 << 20))
        a = kcoll_algo_find(KCOLL_COLL_BCAST, "knomial");
    else
        a = kcoll_algo_find(KCOLL_COLL_BCAST, "scatter_allgather");
    *param = a->param ? a->param_default : 0;
    return a;
}
