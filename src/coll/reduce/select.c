/* The default MPI_Reduce algorithm when none is forced with
 * KCOLL_REDUCE_ALGO: the host MPI below 64 KiB, partitioned above, at every
 * process count. Below 64 KiB the hosts' eager protocols (one message
 * into the root, reduced there) beat partitioned's two synchronized phases
 * at 2 ranks: measured 0.76-0.93x of Open MPI at 16-64 KiB
 * (docs/reductions.md); NULL sends the call to the host MPI. It
 * reduces in kcoll's fixed order (coll/reduce/common.h), so it serves
 * non-commutative operations as well, and it spreads both the copying
 * and the arithmetic over all p cores where serial puts all of it on the
 * root's (paper 004 Fig. 7: the parallel reduction wins from two cores
 * on). serial remains available as the baseline.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_reduce_select(int p, size_t bytes, int *param)
{
    (void)p;
    if (bytes < ((size_t)64 << 10))
        return NULL;
    const kcoll_algo_t *a = kcoll_algo_find(KCOLL_COLL_REDUCE, "partitioned");
    *param = a->param_default;
    return a;
}
