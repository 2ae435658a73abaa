/* The default MPI_Allgather(v) algorithm when none is forced with
 * KCOLL_ALLGATHER_ALGO, until the cost model replaces this rule.
 * n = bytes of one block (Allgatherv: the largest block).
 *  - p = 2: ring_source_write. Both ranks write their block into the
 *    other while the other does the same, then copy their own: both cores
 *    copy all the time. Measured at 2 ranks on the development machine
 *    (docs/allcoll.md), writing was 10-30% faster than reading the same
 *    blocks (ring_source_read) from 16 KiB to 1 MiB per block.
 *  - p > 2, n >= 64 KiB: ring_source_read. Every rank reads every other
 *    block straight from its owner; nothing is forwarded, so no step waits
 *    for another, and in step i each process has one reader (paper 003
 *    finds ring-source the best large-message Allgather). Reading keeps
 *    the copies on the core that uses the data (paper 000).
 *  - p > 2, n < 64 KiB: bruck. ceil(log2 p) rounds instead of p-1: below
 *    64 KiB per block the per-step costs (system call, page pinning, flag
 *    wait) outweigh the bytes.
 */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_allgather_select(int p, size_t bytes, int *param)
{
    const kcoll_algo_t *a;
    if (p == 2)
        a = kcoll_algo_find(KCOLL_COLL_ALLGATHER, "ring_source_write");
    else if (bytes >= ((size_t)64 << 10))
        a = kcoll_algo_find(KCOLL_COLL_ALLGATHER, "ring_source_read");
    else
        a = kcoll_algo_find(KCOLL_COLL_ALLGATHER, "bruck");
    *param = a->param ? a->param_default : 0;
    return a;
}
