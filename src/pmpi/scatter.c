/* MPI_Scatter and MPI_Scatterv: decide whether kcoll can do the call, and
 * do it (algorithms: coll/scatter/). The eligibility checks, the vote and
 * the agreement are shared with MPI_Gather(v): see pmpi/rooted.h. Here the
 * root's blocked buffer is the send buffer and each rank's own block its
 * receive buffer.
 */
#include "core/stats.h"
#include "pmpi/pmpi.h"
#include "pmpi/rooted.h"

KCOLL_PUBLIC int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_rooted_call(KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                               recvbuf, recvcount, recvtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_SCATTER, why, bytes);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

KCOLL_PUBLIC int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_reason_t why;
    size_t bytes;
    int rc = kcoll_rooted_call(KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, sendtype,
                               recvbuf, recvcount, recvtype, root, comm, &why, &bytes);
    if (rc >= 0)
        return rc;
    kcoll_stats_count_mpi(KCOLL_COLL_SCATTERV, why, bytes);
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                         root, comm);
}
