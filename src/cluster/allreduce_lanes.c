/* MPI_Allreduce across nodes, lanes layout: every rank of a node takes a
 * share of the vector between nodes at once (UCC's split rail, MPICH's
 * multi-leader).
 *
 * The vector is cut into L shares, L the most ranks on one node, share l
 * (kcoll_cluster_share) travelling on lane l. On a node of pn ranks,
 * local rank i carries lanes i, i + pn, ... (cluster.h): when pn = L each
 * rank carries one lane, on a smaller node some carry several. The lanes
 * are taken in rounds of pn: round j holds lanes j*pn .. j*pn + pn - 1
 * (the last round may hold fewer), a contiguous range of the vector in
 * which local rank i has the one lane j*pn + i (or none).
 *  1. inside the node, round by round (phases 0 .. R-1, R = ceil(L/pn)):
 *     the partitioned Reduce_scatter of the round's range over the node's
 *     ranks (coll/reduce/partitioned.c), rank i's block being its lane's
 *     share: each rank ends with the node's sum of its lanes' shares in
 *     RECV, at their places in the vector;
 *  2. between nodes: for each lane it carries, in increasing lane order,
 *     a rank starts the host's Allreduce of that share on the lane's group,
 *     in place in RECV (one EXTERN each). All lanes run at once, one per
 *     rank (a rank carrying several runs them one after the other; the
 *     same order on every node, so none waits on a lane held up behind
 *     another);
 *  3. inside the node, round by round (phases R .. 2R-1): the ring-source
 *     Allgatherv in place of the round's lane shares
 *     (coll/allgather/ring_source_read.c). Before the first round every
 *     rank raises AUX and waits for the others' (kcoll_phase_append's
 *     sync): a peer's share is final only once its step 2 is done.
 * A node of one rank copies SEND to RECV (unless in place) and carries
 * every lane itself.
 * Pipelined (a vector longer than the segment s, cl->segment, with more
 * than one lane): the vector is cut into k = ceil(n / s) pieces (whole
 * elements; the last one shorter), each a whole lanes Allreduce of its
 * own, overlapped: a rank runs step 1 of piece i, begins piece i's host
 * Allreduces (split: BEGIN, END), then ends piece i - 1's and runs its
 * step 3, so a piece crosses the network while the node reduces the next
 * one and shares the one before (the executor lets the host drive the
 * messages between its batches of copies). Every piece's phases take
 * their own small range of flag values (KCOLL_CLUSTER_PIECE_VALUES). The
 * pieces are alike on every node (n, s and L are every rank's), so the
 * lanes' host calls match.
 * Order: each share is combined over the node's ranks in rank order, then
 * over the nodes in node order: like the leaders layout, MPI's order for
 * a non-commutative (user) operation only when every node's ranks are
 * consecutive (cl->ordered); elsewhere the builder refuses
 * (KCOLL_ERR_UNSUPPORTED). Every rank gets the same bits of a share: one
 * host result per lane, copied.
 *
 * Restrictions: the node's 2R phases each take their own range of flag
 * values, so R = ceil(L/pn) <= 8 on every node of more than one rank (a
 * node of 1 has no phases): otherwise KCOLL_ERR_UNSUPPORTED.
 *
 * Cost (n bytes, pn ranks on the node, N nodes, R rounds):
 *   T = sum_j T_rs^part(pn, n_j) + ceil(L/pn) * T_host(N, n/L)
 *       + sum_j T_ag^ring(pn, n_j) + T_sync(pn)
 * with n_j = pn*n/L the round's bytes. On even nodes (R = 1) each rank
 * moves only n/L bytes between nodes, all ranks at once: the network sees
 * L endpoints per node instead of the leaders' one, and the on-node
 * phases move about 2n(pn-1)/pn bytes per rank, the bandwidth optimum.
 * The price is L host calls (latency) where the leaders layout makes one.
 * In k pieces, with b, h, a a piece's steps 1, 2, 3: the node runs its
 * b's and a's one after another and the network the h's, piece i once
 * its b is done: about b + (k - 1) max(b + a, h) + h + a, so the network
 * is hidden where the node's share of a piece takes longer than its
 * messages (model/nodes.c, kcoll_nodes_pipe).
 */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

size_t kcoll_cluster_allreduce_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    return cl->pn == 1 ? 0 : kcoll_cluster_lanes_scratch(a, cl, cl->me);
}

/* The rounds' counts and buffer maps (room for the node's ranks). */
typedef struct {
    size_t *counts;
    kcoll_bufmap_t *maps;
} kcoll_arl_room_t;

/* Step 1 of the piece a (its vector from byte `at` on): each rank's
 * lanes' shares reduced over the node into its RECV, at their places. */
static void kcoll_arl_scatter(void *ctx, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                              size_t at, uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s)
{
    kcoll_arl_room_t *r = ctx;
    (void)pieces;
    kcoll_cluster_lanes_scatter(a, cl, at, KCOLL_BUF_RECV, 0, ph, step, r->counts, r->maps, s);
}

/* Step 3 of the piece a: the rounds' Allgatherv of the lanes' shares. */
static void kcoll_arl_gather(void *ctx, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                             size_t at, uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s)
{
    (void)ctx;
    (void)pieces;
    kcoll_cluster_lanes_allgather(a, cl, *ph * step, step, at, s);
    *ph += cl->pn > 1 ? (uint32_t)((cl->lanes + cl->pn - 1) / cl->pn) : 0;
}

kcoll_status_t kcoll_cluster_allreduce_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s)
{
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn;
    if (!kcoll_cluster_keeps_order(a, cl) || (pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS))
        return KCOLL_ERR_UNSUPPORTED;
    kcoll_arl_room_t room = {malloc((size_t)pn * sizeof(size_t)),
                             malloc((size_t)pn * sizeof(kcoll_bufmap_t))};
    if (!room.counts || !room.maps) {
        free(room.counts);
        free(room.maps);
        return KCOLL_ERR_NOMEM;
    }
    if (pn == 1 && !a->in_place)
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, a->count * a->esize);
    /* step 2: in place in RECV */
    const kcoll_lanes_stages_t st = {
        .before = kcoll_arl_scatter, .after = kcoll_arl_gather, .ctx = &room,
        .x = {.coll = KCOLL_XC_ALLREDUCE, .sbuf = KCOLL_BUF_RECV, .rbuf = KCOLL_BUF_RECV}};
    kcoll_status_t rc = kcoll_cluster_lanes_pieces(a, cl, &st, s);
    free(room.counts);
    free(room.maps);
    return rc;
}
