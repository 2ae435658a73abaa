/* A communicator that spans nodes (DESIGN.md section 2, "Across nodes";
 * docs/hierarchy.md): kcoll inside each node, the host MPI between nodes.
 *
 * Such a communicator gets, once, when its record is made (mpi/teams.c
 * calls kcoll_span_make: span/span.c):
 *   - its node communicator: the ranks of this node, in the
 *     communicator's rank order (MPI_COMM_TYPE_SHARED), with a kcoll team
 *     of its own: CMA, shared segments and pids are only ever used
 *     there, never across nodes;
 *   - the groups of src/cluster/: the nodes' leaders (local rank 0 of
 *     every node, node k being the k-th node in the order of its leader's
 *     rank) and the lanes, each a host communicator;
 *   - a duplicate of the communicator (xall, below);
 *   - the map of every rank's node and local rank.
 * A collective on it, blocking, non-blocking or persistent, is one request
 * of the call layer on the node team: a schedule whose on-node phases are
 * kcoll's steps and whose host collectives between nodes are EXTERN steps
 * on those groups (span/run.c), or the host MPI's call whole.
 */
#ifndef KCOLL_SPAN_SPAN_H
#define KCOLL_SPAN_SPAN_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "call/call.h"
#include "model/nodes.h"

/* What a communicator that spans nodes keeps for a collective that
 * agrees before it runs (span/run.c):
 *   picks: the size classes (bit k: blocks of 2^(k-1) bytes; bit 0, no
 *     bytes, as bit 1) at which the model picks a layout of kcoll's (0:
 *     none; no agreement then, the host whole at once), segment: the
 *     lowest such class's, for parameter generation gen (0: none yet);
 *   and its blocking calls' host streak (call.h: kcoll_streak_take). */
typedef struct {
    uint64_t picks;
    size_t segment;
    uint64_t gen;
    kcoll_streak_t streak;
} kcoll_span_agreed_t;

typedef struct kcoll_span {
    int p, rank;  /* of the communicator */
    int nn, me;   /* nodes; this rank's node */
    int pn, lr;   /* ranks on this node; this rank's local rank */
    int maxpn;    /* ranks on the most populated node */
    int blocked;  /* every node holds a run of ranks, nodes in order: rank order is
                   * node-major order */
    int *node_of; /* [p] node of each rank */
    int *lrank_of;/* [p] local rank of each rank */
    int *nsize;   /* [nn] ranks per node */
    /* the node communicator (its team runs the calls), the groups of
     * src/cluster/ (KCOLL_CLUSTER_LEADERS, KCOLL_CLUSTER_LANE(l); rank k
     * is node k; MPI_COMM_NULL where this rank is not a member), and the
     * node team's ranks by local rank (0..pn-1). xok: every rank of the
     * communicator has them (alike everywhere). */
    MPI_Comm xnode;
    /* a duplicate of the communicator, kcoll's own: a call that decides
     * after it returned (a non-blocking MPI_Alltoallv's, Gatherv's or
     * Scatterv's agreement: span/run.c) and gives itself back to the host
     * MPI starts the host's call here, in kcoll's order of calls, where
     * the program's later calls on the communicator cannot cut in
     * (MPI_COMM_NULL: not made) */
    MPI_Comm xall;
    MPI_Comm *xgroups;
    int nxgroups;
    int *xpeer;
    int *xrank_of; /* [nn * maxpn] rank of local rank l on node k at k * maxpn + l, or -1 */
    int xok;
    /* references: the communicator's record, and every request that uses
     * the groups (it may outlive the communicator) */
    _Atomic int refs;
    /* KCOLL_HIER=auto: the model's layout per (collective, size class),
     * -1 not decided; valid for one parameter generation
     * (kcoll_span_layout) */
    signed char pick[KCOLL_NCOLL][66];
    /* and, decided with it, whether lanes run in pieces (1) or whole */
    signed char cut[KCOLL_NCOLL][66];
    uint64_t pick_gen;
    /* the calls that agree before they run (MPI_Alltoallv, MPI_Gatherv,
     * MPI_Scatterv: span/run.c), by kcoll_across_agreed's index */
    kcoll_span_agreed_t agreed[3];
} kcoll_span_t;

/* What this layer asks of the MPI glue above it (src/mpi), given once at
 * start-up (pmpi/init.c), as team/team.c is given its host collectives:
 *   drive_begin/drive_end: around a blocking host call, kcoll's pending
 *     requests advance beside it (begin returns whether they do; pass
 *     that to end);
 *   may_call: may this thread call MPI now (not the helper thread that
 *     advances kcoll's requests while the host blocks);
 *   hold_type/hold_op: keep (1) or let go of (0) a handle a pending
 *     request still uses after its call returned (MPI lets the program
 *     free it meanwhile); null handles are left alone;
 *   node_team: the team of a record's node communicator (NULL: gone),
 *     asked only by a call that runs a layout (a call the host does whole
 *     looks up nothing more than its own communicator's record). */
typedef struct {
    int (*drive_begin)(void);
    void (*drive_end)(int began);
    int (*may_call)(void);
    void (*hold_type)(MPI_Datatype dt, int hold);
    void (*hold_op)(MPI_Op op, int hold);
    kcoll_team_t *(*node_team)(MPI_Comm node);
} kcoll_span_host_t;
void kcoll_span_set_host(const kcoll_span_host_t *host);
/* Complete a host MPI request q (rc: the result of starting it; not
 * MPI_SUCCESS: returned as it is), advancing kcoll's requests meanwhile and
 * pausing where nothing moves: what a blocking call made of a host
 * request waits with (a point-to-point call, pmpi/blocking.c; an
 * Alltoallv's agreement, span/run.c). Returns the host's result. */
int kcoll_host_wait(int rc, MPI_Request *q, MPI_Status *status);
/* what was given (span.c; for span/run.c) */
extern kcoll_span_host_t kcoll_span_host;

/* comm's record (collective over comm, which spans nodes): NULL, alike on
 * every rank, when it cannot be made. The caller (mpi/teams.c) then sets
 * the node communicator's team up and agrees on xok. */
kcoll_span_t *kcoll_span_make(MPI_Comm comm);
/* One more reference to h (a request that uses its communicators), and
 * one less (the last one frees it with its communicators: the
 * communicator's record lets go of its own when the communicator goes). */
void kcoll_span_hold(kcoll_span_t *h);
void kcoll_span_release(kcoll_span_t *h);

/* The layout that runs collective c at `bytes` on h: KCOLL_HIER=off the
 * host MPI, on the leaders, lanes lanes where the runtime runs them for c
 * on h's nodes (kcoll_nodes_runs; else the leaders), auto the model's pick
 * of those it runs; and into *segment the segment its pipelined forms run
 * with (KCOLL_HIER_SEGMENT's; under auto 0 for lanes the model prices
 * whole, as its pick says: kcoll_nodes_pick). Alike on every rank. */
kcoll_nodes_layout_t kcoll_span_layout(kcoll_span_t *h, kcoll_coll_t c, size_t bytes,
                                       size_t *segment);

/* -- calls run as one schedule across nodes (span/run.c) -- */

/* What the MPI glue looks up for a call on a communicator that spans
 * nodes: its record h (NULL: it has none), and the call's MPI handles: a reduction's datatype dt and
 * operation op, and the send (dt) and receive (rdt) datatypes the packer
 * packs where the call's sides say so (KCOLL_TYPE_HOSTPACK). */
typedef struct {
    kcoll_span_t *h;
    MPI_Datatype dt, rdt;
    MPI_Op op;
    MPI_Comm comm; /* the call's communicator (an Alltoallv's agreement) */
} kcoll_span_call_t;

/* Prepare call c (mode) on a communicator that spans nodes, as one
 * schedule on its node team (w: what the glue looked up). A blocking
 * MPI_Alltoallv agrees first (span/run.c), with the host's collectives on
 * w->comm and the node communicator.
 * KCOLL_CALL_KCOLL (*r to start), KCOLL_CALL_HOST (counted, *why),
 * KCOLL_CALL_FAILED (err), or KCOLL_CALL_ACROSS: not a collective this
 * path runs (kcoll_call_across_has: the caller hands it to the host MPI).
 * Alike on every rank. */
kcoll_call_result_t kcoll_across_prepare(const kcoll_call_t *c, kcoll_mode_t mode,
                                         const kcoll_span_call_t *w, kcoll_req_t **r,
                                         kcoll_reason_t *why, char *err, size_t errlen);

#endif
