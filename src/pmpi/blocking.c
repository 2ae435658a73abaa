/* Blocking host calls that keep kcoll's requests advancing.
 *
 * MPI requires a blocked MPI call to let other operations progress: a
 * rank waiting in MPI_Recv for a message that its peer sends only after
 * finishing a non-blocking collective must not hold that collective up.
 * A host MPI with a progress hook (Open MPI, mpi/progress.c) advances
 * kcoll's requests, calls across nodes included, in every call that
 * waits. Where there is none (MPICH 4.0), while kcoll requests of this
 * process are pending:
 *  - a blocking point-to-point call (MPI_Send, MPI_Ssend, MPI_Rsend,
 *    MPI_Recv, MPI_Sendrecv, MPI_Sendrecv_replace where MPI-4 offers its
 *    non-blocking form, MPI_Probe, MPI_Mprobe, MPI_Mrecv) runs as its
 *    non-blocking form waited for in a loop that also advances kcoll's
 *    requests (kcoll_host_wait): point-to-point matching does not care
 *    whether either side blocks;
 *  - a blocking collective (MPI_Scan, MPI_Exscan, MPI_Alltoallw, the
 *    neighbour collectives here; the collectives kcoll hands to the host;
 *    the communicator constructors) stays blocking, since MPI never matches
 *    a blocking collective with a non-blocking one, and a helper thread
 *    advances kcoll's requests meanwhile (mpi/drive.c).
 * With nothing pending each is the host's own call, unchanged. Not
 * covered: one-sided and file operations (docs/architecture.md
 * "Progress").
 */
#include "pmpi/pmpi.h"

KCOLL_PUBLIC int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm)
{
    MPI_Request q;
    if (!kcoll_must_loop())
        return PMPI_Send(buf, count, datatype, dest, tag, comm);
    return kcoll_host_wait(PMPI_Isend(buf, count, datatype, dest, tag, comm, &q), &q,
                                MPI_STATUS_IGNORE);
}

KCOLL_PUBLIC int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm)
{
    MPI_Request q;
    if (!kcoll_must_loop())
        return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
    return kcoll_host_wait(PMPI_Issend(buf, count, datatype, dest, tag, comm, &q), &q,
                                MPI_STATUS_IGNORE);
}

KCOLL_PUBLIC int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm)
{
    MPI_Request q;
    if (!kcoll_must_loop())
        return PMPI_Rsend(buf, count, datatype, dest, tag, comm);
    return kcoll_host_wait(PMPI_Irsend(buf, count, datatype, dest, tag, comm, &q), &q,
                                MPI_STATUS_IGNORE);
}

KCOLL_PUBLIC int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Status *status)
{
    MPI_Request q;
    if (!kcoll_must_loop())
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    return kcoll_host_wait(PMPI_Irecv(buf, count, datatype, source, tag, comm, &q), &q,
                                status);
}

KCOLL_PUBLIC int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              int dest, int sendtag, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                              MPI_Status *status)
{
    MPI_Request q[2];
    int rc;
    if (!kcoll_must_loop())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    if ((rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &q[0])) !=
        MPI_SUCCESS)
        return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &q[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&q[0]);
        PMPI_Request_free(&q[0]);
        return rc;
    }
    if ((rc = kcoll_host_wait(MPI_SUCCESS, &q[1], MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return rc;
    return kcoll_host_wait(MPI_SUCCESS, &q[0], status);
}

#if MPI_VERSION >= 4
KCOLL_PUBLIC int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
                                      int sendtag, int source, int recvtag, MPI_Comm comm,
                                      MPI_Status *status)
{
    MPI_Request q;
    if (!kcoll_must_loop())
        return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                     status);
    return kcoll_host_wait(PMPI_Isendrecv_replace(buf, count, datatype, dest, sendtag,
                                                       source, recvtag, comm, &q),
                                &q, status);
}
#endif

KCOLL_PUBLIC int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    kcoll_pause_t pause;
    int flag = 0, rc;
    if (!kcoll_must_loop())
        return PMPI_Probe(source, tag, comm, status);
    kcoll_pause_init(&pause);
    for (;;) {
        int moved = kcoll_progress();
        if ((rc = PMPI_Iprobe(source, tag, comm, &flag, status)) != MPI_SUCCESS || flag)
            return rc;
        kcoll_pause_unless(&pause, moved);
    }
}

KCOLL_PUBLIC int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                            MPI_Status *status)
{
    kcoll_pause_t pause;
    int flag = 0, rc;
    if (!kcoll_must_loop())
        return PMPI_Mprobe(source, tag, comm, message, status);
    kcoll_pause_init(&pause);
    for (;;) {
        int moved = kcoll_progress();
        if ((rc = PMPI_Improbe(source, tag, comm, &flag, message, status)) != MPI_SUCCESS || flag)
            return rc;
        kcoll_pause_unless(&pause, moved);
    }
}

KCOLL_PUBLIC int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                           MPI_Status *status)
{
    MPI_Request q;
    if (!kcoll_must_loop())
        return PMPI_Mrecv(buf, count, datatype, message, status);
    return kcoll_host_wait(PMPI_Imrecv(buf, count, datatype, message, &q), &q, status);
}

KCOLL_PUBLIC int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                       rdispls, recvtypes, comm));
}

KCOLL_PUBLIC int MPI_Neighbor_allgather(const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                recvtype, comm));
}

KCOLL_PUBLIC int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                                 displs, recvtype, comm));
}

KCOLL_PUBLIC int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                               recvtype, comm));
}

KCOLL_PUBLIC int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype,
                                        void *recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                recvcounts, rdispls, recvtype, comm));
}

KCOLL_PUBLIC int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm)
{
    KCOLL_RETURN_DRIVEN(PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                                recvcounts, rdispls, recvtypes, comm));
}
