/* The default MPI_Gather(v) algorithm when none is forced with
 * KCOLL_GATHER_ALGO, until the cost model (paper 003 "Tuned CMA")
 * replaces this rule. `bytes` is the largest block. The mirror image of
 * the Scatter rule (coll/scatter/select.c), as paper 003 (Fig. 8) finds
 * Gather's trends "very similar to their Scatter counterparts":
 *  - p <= 5 or blocks below 64 KiB: parallel_write; every writer starts
 *    at once, overlapped with the root's memcpy of its own block, and
 *    contention is low with few writers or few pages.
 *  - otherwise throttled_write with k = 4 (paper 003: throttle factors 4
 *    and 8 perform well on Broadwell and KNL).
 * sequential_read is never the default: it serializes every copy on the
 * root's core.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_gather_select(int p, size_t bytes, int *param)
{
    const kcoll_algo_t *a;
    if (p <= 5 || bytes < ((size_t)64 << 10))
        a = kcoll_algo_find(KCOLL_COLL_GATHER, "parallel_write");
    else
        a = kcoll_algo_find(KCOLL_COLL_GATHER, "throttled_write");
    *param = a->param ? a->param_default : 0;
    return a;
}
