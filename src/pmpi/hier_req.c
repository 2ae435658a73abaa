/* Composed requests: a collective on a communicator that spans nodes, as
 * a list of operations on its node and leaders' communicators (see
 * hier.h), run the same way whether the call blocks, returns a request or
 * is persistent.
 *
 * An operation is a non-blocking collective on the node communicator
 * (kcoll's own: started through the call layer, so it is selected,
 * agreed, counted and checked as any on-node call), a non-blocking host
 * collective on the leaders' communicator (PMPI_I*), a message between two
 * ranks of the node (PMPI_Isend/Irecv), or a local step (packing,
 * copying). Each lists the operations of its request that must have
 * completed before it starts: a composition is sequential where one phase
 * reads what the previous one wrote, and overlaps where it pipelines (the
 * broadcast's segments).
 *
 * Order. MPI matches collectives on a communicator by the order in which
 * each rank starts them, so every rank must start the operations on the
 * node communicator, and the leaders on theirs, in one order, even with
 * several composed requests outstanding, each at its own pace. Every
 * operation on one of those communicators therefore gets a number when
 * its request starts (the hierarchy counts them per communicator; every
 * rank of that communicator numbers the same operations alike, since
 * every rank starts the same composed calls in the same order and each
 * composition gives the ranks of a communicator the same list of
 * operations on it), and an operation starts only when every lower number
 * has started. Messages carry the composed call's number in their tag.
 * A request that fails still lets its remaining numbers pass (skipping
 * their operations), so that later requests are not held up.
 *
 * Progress. Operations are MPI calls, so composed requests advance only
 * where kcoll may call MPI: in kcoll's entry points and in the completion
 * calls (the call layer's outer progress, kcoll_progress), never inside
 * the host's own progress engine or on the helper thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/params.h"
#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

enum { KCOLL_HOP_IDLE, KCOLL_HOP_HOST, KCOLL_HOP_KCOLL, KCOLL_HOP_DONE };

struct kcoll_hreq {
    kcoll_hreq_t *next, *prev; /* the started composed requests */
    kcoll_hier_t *h;           /* held */
    kcoll_call_t call;         /* the user's call (statistics) */
    kcoll_mode_t mode;
    MPI_Comm comm;             /* the user's communicator (errors) */
    kcoll_hop_t *ops;
    int nops, cap;
    char *arena; /* scratch (kcoll_hreq_mem): carved from here, */
    size_t arena_cap, arena_used;
    void **mem;  /* or, beyond it, allocated on its own (the arena grows for the next call) */
    int nmem, capmem;
    size_t mem_bytes;
    kcoll_reason_t handed; /* the host MPI does the whole call */
    int fail;              /* composing failed: every start ends with this error */
    int alone;             /* this rank is alone on its node */
    int first;             /* the sink: the first on-node phase's path */
    int err;               /* the current start's MPI result */
    uint64_t seq;          /* the composed call's number on the hierarchy (tags) */
    int blocking; /* a blocking call's: advanced by its own thread only, with blocking host calls */
    int listed, done;
    void (*done_cb)(kcoll_hreq_t *q, void *ctx);
    void *done_ctx;
};

/* The started composed requests, oldest first, and the hierarchies'
 * counters: under the lock when threads are enabled. */
static kcoll_hreq_t *kcoll_hreqs, *kcoll_hreqs_last;
static pthread_mutex_t kcoll_hreqs_lock = PTHREAD_MUTEX_INITIALIZER;
/* relaxed: a count read as a hint (is anything pending?), ordering nothing */
_Atomic int kcoll_hreqs_pending;
/* 1 while this thread advances composed requests: an operation's start
 * runs kcoll_progress, which must not come back here */
static __thread __attribute__((tls_model("initial-exec"))) int kcoll_hreqs_inside;

static void kcoll_hreqs_lock_take(void)
{
    if (kcoll_team_threads)
        pthread_mutex_lock(&kcoll_hreqs_lock);
}

static void kcoll_hreqs_lock_drop(void)
{
    if (kcoll_team_threads)
        pthread_mutex_unlock(&kcoll_hreqs_lock);
}

/* ---------------------------------------------------------------------- */
/* Composing                                                               */

kcoll_hreq_t *kcoll_hreq_new(kcoll_hier_t *h, const kcoll_call_t *c, kcoll_mode_t mode,
                             MPI_Comm comm)
{
    kcoll_hreqs_lock_take();
    kcoll_hreq_t *q = h->pool;
    if (q)
        h->pool = q->next;
    h->refs++;
    kcoll_hreqs_lock_drop();
    if (!q && !(q = calloc(1, sizeof *q))) {
        kcoll_hier_release(h);
        return NULL;
    }
    q->next = q->prev = NULL;
    q->nops = 0;
    q->arena_used = 0;
    q->handed = KCOLL_R_NONE;
    q->fail = MPI_SUCCESS;
    q->alone = q->listed = q->done = 0;
    q->h = h;
    q->call = *c;
    q->call.op = NULL; /* the caller's; only the sizes are needed to count the call */
    q->mode = mode;
    q->blocking = mode == KCOLL_MODE_BLOCKING;
    q->comm = comm;
    q->first = -1;
    return q;
}

int kcoll_hreq_next(const kcoll_hreq_t *q)
{
    return q->nops;
}

/* Retain (or release) the datatypes an operation hands to the host MPI or
 * a local step (mpi/retain.c). */
static void kcoll_hop_retain(const kcoll_hop_t *o, int retain)
{
    void (*type)(MPI_Datatype) = retain ? kcoll_retain_type : kcoll_release_type;
    type(o->dt);
    type(o->rdt);
}

int kcoll_hreq_add(kcoll_hreq_t *q, kcoll_hop_t op, int dep0, int dep1)
{
    if (q->nops == q->cap) {
        int cap = q->cap ? 2 * q->cap : 8;
        kcoll_hop_t *ops = realloc(q->ops, (size_t)cap * sizeof *ops);
        if (!ops) {
            kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
            return -1;
        }
        q->ops = ops;
        q->cap = cap;
    }
    op.dep[0] = dep0;
    op.dep[1] = dep1;
    op.state = KCOLL_HOP_IDLE;
    if (!q->blocking) /* it may start after the call has returned: the program may free them */
        kcoll_hop_retain(&op, 1);
    op.q = MPI_REQUEST_NULL;
    atomic_init(&op.kdone, 0);
    q->ops[q->nops] = op;
    return q->nops++;
}

void *kcoll_hreq_mem(kcoll_hreq_t *q, size_t bytes)
{
    const size_t len = (bytes + 63) & ~(size_t)63;
    if (q->arena && q->arena_used + len <= q->arena_cap) {
        void *m = q->arena + q->arena_used;
        q->arena_used += len;
        return m;
    }
    if (q->nmem == q->capmem) {
        int cap = q->capmem ? 2 * q->capmem : 4;
        void **mem = realloc(q->mem, (size_t)cap * sizeof *mem);
        if (!mem)
            return NULL;
        q->mem = mem;
        q->capmem = cap;
    }
    void *m = NULL;
    if (posix_memalign(&m, 64, len ? len : 64))
        return NULL;
    q->mem[q->nmem++] = m;
    q->mem_bytes += len;
    return m;
}

void kcoll_hreq_host(kcoll_hreq_t *q, kcoll_reason_t why)
{
    q->handed = why;
}

void kcoll_hreq_fail(kcoll_hreq_t *q, int err)
{
    if (q->fail == MPI_SUCCESS)
        q->fail = err;
}

void kcoll_hreq_alone(kcoll_hreq_t *q)
{
    q->alone = 1;
}

kcoll_hier_t *kcoll_hreq_hier(const kcoll_hreq_t *q)
{
    return q->h;
}

kcoll_reason_t kcoll_hreq_handed(const kcoll_hreq_t *q)
{
    return q->handed;
}

const kcoll_call_t *kcoll_hreq_call(const kcoll_hreq_t *q)
{
    return &q->call;
}

int kcoll_hreq_result(const kcoll_hreq_t *q)
{
    return q->err;
}

/* q's scratch for the next call: the blocks allocated on their own are
 * freed, and the arena grows to hold them all next time (up to
 * KCOLL_HREQ_KEEP). */
static void kcoll_hreq_scratch_keep(kcoll_hreq_t *q)
{
    const size_t need = q->arena_used + q->mem_bytes;
    for (int i = 0; i < q->nmem; i++)
        free(q->mem[i]);
    q->nmem = 0;
    q->mem_bytes = 0;
    if (need <= q->arena_cap || need > KCOLL_HREQ_KEEP)
        return;
    free(q->arena);
    void *a = NULL;
    q->arena = posix_memalign(&a, 64, need) ? NULL : a;
    q->arena_cap = q->arena ? need : 0;
}

static void kcoll_hreq_destroy(kcoll_hreq_t *q)
{
    for (int i = 0; i < q->nmem; i++)
        free(q->mem[i]);
    free(q->mem);
    free(q->arena);
    free(q->ops);
    free(q);
}

void kcoll_hreq_free(kcoll_hreq_t *q)
{
    if (!q)
        return;
    kcoll_hier_t *h = q->h;
    for (int i = 0; !q->blocking && i < q->nops; i++)
        kcoll_hop_retain(&q->ops[i], 0);
    q->nops = 0;
    kcoll_hreq_scratch_keep(q);
    kcoll_hreqs_lock_take();
    q->next = h->pool;
    h->pool = q;
    kcoll_hreqs_lock_drop();
    kcoll_hier_release(h);
}

void kcoll_hreq_pool_free(kcoll_hier_t *h)
{
    while (h->pool) {
        kcoll_hreq_t *q = h->pool;
        h->pool = q->next;
        kcoll_hreq_destroy(q);
    }
}

void kcoll_hier_hold(kcoll_hier_t *h)
{
    kcoll_hreqs_lock_take();
    h->refs++;
    kcoll_hreqs_lock_drop();
}

void kcoll_hier_release(kcoll_hier_t *h)
{
    kcoll_hreqs_lock_take();
    int last = --h->refs == 0;
    kcoll_hreqs_lock_drop();
    if (last)
        kcoll_hier_destroy(h);
}

/* ---------------------------------------------------------------------- */
/* One operation                                                           */

/* The host's form of o on comm: non-blocking (the request in o->q), or,
 * for a blocking composed call, blocking (done on return; kcoll's own
 * requests advance beside it as around any blocking host collective). The
 * ranks of comm all take the same form, since they all make the same
 * composed call. */
#define KCOLL_HOP_CALL(B, I, ...) (blocking ? PMPI_##B(__VA_ARGS__) : PMPI_##I(__VA_ARGS__, rq))
static int kcoll_hop_host(kcoll_hop_t *o, MPI_Comm comm, int blocking)
{
    MPI_Request *rq = &o->q;
    const int drive = blocking ? kcoll_drive_begin() : 0;
    int rc;
    o->state = blocking ? KCOLL_HOP_DONE : KCOLL_HOP_HOST;
    switch (o->kind) {
    case KCOLL_HOP_BCAST:
        rc = KCOLL_HOP_CALL(Bcast, Ibcast, o->rbuf, o->count, o->dt, o->root, comm);
        break;
    case KCOLL_HOP_GATHER:
        rc = KCOLL_HOP_CALL(Gather, Igather, o->sbuf, o->count, o->dt, o->rbuf, o->rcount, o->rdt,
                            o->root, comm);
        break;
    case KCOLL_HOP_GATHERV:
        rc = KCOLL_HOP_CALL(Gatherv, Igatherv, o->sbuf, o->count, o->dt, o->rbuf, o->counts,
                            o->displs, o->rdt, o->root, comm);
        break;
    case KCOLL_HOP_ALLGATHER:
        rc = KCOLL_HOP_CALL(Allgather, Iallgather, o->sbuf, o->count, o->dt, o->rbuf, o->rcount,
                            o->rdt, comm);
        break;
    case KCOLL_HOP_ALLGATHERV:
        rc = KCOLL_HOP_CALL(Allgatherv, Iallgatherv, o->sbuf, o->count, o->dt, o->rbuf, o->counts,
                            o->displs, o->rdt, comm);
        break;
    case KCOLL_HOP_SCATTER:
        rc = KCOLL_HOP_CALL(Scatter, Iscatter, o->sbuf, o->count, o->dt, o->rbuf, o->rcount, o->rdt,
                            o->root, comm);
        break;
    case KCOLL_HOP_SCATTERV:
        rc = KCOLL_HOP_CALL(Scatterv, Iscatterv, o->sbuf, o->counts, o->displs, o->dt, o->rbuf,
                            o->rcount, o->rdt, o->root, comm);
        break;
    default:
        o->state = KCOLL_HOP_DONE;
        rc = MPI_ERR_INTERN;
    }
    kcoll_drive_end(drive);
    return rc;
}
#undef KCOLL_HOP_CALL

/* A kcoll request of an on-node operation has completed. */
static void kcoll_hop_kdone(kcoll_req_t *r, void *ctx)
{
    kcoll_hop_t *o = ctx;
    kcoll_status_t st = kcoll_req_status(r);
    o->kerr =
        st == KCOLL_OK ? MPI_SUCCESS : kcoll_report(kcoll_req_coll(r), "", st, kcoll_req_error(r));
    /* release: kerr is visible to whoever acquires kdone */
    atomic_store_explicit(&o->kdone, 1, memory_order_release);
}

/* An on-node operation: described as the intercepted call would describe
 * it, and run by kcoll if it takes it, else by the host. */
static int kcoll_hop_node(kcoll_hreq_t *q, kcoll_hop_t *o)
{
    const MPI_Comm node = q->h->node;
    kcoll_call_t c;
    int rc = MPI_SUCCESS;
    switch (o->kind) {
    case KCOLL_HOP_BCAST:
        kcoll_pmpi_bcast_call(&c, o->rbuf, o->count, o->dt, o->root, node);
        break;
    case KCOLL_HOP_GATHER:
    case KCOLL_HOP_GATHERV:
        kcoll_pmpi_gather_call(&c, o->kind == KCOLL_HOP_GATHER ? KCOLL_COLL_GATHER
                                                               : KCOLL_COLL_GATHERV,
                               o->sbuf, o->count, o->dt, o->rbuf, o->rcount, o->counts,
                               o->displs, 0, o->rdt, o->root, node);
        break;
    case KCOLL_HOP_ALLGATHER:
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHER, o->sbuf, o->count, NULL, NULL, o->dt,
                                o->rbuf, o->rcount, NULL, NULL, o->rdt, 0, node);
        break;
    case KCOLL_HOP_ALLGATHERV:
        kcoll_pmpi_describe_all(&c, KCOLL_COLL_ALLGATHERV, o->sbuf, o->count, NULL, NULL, o->dt,
                                o->rbuf, 0, o->counts, o->displs, o->rdt, 0, node);
        break;
    case KCOLL_HOP_SCATTER:
    case KCOLL_HOP_SCATTERV:
        kcoll_pmpi_scatter_call(&c, o->kind == KCOLL_HOP_SCATTER ? KCOLL_COLL_SCATTER
                                                                 : KCOLL_COLL_SCATTERV,
                                o->sbuf, o->count, o->counts, o->displs, 0, o->dt, o->rbuf,
                                o->rcount, o->rdt, o->root, node);
        break;
    default: return kcoll_hop_host(o, node, q->blocking);
    }
    kcoll_call_sink_set(&q->first);
    int took = kcoll_pmpi_istart(&c, node, kcoll_hop_kdone, o, &rc);
    kcoll_call_sink_set(NULL);
    if (took == KCOLL_PMPI_HOST) {
        kcoll_call_sink_set(&q->first);
        rc = kcoll_hop_host(o, node, q->blocking);
        kcoll_call_sink_set(NULL);
        return rc;
    }
    o->state = rc == MPI_SUCCESS ? KCOLL_HOP_KCOLL : KCOLL_HOP_DONE;
    return rc;
}

static int kcoll_hop_start(kcoll_hreq_t *q, kcoll_hop_t *o)
{
    const int tag = KCOLL_HIER_TAG + (int)(q->seq % 16384);
    int rc;
    switch (o->where) {
    case KCOLL_HOP_NODE: return kcoll_hop_node(q, o);
    case KCOLL_HOP_NET: return kcoll_hop_host(o, q->h->leaders, q->blocking);
    default: break;
    }
    switch (o->kind) {
    case KCOLL_HOP_SEND:
        o->state = KCOLL_HOP_HOST;
        return PMPI_Isend(o->sbuf, o->count, o->dt, o->peer, tag, q->h->node, &o->q);
    case KCOLL_HOP_RECV:
        o->state = KCOLL_HOP_HOST;
        return PMPI_Irecv(o->rbuf, o->count, o->dt, o->peer, tag, q->h->node, &o->q);
    default:
        rc = o->fn(q, o);
        o->state = KCOLL_HOP_DONE;
        return rc;
    }
}

/* Has a started operation completed? Its MPI result in *rc. */
static int kcoll_hop_test(kcoll_hop_t *o, int *rc)
{
    int flag = 0;
    *rc = MPI_SUCCESS;
    if (o->state == KCOLL_HOP_KCOLL) {
        /* acquire: pairs with the release in kcoll_hop_kdone */
        if (!atomic_load_explicit(&o->kdone, memory_order_acquire))
            return 0;
        *rc = o->kerr;
        return 1;
    }
    if ((*rc = PMPI_Test(&o->q, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return 1;
    return flag;
}

/* ---------------------------------------------------------------------- */
/* Running                                                                 */

static int kcoll_hop_ready(const kcoll_hreq_t *q, const kcoll_hop_t *o)
{
    for (int d = 0; d < 2; d++)
        if (o->dep[d] >= 0 && q->ops[o->dep[d]].state != KCOLL_HOP_DONE)
            return 0;
    return 1;
}

/* Advance q once (the list's lock held when threads are enabled). Returns
 * whether something moved; q->done once every operation has completed. */
/* Is it o's turn on its communicator? Then the turn passes to the next
 * number (o starts now). locked: the caller holds the list's lock. */
static int kcoll_hop_turn(kcoll_hier_t *h, const kcoll_hop_t *o, int locked)
{
    const int chan = o->where;
    if (chan == KCOLL_HOP_SELF)
        return 1;
    if (!locked)
        kcoll_hreqs_lock_take();
    const int mine = h->started[chan] == o->ticket;
    if (mine)
        h->started[chan]++;
    if (!locked)
        kcoll_hreqs_lock_drop();
    return mine;
}

static int kcoll_hreq_advance(kcoll_hreq_t *q, int locked)
{
    kcoll_hier_t *h = q->h;
    int moved = 0, all = 1, rc;
    for (int i = 0; i < q->nops; i++) {
        kcoll_hop_t *o = &q->ops[i];
        if (o->state == KCOLL_HOP_IDLE) {
            if ((!q->err && !kcoll_hop_ready(q, o)) || !kcoll_hop_turn(h, o, locked)) {
                all = 0;
                continue;
            }
            moved = 1;
            if (q->err) { /* a failed request lets its numbers pass */
                o->state = KCOLL_HOP_DONE;
                continue;
            }
            if ((rc = kcoll_hop_start(q, o)) != MPI_SUCCESS) {
                q->err = rc;
                o->state = KCOLL_HOP_DONE;
                continue;
            }
        }
        if (o->state == KCOLL_HOP_HOST || o->state == KCOLL_HOP_KCOLL) {
            if (!kcoll_hop_test(o, &rc)) {
                all = 0;
                continue;
            }
            o->state = KCOLL_HOP_DONE;
            moved = 1;
            if (rc != MPI_SUCCESS && q->err == MPI_SUCCESS)
                q->err = rc;
        }
    }
    if (all)
        q->done = 1;
    return moved;
}

/* q has completed: off the list, counted, its owner told. */
static void kcoll_hreq_complete(kcoll_hreq_t *q)
{
    if (q->prev)
        q->prev->next = q->next;
    else
        kcoll_hreqs = q->next;
    if (q->next)
        q->next->prev = q->prev;
    else
        kcoll_hreqs_last = q->prev;
    q->next = q->prev = NULL;
    q->listed = 0;
    /* relaxed: a hint, ordering nothing */
    atomic_fetch_sub_explicit(&kcoll_hreqs_pending, 1, memory_order_relaxed);
    if (q->err == MPI_SUCCESS)
        kcoll_call_hier_count(&q->call, q->mode, q->alone ? -1 : q->first);
}

int kcoll_hier_progress(void)
{
    int moved = 0;
    if (kcoll_hreqs_inside || !kcoll_hier_pending())
        return 0;
    if (kcoll_team_threads && pthread_mutex_trylock(&kcoll_hreqs_lock))
        return 0; /* another thread is advancing them */
    kcoll_hreqs_inside = 1;
    kcoll_hreq_t *finished = NULL;
    for (kcoll_hreq_t *q = kcoll_hreqs, *next; q; q = next) {
        next = q->next;
        moved += kcoll_hreq_advance(q, 1);
        if (q->done) {
            kcoll_hreq_complete(q);
            q->next = finished;
            finished = q;
        }
    }
    kcoll_hreqs_inside = 0;
    kcoll_hreqs_lock_drop();
    /* their owners are told outside the lock (a callback may start more) */
    kcoll_hreq_t *rev = NULL;
    while (finished) { /* in the order they were started */
        kcoll_hreq_t *q = finished;
        finished = q->next;
        q->next = rev;
        rev = q;
    }
    while (rev) {
        kcoll_hreq_t *q = rev;
        rev = q->next;
        q->next = NULL;
        q->done_cb(q, q->done_ctx); /* it may free q */
    }
    return moved;
}

/* Make q ready to run (again): its operations idle, its numbers on the
 * hierarchy's communicators taken (every rank takes them in the order of
 * its composed calls). listed: put it on the started list (under the same
 * lock, so that the list is in number order too). */
static void kcoll_hreq_prepare(kcoll_hreq_t *q, int listed)
{
    q->done = 0;
    q->err = q->fail;
    q->first = -1;
    for (int i = 0; i < q->nops; i++) {
        kcoll_hop_t *o = &q->ops[i];
        o->state = KCOLL_HOP_IDLE;
        o->q = MPI_REQUEST_NULL;
        /* relaxed: nothing runs the operation before it is started */
        atomic_store_explicit(&o->kdone, 0, memory_order_relaxed);
    }
    kcoll_hreqs_lock_take();
    kcoll_hier_t *h = q->h;
    q->seq = h->ncalls++;
    for (int i = 0; i < q->nops; i++)
        if (q->ops[i].where != KCOLL_HOP_SELF)
            q->ops[i].ticket = h->issued[q->ops[i].where]++;
    if (listed) {
        q->prev = kcoll_hreqs_last;
        q->next = NULL;
        if (kcoll_hreqs_last)
            kcoll_hreqs_last->next = q;
        else
            kcoll_hreqs = q;
        kcoll_hreqs_last = q;
        q->listed = 1;
        /* relaxed: a hint, ordering nothing */
        atomic_fetch_add_explicit(&kcoll_hreqs_pending, 1, memory_order_relaxed);
    }
    kcoll_hreqs_lock_drop();
    if (kcoll_param_int(KCOLL_P_TRACE)) {
        int n[3] = {0, 0, 0};
        char row[48];
        for (int i = 0; i < q->nops; i++)
            n[q->ops[i].where == KCOLL_HOP_SELF ? 2 : q->ops[i].where]++;
        fprintf(stderr,
                "kcoll: trace: %s across %d nodes (this node: %d ranks, local rank %d): composed, "
                "%d on-node, %d between the leaders, %d local or point-to-point operations\n",
                kcoll_stats_row_name(kcoll_stats_row(q->call.coll, q->mode), row, sizeof row),
                h->nn, h->pn, h->lr, n[0], n[1], n[2]);
    }
}

void kcoll_hreq_start(kcoll_hreq_t *q, void (*done)(kcoll_hreq_t *q, void *ctx), void *ctx)
{
    q->done_cb = done;
    q->done_ctx = ctx;
    kcoll_hreq_prepare(q, 1);
    kcoll_progress();
}

int kcoll_hier_blocking(kcoll_hreq_t *q, int *rc)
{
    if (!q) {
        *rc = MPI_ERR_NO_MEM;
        kcoll_error("a collective across nodes found no memory for its composition");
        return 1;
    }
    if (q->handed) {
        if (kcoll_param_int(KCOLL_P_TRACE)) {
            char row[48];
            fprintf(stderr, "kcoll: trace: %s across nodes: host MPI (%s)\n",
                    kcoll_stats_row_name(kcoll_stats_row(q->call.coll, q->mode), row,
                                         sizeof row),
                    kcoll_reason_name(q->handed));
        }
        kcoll_call_host(&q->call, q->mode, q->handed);
        kcoll_hreq_free(q);
        return 0;
    }
    /* A blocking call's request is advanced by its own thread alone (its
     * host operations block), between rounds of everybody else's. */
    kcoll_hreq_prepare(q, 0);
    kcoll_pause_t pause;
    kcoll_pause_init(&pause);
    while (!q->done)
        kcoll_pause_unless(&pause, kcoll_hreq_advance(q, 0) + kcoll_progress());
    *rc = q->err;
    if (*rc == MPI_SUCCESS)
        kcoll_call_hier_count(&q->call, q->mode, q->alone ? -1 : q->first);
    else
        PMPI_Comm_call_errhandler(q->comm, *rc);
    kcoll_hreq_free(q);
    return 1;
}
