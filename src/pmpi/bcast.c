/* MPI_Bcast, MPI_Ibcast, MPI_Bcast_init and their large-count (_c) forms:
 * the buffer is the receive side on every rank (call/fam_bcast.c
 * decides; across nodes cluster/bcast_leaders.c). */
#include "pmpi/pmpi.h"

void kcoll_pmpi_bcast_call(kcoll_call_t *c, void *buffer, int64_t count, MPI_Datatype datatype,
                           int root, MPI_Comm comm)
{
    kcoll_pmpi_describe(c, KCOLL_COLL_BCAST, root, comm);
    kcoll_pmpi_side(&c->recv, buffer, count, NULL, NULL, 0, datatype, NULL);
}

/* MPI_Bcast past its shortcut */
KCOLL_SLOW int kcoll_bcast_slow(void *buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_bcast_call(&c, buffer, count, datatype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_BCAST, key, datatype, datatype, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Bcast(buffer, count, datatype, root, comm));
}

KCOLL_PUBLIC int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, buffer, buffer, datatype, datatype,
                                              KCOLL_SHORTCUT_NONE, count, count, root);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_BCAST, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_BCAST, Bcast)(buffer, count, datatype, root, comm);
    return kcoll_bcast_slow(buffer, count, datatype, root, comm, key);
}

KCOLL_PUBLIC int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                            MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_bcast_call(&c, buffer, count, datatype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_bcast_call(&c, buffer, count, datatype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif

#ifdef KCOLL_HAVE_LARGE_COUNT
KCOLL_PUBLIC int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                             MPI_Comm comm)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_bcast_call(&c, buffer, count, datatype, root, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc))
        return rc;
    KCOLL_RETURN_DRIVEN(PMPI_Bcast_c(buffer, count, datatype, root, comm));
}

KCOLL_PUBLIC int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                              MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_bcast_call(&c, buffer, count, datatype, root, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc))
        return rc;
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_bcast_call(&c, buffer, count, datatype, root, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
#endif
