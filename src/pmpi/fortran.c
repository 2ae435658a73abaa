/* Fortran programs under Open MPI: kcoll's own Fortran entry points.
 *
 * Open MPI's Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) call the
 * host's PMPI_* functions directly, so without these a Fortran program's
 * collectives would never reach kcoll. Open MPI's `mpif.h` and `use mpi`
 * call the external names mpi_bcast_ (gfortran's mangling; mpi_bcast__,
 * mpi_bcast and MPI_BCAST are the other compilers'), and its `mpi_f08`
 * module's procedures call ompi_bcast_f; all five names are one function
 * here, which converts the arguments as Open MPI's own binding does and
 * calls kcoll's C MPI_Bcast (so the call goes wherever a C call would):
 *  - handles with PMPI_Comm_f2c, PMPI_Type_f2c, PMPI_Op_f2c, requests back
 *    with PMPI_Request_c2f; INTEGER count arrays are C int arrays (MPI_Fint
 *    is int in both Debian builds; checked below);
 *  - Fortran's MPI_IN_PLACE and MPI_BOTTOM are the addresses of Open MPI's
 *    common blocks mpi_fortran_in_place_ and mpi_fortran_bottom_ (one
 *    symbol per compiler mangling, resolved by the dynamic linker to the
 *    one instance the program and Open MPI share); they become C's
 *    MPI_IN_PLACE (only for the buffers where MPI allows it) and
 *    MPI_BOTTOM;
 *  - ierror is set when present (mpi_f08 passes none for an omitted one).
 * MPI_INIT and MPI_INIT_THREAD come here too, so a Fortran program starts
 * kcoll collectively (the node map, the tuning file read once), and
 * MPI_OP_CREATE / MPI_OP_FREE, so kcoll knows the Fortran user functions
 * (called with Fortran's arguments, mpi/op.c); those two are Open MPI's
 * own functions (found with dlsym RTLD_NEXT), which mark the operation as
 * Fortran for the host's own reductions. MPI_FINALIZE needs nothing: kcoll
 * ends inside the host's MPI_Finalize (pmpi/init.c). Completion (MPI_WAIT)
 * needs nothing either: kcoll's requests are the host's generalized
 * requests, advanced by the host's progress engine (mpi/progress.c).
 *
 * MPICH's Fortran bindings call the C MPI_* functions, with MPI_IN_PLACE
 * and MPI_BOTTOM already translated, so there kcoll's C entry points see
 * Fortran programs as they are, with a few exceptions in MPICH 4.0's
 * mpi_f08: its routines without a buffer argument call PMPI_* (the
 * collectives among them: MPI_Barrier and MPI_Ibarrier; and MPI_Init,
 * MPI_Init_thread). kcoll provides those external procedures of MPICH's
 * module, mpi_barrier_f08_ and the others at the end of this file, with
 * the arguments MPICH's own pass (handles are C ints, by reference; an
 * omitted ierror is NULL). Which host it is, mpi.h says: OPEN_MPI or
 * MPICH.
 */
#include "pmpi/pmpi.h"

#ifdef OPEN_MPI

#include <dlfcn.h>

#include "base/log.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are C int arrays");

/* Open MPI's common blocks, in every mangling Open MPI itself checks; weak:
 * the ones the compiler did not make stay NULL */
extern char mpi_fortran_in_place_ __attribute__((weak));
extern char mpi_fortran_in_place __attribute__((weak));
extern char mpi_fortran_in_place__ __attribute__((weak));
extern char MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern char mpi_fortran_bottom_ __attribute__((weak));
extern char mpi_fortran_bottom __attribute__((weak));
extern char mpi_fortran_bottom__ __attribute__((weak));
extern char MPI_FORTRAN_BOTTOM __attribute__((weak));

static int kcoll_f_is(const void *p, const char *a, const char *b, const char *c, const char *d)
{
    return p && (p == a || p == b || p == c || p == d);
}

/* A buffer argument: Fortran's MPI_BOTTOM is C's */
static void *kcoll_f_buf(void *p)
{
    return kcoll_f_is(p, &mpi_fortran_bottom_, &mpi_fortran_bottom, &mpi_fortran_bottom__,
                      &MPI_FORTRAN_BOTTOM)
               ? MPI_BOTTOM
               : p;
}

/* A buffer where MPI allows MPI_IN_PLACE */
static void *kcoll_f_inplace(void *p)
{
    return kcoll_f_is(p, &mpi_fortran_in_place_, &mpi_fortran_in_place, &mpi_fortran_in_place__,
                      &MPI_FORTRAN_IN_PLACE)
               ? MPI_IN_PLACE
               : kcoll_f_buf(p);
}

static void kcoll_f_ret(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

/* A non-blocking call's result: its request as a Fortran handle (req by
 * address: it is read after rc's call set it) */
static void kcoll_f_req(MPI_Fint *ierr, int rc, const MPI_Request *req, MPI_Fint *request)
{
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(*req);
    kcoll_f_ret(ierr, rc);
}

#define C_COMM PMPI_Comm_f2c(*comm)
#define C_TYPE(t) PMPI_Type_f2c(*(t))
#define C_OP PMPI_Op_f2c(*op)

/* The entry point ompi_<name>_f and its four aliases (other mangling). */
#define KCOLL_F_ALIAS(name, target) \
    KCOLL_PUBLIC __typeof__(target) name __attribute__((alias(#target)));
#define KCOLL_FORTRAN(lower, UPPER, params)                                 \
    KCOLL_PUBLIC void ompi_##lower##_f params;                              \
    KCOLL_F_ALIAS(mpi_##lower, ompi_##lower##_f)                            \
    KCOLL_F_ALIAS(mpi_##lower##_, ompi_##lower##_f)                         \
    KCOLL_F_ALIAS(mpi_##lower##__, ompi_##lower##_f)                        \
    KCOLL_F_ALIAS(MPI_##UPPER, ompi_##lower##_f)                            \
    KCOLL_PUBLIC void ompi_##lower##_f params

/* ---- start, and user operations ---- */

KCOLL_FORTRAN(init, INIT, (MPI_Fint *ierr))
{
    int argc = 0;
    char **argv = NULL;
    kcoll_f_ret(ierr, MPI_Init(&argc, &argv));
}

KCOLL_FORTRAN(init_thread, INIT_THREAD, (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))
{
    int argc = 0, prov = 0;
    char **argv = NULL;
    int rc = MPI_Init_thread(&argc, &argv, (int)*required, &prov);
    if (rc == MPI_SUCCESS)
        *provided = (MPI_Fint)prov;
    kcoll_f_ret(ierr, rc);
}

/* Open MPI's own Fortran entry point `name`, next after kcoll's */
static void *kcoll_f_host(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn)
        kcoll_warn("Open MPI's Fortran %s was not found; the call fails", name);
    return fn;
}

typedef void kcoll_f_op_create_t(void *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierr);
typedef void kcoll_f_op_free_t(MPI_Fint *op, MPI_Fint *ierr);

KCOLL_FORTRAN(op_create, OP_CREATE, (void *function, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierr))
{
    static kcoll_f_op_create_t *host;
    MPI_Fint rc = MPI_ERR_INTERN;
    if (!host)
        host = (kcoll_f_op_create_t *)kcoll_f_host("ompi_op_create_f");
    if (host)
        host(function, commute, op, &rc);
    if (rc == MPI_SUCCESS)
        kcoll_pmpi_op_record(C_OP, (MPI_User_function *)function, 1);
    kcoll_f_ret(ierr, rc);
}

KCOLL_FORTRAN(op_free, OP_FREE, (MPI_Fint *op, MPI_Fint *ierr))
{
    static kcoll_f_op_free_t *host;
    MPI_Fint rc = MPI_ERR_INTERN;
    MPI_Op c = C_OP;
    if (kcoll_retained_op_free(&c)) { /* a pending request uses it (mpi/retain.c) */
        *op = PMPI_Op_c2f(MPI_OP_NULL);
        kcoll_f_ret(ierr, MPI_SUCCESS);
        return;
    }
    if (!host)
        host = (kcoll_f_op_free_t *)kcoll_f_host("ompi_op_free_f");
    kcoll_pmpi_op_forget(C_OP);
    if (host)
        host(op, &rc);
    kcoll_f_ret(ierr, rc);
}

typedef void kcoll_f_type_free_t(MPI_Fint *type, MPI_Fint *ierr);
KCOLL_FORTRAN(type_free, TYPE_FREE, (MPI_Fint *type, MPI_Fint *ierr))
{
    static kcoll_f_type_free_t *host;
    MPI_Fint rc = MPI_ERR_INTERN;
    MPI_Datatype c = PMPI_Type_f2c(*type);
    if (kcoll_retained_type_free(&c)) { /* a pending request uses it (mpi/retain.c) */
        *type = PMPI_Type_c2f(MPI_DATATYPE_NULL);
        kcoll_f_ret(ierr, MPI_SUCCESS);
        return;
    }
    if (!host)
        host = (kcoll_f_type_free_t *)kcoll_f_host("ompi_type_free_f");
    if (host)
        host(type, &rc);
    kcoll_f_ret(ierr, rc);
}

/* ---- memory: MPI_ALLOC_MEM (both forms of BASEPTR, INTEGER(KIND=
 * MPI_ADDRESS_KIND) and TYPE(C_PTR), which mpi_f08 also calls), and
 * MPI_FREE_MEM, which frees kcoll's own and hands the rest to the host
 * (pmpi/mem.c); baseptr is where the address goes, base the memory ---- */

KCOLL_FORTRAN(alloc_mem, ALLOC_MEM,
              (MPI_Aint *size, MPI_Fint *info, void *baseptr, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Alloc_mem(*size, PMPI_Info_f2c(*info), baseptr));
}

KCOLL_FORTRAN(alloc_mem_cptr, ALLOC_MEM_CPTR,
              (MPI_Aint *size, MPI_Fint *info, void *baseptr, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Alloc_mem(*size, PMPI_Info_f2c(*info), baseptr));
}

KCOLL_FORTRAN(free_mem, FREE_MEM, (void *base, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Free_mem(base));
}

/* ---- blocking collectives ---- */

KCOLL_FORTRAN(barrier, BARRIER, (MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Barrier(C_COMM));
}

KCOLL_FORTRAN(bcast, BCAST,
              (char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Bcast(kcoll_f_buf(buf), *count, C_TYPE(type), *root, C_COMM));
}

KCOLL_FORTRAN(scatter, SCATTER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Scatter(kcoll_f_buf(sbuf), *scount, C_TYPE(stype),
                                  kcoll_f_inplace(rbuf), *rcount, C_TYPE(rtype), *root, C_COMM));
}

KCOLL_FORTRAN(scatterv, SCATTERV,
              (char *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, char *rbuf,
               MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Scatterv(kcoll_f_buf(sbuf), scounts, displs, C_TYPE(stype),
                                   kcoll_f_inplace(rbuf), *rcount, C_TYPE(rtype), *root, C_COMM));
}

KCOLL_FORTRAN(gather, GATHER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Gather(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                                 *rcount, C_TYPE(rtype), *root, C_COMM));
}

KCOLL_FORTRAN(gatherv, GATHERV,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts,
               MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Gatherv(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                                  rcounts, displs, C_TYPE(rtype), *root, C_COMM));
}

KCOLL_FORTRAN(allgather, ALLGATHER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Allgather(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype),
                                    kcoll_f_buf(rbuf), *rcount, C_TYPE(rtype), C_COMM));
}

KCOLL_FORTRAN(allgatherv, ALLGATHERV,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts,
               MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Allgatherv(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype),
                                     kcoll_f_buf(rbuf), rcounts, displs, C_TYPE(rtype), C_COMM));
}

KCOLL_FORTRAN(alltoall, ALLTOALL,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Alltoall(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype),
                                   kcoll_f_buf(rbuf), *rcount, C_TYPE(rtype), C_COMM));
}

KCOLL_FORTRAN(alltoallv, ALLTOALLV,
              (char *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, char *rbuf,
               MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm,
               MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Alltoallv(kcoll_f_inplace(sbuf), scounts, sdispls, C_TYPE(stype),
                                    kcoll_f_buf(rbuf), rcounts, rdispls, C_TYPE(rtype), C_COMM));
}

KCOLL_FORTRAN(reduce, REDUCE,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Reduce(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), *count, C_TYPE(type),
                                 C_OP, *root, C_COMM));
}

KCOLL_FORTRAN(allreduce, ALLREDUCE,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Allreduce(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), *count,
                                    C_TYPE(type), C_OP, C_COMM));
}

KCOLL_FORTRAN(reduce_scatter_block, REDUCE_SCATTER_BLOCK,
              (char *sbuf, char *rbuf, MPI_Fint *rcount, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Reduce_scatter_block(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), *rcount,
                                               C_TYPE(type), C_OP, C_COMM));
}

KCOLL_FORTRAN(reduce_scatter, REDUCE_SCATTER,
              (char *sbuf, char *rbuf, MPI_Fint *rcounts, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *ierr))
{
    kcoll_f_ret(ierr, MPI_Reduce_scatter(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), rcounts,
                                         C_TYPE(type), C_OP, C_COMM));
}

/* ---- non-blocking collectives ---- */

KCOLL_FORTRAN(ibarrier, IBARRIER, (MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr, MPI_Ibarrier(C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(ibcast, IBCAST,
              (char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr, MPI_Ibcast(kcoll_f_buf(buf), *count, C_TYPE(type), *root, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(iscatter, ISCATTER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request,
               MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Iscatter(kcoll_f_buf(sbuf), *scount, C_TYPE(stype), kcoll_f_inplace(rbuf),
                             *rcount, C_TYPE(rtype), *root, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(iscatterv, ISCATTERV,
              (char *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, char *rbuf,
               MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Iscatterv(kcoll_f_buf(sbuf), scounts, displs, C_TYPE(stype),
                              kcoll_f_inplace(rbuf), *rcount, C_TYPE(rtype), *root, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(igather, IGATHER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request,
               MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Igather(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                            *rcount, C_TYPE(rtype), *root, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(igatherv, IGATHERV,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts,
               MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Igatherv(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                             rcounts, displs, C_TYPE(rtype), *root, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(iallgather, IALLGATHER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Iallgather(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                               *rcount, C_TYPE(rtype), C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(iallgatherv, IALLGATHERV,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts,
               MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request,
               MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Iallgatherv(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                                rcounts, displs, C_TYPE(rtype), C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(ialltoall, IALLTOALL,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Ialltoall(kcoll_f_inplace(sbuf), *scount, C_TYPE(stype), kcoll_f_buf(rbuf),
                              *rcount, C_TYPE(rtype), C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(ialltoallv, IALLTOALLV,
              (char *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, char *rbuf,
               MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm,
               MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Ialltoallv(kcoll_f_inplace(sbuf), scounts, sdispls, C_TYPE(stype),
                               kcoll_f_buf(rbuf), rcounts, rdispls, C_TYPE(rtype), C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(ireduce, IREDUCE,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Ireduce(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), *count, C_TYPE(type), C_OP,
                            *root, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(iallreduce, IALLREDUCE,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Iallreduce(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), *count, C_TYPE(type),
                               C_OP, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(ireduce_scatter_block, IREDUCE_SCATTER_BLOCK,
              (char *sbuf, char *rbuf, MPI_Fint *rcount, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Ireduce_scatter_block(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), *rcount,
                                          C_TYPE(type), C_OP, C_COMM, &r), &r, request);
}

KCOLL_FORTRAN(ireduce_scatter, IREDUCE_SCATTER,
              (char *sbuf, char *rbuf, MPI_Fint *rcounts, MPI_Fint *type, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr))
{
    MPI_Request r;
    kcoll_f_req(ierr,
                MPI_Ireduce_scatter(kcoll_f_inplace(sbuf), kcoll_f_buf(rbuf), rcounts,
                                    C_TYPE(type), C_OP, C_COMM, &r), &r, request);
}

#elif defined(MPICH)

/* MPICH 4.0's mpi_f08 procedures that call PMPI_* (see above) */

static void kcoll_f08_ret(int *ierror, int rc)
{
    if (ierror)
        *ierror = rc;
}

KCOLL_PUBLIC void mpi_init_f08_(int *ierror);
KCOLL_PUBLIC void mpi_init_f08_(int *ierror)
{
    kcoll_f08_ret(ierror, MPI_Init(NULL, NULL));
}

KCOLL_PUBLIC void mpi_init_thread_f08_(int *required, int *provided, int *ierror);
KCOLL_PUBLIC void mpi_init_thread_f08_(int *required, int *provided, int *ierror)
{
    kcoll_f08_ret(ierror, MPI_Init_thread(NULL, NULL, *required, provided));
}

KCOLL_PUBLIC void mpi_barrier_f08_(MPI_Comm *comm, int *ierror);
KCOLL_PUBLIC void mpi_barrier_f08_(MPI_Comm *comm, int *ierror)
{
    kcoll_f08_ret(ierror, MPI_Barrier(*comm));
}

KCOLL_PUBLIC void mpi_ibarrier_f08_(MPI_Comm *comm, MPI_Request *request, int *ierror);
KCOLL_PUBLIC void mpi_ibarrier_f08_(MPI_Comm *comm, MPI_Request *request, int *ierror)
{
    kcoll_f08_ret(ierror, MPI_Ibarrier(*comm, request));
}

#endif
