/* MPI operations and datatypes for kcoll's reductions.
 *
 * Predefined operations and datatypes map to kcoll's enums (op/op.h) by
 * handle; an MPI datatype maps to the kcoll type of its class and size
 * (MPI_LONG is KCOLL_T_INT64 where long has 8 bytes). MPI has no call that
 * returns the function of a user operation, so MPI_Op_create and
 * MPI_Op_free are intercepted and the functions kept in a table; a user
 * operation kcoll did not see created (none should exist) goes to the
 * host MPI. User functions are called through the C binding
 * (MPI_User_function) on pieces of at most INT_MAX elements.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll/reduce/common.h"
#include "pmpi/reduction.h"

/* ---- user operations ---- */

typedef struct {
    MPI_Op op;
    MPI_User_function *fn;
    int commute;
} kcoll_user_op_t;

static pthread_mutex_t kcoll_ops_lock = PTHREAD_MUTEX_INITIALIZER;
static kcoll_user_op_t *kcoll_ops;
static int kcoll_nops, kcoll_ops_cap;

KCOLL_PUBLIC int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    int rc = PMPI_Op_create(user_fn, commute, op);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&kcoll_ops_lock);
    if (!kcoll_grow((void **)&kcoll_ops, &kcoll_ops_cap, kcoll_nops, sizeof *kcoll_ops, 8))
        kcoll_ops[kcoll_nops++] = (kcoll_user_op_t){*op, user_fn, commute};
    /* else: not recorded, so calls with it go to the host MPI */
    pthread_mutex_unlock(&kcoll_ops_lock);
    return rc;
}

KCOLL_PUBLIC int MPI_Op_free(MPI_Op *op)
{
    if (op) {
        pthread_mutex_lock(&kcoll_ops_lock);
        for (int i = 0; i < kcoll_nops; i++)
            if (kcoll_ops[i].op == *op) {
                kcoll_ops[i] = kcoll_ops[--kcoll_nops];
                break;
            }
        pthread_mutex_unlock(&kcoll_ops_lock);
    }
    return PMPI_Op_free(op);
}

int kcoll_user_op_lookup(MPI_Op op, MPI_User_function **fn, int *commute)
{
    int found = 0;
    pthread_mutex_lock(&kcoll_ops_lock);
    for (int i = 0; i < kcoll_nops && !found; i++)
        if (kcoll_ops[i].op == op) {
            *fn = kcoll_ops[i].fn;
            *commute = kcoll_ops[i].commute;
            found = 1;
        }
    pthread_mutex_unlock(&kcoll_ops_lock);
    return found;
}

/* ---- predefined operations and datatypes ---- */

static int kcoll_mpi_opkind(MPI_Op op, kcoll_opkind_t *k)
{
    const struct { MPI_Op op; kcoll_opkind_t k; } ops[] = {
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

static int kcoll_mpi_type(MPI_Datatype dt, kcoll_type_t *t)
{
    const MPI_Datatype sints[] = {MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG,
                                  MPI_LONG_LONG_INT, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T,
                                  MPI_INT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT};
    const MPI_Datatype uints[] = {MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED,
                                  MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_UINT8_T,
                                  MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T};
    const struct { MPI_Datatype dt; kcoll_type_t t; } others[] = {
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
    };
    int size;
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS)
        return 0;
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
    return 0;
}

/* ---- the common path of the four reductions ---- */

typedef struct {
    MPI_User_function *fn;
    MPI_Datatype dt;
} kcoll_user_ctx_t;

static void kcoll_call_user(const void *in, void *inout, size_t n, void *ctx)
{
    kcoll_user_ctx_t *u = ctx;
    int size;
    PMPI_Type_size(u->dt, &size);
    while (n > 0) {
        int len = n > INT_MAX ? INT_MAX : (int)n;
        u->fn((void *)(uintptr_t)in, inout, &len, &u->dt);
        in = (const char *)in + (size_t)len * (size_t)size;
        inout = (char *)inout + (size_t)len * (size_t)size;
        n -= (size_t)len;
    }
}

int kcoll_pmpi_reduction(const kcoll_red_call_t *c, int *rc)
{
    const kcoll_coll_t coll = c->coll;
    kcoll_reason_t why;
    size_t bytes = 0, esize, total = 0;
    int p, rank, tsize;
    MPI_Aint lb = 0;
    const kcoll_algo_t *algo;
    int param;
    size_t *counts = NULL;

    why = KCOLL_R_DISABLED;
    if (!kcoll_ready())
        goto host;
    if (!kcoll_pmpi_comm(c->comm, &p, &rank, &why))
        goto host;
    why = KCOLL_R_INVALID;
    if (c->datatype == MPI_DATATYPE_NULL || c->op == MPI_OP_NULL ||
        PMPI_Type_size(c->datatype, &tsize) != MPI_SUCCESS || tsize <= 0)
        goto host;
    esize = (size_t)tsize;
    if (coll == KCOLL_COLL_REDUCE_SCATTER) {
        if (!c->recvcounts)
            goto host;
        for (int q = 0; q < p; q++) {
            if (c->recvcounts[q] < 0)
                goto host;
            total += (size_t)c->recvcounts[q];
        }
        bytes = total / (size_t)p * esize; /* the mean block */
    } else {
        if (c->count < 0)
            goto host;
        bytes = (size_t)c->count * esize;
        total = coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK ? (size_t)c->count * (size_t)p
                                                        : (size_t)c->count;
    }
    if (coll == KCOLL_COLL_REDUCE && (c->root < 0 || c->root >= p))
        goto host;
    if (!kcoll_pmpi_policy(p, bytes, &why))
        goto host;

    /* operation and datatype: identical on every rank (MPI requires it),
     * so every rank decides alike without an agreement */
    kcoll_op_t op = {.esize = esize};
    kcoll_user_ctx_t uctx = {NULL, c->datatype};
    int commute;
    why = KCOLL_R_OP;
    if (kcoll_mpi_opkind(c->op, &op.kind)) {
        if (!kcoll_mpi_type(c->datatype, &op.type) || !kcoll_op_valid(op.kind, op.type) ||
            kcoll_type_size(op.type) != esize)
            goto host;
    } else if (kcoll_user_op_lookup(c->op, &uctx.fn, &commute)) {
        MPI_Aint xlb, extent;
        if (PMPI_Type_get_extent(c->datatype, &xlb, &extent) != MPI_SUCCESS ||
            extent != (MPI_Aint)esize)
            goto host;
        op.kind = KCOLL_OP_USER;
        op.type = KCOLL_T_OPAQUE;
        op.user = kcoll_call_user;
        op.ctx = &uctx;
    } else {
        goto host; /* MPI_REPLACE, MPI_NO_OP, unknown */
    }
    why = KCOLL_R_NONCONTIG;
    if (!kcoll_dtype_contig(c->datatype, total > INT_MAX ? INT_MAX : (int)total, &lb))
        goto host;

    kcoll_team_t *team = kcoll_pmpi_team(c->comm, kcoll_coll_family(coll), &algo, &param, &why);
    if (!team)
        goto host;
    if (!algo) {
        if (coll == KCOLL_COLL_REDUCE)
            algo = kcoll_reduce_select(p, bytes, &param);
        else if (coll == KCOLL_COLL_ALLREDUCE)
            algo = kcoll_allreduce_select(p, bytes, &param);
        else
            algo = kcoll_reduce_scatter_select(p, bytes, &param);
        if (!algo) { /* the default rule prefers the host MPI at this size */
            why = KCOLL_R_SMALL;
            goto host;
        }
    }

    if (coll == KCOLL_COLL_REDUCE_SCATTER) {
        counts = malloc((size_t)p * sizeof *counts);
        if (!counts) {
            *rc = kcoll_fail(c->comm, coll, "out of memory");
            return 1;
        }
        for (int q = 0; q < p; q++)
            counts[q] = (size_t)c->recvcounts[q];
    }
    int in_place = c->sendbuf == MPI_IN_PLACE;
    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .root = c->root, .bytes = bytes,
                         .in_place = in_place, .k = param, .count = (size_t)c->count,
                         .esize = esize, .counts = counts, .op = &op};
    if (coll == KCOLL_COLL_REDUCE && rank != c->root)
        args.in_place = 0; /* only the root's matters */
    size_t vec = total * esize, off, mine;
    size_t tmp_len = kcoll_reduce_tmp_len(&args);
    void *tmp = kcoll_team_scratch(team, tmp_len);
    if (!tmp) {
        free(counts);
        *rc = kcoll_fail(c->comm, coll, "no scratch memory for the reduction");
        return 1;
    }
    char *recv = c->recvbuf ? (char *)c->recvbuf + lb : NULL;
    char *send = args.in_place ? recv : (char *)(uintptr_t)c->sendbuf + lb;
    size_t recv_len = vec;
    if (coll == KCOLL_COLL_REDUCE_SCATTER || coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        /* in place the receive buffer holds the whole vector on entry */
        kcoll_red_slice(&args, rank, &off, &mine);
        recv_len = args.in_place ? vec : mine;
    }
    if (coll == KCOLL_COLL_REDUCE && rank != c->root) {
        recv = NULL;
        recv_len = 0;
    }
    void *bufs[KCOLL_NBUF] = {send, recv, tmp};
    size_t lens[KCOLL_NBUF] = {vec, recv_len, tmp_len};
    *rc = kcoll_pmpi_run(c->comm, team, algo, &args, bufs, lens, bytes);
    free(counts);
    return 1;

host:
    kcoll_stats_count_mpi(coll, why, bytes);
    return 0;
}
