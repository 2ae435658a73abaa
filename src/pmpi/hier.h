/* Hierarchical collectives on communicators that span nodes (paper 003
 * section VII.G, paper 000 section IV): kcoll inside each node, the host
 * MPI between the nodes (docs/hierarchy.md).
 *
 * A communicator whose ranks lie on several nodes gets, once, when its
 * record is made (pmpi/comm.c):
 *   - its node communicator: the ranks of this node, in the
 *     communicator's rank order (MPI_COMM_TYPE_SHARED), with a kcoll team
 *     of its own: CMA, shared segments and pids are only ever used
 *     there, never across nodes;
 *   - its leaders' communicator: local rank 0 of every node (the node's
 *     lowest rank), node k being the k-th node in the order of its
 *     leader's rank; MPI_COMM_NULL on the other ranks;
 *   - the map of every rank's node and local rank.
 * A collective on it, blocking, non-blocking or persistent, is a composed
 * request (pmpi/hier_req.c): a short list of operations, each a
 * non-blocking collective on one of those two communicators (on-node:
 * kcoll's own, which selects its algorithm as for any one-node
 * communicator, KCOLL_<COLL>_ALGO included; between the leaders: the host
 * MPI's PMPI_I*), a message between two ranks of the node, or a local
 * step (packing, copying), each started when the operations it depends on
 * have completed. The statistics count the composed call once, as
 * kcoll:hier(<first on-node phase's path>|host).
 */
#ifndef KCOLL_PMPI_HIER_H
#define KCOLL_PMPI_HIER_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "call/call.h"
#include "model/nodes.h"
#include "pmpi/pmpi.h"

typedef struct kcoll_hier {
    MPI_Comm node;    /* this node's ranks (its own kcoll team) */
    MPI_Comm leaders; /* local rank 0 of every node; MPI_COMM_NULL elsewhere */
    int p, rank;      /* of the communicator */
    int nn, me;       /* nodes; this rank's node */
    int pn, lr;       /* ranks on this node; this rank's local rank */
    int maxpn;        /* ranks on the most populated node */
    int blocked;      /* every node holds a run of ranks, nodes in order: rank order is
                       * node-major order */
    int *node_of;     /* [p] node of each rank */
    int *lrank_of;    /* [p] local rank of each rank */
    int *nsize;       /* [nn] ranks per node */
    int *members;     /* [pn] this node's ranks, by local rank */
    /* calls run as one schedule across nodes (pmpi/across.c): a node
     * communicator of their own (its team numbers only them), the groups
     * of src/cluster/ (KCOLL_CLUSTER_LEADERS, KCOLL_CLUSTER_LANE(l); rank
     * k is node k; MPI_COMM_NULL where this rank is not a member), and the
     * node team's ranks by local rank (0..pn-1). xok: every rank of the
     * communicator has them (alike everywhere). */
    MPI_Comm xnode;
    MPI_Comm *xgroups;
    int nxgroups;
    int *xpeer;
    int *xrank_of; /* [nn * maxpn] rank of local rank l on node k at k * maxpn + l, or -1 */
    int xok;
    /* composed requests (hier_req.c), under the composed list's lock */
    int refs;             /* the communicator's record, and every composed request */
    uint64_t issued[2];   /* operations numbered so far on the node / leaders' communicator */
    uint64_t started[2];  /* operations started so far on each, in number order */
    uint64_t ncalls;      /* composed calls started: their messages' tags */
    /* KCOLL_HIER=auto: the model's decisions per (collective, size class),
     * 1 compose, 0 the host MPI, -1 not decided; valid for one parameter
     * generation (kcoll_hier_pick) */
    signed char pick[KCOLL_NCOLL][66];
    uint64_t pick_gen;
    struct kcoll_hreq *pool; /* finished composed requests, kept for the next calls */
} kcoll_hier_t;

/* Make comm's hierarchy (collective over comm, which spans nodes): NULL,
 * alike on every rank, when it cannot be made. */
kcoll_hier_t *kcoll_hier_create(MPI_Comm comm);
/* The communicator lets go of its hierarchy: freed (its communicators
 * with it) once no composed request holds it any more. */
void kcoll_hier_free(kcoll_hier_t *h);
/* Drop one reference (hier_req.c); the last one destroys h (and its
 * pool: kcoll_hreq_pool_free). */
void kcoll_hier_release(kcoll_hier_t *h);
void kcoll_hier_destroy(kcoll_hier_t *h);
void kcoll_hreq_pool_free(kcoll_hier_t *h);
/* comm's hierarchy, or NULL. */
kcoll_hier_t *kcoll_comm_hier(MPI_Comm comm);

/* Compose collective c at `bytes` (as the model sizes it: the message,
 * the vector, a block) on h? KCOLL_R_NONE, or the reason the host MPI does
 * it whole (KCOLL_HIER=off; auto where the model prices the host alone
 * lower). Alike on every rank. */
kcoll_reason_t kcoll_hier_pick(kcoll_hier_t *h, kcoll_coll_t c, size_t bytes);
/* The layout that runs collective c at `bytes` on h, of those in allowed
 * (KCOLL_NODES_BIT()s; kcoll_nodes_runs: every one the runtime runs for
 * c on h's nodes): KCOLL_HIER=off the host MPI, on the leaders, lanes lanes where
 * allowed (else the leaders), auto the model's pick. Alike on every
 * rank. */
kcoll_nodes_layout_t kcoll_hier_layout(kcoll_hier_t *h, kcoll_coll_t c, size_t bytes,
                                       unsigned allowed);
/* One more reference to h (a request that uses its communicators). */
void kcoll_hier_hold(kcoll_hier_t *h);

/* -- calls run as one schedule across nodes (pmpi/across.c) -- */

/* Does collective c run as one schedule across nodes (layouts of
 * src/cluster/ run by the call layer's request engine)? */
int kcoll_across_has(kcoll_coll_t c);
/* Prepare call c (mode) on comm, which spans nodes, as one schedule on its
 * hierarchy's node team (a reduction's datatype and operation from c's
 * handles): KCOLL_CALL_KCOLL (*r to start), KCOLL_CALL_HOST (counted,
 * *why), KCOLL_CALL_FAILED (err), or KCOLL_CALL_HIER: not a call this path
 * runs (the composed requests of pmpi/hier_req.c do). Alike on every rank. */
kcoll_call_result_t kcoll_across_prepare(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                                         kcoll_req_t **r, kcoll_reason_t *why, char *err,
                                         size_t errlen);

/* -- composed requests (pmpi/hier_req.c) -- */

/* What an operation is: a collective (on the node communicator through
 * kcoll, or on the leaders' through the host MPI), a message on the node
 * communicator, or a local step. */
typedef enum {
    KCOLL_HOP_BCAST,      /* rbuf, count, dt, root                        */
    KCOLL_HOP_GATHER,     /* sbuf, count, dt -> rbuf, rcount, rdt, root    */
    KCOLL_HOP_GATHERV,    /* sbuf, count, dt -> rbuf, counts, displs, rdt, root */
    KCOLL_HOP_ALLGATHER,  /* sbuf, count, dt -> rbuf, rcount, rdt          */
    KCOLL_HOP_ALLGATHERV, /* sbuf, count, dt -> rbuf, counts, displs, rdt  */
    KCOLL_HOP_SCATTER,    /* sbuf, count, dt -> rbuf, rcount, rdt, root    */
    KCOLL_HOP_SCATTERV,   /* sbuf, counts, displs, dt -> rbuf, rcount, rdt, root */
    KCOLL_HOP_SEND,       /* sbuf, count, dt to local rank peer            */
    KCOLL_HOP_RECV,       /* rbuf, count, dt from local rank peer          */
    KCOLL_HOP_LOCAL       /* fn(q, arg)                                    */
} kcoll_hop_kind_t;

/* Where an operation runs: its ordering channel. */
enum { KCOLL_HOP_NODE = 0, KCOLL_HOP_NET = 1, KCOLL_HOP_SELF = 2 };

typedef struct kcoll_hreq kcoll_hreq_t;

typedef struct kcoll_hop {
    kcoll_hop_kind_t kind;
    int where;      /* KCOLL_HOP_NODE, _NET, _SELF (messages and local steps) */
    int dep[2];     /* operations of this request that must have completed first (-1: none) */
    const void *sbuf;
    void *rbuf;
    int count, rcount;
    MPI_Datatype dt, rdt;
    const int *counts, *displs;
    int root, peer;
    int (*fn)(kcoll_hreq_t *q, const struct kcoll_hop *o); /* a local step: MPI result */
    void *arg;                                             /* ... with more to read */
    /* running (hier_req.c) */
    int state;          /* idle, started, done */
    uint64_t ticket;    /* its number on its communicator */
    MPI_Request q;      /* a host request */
    _Atomic int kdone;  /* a kcoll request: completed (its callback sets it) */
    int kerr;           /* ... with this MPI result */
} kcoll_hop_t;

/* A composed collective of this rank, for the user's call c on comm
 * (which has the hierarchy h) in a mode. NULL when out of memory. */
kcoll_hreq_t *kcoll_hreq_new(kcoll_hier_t *h, const kcoll_call_t *c, kcoll_mode_t mode,
                             MPI_Comm comm);
/* Append an operation (its running fields are set here) that starts once
 * the operations dep0 and dep1 of q have completed (-1: none; earlier
 * indices). Returns its index, or -1 when out of memory (the request
 * then fails when started). */
int kcoll_hreq_add(kcoll_hreq_t *q, kcoll_hop_t op, int dep0, int dep1);
/* The index the next kcoll_hreq_add returns. */
int kcoll_hreq_next(const kcoll_hreq_t *q);
/* Scratch of `bytes` owned by the request (valid until it is freed; 64-byte
 * aligned), or NULL. A request's scratch is carved from one block that it
 * keeps, with its operations, for the next composed call on the same
 * communicator (up to KCOLL_HREQ_KEEP bytes), so a call in steady state
 * allocates nothing. */
#define KCOLL_HREQ_KEEP ((size_t)16 << 20)
void *kcoll_hreq_mem(kcoll_hreq_t *q, size_t bytes);
/* The hierarchy hands the whole call to the host MPI, for `why` (alike
 * on every rank): nothing is composed. */
void kcoll_hreq_host(kcoll_hreq_t *q, kcoll_reason_t why);
/* A local failure while composing (out of memory): the request ends with
 * this MPI error when it runs. */
void kcoll_hreq_fail(kcoll_hreq_t *q, int err);
/* This rank is alone on its node: counted kcoll:hier(-|host). */
void kcoll_hreq_alone(kcoll_hreq_t *q);
kcoll_hier_t *kcoll_hreq_hier(const kcoll_hreq_t *q);

/* Running one. A blocking call: 1 with the MPI result in *rc, or 0 when
 * the host MPI must do the call (the hierarchy handed it over: counted).
 * q is consumed. A NULL q is an out-of-memory failure. */
int kcoll_hier_blocking(kcoll_hreq_t *q, int *rc);
/* A non-blocking call: 1 with the handle in *request and the MPI result
 * in *rc, or 0 when the host MPI must do it (counted). */
int kcoll_hier_nonblocking(kcoll_hreq_t *q, MPI_Comm comm, MPI_Request *request, int *rc);
/* A persistent call whose host request is `request`: kcoll runs each of
 * its starts with q, or (handed over) the host does. q was composed on
 * own, the request's private communicator (pmpi/run.c), which the request
 * keeps until it is freed (handed over: freed at once). */
void kcoll_hier_persistent(kcoll_hreq_t *q, MPI_Request request, MPI_Comm own);
/* Start q (each start of a persistent one). done(q, ctx) is called once
 * it has completed, from the progress of whichever call advanced it. */
void kcoll_hreq_start(kcoll_hreq_t *q, void (*done)(kcoll_hreq_t *q, void *ctx), void *ctx);
/* Its outcome: the MPI result (MPI_SUCCESS or an error), once done. */
int kcoll_hreq_result(const kcoll_hreq_t *q);
/* Why the host MPI does the call (KCOLL_R_NONE: composed). */
kcoll_reason_t kcoll_hreq_handed(const kcoll_hreq_t *q);
const kcoll_call_t *kcoll_hreq_call(const kcoll_hreq_t *q);
void kcoll_hreq_free(kcoll_hreq_t *q);
/* Advance every started composed request once (the call layer's outer
 * progress: only where MPI calls are allowed). Returns how many moved. */
int kcoll_hier_progress(void);

/* -- shared by the composed collectives (pmpi/hier.c) -- */

/* The tag of the point-to-point messages on a node communicator (it is
 * kcoll's own: no user message can match): a base plus the composed
 * call's number, so that messages of calls outstanding together never
 * match each other's. */
#define KCOLL_HIER_TAG 7411
/* A local step: copy o->rcount bytes from o->sbuf to o->rbuf. */
int kcoll_hier_memcpy(kcoll_hreq_t *q, const kcoll_hop_t *o);
/* Do elements of dt follow each other without gaps? Their bytes start at
 * *at (buf plus the datatype's true lower bound). */
int kcoll_hier_contiguous(const void *buf, MPI_Datatype dt, const char **at);
/* Local steps between bytes and a datatype (o->rcount bytes at the byte
 * side): pack o->count elements of o->dt at o->sbuf into o->rbuf, or
 * unpack the bytes at o->sbuf into o->count elements of o->dt at o->rbuf. */
int kcoll_hier_pack(kcoll_hreq_t *q, const kcoll_hop_t *o);
int kcoll_hier_unpack(kcoll_hreq_t *q, const kcoll_hop_t *o);
/* This rank's count elements of dt at buf as b contiguous bytes: buf's
 * own where dt has no gaps, else a scratch buffer of q that a local step
 * packs them into, appended after operation *last (which becomes that
 * step). NULL when out of memory. */
const char *kcoll_hier_bytes(kcoll_hreq_t *q, const void *buf, int count, MPI_Datatype dt,
                             size_t b, int *last);
/* The bytes of count elements of dt (0 for an unusable datatype). */
size_t kcoll_hier_size(int count, MPI_Datatype dt);
/* Every rank's block in node-major order: its bytes b[q] and place at[q],
 * the total, the nodes' runs for the leaders' calls (ncnt, ndsp) and this
 * node's members' blocks within its run (lcnt, ldsp, by local rank). */
typedef struct {
    size_t *b, *at, total;
    int *ncnt, *ndsp, *lcnt, *ldsp;
} kcoll_hier_blocks_t;
/* Blocks of counts[q] elements of esize bytes, or (counts NULL) all of
 * `uniform` bytes, in scratch of q. 0, or -1 when q cannot be composed: the
 * total does not fit the leaders' int counts (alike on every rank that
 * knows every block: q is handed to the host MPI), or out of memory (q
 * fails). */
int kcoll_hier_blocks(kcoll_hreq_t *q, const int *counts, size_t uniform, size_t esize,
                      kcoll_hier_blocks_t *k);
/* Are the nn nodes' runs all of one size (so the leaders' call needs no v
 * form)? */
static inline int kcoll_hier_runs_alike(const kcoll_hier_blocks_t *k, int nn)
{
    for (int n = 1; n < nn; n++)
        if (k->ncnt[n] != k->ncnt[0])
            return 0;
    return 1;
}

/* The composed collectives (pmpi/hier.c, hier_*.c): MPI arguments as the
 * user passed them; c is the call's description, mode the call's. Each
 * returns this rank's composed request (kcoll_hier_blocking,
 * kcoll_hier_nonblocking and kcoll_hier_persistent run it), NULL when out
 * of memory. */
/* Reduce (root >= 0) and Allreduce (root -1). */
/* Reduce_scatter (rcounts) and Reduce_scatter_block (rcounts NULL: rcount each). */
/* Gather (root >= 0), Allgather (root -1) and Allgatherv (root -1,
 * rcounts and rdispls; NULL otherwise). */
kcoll_hreq_t *kcoll_hier_gather(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                                const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                const int *rcounts, const int *rdispls, int rcount,
                                MPI_Datatype rtype, int root);
kcoll_hreq_t *kcoll_hier_scatter(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                                 const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 int rcount, MPI_Datatype rtype, int root);

#endif
