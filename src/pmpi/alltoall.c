/* MPI_Alltoall(v), MPI_Ialltoall(v), MPI_Alltoall(v)_init and their
 * large-count (_c) forms (call/fam_allcoll.c decides). With MPI_IN_PLACE the send data is in the
 * receive buffer, laid out as it, and the send arguments are not looked
 * at. */
#include "pmpi/pmpi.h"

/* MPI_Alltoall past its shortcut */
KCOLL_SLOW int kcoll_alltoall_slow(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_ALLTOALL, key,
                            sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype, recvtype, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm));
}

KCOLL_PUBLIC int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, sendtype, recvtype,
                                              KCOLL_SHORTCUT_NONE, sendcount, recvcount, 0);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_ALLTOALL, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_ALLTOALL, Alltoall)(sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, recvtype, comm);
    return kcoll_alltoall_slow(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               key);
}

/* MPI_Alltoallv past its kept streak (took: it took the call, and a kcoll
 * request is pending) */
KCOLL_SLOW int kcoll_alltoallv_slow(int took, const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    if (took || kcoll_pmpi_streak(KCOLL_COLL_ALLTOALLV, comm, 0, recvcounts, recvtype, 0, recvtype))
        KCOLL_RETURN_DRIVEN(PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                           recvcounts, rdispls, recvtype, comm));
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls, sendtype,
                            recvbuf, 0, recvcounts, rdispls, recvtype, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm));
}

KCOLL_PUBLIC int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    /* (no count of a single type: 0 of recvtype, which is no bytes of any
     * type, and reads no predefined handle: KCOLL_SHORTCUT_NONE says why) */
    const int took = kcoll_pmpi_streak_quick(KCOLL_COLL_ALLTOALLV, comm, 0, recvcounts, recvtype, 0,
                                             recvtype);
    if (took && !kcoll_pending())
        return KCOLL_HOST_CALL(KCOLL_COLL_ALLTOALLV, Alltoallv)(sendbuf, sendcounts, sdispls,
                   sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return kcoll_alltoallv_slow(took, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
}

KCOLL_PUBLIC int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          request);
}

KCOLL_PUBLIC int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls, sendtype,
                            recvbuf, 0, recvcounts, rdispls, recvtype, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                           recvtype, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL, sendtype,
                                recvbuf, recvcount, NULL, NULL, recvtype, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls, sendtype,
                                recvbuf, 0, recvcounts, rdispls, recvtype, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif

#ifdef KCOLL_HAVE_LARGE_COUNT
KCOLL_PUBLIC int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 1, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm));
}

KCOLL_PUBLIC int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls, sendtype,
                            recvbuf, 0, recvcounts, rdispls, recvtype, 1, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm));
}

KCOLL_PUBLIC int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, 1, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request);
}

KCOLL_PUBLIC int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls, sendtype,
                            recvbuf, 0, recvcounts, rdispls, recvtype, 1, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL,
                                sendtype, recvbuf, recvcount, NULL, NULL, recvtype, 1, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                      const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                      void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls,
                                sendtype, recvbuf, 0, recvcounts, rdispls, recvtype, 1, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
#endif
