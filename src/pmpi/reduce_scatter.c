/* MPI_Reduce_scatter_block and MPI_Reduce_scatter: kcoll where it can
 * (pmpi/op.c decides, from values every rank knows alike: communicator,
 * counts, datatype, operation; MPI requires every rank to pass the same
 * recvcounts array), the host MPI otherwise. MPI_IN_PLACE: the whole
 * vector is in recvbuf on entry, the rank's block at its start on return. */
#include "pmpi/reduction.h"

KCOLL_PUBLIC int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    kcoll_red_call_t c = {KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, NULL,
                          datatype, op, 0, comm};
    int rc;
    if (kcoll_pmpi_reduction(&c, &rc))
        return rc;
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

KCOLL_PUBLIC int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    kcoll_red_call_t c = {KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, datatype,
                          op, 0, comm};
    int rc;
    if (kcoll_pmpi_reduction(&c, &rc))
        return rc;
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
