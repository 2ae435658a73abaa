/* A failed collective, said in one line and handed to the communicator's
 * error handler, as MPI reports a failure of its own. */
#include "base/log.h"
#include "mpi/host.h"

int kcoll_world_rank = -1;

int kcoll_mpi_error(kcoll_status_t st)
{
    switch (st) {
    case KCOLL_OK: return MPI_SUCCESS;
    case KCOLL_ERR_ARG: return MPI_ERR_ARG;
    case KCOLL_ERR_NOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_OTHER;
    }
}

int kcoll_report(kcoll_coll_t c, const char *form, kcoll_status_t st, const char *what)
{
    kcoll_error("%s%s failed on MPI_COMM_WORLD rank %d: %s", kcoll_coll_name(c), form,
                kcoll_world_rank, what);
    return kcoll_mpi_error(st);
}

int kcoll_fail(MPI_Comm comm, kcoll_coll_t c, kcoll_status_t st, const char *what)
{
    int err = kcoll_report(c, "", st, what);
    PMPI_Comm_call_errhandler(comm, err);
    return err;
}
