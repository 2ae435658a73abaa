/* The default MPI_Scatter(v) algorithm when none is forced with
 * KCOLL_SCATTER_ALGO, until the cost model (paper 003 "Tuned CMA")
 * replaces this rule. `bytes` is the largest block. The reasoning:
 *  - p <= 5: parallel_read. At most four readers contend on the root's
 *    pages, which paper 003 (Fig. 7) finds harmless, and every reader
 *    starts at once while the root copies its own block in parallel; at
 *    p = 2 this overlap of the peer's read with the root's memcpy is the
 *    whole speed-up over the host MPI's send-then-copy.
 *  - p > 5, blocks below 64 KiB: parallel_read. Few pages per block means
 *    little lock contention, and throttling's chained flags would add
 *    their latency to every step (paper 003: "throttled read performs
 *    worse for small messages due to the synchronization overhead").
 *  - p > 5, larger blocks: throttled_read with k = 4, the throttle factor
 *    paper 003 finds best for medium and large messages on Broadwell and
 *    close to it on KNL: four readers keep the memory system busy without
 *    the contention of p-1.
 * sequential_write is never the default: it serializes every copy on the
 * root's core.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_scatter_select(int p, size_t bytes, int *param)
{
    const kcoll_algo_t *a;
    if (p <= 5 || bytes < ((size_t)64 << 10))
        a = kcoll_algo_find(KCOLL_COLL_SCATTER, "parallel_read");
    else
        a = kcoll_algo_find(KCOLL_COLL_SCATTER, "throttled_read");
    *param = a->param ? a->param_default : 0;
    return a;
}
