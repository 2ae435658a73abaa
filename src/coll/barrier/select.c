/* The default MPI_Barrier algorithm: dissemination, the only one; ceil(log2 p)
 * rounds with one waiter per flag suit any p on one node. */
#include "coll/coll.h"

const kcoll_algo_t *kcoll_barrier_select(int p, int *param)
{
    (void)p;
    *param = 0;
    return kcoll_algo_find(KCOLL_COLL_BARRIER, "dissemination");
}
