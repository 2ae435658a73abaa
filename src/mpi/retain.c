/* Handles that pending requests still use (pmpi.h, "Retained handles").
 *
 * MPI lets a program free a datatype or an operation while a non-blocking
 * or persistent call that uses it is pending: "the object is marked for
 * deallocation", and the call completes normally. The host MPIs keep a
 * reference count on their objects for that; a PMPI library cannot reach
 * it. So a request of kcoll's that will still hand a user's datatype or
 * operation to the host MPI later (a call across nodes' host collective
 * between the nodes, started when the phases before it are done) or to a user
 * function (a reduction's MPI_User_function gets the datatype) retains it
 * here, and MPI_Type_free and MPI_Op_free of a retained handle only mark
 * it: the user's variable becomes MPI_DATATYPE_NULL or MPI_OP_NULL as MPI
 * says, and the host's free runs when the last request lets go. Predefined
 * handles are never retained (they are never freed).
 *
 * The table is small (one entry per retained handle, few at a time) and
 * under a lock; a free with nothing retained costs one relaxed load. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/grow.h"
#include "mpi/objects.h"

typedef struct {
    int kind;       /* 0 datatype, 1 operation */
    uint64_t key;   /* the handle's bits */
    MPI_Datatype dt;
    MPI_Op op;
    int refs;       /* pending requests that use it */
    int doomed;     /* the program freed it: the host's free runs at refs 0 */
} kcoll_held_t;

static kcoll_held_t *kcoll_held;
static int kcoll_nheld, kcoll_held_cap;
static pthread_mutex_t kcoll_held_lock = PTHREAD_MUTEX_INITIALIZER;
/* relaxed: a hint (is anything retained?) read by the free functions */
static _Atomic int kcoll_held_any;

static uint64_t kcoll_bits(const void *h, size_t size)
{
    uint64_t k = 0;
    memcpy(&k, h, size < sizeof k ? size : sizeof k);
    return k;
}

static kcoll_held_t *kcoll_held_find(int kind, uint64_t key)
{
    for (int i = 0; i < kcoll_nheld; i++)
        if (kcoll_held[i].kind == kind && kcoll_held[i].key == key)
            return &kcoll_held[i];
    return NULL;
}

/* Is dt one of MPI's own (never freed), or no handle at all (all bits
 * zero: a field a caller left unset)? */
static int kcoll_type_named(MPI_Datatype dt)
{
    int ni, na, nd, combiner;
    if (!kcoll_bits(&dt, sizeof dt) || dt == MPI_DATATYPE_NULL || kcoll_dtype_plain(dt))
        return 1;
    return PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
           combiner == MPI_COMBINER_NAMED;
}

static void kcoll_hold(int kind, MPI_Datatype dt, MPI_Op op)
{
    const uint64_t key = kind ? kcoll_bits(&op, sizeof op) : kcoll_bits(&dt, sizeof dt);
    pthread_mutex_lock(&kcoll_held_lock);
    kcoll_held_t *e = kcoll_held_find(kind, key);
    if (!e && !kcoll_grow((void **)&kcoll_held, &kcoll_held_cap, kcoll_nheld, sizeof *kcoll_held,
                          8)) {
        e = &kcoll_held[kcoll_nheld++];
        *e = (kcoll_held_t){kind, key, dt, op, 0, 0};
        /* relaxed: see kcoll_held_any */
        atomic_store_explicit(&kcoll_held_any, kcoll_nheld, memory_order_relaxed);
    }
    if (e)
        e->refs++;
    /* else out of memory: not retained, as before MPI's rule was kept */
    pthread_mutex_unlock(&kcoll_held_lock);
}

static void kcoll_let_go(int kind, MPI_Datatype dt, MPI_Op op)
{
    const uint64_t key = kind ? kcoll_bits(&op, sizeof op) : kcoll_bits(&dt, sizeof dt);
    int doomed = 0;
    pthread_mutex_lock(&kcoll_held_lock);
    kcoll_held_t *e = kcoll_held_find(kind, key);
    if (e && --e->refs == 0) {
        doomed = e->doomed;
        *e = kcoll_held[--kcoll_nheld];
        /* relaxed: see kcoll_held_any */
        atomic_store_explicit(&kcoll_held_any, kcoll_nheld, memory_order_relaxed);
    }
    pthread_mutex_unlock(&kcoll_held_lock);
    if (!doomed)
        return;
    if (kind) {
        kcoll_pmpi_op_forget(op);
        PMPI_Op_free(&op);
    } else {
        PMPI_Type_free(&dt);
    }
}

void kcoll_retain_type(MPI_Datatype dt)
{
    if (!kcoll_type_named(dt))
        kcoll_hold(0, dt, MPI_OP_NULL);
}

void kcoll_release_type(MPI_Datatype dt)
{
    if (!kcoll_type_named(dt))
        kcoll_let_go(0, dt, MPI_OP_NULL);
}

void kcoll_retain_op(MPI_Op op)
{
    if (kcoll_pmpi_op_is_user(op))
        kcoll_hold(1, MPI_DATATYPE_NULL, op);
}

void kcoll_release_op(MPI_Op op)
{
    if (kcoll_pmpi_op_is_user(op))
        kcoll_let_go(1, MPI_DATATYPE_NULL, op);
}

/* The program frees handle *h (kind): 1 when a request still uses it (it
 * is marked, *h set to null), 0 when the caller frees it now. */
static int kcoll_free_later(int kind, uint64_t key)
{
    int later = 0;
    /* relaxed: see kcoll_held_any */
    if (!atomic_load_explicit(&kcoll_held_any, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&kcoll_held_lock);
    kcoll_held_t *e = kcoll_held_find(kind, key);
    if (e && !e->doomed) {
        e->doomed = 1;
        later = 1;
    }
    pthread_mutex_unlock(&kcoll_held_lock);
    return later;
}

int kcoll_retained_type_free(MPI_Datatype *dt)
{
    if (!dt || !kcoll_free_later(0, kcoll_bits(dt, sizeof *dt)))
        return 0;
    *dt = MPI_DATATYPE_NULL;
    return 1;
}

int kcoll_retained_op_free(MPI_Op *op)
{
    if (!op || !kcoll_free_later(1, kcoll_bits(op, sizeof *op)))
        return 0;
    *op = MPI_OP_NULL;
    return 1;
}
