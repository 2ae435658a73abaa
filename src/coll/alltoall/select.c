/* The default MPI_Alltoall(v) algorithm when none is forced with
 * KCOLL_ALLTOALL_ALGO, until the cost model replaces this rule.
 * n = bytes of one block (Alltoallv: the largest block).
 *  - n < 4 KiB and p > 2: bruck. ceil(log2 p) rounds instead of p-1; its
 *    extra copies cost little for blocks this small (only reached with
 *    KCOLL_MIN_BYTES lowered below its default).
 *  - otherwise: pairwise. One single copy per block, read by the receiver,
 *    one reader per process per step (paper 003 IV.C.1); reading keeps the
 *    copy on the core that will use the data (paper 000).
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_alltoall_select(int p, size_t bytes, int *param)
{
    const kcoll_algo_t *a;
    if (p > 2 && bytes < ((size_t)4 << 10))
        a = kcoll_algo_find(KCOLL_COLL_ALLTOALL, "bruck");
    else
        a = kcoll_algo_find(KCOLL_COLL_ALLTOALL, "pairwise");
    *param = a->param ? a->param_default : 0;
    return a;
}
