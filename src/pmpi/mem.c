/* MPI_Alloc_mem and MPI_Free_mem: memory peers can map, for the direct
 * engine (xfer/direct.h, docs/engines.md).
 *
 * MPI says memory from MPI_Alloc_mem may be faster for communication;
 * kcoll makes it so on one node: each allocation is a memfd of its own,
 * mapped shared and recorded in this process's registry, so that a
 * collective whose peers' buffers lie in such memory moves them with
 * loads and stores. It does so for sizes above 0 where the direct engine
 * may run (KCOLL_ENGINE auto or direct, kcoll enabled and started); the
 * memory is page-aligned, and the info argument is not looked at (no
 * key of the MPI standard changes what kcoll can give). Otherwise, and
 * when the system refuses (no registry slot left, no fd), the host MPI
 * allocates. MPI_Free_mem frees kcoll's own and hands every other
 * pointer to the host, so memory from either is freed where it came from,
 * also after MPI_Finalize. Fortran: Open MPI's bindings call PMPI_*, so
 * kcoll brings MPI_ALLOC_MEM and MPI_FREE_MEM for them too
 * (pmpi/fortran.c); MPICH's mpif.h and `use mpi` call these C functions,
 * its mpi_f08 MPI_Alloc_mem calls the host's PMPI_Alloc_mem (that memory
 * is the host's, and MPI_Free_mem gives it back to the host). */
#include <string.h>

#include "base/params.h"
#include "pmpi/pmpi.h"
#include "xfer/direct.h"

KCOLL_PUBLIC int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    const char *engine = kcoll_param_str(KCOLL_P_ENGINE);
    if (size > 0 && baseptr && kcoll_ready() && !kcoll_param_int(KCOLL_P_DISABLE) &&
        (!strcmp(engine, "auto") || !strcmp(engine, "direct"))) {
        void *p = kcoll_direct_alloc((size_t)size);
        if (p) {
            memcpy(baseptr, &p, sizeof p);
            return MPI_SUCCESS;
        }
    }
    return PMPI_Alloc_mem(size, info, baseptr);
}

KCOLL_PUBLIC int MPI_Free_mem(void *base)
{
    if (base && kcoll_direct_free(base))
        return MPI_SUCCESS;
    return PMPI_Free_mem(base);
}
