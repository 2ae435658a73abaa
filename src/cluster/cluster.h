/* The cross-node layer: a call on a communicator spanning nodes as one
 * schedule (DESIGN.md section 2, "Across nodes").
 *
 * A cluster builder appends, for one rank, on-node phases made by the
 * one-node builders (appended as phases over the node's ranks, as the
 * levels' algorithms do: kcoll_phase_append) and host collectives between
 * nodes (kcoll_xcoll_t, sched/sched.h) on two kinds of groups:
 *  - the leaders: local rank 0 of every node;
 *  - lane l (0 <= l < L, L the most ranks any node has): one rank of
 *    every node, local rank l % pn on a node of pn ranks. So on a node
 *    with fewer ranks than L, local rank i carries lanes i, i + pn,
 *    i + 2pn, ...: every lane has exactly one member on every node, and no
 *    lane waits for data no rank of a node can give.
 * A group's ranks are the nodes' indices: node k is rank k of the leaders
 * and of every lane (a runtime makes the groups' communicators with the
 * node index as the key). Nodes are numbered by their lowest rank in the
 * communicator, so node order is rank order wherever each node's ranks are
 * consecutive (kcoll_cluster_t.ordered).
 *
 * The builders take the node layout as a parameter rather than reading a
 * team: the simulator gives communicator ranks (peer_of[i] = the
 * communicator rank of local rank i), a runtime node-team ranks.
 */
#ifndef KCOLL_CLUSTER_H
#define KCOLL_CLUSTER_H

#include "coll/coll.h"
#include "op/op.h"

/* Group ids of the host collectives cluster schedules start. */
#define KCOLL_CLUSTER_LEADERS 0
#define KCOLL_CLUSTER_LANE(l) (1 + (l))

/* Where one rank stands in a communicator spanning nodes. */
typedef struct {
    int nodes;          /* nodes the communicator spans */
    int node;           /* this rank's node, 0..nodes-1: its rank in every group */
    int pn;             /* ranks on this node */
    int me;             /* this rank's local rank, 0..pn-1 (0: the node's leader) */
    const int *peer_of; /* [pn] the rank on-node steps name for local rank i */
    int lanes;          /* L: the most ranks on one node */
    /* every node's ranks are consecutive in the communicator: combining
     * per node, then the nodes in order, is rank order (what MPI asks of
     * a non-commutative operation) */
    int ordered;
    /* [nodes * lanes] the communicator rank of local rank l on node j at
     * j * lanes + l, -1 where node j has fewer ranks (kcoll_cluster_ranks);
     * NULL: not given (kcoll_cluster_make leaves it so). The layouts whose
     * buffers hold one block per communicator rank need it. */
    const int *rank_of;
    /* Bcast's segment between nodes in the leaders' layout, bytes (0: the
     * whole vector at once); alike on every rank */
    size_t segment;
} kcoll_cluster_t;

/* The most segments a pipelined layout cuts a vector into (a larger
 * vector takes longer segments): a flag counts them. */
#define KCOLL_CLUSTER_MAX_SEGMENTS 65536

/* The layout of `rank` among p ranks, rank q on node node_of[q] (any ids):
 * local ranks follow communicator ranks; peer_of (room for p) receives the
 * communicator ranks of this rank's node and becomes cl->peer_of. Returns
 * 0, or -1 (bad arguments). */
int kcoll_cluster_make(kcoll_cluster_t *cl, int *peer_of, int p, const int *node_of, int rank);
/* The members of group g (KCOLL_CLUSTER_LEADERS or _LANE(l)) as
 * communicator ranks, by rank in the group (node order): returns their
 * number (the nodes), or -1 for a bad group. members: room for p. */
int kcoll_cluster_group(int p, const int *node_of, int g, int *members);

/* Fill rank_of (room for nodes * L, L the most ranks on one node) as
 * kcoll_cluster_t.rank_of says, for p ranks on nodes node_of (any ids).
 * Returns the number of nodes, or -1. */
int kcoll_cluster_ranks(int p, const int *node_of, int L, int *rank_of);
/* The node index and local rank of communicator rank `rank`: 0, or -1. */
int kcoll_cluster_locate(int p, const int *node_of, int rank, int *node, int *local);
/* The view of this rank's node for an on-node phase: pn ranks, this one
 * local rank cl->me, no levels, the whole vector (count * esize bytes). */
kcoll_args_t kcoll_cluster_node_view(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                     kcoll_coll_t coll, int root);

/* The blocked collectives (Gather, Scatter, Allgather(v)): rank q's
 * block is a->bytes, or with a->lay (Allgatherv) a->lay->rcount[q] bytes,
 * and lies in a rank's full buffer (the root's, every rank's for
 * Allgather(v)) at q * a->bytes, or at a->lay->rdispl[q], this rank's
 * displacement. Across nodes a->lay is this rank's one layout: every
 * rank's counts (alike everywhere), its own displacements. */
static inline size_t kcoll_cluster_blen(const kcoll_args_t *a, int q)
{
    return a->lay ? a->lay->rcount[q] : a->bytes;
}
static inline size_t kcoll_cluster_place(const kcoll_args_t *a, int q)
{
    return a->lay ? a->lay->rdispl[q] : (size_t)q * a->bytes;
}
/* Node-major order: node 0's ranks by local rank, then node 1's...
 * Fills at[k * L + l] with the offset of local rank l of node k's block
 * in it (rows padded where a node has fewer ranks) and run[k] with node
 * k's bytes; returns the total. Needs cl->rank_of. at: room for
 * nodes * L, run: for nodes. */
size_t kcoll_cluster_blocks(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t *at,
                            size_t *run);
/* Move the blocks of node `node` (all nodes: -1) between a buffer in
 * node-major order (xbuf from xoff on, holding that node's run, or every
 * node's from node 0 on) and a buffer with every block at its place
 * (ybuf): to_places from xbuf to ybuf, else the other way; peer < 0 with
 * local copies, else reading the peer's buffer (the node-major one when
 * to_places, the placed one otherwise). Blocks that follow each other on
 * both sides move as one piece. */
void kcoll_cluster_move_blocks(kcoll_sched_t *s, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                               const size_t *at, int node, int peer, int to_places,
                               kcoll_buf_t xbuf, size_t xoff, kcoll_buf_t ybuf);

/* Lane l's share of a vector of count elements, L lanes: elements
 * [*first, *first + *n), the first count % L lanes one element longer. */
static inline void kcoll_cluster_share(size_t count, int L, int l, size_t *first, size_t *n)
{
    const size_t q = count / (size_t)L, rem = count % (size_t)L, ul = (size_t)l;
    *first = ul * q + (ul < rem ? ul : rem);
    *n = q + (ul < rem);
}

/* Can a per-node composition reduce with a's operation in MPI's order?
 * Predefined operations and user ones made commutative may be combined
 * in any order; a non-commutative user function needs the nodes' ranks
 * consecutive. */
static inline int kcoll_cluster_keeps_order(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    return !(a->op && a->op->kind == KCOLL_OP_USER && !a->op->commute) || cl->ordered ||
           cl->nodes == 1;
}

/* Builders. a describes the call (count, esize, op, in_place, prm); its p
 * and rank are not used (cl says where this rank stands). */
kcoll_status_t kcoll_cluster_allreduce_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                               kcoll_sched_t *s);
size_t kcoll_cluster_allreduce_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);
kcoll_status_t kcoll_cluster_allreduce_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s);
size_t kcoll_cluster_allreduce_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);

/* The lanes layouts' rounds: a node of pn ranks takes its L lanes pn at
 * a time, in R = ceil(L/pn) rounds, each phase of a round taking its own
 * range of flag values, so R is bounded. */
#define KCOLL_CLUSTER_MAX_ROUNDS 8
/* Can the lanes layouts run on `nodes` nodes of ppn[k] ranks: at most
 * KCOLL_CLUSTER_MAX_ROUNDS lanes on any rank of a node of several (a node
 * of one rank has no on-node phase, and carries every lane)? */
static inline int kcoll_cluster_lanes_fit(const int *ppn, int nodes)
{
    int L = 0;
    for (int k = 0; k < nodes; k++)
        L = ppn[k] > L ? ppn[k] : L;
    for (int k = 0; k < nodes; k++)
        if (ppn[k] > 1 && (L + ppn[k] - 1) / ppn[k] > KCOLL_CLUSTER_MAX_ROUNDS)
            return 0;
    return 1;
}
/* Round j's Reduce_scatter over the node's lanes (ranks j*pn + i), rank
 * i's block of counts[i] elements (room for pn): fills *b and returns the
 * round's first element. */
size_t kcoll_cluster_lanes_round(const kcoll_args_t *a, const kcoll_cluster_t *cl, int j,
                                 kcoll_args_t *b, size_t *counts);
/* The most TMP the rounds' Reduce_scatter takes on local rank `rank`, or
 * on any rank of the node, not in place (rank < 0: the same on every rank
 * whatever MPI_IN_PLACE, which a rooted call's root alone knows). */
size_t kcoll_cluster_lanes_scratch(const kcoll_args_t *a, const kcoll_cluster_t *cl, int rank);
/* Start, for every lane this rank carries in increasing lane order, the
 * host collective base->coll (KCOLL_XC_ALLREDUCE, _REDUCE, _BCAST) of the
 * lane's share of a's vector on the lane's group, rooted at base->root
 * (group rank; 0 when unrooted): from base->sbuf at base->soff plus the
 * share's first byte, into base->rbuf likewise; whole (ids NULL), or
 * split, the descriptors into ids (room for the lanes this rank
 * carries). Returns how many it started. */
int kcoll_cluster_lanes_xcoll(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                              const kcoll_xcoll_t *base, int *ids, kcoll_sched_t *s);
/* The layouts that reduce (allreduce_lanes.c, reduce_lanes.c) in pieces:
 * a vector longer than cl->segment, with more than one lane, is cut into
 * k = ceil(n / segment) pieces of whole elements (the last one shorter;
 * at most KCOLL_CLUSTER_MAX_SEGMENTS), each a whole lanes call of its
 * own: for each piece i, in order, a rank runs step 1 of piece i, begins
 * piece i's lanes (split host collectives), then ends piece i - 1's and
 * runs its step 3; so a piece crosses the network while the node works on
 * the next and the one before. One piece (or none, count 0): steps 1, 2
 * (whole host collectives), 3. The steps' phases take increasing flag
 * values from 0, step apart (KCOLL_PHASE_VALUES in one piece,
 * KCOLL_CLUSTER_PIECE_VALUES(pn) in several); alike on every rank of a
 * node, the phases being its own. */
typedef struct {
    /* step 1 or 3 of the piece b (its vector from byte `at` on), as
     * phases *ph, *ph + 1, ... (advancing *ph), values `step` apart;
     * pieces: several */
    void (*before)(void *ctx, const kcoll_args_t *b, const kcoll_cluster_t *cl, size_t at,
                   uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s);
    void (*after)(void *ctx, const kcoll_args_t *b, const kcoll_cluster_t *cl, size_t at,
                  uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s);
    void *ctx;
    /* step 2: kcoll_cluster_lanes_xcoll's base for the vector (a piece's
     * offset is added) */
    kcoll_xcoll_t x;
} kcoll_lanes_stages_t;
kcoll_status_t kcoll_cluster_lanes_pieces(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                          const kcoll_lanes_stages_t *st, kcoll_sched_t *s);
/* Step 1 of the reducing lanes layouts for a's vector (or piece), which
 * lies from byte `at` on: the rounds' partitioned Reduce_scatters over the
 * node, each rank's block (its lanes' shares) going to its dst buffer at
 * dst_off + at + the share's place (RECV: in place as the call says; TMP:
 * never in place), as phases *ph, *ph + 1, ... (values `step` apart).
 * counts, maps: room for the node's ranks. Nothing on a node of one rank. */
void kcoll_cluster_lanes_scatter(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t at,
                                 kcoll_buf_t dst, size_t dst_off, uint32_t *ph, uint32_t step,
                                 size_t *counts, kcoll_bufmap_t *maps, kcoll_sched_t *s);
/* Round j's lane shares as a v-layout over the node's pn ranks: local
 * rank i holds lane j*pn + i's share, rc[i] bytes at byte rd[i] of the
 * vector (0 bytes past the last lane); lay[i] points every rank at rc, rd.
 * rc, rd, lay: room for pn. */
void kcoll_cluster_lanes_shares(const kcoll_args_t *a, const kcoll_cluster_t *cl, int j,
                                size_t *rc, size_t *rd, kcoll_layout_t *lay);
/* The node's R rounds of the ring-source Allgatherv in place of the
 * lanes' shares of a's vector, which lies in RECV from byte `at` on, as
 * phases at flag values base, base + step, ..., after a sync that waits
 * for every rank's lanes. Nothing on a node of one rank. */
void kcoll_cluster_lanes_allgather(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                   uint32_t base, uint32_t step, size_t at, kcoll_sched_t *s);
/* Flag values of one phase of a lanes layout cut in pieces, on a node of
 * pn ranks: every piece's phases take their own range, and the on-node
 * builders they append signal small values (the partitioned reduction
 * and the ring-source Allgatherv 1, the sequential gather each rank's
 * relative rank, below pn), so a vector of many pieces in up to
 * 2 KCOLL_CLUSTER_MAX_ROUNDS phases each fits KCOLL_FLAG_VALUE_MAX
 * (kcoll_cluster_lanes_pieces bounds the pieces by L + 8 a phase, L >= pn:
 * alike on every node). */
#define KCOLL_CLUSTER_PIECE_VALUES(pn) ((uint32_t)(pn) + 8u)

/* MPI_Reduce_scatter(_block) in the lanes layout, any node sizes:
 * cl->rank_of given, else KCOLL_ERR_UNSUPPORTED (reduce_scatter_lanes.c). */
kcoll_status_t kcoll_cluster_rs_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                      kcoll_sched_t *s);
size_t kcoll_cluster_rs_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);

/* Rooted calls: the root is given as its node index (root_node, its rank
 * in every group) and its local rank on that node (kcoll_cluster_locate);
 * a->root is not used. Bcast's buffer is RECV on every rank (the root's
 * holds the data); Reduce's result goes to the root's RECV, a non-root's
 * RECV is not touched, and a->in_place is the root's MPI_IN_PLACE. */
/* Is (root_node, root_local) a root this rank can stand with? */
static inline int kcoll_cluster_root_ok(const kcoll_cluster_t *cl, int root_node, int root_local)
{
    return root_node >= 0 && root_node < cl->nodes &&
           (cl->node != root_node || (root_local >= 0 && root_local < cl->pn));
}
kcoll_status_t kcoll_cluster_bcast_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                           int root_node, int root_local, kcoll_sched_t *s);
kcoll_status_t kcoll_cluster_reduce_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                            int root_node, int root_local, kcoll_sched_t *s);
kcoll_status_t kcoll_cluster_bcast_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                         int root_node, int root_local, kcoll_sched_t *s);
size_t kcoll_cluster_reduce_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                        int root_node, int root_local);
kcoll_status_t kcoll_cluster_reduce_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                          int root_node, int root_local, kcoll_sched_t *s);
size_t kcoll_cluster_reduce_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                      int root_node, int root_local);
/* MPI_Reduce_scatter(_block) in the leaders' layout, any node sizes
 * (a->counts: the v form); cl->rank_of given, else KCOLL_ERR_UNSUPPORTED
 * (reduce_scatter_leaders.c). */
kcoll_status_t kcoll_cluster_rs_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                        kcoll_sched_t *s);
size_t kcoll_cluster_rs_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);
/* MPI_Gather, MPI_Allgather(v) (gather_leaders.c) and MPI_Scatter
 * (scatter_leaders.c) in the leaders' layout: any node sizes and
 * placement; cl->rank_of given, else KCOLL_ERR_UNSUPPORTED. */
kcoll_status_t kcoll_cluster_gather_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                            int root_node, int root_local, kcoll_sched_t *s);
size_t kcoll_cluster_gather_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                        int root_node, int root_local);
kcoll_status_t kcoll_cluster_allgather_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                               kcoll_sched_t *s);
size_t kcoll_cluster_allgather_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);
/* MPI_Allgather(v) in the lanes layout (allgather_lanes.c): any node
 * sizes and placement; cl->rank_of given, else KCOLL_ERR_UNSUPPORTED. */
kcoll_status_t kcoll_cluster_allgather_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s);
size_t kcoll_cluster_allgather_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);
/* MPI_Alltoall and MPI_Alltoallv in the lanes layout (alltoall_lanes.c):
 * any node sizes and placement; cl->rank_of given, else
 * KCOLL_ERR_UNSUPPORTED. An Alltoallv's a->lay holds the node's layouts
 * by local rank (cl->pn of them): entry i's scount and sdispl, by
 * communicator rank, in bytes, say where local rank i's blocks lie in its
 * send buffer (in its receive buffer in place), and this rank's own
 * entry's rcount and rdispl where it receives each rank's block; its
 * a->bytes is the largest block of any rank (alike on every rank). */
kcoll_status_t kcoll_cluster_alltoall_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                            kcoll_sched_t *s);
size_t kcoll_cluster_alltoall_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl);
kcoll_status_t kcoll_cluster_scatter_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             int root_node, int root_local, kcoll_sched_t *s);
size_t kcoll_cluster_scatter_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                         int root_node, int root_local);
kcoll_status_t kcoll_cluster_barrier_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s);

/* The layouts kcoll runs across nodes (registry.c): per collective, its
 * leaders (lanes 0) and lanes (1) builders, taking the root as every
 * rooted builder does (ignored by the others); tmp: this rank's TMP
 * bytes (NULL: none). */
typedef struct {
    kcoll_coll_t coll;
    int lanes;
    const char *name; /* "allreduce lanes" */
    kcoll_status_t (*build)(const kcoll_args_t *a, const kcoll_cluster_t *cl, int root_node,
                            int root_local, kcoll_sched_t *s);
    size_t (*tmp)(const kcoll_args_t *a, const kcoll_cluster_t *cl, int root_node,
                  int root_local);
} kcoll_cluster_algo_t;
/* The layout of collective c, or NULL: kcoll does not run it so. */
const kcoll_cluster_algo_t *kcoll_cluster_find(kcoll_coll_t c, int lanes);

#endif
