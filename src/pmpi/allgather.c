/* MPI_Allgather(v), MPI_Iallgather(v), MPI_Allgather(v)_init and their
 * large-count (_c) forms (call/fam_allcoll.c decides). With MPI_IN_PLACE every rank's block is in its
 * receive buffer already, and the send arguments are not looked at. */
#include "pmpi/pmpi.h"

/* MPI_Allgather past its shortcut */
KCOLL_SLOW int kcoll_allgather_slow(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_ALLGATHER, key,
                            sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype, recvtype, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm));
}

KCOLL_PUBLIC int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, sendtype, recvtype,
                                              KCOLL_SHORTCUT_NONE, sendcount, recvcount, 0);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_ALLGATHER, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_ALLGATHER, Allgather)(sendbuf, sendcount, sendtype,
                   recvbuf, recvcount, recvtype, comm);
    return kcoll_allgather_slow(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                key);
}

/* MPI_Allgatherv past its shortcut */
KCOLL_SLOW int kcoll_allgatherv_slow(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm,
                                     const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, 0, recvcounts, displs, recvtype, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_ALLGATHERV, key,
                            sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype, recvtype, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, comm));
}

KCOLL_PUBLIC int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, sendtype, recvtype,
                                              KCOLL_SHORTCUT_NONE, sendcount, 0, 0);
    if (kcoll_pmpi_shortcut_v(KCOLL_COLL_ALLGATHERV, key, recvcounts, displs))
        return KCOLL_HOST_CALL(KCOLL_COLL_ALLGATHERV, Allgatherv)(sendbuf, sendcount, sendtype,
                   recvbuf, recvcounts, displs, recvtype, comm);
    return kcoll_allgatherv_slow(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm, key);
}

KCOLL_PUBLIC int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request);
}

KCOLL_PUBLIC int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, 0, recvcounts, displs, recvtype, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                                recvbuf, recvcount, NULL, NULL, recvtype, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                                recvbuf, 0, recvcounts, displs, recvtype, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif

#ifdef KCOLL_HAVE_LARGE_COUNT
KCOLL_PUBLIC int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 1, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, comm));
}

KCOLL_PUBLIC int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, 0, recvcounts, displs, recvtype, 1, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                          displs, recvtype, comm));
}

KCOLL_PUBLIC int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 1, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request);
}

KCOLL_PUBLIC int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                   MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, 0, recvcounts, displs, recvtype, 1, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL,
                                sendtype, recvbuf, recvcount, NULL, NULL, recvtype, 1, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, void *recvbuf,
                                       const MPI_Count recvcounts[], const MPI_Aint displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL,
                                sendtype, recvbuf, 0, recvcounts, displs, recvtype, 1, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
#endif
