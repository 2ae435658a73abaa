/* Reduction operations on element vectors, without MPI: kcoll's own names
 * for MPI's predefined operations and datatypes, and the kernels that apply
 * them (src/op/op.c). The PMPI layer maps MPI handles to these.
 *
 * Every kernel computes inout[i] = in[i] op inout[i] for i < n, which is
 * the argument order of an MPI user function (invec, inoutvec): a reduction
 * that starts with the last rank's vector in the accumulator and applies
 * the kernel with ranks p-2, ..., 0 as `in` yields r0 op (r1 op (... op
 * r_{p-1})), MPI's operand order, also for non-commutative operations.
 */
#ifndef KCOLL_OP_H
#define KCOLL_OP_H

#include <stddef.h>

typedef enum {
    KCOLL_OP_SUM,
    KCOLL_OP_PROD,
    KCOLL_OP_MIN,
    KCOLL_OP_MAX,
    KCOLL_OP_LAND,
    KCOLL_OP_LOR,
    KCOLL_OP_LXOR,
    KCOLL_OP_BAND,
    KCOLL_OP_BOR,
    KCOLL_OP_BXOR,
    KCOLL_OP_MAXLOC,
    KCOLL_OP_MINLOC,
    KCOLL_OP_USER, /* a function given by the caller */
    KCOLL_NOP
} kcoll_opkind_t;

typedef enum {
    KCOLL_T_INT8,
    KCOLL_T_INT16,
    KCOLL_T_INT32,
    KCOLL_T_INT64,
    KCOLL_T_UINT8,
    KCOLL_T_UINT16,
    KCOLL_T_UINT32,
    KCOLL_T_UINT64,
    KCOLL_T_FLOAT,
    KCOLL_T_DOUBLE,
    KCOLL_T_LDOUBLE,
    KCOLL_T_CFLOAT,   /* float _Complex */
    KCOLL_T_CDOUBLE,  /* double _Complex */
    KCOLL_T_CLDOUBLE, /* long double _Complex */
    KCOLL_T_BOOL,     /* C _Bool */
    KCOLL_T_BYTE,     /* uninterpreted octets: bitwise operations only */
    KCOLL_T_FLOAT_INT, /* struct { float v; int i; } (MPI_FLOAT_INT) */
    KCOLL_T_2INT,      /* struct { int v; int i; } (MPI_2INT, Fortran's MPI_2INTEGER) */
    KCOLL_T_2FLOAT,    /* struct { float v; float i; } (Fortran's MPI_2REAL) */
    KCOLL_T_2DOUBLE,   /* struct { double v; double i; } (MPI_2DOUBLE_PRECISION) */
    KCOLL_T_OPAQUE,    /* only for KCOLL_OP_USER: elements of `esize` bytes */
    KCOLL_NTYPE
} kcoll_type_t;

struct kcoll_op;
/* inout[0..n) = in[0..n) op inout[0..n) for n elements, by a user
 * function; op->ctx holds what the caller stored there. */
typedef void (*kcoll_user_fn)(const void *in, void *inout, size_t n, const struct kcoll_op *op);

typedef struct kcoll_op {
    kcoll_opkind_t kind;
    kcoll_type_t type;
    size_t esize;        /* bytes per element */
    kcoll_user_fn user;  /* KCOLL_OP_USER */
    /* KCOLL_OP_USER: made commutative (MPI_Op_create's commute), so MPI
     * lets its operands be combined in any order */
    int commute;
    /* the caller's context for user, inside the operation, so that a copy
     * of the operation (a non-blocking collective keeps one) is complete */
    _Alignas(16) unsigned char ctx[32];
} kcoll_op_t;

/* Bytes of one element of t (0 for KCOLL_T_OPAQUE). */
size_t kcoll_type_size(kcoll_type_t t);
/* Does MPI define predefined operation k on type t? */
int kcoll_op_valid(kcoll_opkind_t k, kcoll_type_t t);
/* inout = in op inout over `bytes` bytes (a multiple of op->esize). */
void kcoll_op_apply(const kcoll_op_t *op, const void *in, void *inout, size_t bytes);
/* inout = inout op in: the same operation with the roles of the sources
 * swapped (the result's bits are those of kcoll_op_apply on swapped
 * buffers). Only where kcoll_op_has_rev: not for user functions, which
 * MPI defines only as inout = in op inout. */
int kcoll_op_has_rev(const kcoll_op_t *op);
void kcoll_op_apply_rev(const kcoll_op_t *op, const void *in, void *inout, size_t bytes);
/* Can op (may be NULL) reduce `bytes` bytes, reversed if rev? What a
 * REDUCE step needs, checked alike by the executor and the simulator. */
static inline int kcoll_op_fits(const kcoll_op_t *op, size_t bytes, int rev)
{
    return op && bytes % op->esize == 0 && (!rev || kcoll_op_has_rev(op));
}
const char *kcoll_op_name(kcoll_opkind_t k);

#endif
