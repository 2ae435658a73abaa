/* MPI operations and datatypes for kcoll's reductions (pmpi.h).
 *
 * Predefined operations and datatypes map to kcoll's enums (op/op.h) by
 * handle; an MPI datatype maps to the kcoll type of its class and size
 * (MPI_LONG is KCOLL_T_INT64 where long has 8 bytes). MPI has no call that
 * returns the function of a user operation, so MPI_Op_create and
 * MPI_Op_free are intercepted and the functions kept in a table; a user
 * operation kcoll did not see created (none should exist) goes to the
 * host MPI. User functions are called through the binding they were made
 * with, on pieces of at most INT_MAX elements: C's MPI_User_function, or
 * Fortran's (the length and the datatype as Fortran handles; Open MPI's
 * Fortran MPI_OP_CREATE, which kcoll's Fortran bindings see, pmpi/fortran.c).
 * MPICH's Fortran MPI_OP_CREATE calls the C MPI_Op_create: there the
 * Fortran function is called through the C binding, which is the same call
 * since MPICH's handles are Fortran integers.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "mpi/objects.h"

/* ---- user operations ---- */

typedef struct {
    MPI_Op op;
    MPI_User_function *fn;
    int fortran; /* fn is a Fortran subroutine (pmpi.h, kcoll_pmpi_op_record) */
} kcoll_user_op_t;

static pthread_mutex_t kcoll_ops_lock = PTHREAD_MUTEX_INITIALIZER;
static kcoll_user_op_t *kcoll_ops;
static int kcoll_nops, kcoll_ops_cap;

void kcoll_pmpi_op_record(MPI_Op op, MPI_User_function *fn, int fortran)
{
    pthread_mutex_lock(&kcoll_ops_lock);
    if (!kcoll_grow((void **)&kcoll_ops, &kcoll_ops_cap, kcoll_nops, sizeof *kcoll_ops, 8))
        kcoll_ops[kcoll_nops++] = (kcoll_user_op_t){op, fn, fortran};
    /* else: not recorded, so calls with it go to the host MPI */
    pthread_mutex_unlock(&kcoll_ops_lock);
}

void kcoll_pmpi_op_forget(MPI_Op op)
{
    pthread_mutex_lock(&kcoll_ops_lock);
    for (int i = 0; i < kcoll_nops; i++)
        if (kcoll_ops[i].op == op) {
            kcoll_ops[i] = kcoll_ops[--kcoll_nops];
            break;
        }
    pthread_mutex_unlock(&kcoll_ops_lock);
}

int kcoll_pmpi_op_predefined(MPI_Op op)
{
    const MPI_Op named[] = {MPI_OP_NULL, MPI_MAX,  MPI_MIN,    MPI_SUM,    MPI_PROD,
                            MPI_LAND,    MPI_BAND, MPI_LOR,    MPI_BOR,    MPI_LXOR,
                            MPI_BXOR,    MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (op == named[i])
            return 1;
    return 0;
}


/* The record of a user operation kcoll saw created; 0 if op is not one.
 * (Its commutativity does not matter: kcoll combines the contributions in
 * rank order whatever the operation.) */
static int kcoll_user_op_lookup(MPI_Op op, kcoll_user_op_t *u)
{
    int found = 0;
    pthread_mutex_lock(&kcoll_ops_lock);
    for (int i = 0; i < kcoll_nops && !found; i++)
        if (kcoll_ops[i].op == op) {
            *u = kcoll_ops[i];
            found = 1;
        }
    pthread_mutex_unlock(&kcoll_ops_lock);
    return found;
}

int kcoll_pmpi_op_is_user(MPI_Op op)
{
    kcoll_user_op_t rec;
    return op != MPI_OP_NULL && kcoll_user_op_lookup(op, &rec);
}

/* ---- predefined operations and datatypes ---- */

static int kcoll_mpi_opkind(MPI_Op op, kcoll_opkind_t *k)
{
    /* static: built once, not on every call (the handles are constants) */
    static const struct { MPI_Op op; kcoll_opkind_t k; } ops[] = {
        {MPI_SUM, KCOLL_OP_SUM},     {MPI_PROD, KCOLL_OP_PROD},   {MPI_MIN, KCOLL_OP_MIN},
        {MPI_MAX, KCOLL_OP_MAX},     {MPI_LAND, KCOLL_OP_LAND},   {MPI_LOR, KCOLL_OP_LOR},
        {MPI_LXOR, KCOLL_OP_LXOR},   {MPI_BAND, KCOLL_OP_BAND},   {MPI_BOR, KCOLL_OP_BOR},
        {MPI_BXOR, KCOLL_OP_BXOR},   {MPI_MAXLOC, KCOLL_OP_MAXLOC}, {MPI_MINLOC, KCOLL_OP_MINLOC},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].op == op) {
            *k = ops[i].k;
            return 1;
        }
    return 0;
}

/* kcoll's integer type of `size` bytes, signed or not */
static int kcoll_int_type(int size, int is_signed, kcoll_type_t *t)
{
    switch (size) {
    case 1: *t = is_signed ? KCOLL_T_INT8 : KCOLL_T_UINT8; return 1;
    case 2: *t = is_signed ? KCOLL_T_INT16 : KCOLL_T_UINT16; return 1;
    case 4: *t = is_signed ? KCOLL_T_INT32 : KCOLL_T_UINT32; return 1;
    case 8: *t = is_signed ? KCOLL_T_INT64 : KCOLL_T_UINT64; return 1;
    }
    return 0;
}

/* Fortran's predefined types have no fixed size in C (compiler flags such
 * as -fdefault-integer-8 change INTEGER): each maps by its class and the
 * size the MPI reports. MPI defines fewer operations on some of them than
 * on their C twins: no logical operation on a Fortran INTEGER, only the
 * logical ones on LOGICAL; those calls go to the host MPI, whose error (or
 * answer) they get. */
typedef enum { KCOLL_F_INTEGER, KCOLL_F_REAL, KCOLL_F_COMPLEX, KCOLL_F_LOGICAL } kcoll_fclass_t;

static int kcoll_fortran_type(MPI_Datatype dt, int size, kcoll_opkind_t k, kcoll_type_t *t)
{
    static const struct { MPI_Datatype dt; kcoll_fclass_t c; } fortran[] = {
        {MPI_INTEGER, KCOLL_F_INTEGER},         {MPI_INTEGER1, KCOLL_F_INTEGER},
        {MPI_INTEGER2, KCOLL_F_INTEGER},        {MPI_INTEGER4, KCOLL_F_INTEGER},
        {MPI_INTEGER8, KCOLL_F_INTEGER},        {MPI_REAL, KCOLL_F_REAL},
        {MPI_REAL4, KCOLL_F_REAL},              {MPI_REAL8, KCOLL_F_REAL},
        {MPI_DOUBLE_PRECISION, KCOLL_F_REAL},   {MPI_COMPLEX, KCOLL_F_COMPLEX},
        {MPI_COMPLEX8, KCOLL_F_COMPLEX},        {MPI_COMPLEX16, KCOLL_F_COMPLEX},
        {MPI_DOUBLE_COMPLEX, KCOLL_F_COMPLEX},  {MPI_LOGICAL, KCOLL_F_LOGICAL},
    };
    const int logical_op = k == KCOLL_OP_LAND || k == KCOLL_OP_LOR || k == KCOLL_OP_LXOR;
    for (size_t i = 0; i < sizeof fortran / sizeof fortran[0]; i++) {
        if (fortran[i].dt != dt || dt == MPI_DATATYPE_NULL) /* NULL: a kind this MPI lacks */
            continue;
        switch (fortran[i].c) {
        case KCOLL_F_INTEGER:
            return !logical_op && kcoll_int_type(size, 1, t);
        case KCOLL_F_LOGICAL: /* .TRUE. is 1 with the compilers both MPIs are built for */
            return logical_op && kcoll_int_type(size, 1, t);
        case KCOLL_F_REAL:
            *t = size == sizeof(float) ? KCOLL_T_FLOAT : KCOLL_T_DOUBLE;
            return size == sizeof(float) || size == sizeof(double);
        case KCOLL_F_COMPLEX:
            *t = size == sizeof(float _Complex) ? KCOLL_T_CFLOAT : KCOLL_T_CDOUBLE;
            return size == sizeof(float _Complex) || size == sizeof(double _Complex);
        }
    }
    return 0;
}

static int kcoll_mpi_type(MPI_Datatype dt, int size, kcoll_opkind_t k, kcoll_type_t *t)
{
    static const MPI_Datatype sints[] = {
        MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG, MPI_LONG_LONG_INT,
        MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT};
    static const MPI_Datatype uints[] = {
        MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
        MPI_UNSIGNED_LONG_LONG, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T};
    /* the pairs' sizes are checked against kcoll's by the caller */
    static const struct { MPI_Datatype dt; kcoll_type_t t; } others[] = {
        {MPI_FLOAT, KCOLL_T_FLOAT},
        {MPI_DOUBLE, KCOLL_T_DOUBLE},
        {MPI_LONG_DOUBLE, KCOLL_T_LDOUBLE},
        {MPI_C_FLOAT_COMPLEX, KCOLL_T_CFLOAT},
        {MPI_C_DOUBLE_COMPLEX, KCOLL_T_CDOUBLE},
        {MPI_C_LONG_DOUBLE_COMPLEX, KCOLL_T_CLDOUBLE},
        {MPI_C_BOOL, KCOLL_T_BOOL},
        {MPI_BYTE, KCOLL_T_BYTE},
        {MPI_FLOAT_INT, KCOLL_T_FLOAT_INT},
        {MPI_2INT, KCOLL_T_2INT},
        {MPI_2INTEGER, KCOLL_T_2INT},
        {MPI_2REAL, KCOLL_T_2FLOAT},
        {MPI_2DOUBLE_PRECISION, KCOLL_T_2DOUBLE},
    };
    for (size_t i = 0; i < sizeof sints / sizeof sints[0]; i++)
        if (sints[i] == dt)
            return kcoll_int_type(size, 1, t);
    for (size_t i = 0; i < sizeof uints / sizeof uints[0]; i++)
        if (uints[i] == dt)
            return kcoll_int_type(size, 0, t);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (others[i].dt == dt) {
            *t = others[i].t;
            return 1;
        }
    return kcoll_fortran_type(dt, size, k, t);
}

/* ---- a user operation's kernel ---- */

/* Fortran handles: the MPI-5 standard ABI (mpi_abi.h, MPI_ABI_VERSION)
 * has none (no MPI_Fint, no MPI_Type_c2f): there every user operation is a
 * C one (the Fortran bindings are the MPI's own business). */
#ifdef MPI_ABI_VERSION
typedef int kcoll_fint_t;
#else
typedef MPI_Fint kcoll_fint_t;
#endif

/* What op->ctx holds for a user operation. */
typedef struct {
    MPI_User_function *fn;
    MPI_Datatype dt;
    int fortran;
    kcoll_fint_t fdt; /* dt as a Fortran handle, for a Fortran fn */
} kcoll_user_ctx_t;

/* A Fortran user subroutine: (invec, inoutvec, len, datatype), all by reference */
typedef void kcoll_fortran_user_fn(void *in, void *inout, kcoll_fint_t *len, kcoll_fint_t *dt);

static void kcoll_call_user(const void *in, void *inout, size_t n, const kcoll_op_t *op)
{
    kcoll_user_ctx_t u;
    memcpy(&u, op->ctx, sizeof u);
    while (n > 0) {
        int len = n > INT_MAX ? INT_MAX : (int)n;
        if (u.fortran) {
            kcoll_fint_t flen = (kcoll_fint_t)len;
            ((kcoll_fortran_user_fn *)(void (*)(void))u.fn)((void *)(uintptr_t)in, inout, &flen,
                                                            &u.fdt);
        } else {
            u.fn((void *)(uintptr_t)in, inout, &len, &u.dt);
        }
        in = (const char *)in + (size_t)len * op->esize;
        inout = (char *)inout + (size_t)len * op->esize;
        n -= (size_t)len;
    }
}

int kcoll_pmpi_op(MPI_Op mop, MPI_Datatype dt, const kcoll_side_t *side, kcoll_op_t *op)
{
    const size_t size = side->size;
    /* a derived datatype kcoll has a map for: both host MPIs define the
     * predefined operations on predefined datatypes only (MPI_ERR_OP
     * otherwise), and a user function wants the data where the datatype
     * puts it in memory, which the host does: to the host MPI */
    if (side->map)
        return 0;
    kcoll_user_ctx_t u = {NULL, dt, 0, 0};
    kcoll_user_op_t rec;
    if (size == 0 || size > INT_MAX)
        return 0;
    /* The last predefined pair this thread mapped: a program repeats the
     * same reduction. Only predefined operations on predefined datatypes
     * are kept, whose handles never name anything else. */
    static __thread __attribute__((tls_model("initial-exec"))) struct {
        MPI_Op mop;
        MPI_Datatype dt;
        kcoll_op_t op;
        int set;
    } last;
    if (last.set && last.mop == mop && last.dt == dt) {
        *op = last.op;
        return 1;
    }
    memset(op, 0, sizeof *op);
    op->esize = (size_t)size;
    if (kcoll_mpi_opkind(mop, &op->kind)) {
        if (!kcoll_mpi_type(dt, (int)size, op->kind, &op->type) || !kcoll_op_valid(op->kind, op->type) ||
            kcoll_type_size(op->type) != op->esize)
            return 0;
        last.mop = mop;
        last.dt = dt;
        last.op = *op;
        last.set = 1;
        return 1;
    }
    if (!kcoll_user_op_lookup(mop, &rec))
        return 0; /* MPI_REPLACE, MPI_NO_OP, unknown */
    u.fn = rec.fn;
    u.fortran = rec.fortran;
#ifndef MPI_ABI_VERSION
    if (u.fortran)
        u.fdt = PMPI_Type_c2f(dt);
#endif
    if (!(side->type & KCOLL_TYPE_PACKED))
        return 0; /* elements with gaps between them (extent > size) */
    _Static_assert(sizeof u <= sizeof op->ctx, "a user operation's context fits");
    op->kind = KCOLL_OP_USER;
    op->type = KCOLL_T_OPAQUE;
    op->user = kcoll_call_user;
    if (PMPI_Op_commutative(mop, &op->commute) != MPI_SUCCESS)
        op->commute = 0;
    memcpy(op->ctx, &u, sizeof u);
    return 1;
}

MPI_Datatype kcoll_pmpi_op_type(const kcoll_op_t *op)
{
    kcoll_user_ctx_t u;
    if (!op || op->kind != KCOLL_OP_USER)
        return MPI_DATATYPE_NULL;
    memcpy(&u, op->ctx, sizeof u);
    return u.dt;
}
