/* MPI_Gather and MPI_Gatherv: decide whether kcoll can do the call, and
 * do it (algorithms: coll/gather/). The mirror image of pmpi/scatter.c:
 * the eligibility checks, the vote and the agreement are shared with it
 * (see pmpi/rooted.h). Here the root's blocked buffer is the receive
 * buffer and each rank's own block its send buffer.
 */
#include "core/stats.h"
#include "pmpi/pmpi.h"
#include "pmpi/rooted.h"

KCOLL_PUBLIC int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_rooted_call(KCOLL_COLL_GATHER, recvbuf, recvcount, NULL, NULL, recvtype,
                               sendbuf, sendcount, sendtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_GATHER, why, bytes);
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

KCOLL_PUBLIC int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_rooted_call(KCOLL_COLL_GATHERV, recvbuf, 0, recvcounts, displs, recvtype,
                               sendbuf, sendcount, sendtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_GATHERV, why, bytes);
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root, comm);
}
