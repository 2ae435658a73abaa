/* MPI_Scatter(v), MPI_Iscatter(v), MPI_Scatter(v)_init and their
 * large-count (_c) forms: the root's send side is the blocked buffer, every
 * rank's receive side its own block; at the root MPI_IN_PLACE as the
 * receive buffer keeps its block where it is (call/fam_rooted.c decides). Only the arguments MPI says are
 * significant on this rank are looked at. */
#include "pmpi/pmpi.h"

void kcoll_pmpi_scatter_call(kcoll_call_t *c, kcoll_coll_t coll, const void *sendbuf,
                             int64_t sendcount, const void *sendcounts, const void *displs,
                             int wide, MPI_Datatype sendtype, void *recvbuf, int64_t recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_pmpi_describe(c, coll, root, comm);
    c->in_place = recvbuf == MPI_IN_PLACE;
    if (c->p && c->rank == root)
        kcoll_pmpi_side(&c->send, sendbuf, sendcount, sendcounts, displs, wide, sendtype, NULL);
    if (!c->in_place)
        kcoll_pmpi_side(&c->recv, recvbuf, recvcount, NULL, NULL, wide, recvtype,
                        sendtype == recvtype ? &c->send : NULL);
    kcoll_set_types(c, c->p && c->rank == root ? sendtype : MPI_DATATYPE_NULL,
                         c->in_place ? MPI_DATATYPE_NULL : recvtype);
}

/* MPI_Scatter past its shortcut */
KCOLL_SLOW int kcoll_scatter_slow(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, 0, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_SCATTER, key,
                            kcoll_pmpi_is_root(comm, root) ? sendtype : MPI_BYTE,
                            recvbuf == MPI_IN_PLACE ? MPI_BYTE : recvtype, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     root, comm));
}

KCOLL_PUBLIC int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, sendtype, recvtype,
                                              KCOLL_SHORTCUT_NONE, sendcount, recvcount, root);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_SCATTER, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_SCATTER, Scatter)(sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, recvtype, root, comm);
    return kcoll_scatter_slow(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, key);
}

/* MPI_Scatterv past its kept streak (took: it took the call, and a kcoll
 * request is pending) */
KCOLL_SLOW int kcoll_scatterv_slow(int took, const void *sendbuf, const int sendcounts[],
                                   const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    if (took || kcoll_pmpi_streak(KCOLL_COLL_SCATTERV, comm, root, sendcounts, sendtype,
                                  recvbuf == MPI_IN_PLACE ? 0 : recvcount, recvtype))
        KCOLL_RETURN_DRIVEN(PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                          recvcount, recvtype, root, comm));
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, 0, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                      recvtype, root, comm));
}

KCOLL_PUBLIC int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const int took = kcoll_pmpi_streak_quick(KCOLL_COLL_SCATTERV, comm, root, sendcounts, sendtype,
                                             recvbuf == MPI_IN_PLACE ? 0 : recvcount, recvtype);
    if (took && !kcoll_pending())
        return KCOLL_HOST_CALL(KCOLL_COLL_SCATTERV, Scatterv)(sendbuf, sendcounts, displs, sendtype,
                   recvbuf, recvcount, recvtype, root, comm);
    return kcoll_scatterv_slow(took, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root, comm);
}

KCOLL_PUBLIC int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, 0, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request);
}

KCOLL_PUBLIC int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                               MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, 0, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                          root, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, 0, sendtype,
                                recvbuf, recvcount, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[],
                                   const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                   MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                recvtype, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, 0,
                                sendtype, recvbuf, recvcount, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif

#ifdef KCOLL_HAVE_LARGE_COUNT
KCOLL_PUBLIC int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               int root, MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, 1, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype, root, comm));
}

KCOLL_PUBLIC int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, 1, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                        recvcount, recvtype, root, comm));
}

KCOLL_PUBLIC int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, 1, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm, request);
}

KCOLL_PUBLIC int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, 1, sendtype,
                            recvbuf, recvcount, recvtype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                            root, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Scatter_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, 1, sendtype,
                                recvbuf, recvcount, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint displs[], MPI_Datatype sendtype,
                                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                     int root, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                  recvtype, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_scatter_call(&c, KCOLL_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, 1,
                                sendtype, recvbuf, recvcount, recvtype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
#endif
