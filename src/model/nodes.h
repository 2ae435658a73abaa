/* Communicators that span nodes, priced: each layout of a call across
 * nodes (the host MPI alone, kcoll's leaders' composition, lanes) as a
 * candidate, and the pick among the layouts the caller may run
 * (model/nodes.c; docs/hierarchy.md).
 */
#ifndef KCOLL_MODEL_NODES_H
#define KCOLL_MODEL_NODES_H

#include <stddef.h>

#include "coll/coll.h"
#include "model/machine.h"

/* How a call on a communicator that spans nodes moves its data. */
typedef enum {
    KCOLL_NODES_HOST = 0, /* the host MPI alone over all ranks */
    KCOLL_NODES_LEADERS,  /* on-node phases, the host MPI between one leader per node */
    KCOLL_NODES_LANES,    /* on-node phases, every local rank carries a share between
                            * nodes: lane i is local rank i of every node */
    KCOLL_NODES_NLAYOUTS
} kcoll_nodes_layout_t;

#define KCOLL_NODES_BIT(l) (1u << (l))
#define KCOLL_NODES_ALL ((1u << KCOLL_NODES_NLAYOUTS) - 1)
/* The layouts the runtime runs for collective c on `nodes` nodes of
 * ppn[k] ranks (KCOLL_NODES_BIT()s): the host MPI alone and the leaders
 * for every collective; lanes for MPI_Allreduce, MPI_Reduce, MPI_Bcast,
 * MPI_Allgather(v) and MPI_Reduce_scatter(_block), which run as one
 * schedule across nodes (span/run.c), on any node sizes where no rank of
 * a node of several carries more than KCOLL_CLUSTER_MAX_ROUNDS lanes
 * (kcoll_cluster_lanes_fit: not on 17 + 2, where each rank of the node
 * of 2 would carry 9 lanes; on 9 + 1, whose node of one rank carries all
 * 9 lanes without rounds on the node). */
unsigned kcoll_nodes_runs(kcoll_coll_t c, const int *ppn, int nodes);

/* "host", "leaders", "lanes" */
const char *kcoll_nodes_layout_name(kcoll_nodes_layout_t l);

/* One layout's price, seconds. Its phases: before, on each node before
 * the phase between nodes; net, between nodes; after, on each node after
 * it, each a collective (KCOLL_NCOLL: none; the host layout has no
 * phases). For the leaders' pipelined Bcast the pipeline's total is in
 * net, after holds one segment's on-node time and t is at least the root
 * node's own broadcast, which runs meanwhile. priced is 0
 * where the layout is not a candidate for the collective: the leaders'
 * for Alltoall(v), Gatherv and Scatterv (the host MPI runs them whole),
 * lanes for every collective but Bcast, Reduce, Allreduce,
 * Reduce_scatter(_block) and Allgather(v), and on one node. */
typedef struct {
    int priced;
    double t;
    double before, net, after;
    /* first, before any phase: an agreement (MPI_Alltoallv's, span/run.c:
     * the host's Allreduce over every rank, its Allgather on each node) */
    double agree;
    kcoll_coll_t coll[3]; /* before, net, after */
    unsigned rootnode;    /* bit i: phase i runs on the root's node only */
    int pieces;           /* lanes' Allgather(v) in pieces (> 1): net is the pipeline
                           * up to the last piece's sharing, after that */
} kcoll_nodes_lprice_t;

/* Every layout of one call. lanes: L, the fullest node's ranks; rounds:
 * how many lanes the busiest rank carries, one after another (1 on even
 * nodes). */
typedef struct {
    kcoll_nodes_lprice_t lay[KCOLL_NODES_NLAYOUTS];
    int lanes, rounds;
} kcoll_nodes_price_t;

/* Price collective c (bytes sized as kcoll sizes a call: the block of a
 * blocked collective, the vector of a reduction, the message of a Bcast)
 * on machine m, whose network between nodes is net_alpha and net_beta,
 * by `nodes` nodes of ppn[k] ranks each (placed in blocks, node 0 holds
 * root 0), in every layout. The segment of the leaders' pipelined Bcast
 * is `segment` bytes (0: whole). Returns 0, or -1 for nodes < 1 or a
 * node of fewer than one rank. */
int kcoll_price_nodes_counts(const kcoll_machine_t *m, kcoll_coll_t c, const int *ppn, int nodes,
                             size_t bytes, size_t segment, kcoll_nodes_price_t *out);

/* The same for `nodes` nodes of ppn ranks each. */
int kcoll_price_nodes(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, int ppn, size_t bytes,
                      size_t segment, kcoll_nodes_price_t *out);

/* The layout to run collective c in on `nodes` nodes of ppn[k] ranks at
 * `bytes` (sized as above): the cheapest of the layouts in `allowed`
 * (KCOLL_NODES_BIT, e.g. kcoll_nodes_runs) that are candidates, the
 * host MPI alone always one of them (it runs every call). The size class
 * of bytes is priced at its middle (model/select.h), so every rank decides
 * alike whatever size of the class it sees. A tie goes to kcoll's layouts
 * (their overhead is in their phases' prices), lanes before leaders. The
 * host MPI alone also where no node has a second rank: a composition is
 * then the host's own call on the same ranks plus kcoll's bookkeeping. */
/* With the pick, *cut (NULL: not asked) gets the segment the lanes layout
 * runs with at that size class, as the pick priced it: `segment` where the
 * model prices the call in pieces of it (Allgather(v), Allreduce, Reduce,
 * Bcast) below the call whole, else 0 (whole; so too where the pick is not
 * the lanes). Alike on every rank. */
kcoll_nodes_layout_t kcoll_nodes_pick(const kcoll_machine_t *m, kcoll_coll_t c, const int *ppn,
                                      int nodes, size_t bytes, size_t segment, unsigned allowed,
                                      size_t *cut);

/* The segment of the pipelined layouts between nodes for KCOLL_HIER_SEGMENT's value
 * v, one for the runtime and the model: v bytes; auto (-1): 512 KiB, where
 * one more host call costs little beside the segment's time on the
 * network and the first segment's wait is short; 0: the whole message at
 * once. */
size_t kcoll_nodes_segment(int64_t v);

#endif
