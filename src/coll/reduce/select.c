/* The default MPI_Reduce algorithm when none is forced with
 * KCOLL_REDUCE_ALGO: the host MPI below 256 KiB, partitioned above, at every
 * process count. Below 256 KiB Open MPI's own Reduce (one message into the
 * root, reduced there) is as fast or faster than partitioned's two
 * synchronized phases at 2 ranks: measured 0.76-1.1x of Open MPI from 16 to
 * 512 KiB, 1.05-1.12x from 1 MiB (docs/benchmarks.md). MPICH's Reduce is
 * 1.4-4x slower than kcoll there; with MPICH, KCOLL_REDUCE_ALGO=partitioned
 * uses kcoll at every size from KCOLL_MIN_BYTES. NULL sends the call to the
 * host MPI. It
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
    if (bytes < ((size_t)256 << 10))
        return NULL;
    const kcoll_algo_t *a = kcoll_algo_find(KCOLL_COLL_REDUCE, "partitioned");
    *param = a->param_default;
    return a;
}
