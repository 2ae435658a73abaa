/* MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init: no buffers
 * (call/fam_allcoll.c decides; across nodes cluster/barrier_leaders.c). */
#include "pmpi/pmpi.h"

/* MPI_Barrier past its shortcut */
KCOLL_SLOW int kcoll_barrier_slow(MPI_Comm comm, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe(&c, KCOLL_COLL_BARRIER, 0, comm);
    if (kcoll_pmpi_blocking(&c, comm, &rc) == KCOLL_PMPI_DONE)
        return rc;
    kcoll_pmpi_shortcut_arm(KCOLL_COLL_BARRIER, key, MPI_BYTE, MPI_BYTE, MPI_OP_NULL);
    KCOLL_RETURN_DRIVEN(PMPI_Barrier(comm));
}

KCOLL_PUBLIC int MPI_Barrier(MPI_Comm comm)
{
    const uint64_t key[] = KCOLL_SHORTCUT_KEY(comm, NULL, NULL, KCOLL_SHORTCUT_NONE,
                                              KCOLL_SHORTCUT_NONE, KCOLL_SHORTCUT_NONE, 0, 0, 0);
    if (kcoll_pmpi_shortcut(KCOLL_COLL_BARRIER, key))
        return KCOLL_HOST_CALL(KCOLL_COLL_BARRIER, Barrier)(comm);
    return kcoll_barrier_slow(comm, key);
}

KCOLL_PUBLIC int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    kcoll_call_t c;
    int rc;
    kcoll_pmpi_describe(&c, KCOLL_COLL_BARRIER, 0, comm);
    if (kcoll_pmpi_nonblocking(&c, comm, request, &rc) == KCOLL_PMPI_DONE)
        return rc;
    return PMPI_Ibarrier(comm, request);
}

#ifdef KCOLL_HAVE_PERSISTENT
KCOLL_PUBLIC int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    kcoll_call_t c;
    int rc = PMPI_Barrier_init(comm, info, request);
    if (rc == MPI_SUCCESS) {
        kcoll_pmpi_describe(&c, KCOLL_COLL_BARRIER, 0, comm);
        kcoll_pmpi_persistent(&c, comm, *request);
    }
    return rc;
}
#endif
