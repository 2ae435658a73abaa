/* The default MPI_Reduce_scatter(_block) algorithm when none is forced
 * with KCOLL_REDUCE_SCATTER_ALGO: partitioned, the only one. Each rank
 * reads exactly its own block from every peer and reduces it: nothing
 * moves that is not needed, and no rank waits for another before the end.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_reduce_scatter_select(int p, size_t bytes, int *param)
{
    (void)p;
    (void)bytes;
    const kcoll_algo_t *a = kcoll_algo_find(KCOLL_COLL_REDUCE_SCATTER, "partitioned");
    *param = a->param_default;
    return a;
}
