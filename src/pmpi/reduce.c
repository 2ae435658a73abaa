/* MPI_Reduce: kcoll where it can (pmpi/op.c decides, from values every
 * rank knows alike: communicator, root, count, datatype, operation), the
 * host MPI otherwise. MPI_IN_PLACE at the root: its contribution is in
 * recvbuf. */
#include "pmpi/reduction.h"

KCOLL_PUBLIC int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm)
{
    kcoll_red_call_t c = {KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, datatype, op, root,
                          comm};
    int rc;
    if (kcoll_pmpi_reduction(&c, &rc))
        return rc;
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}
