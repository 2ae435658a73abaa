/* The default MPI_Allreduce algorithm when none is forced with
 * KCOLL_ALLREDUCE_ALGO: the host MPI below 32 KiB (at 16 KiB MPICH's
 * shared-memory eager path was 1.2x faster at 2 ranks, docs/reductions.md;
 * NULL sends the call to the host MPI), partitioned above, at every process
 * count.
 * Each rank moves 2n(p-1)/p bytes, the bandwidth optimum, against
 * n(p-1)/p + n + n/p for reduce_bcast, whose broadcast also has all p-1
 * readers on one process (paper 004 IV.C found the same ordering). Its
 * fixed reduction order serves non-commutative operations too.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_allreduce_select(int p, size_t bytes, int *param)
{
    (void)p;
    if (bytes < ((size_t)32 << 10))
        return NULL;
    const kcoll_algo_t *a = kcoll_algo_find(KCOLL_COLL_ALLREDUCE, "partitioned");
    *param = a->param_default;
    return a;
}
