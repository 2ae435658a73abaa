/* The host MPI's objects as kcoll sees them: derived datatypes flattened
 * to maps, MPI operations mapped to kcoll's reduction kernels, and the
 * handles a request keeps alive until it lets go (src/mpi: the glue
 * between MPI's handles and kcoll's MPI-free layers). The PMPI entry
 * points and the cross-node layer use it; it uses nothing of theirs.
 */
#ifndef KCOLL_MPI_OBJECTS_H
#define KCOLL_MPI_OBJECTS_H

#include <mpi.h>
#include <stddef.h>

#include "call/call.h"
#include "op/op.h"
#include "sched/dmap.h"

/* Derived datatypes as maps (mpi/dtype.c): the map of dt (size bytes,
 * extent, true lower bound tlb), made once and kept on the datatype, or
 * NULL (a predefined type, or one kcoll cannot flatten). init and
 * finalize make and free the attribute keyval. */
const kcoll_dmap_t *kcoll_dtype_map(MPI_Datatype dt, size_t size, MPI_Aint extent, MPI_Aint tlb);
/* dt's size when it is a predefined datatype whose elements are one run
 * of bytes, back to back (extent and true extent its size, lower bounds
 * 0), from answers asked once at start-up; 0 for any other datatype (ask
 * the host). */
size_t kcoll_dtype_plain(MPI_Datatype dt);
int kcoll_dtype_init(void);
void kcoll_dtype_finalize(void);

/* Is op predefined (never freed: a handle compared says the same
 * operation)? MPI_OP_NULL counts as one. */
int kcoll_pmpi_op_predefined(MPI_Op op);

/* MPI operations and datatypes to kcoll's (mpi/op.c): op set and 1, or 0
 * when no kcoll kernel applies. dt must be valid, side its description
 * (kcoll_pmpi_side: size, packed or not). */
int kcoll_pmpi_op(MPI_Op mop, MPI_Datatype dt, const kcoll_side_t *side, kcoll_op_t *op);
/* A user operation the host just created (fortran: fn is a Fortran
 * subroutine, called with Fortran handles), and one about to be freed. */
void kcoll_pmpi_op_record(MPI_Op op, MPI_User_function *fn, int fortran);
void kcoll_pmpi_op_forget(MPI_Op op);
/* Is op a user operation kcoll saw created? */
int kcoll_pmpi_op_is_user(MPI_Op op);
/* The MPI datatype a user operation's function gets (op made by
 * kcoll_pmpi_op), or MPI_DATATYPE_NULL for a predefined one. */
MPI_Datatype kcoll_pmpi_op_type(const kcoll_op_t *op);

/* Retained handles (mpi/retain.c): a request that hands a user's derived
 * datatype or operation to the host MPI or to a user function after the
 * call returned retains it until it lets go; MPI_Type_free and MPI_Op_free
 * of a retained handle then only mark it (the user's variable is set to
 * the null handle) and the host frees it when the last request lets go.
 * Predefined handles are ignored. The *_free functions: 1 when the handle
 * was retained and is now marked, 0 when the caller frees it itself. */
void kcoll_retain_type(MPI_Datatype dt);
void kcoll_release_type(MPI_Datatype dt);
void kcoll_retain_op(MPI_Op op);
void kcoll_release_op(MPI_Op op);
int kcoll_retained_type_free(MPI_Datatype *dt);
int kcoll_retained_op_free(MPI_Op *op);

#endif
