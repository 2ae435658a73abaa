/* The common path of the intercepted reductions (MPI_Reduce,
 * MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter): from MPI
 * datatype and operation to kcoll's (op/op.h), eligibility, buffers. */
#ifndef KCOLL_PMPI_REDUCTION_H
#define KCOLL_PMPI_REDUCTION_H

#include "op/op.h"
#include "pmpi/pmpi.h"

/* A reduction call as the four MPI functions describe it. */
typedef struct {
    kcoll_coll_t coll;
    const void *sendbuf;
    void *recvbuf;
    int count;             /* Reduce, Allreduce: vector; Reduce_scatter_block: block */
    const int *recvcounts; /* Reduce_scatter */
    MPI_Datatype datatype;
    MPI_Op op;
    int root;              /* Reduce; 0 otherwise */
    MPI_Comm comm;
} kcoll_red_call_t;

/* Do the call with kcoll if it can: returns 1 and the MPI result in *rc.
 * Returns 0 (the reason counted in the statistics) when the caller must
 * call the host MPI. */
int kcoll_pmpi_reduction(const kcoll_red_call_t *c, int *rc);

/* The function and commutativity of a user operation created through
 * MPI_Op_create (pmpi/op.c); 0 if op is not one. */
int kcoll_user_op_lookup(MPI_Op op, MPI_User_function **fn, int *commute);

#endif
