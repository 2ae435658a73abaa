/* The MPI handles kcoll follows: user operations as they are created and
 * freed (mpi/op.c records them, so that a reduction with one can run
 * kcoll's schedule and call the user's function), and datatypes and
 * operations freed while a request still uses them (mpi/retain.c: the
 * host frees them when the request lets go). */
#include "pmpi/pmpi.h"

KCOLL_PUBLIC int MPI_Type_free(MPI_Datatype *datatype)
{
    if (kcoll_retained_type_free(datatype))
        return MPI_SUCCESS; /* a pending request uses it: freed after (mpi/retain.c) */
    return PMPI_Type_free(datatype);
}

KCOLL_PUBLIC int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    int rc = PMPI_Op_create(user_fn, commute, op);
    if (rc == MPI_SUCCESS)
        kcoll_pmpi_op_record(*op, user_fn, 0);
    return rc;
}

KCOLL_PUBLIC int MPI_Op_free(MPI_Op *op)
{
    if (kcoll_retained_op_free(op))
        return MPI_SUCCESS; /* a pending request uses it: freed after (mpi/retain.c) */
    if (op)
        kcoll_pmpi_op_forget(*op);
    return PMPI_Op_free(op);
}
