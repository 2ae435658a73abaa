/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * their non-blocking and persistent forms, and the large-count (_c) forms
 * of all of them (call/fam_reduce.c decides).
 * The datatype and counts ride on the receive side, the send side holds
 * the send buffer; the operation is mapped to kcoll's (mpi/op.c), or to
 * none, and MPI_OP_NULL makes the arguments invalid (the host reports it).
 * MPI_IN_PLACE: every rank's contribution is in its receive buffer. */
#include "pmpi/pmpi.h"

void kcoll_pmpi_reduce_call(kcoll_call_t *c, kcoll_op_t *op, kcoll_coll_t coll, const void *sendbuf,
                            void *recvbuf, int64_t count, const void *recvcounts, int wide,
                            MPI_Datatype datatype, MPI_Op mop, int root, MPI_Comm comm)
{
    kcoll_pmpi_describe(c, coll, root, comm);
    c->in_place = sendbuf == MPI_IN_PLACE;
    kcoll_pmpi_side(&c->recv, recvbuf, count, recvcounts, NULL, wide, datatype, NULL);
    if (!c->in_place) /* the send buffer, from the datatype's first byte as well */
        kcoll_pmpi_side(&c->send, sendbuf, count, NULL, NULL, 0, datatype, &c->recv);
    kcoll_set_handles(c, datatype, mop);
    if (mop == MPI_OP_NULL)
        c->recv.type &= ~KCOLL_TYPE_VALID;
    else if ((c->recv.type & KCOLL_TYPE_VALID) && kcoll_pmpi_op(mop, datatype, &c->recv, op))
        c->op = op;
}

/* MPI_Reduce past its shortcut */
KCOLL_SLOW int kcoll_reduce_slow(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                 const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, 0, datatype,
                           op, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_REDUCE, key, datatype, datatype, op);
    KCOLL_RETURN_DRIVEN(PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm));
}

KCOLL_PUBLIC int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, datatype, datatype, op,
                                              count, count, root);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_REDUCE, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_REDUCE, Reduce)(sendbuf, recvbuf, count, datatype, op,
                   root, comm);
    return kcoll_reduce_slow(sendbuf, recvbuf, count, datatype, op, root, comm, key);
}

/* MPI_Allreduce past its shortcut */
KCOLL_SLOW int kcoll_allreduce_slow(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 0,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_ALLREDUCE, key, datatype, datatype, op);
    KCOLL_RETURN_DRIVEN(PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, datatype, datatype, op,
                                              count, count, 0);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_ALLREDUCE, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_ALLREDUCE, Allreduce)(sendbuf, recvbuf, count, datatype,
                   op, comm);
    return kcoll_allreduce_slow(sendbuf, recvbuf, count, datatype, op, comm, key);
}

/* MPI_Reduce_scatter_block past its shortcut */
KCOLL_SLOW int kcoll_reduce_scatter_block_slow(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                               const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                           NULL, 0, datatype, op, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_REDUCE_SCATTER_BLOCK, key, datatype, datatype, op);
    KCOLL_RETURN_DRIVEN(PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, datatype, datatype, op,
                                              recvcount, recvcount, 0);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_REDUCE_SCATTER_BLOCK, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_REDUCE_SCATTER_BLOCK, Reduce_scatter_block)(sendbuf,
                   recvbuf, recvcount, datatype, op, comm);
    return kcoll_reduce_scatter_block_slow(sendbuf, recvbuf, recvcount, datatype, op, comm, key);
}

/* MPI_Reduce_scatter past its shortcut */
KCOLL_SLOW int kcoll_reduce_scatter_slow(const void *sendbuf, void *recvbuf,
                                         const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                         MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, 0,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_REDUCE_SCATTER, key, datatype, datatype, op);
    KCOLL_RETURN_DRIVEN(PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const uint64_t key[] =
        KCOLL_SHORTCUT_KEY(comm, sendbuf, recvbuf, datatype, datatype, op, 0, 0, 0);
    if (kcoll_pmpi_shortcut_v(KCOLL_COLL_REDUCE_SCATTER, key, recvcounts, NULL))
        return KCOLL_HOST_CALL(KCOLL_COLL_REDUCE_SCATTER, Reduce_scatter)(sendbuf, recvbuf,
                   recvcounts, datatype, op, comm);
    return kcoll_reduce_scatter_slow(sendbuf, recvbuf, recvcounts, datatype, op, comm, key);
}

KCOLL_PUBLIC int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, 0, datatype,
                           op, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

KCOLL_PUBLIC int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 0,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

KCOLL_PUBLIC int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                           NULL, 0, datatype, op, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

KCOLL_PUBLIC int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, 0,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, 0,
                               datatype, op, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 0,
                               datatype, op, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                               MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                            info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf,
                               recvcount, NULL, 0, datatype, op, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf,
                                         const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                      request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts,
                               0, datatype, op, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif

#ifdef KCOLL_HAVE_LARGE_COUNT
KCOLL_PUBLIC int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, 1, datatype,
                           op, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm));
}

KCOLL_PUBLIC int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 1,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                            MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                            MPI_Comm comm)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                           NULL, 1, datatype, op, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(
        PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf,
                                      const MPI_Count recvcounts[], MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, 1,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

KCOLL_PUBLIC int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                               MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, 1, datatype,
                           op, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

KCOLL_PUBLIC int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 1,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}

KCOLL_PUBLIC int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                             MPI_Count recvcount, MPI_Datatype datatype,
                                             MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                           NULL, 1, datatype, op, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                        request);
}

KCOLL_PUBLIC int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf,
                                       const MPI_Count recvcounts[], MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc;
    kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, 1,
                           datatype, op, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                   MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                   MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, 1,
                               datatype, op, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 1,
                               datatype, op, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf,
                                                 MPI_Count recvcount, MPI_Datatype datatype,
                                                 MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                 MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                              info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf,
                               recvcount, NULL, 1, datatype, op, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}

KCOLL_PUBLIC int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf,
                                           const MPI_Count recvcounts[], MPI_Datatype datatype,
                                           MPI_Op op, MPI_Comm comm, MPI_Info info,
                                           MPI_Request *request)
{
    kcoll_call_t c;
    kcoll_op_t kop;
    int rc = PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                        request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_reduce_call(&c, &kop, KCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts,
                               1, datatype, op, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
#endif
