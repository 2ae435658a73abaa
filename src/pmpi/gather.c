/* MPI_Gather(v), MPI_Igather(v), MPI_Gather(v)_init and their large-count
 * (_c) forms: the root's receive side is the blocked buffer, every rank's send side its own block; at the
 * root MPI_IN_PLACE as the send buffer means its block is in place
 * already (call/fam_rooted.c decides). Only the arguments MPI says are
 * significant on this rank are looked at. */
#include "pmpi/pmpi.h"

void kcoll_pmpi_gather_call(kcoll_call_t *c, kcoll_coll_t coll, const void *sendbuf,
                            int64_t sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int64_t recvcount, const void *recvcounts, const void *displs, int wide,
                            MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_pmpi_describe(c, coll, root, comm);
    c->in_place = sendbuf == MPI_IN_PLACE;
    if (c->p && c->rank == root)
        kcoll_pmpi_side(&c->recv, recvbuf, recvcount, recvcounts, displs, wide, recvtype, NULL);
    if (!c->in_place)
        kcoll_pmpi_side(&c->send, sendbuf, sendcount, NULL, NULL, wide, sendtype,
                        sendtype == recvtype ? &c->recv : NULL);
    kcoll_set_types(c, c->in_place ? MPI_DATATYPE_NULL : sendtype,
                         c->p && c->rank == root ? recvtype : MPI_DATATYPE_NULL);
}

/* MPI_Gather past its shortcut */
KCOLL_SLOW int kcoll_gather_slow(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           NULL, NULL, 0, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_GATHER, key, sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype,
                            kcoll_pmpi_is_root(comm, root) ? recvtype : MPI_BYTE, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    root, comm));
}

KCOLL_PUBLIC int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, sendtype, recvtype,
                                              KCOLL_SHORTCUT_NONE, sendcount, recvcount, root);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_GATHER, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_GATHER, Gather)(sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, recvtype, root, comm);
    return kcoll_gather_slow(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             key);
}

/* MPI_Gatherv past its kept streak (took: it took the call, and a kcoll
 * request is pending) */
KCOLL_SLOW int kcoll_gatherv_slow(int took, const void *sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                  const int displs[], MPI_Datatype recvtype, int root,
                                  MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    if (took || kcoll_pmpi_streak(KCOLL_COLL_GATHERV, comm, root, recvcounts, recvtype,
                                  sendbuf == MPI_IN_PLACE ? 0 : sendcount, sendtype))
        KCOLL_RETURN_DRIVEN(PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                         displs, recvtype, root, comm));
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                           recvcounts, displs, 0, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, root, comm));
}

KCOLL_PUBLIC int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const int took = kcoll_pmpi_streak_quick(KCOLL_COLL_GATHERV, comm, root, recvcounts, recvtype,
                                             sendbuf == MPI_IN_PLACE ? 0 : sendcount, sendtype);
    if (took && !kcoll_pending())
        return KCOLL_HOST_CALL(KCOLL_COLL_GATHERV, Gatherv)(sendbuf, sendcount, sendtype, recvbuf,
                   recvcounts, displs, recvtype, root, comm);
    return kcoll_gatherv_slow(took, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root, comm);
}

KCOLL_PUBLIC int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           NULL, NULL, 0, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
}

KCOLL_PUBLIC int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                           recvcounts, displs, 0, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         root, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, NULL, NULL, 0, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                               recvcounts, displs, 0, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif

#ifdef KCOLL_HAVE_LARGE_COUNT
KCOLL_PUBLIC int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           NULL, NULL, 1, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      root, comm));
}

KCOLL_PUBLIC int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                           recvcounts, displs, 1, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, root, comm));
}

KCOLL_PUBLIC int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               int root, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           NULL, NULL, 1, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          request);
}

KCOLL_PUBLIC int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                           recvcounts, displs, 1, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           root, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Gather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, NULL, NULL, 1, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void *recvbuf,
                                    const MPI_Count recvcounts[], const MPI_Aint displs[],
                                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_gather_call(&c, KCOLL_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                               recvcounts, displs, 1, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
#endif
