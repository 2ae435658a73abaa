/* MPI_Allreduce: kcoll where it can (pmpi/op.c decides, from values every
 * rank knows alike: communicator, count, datatype, operation), the host
 * MPI otherwise. MPI_IN_PLACE: every rank's contribution is in recvbuf. */
#include "pmpi/reduction.h"

KCOLL_PUBLIC int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    kcoll_red_call_t c = {KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, datatype, op, 0,
                          comm};
    int rc;
    if (kcoll_pmpi_reduction(&c, &rc))
        return rc;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
