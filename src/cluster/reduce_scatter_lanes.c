/* MPI_Reduce_scatter_block across nodes, lanes layout: every rank of a
 * node carries the blocks of its own local rank on every node between
 * nodes, all ranks at once.
 *
 * The vector holds one block of `count` elements per communicator rank.
 * Lane i's share is the blocks of local rank i of every node, in node
 * order: N blocks (N nodes), which lane i's host reduce-scatter hands out
 * one per node, node k's being the block of rank (k, i), that is, lane
 * i's own member there. So:
 *  0. every rank copies its vector into TMP in lane order (lane 0's N
 *     blocks, then lane 1's, ...): the blocks of a lane are spread over
 *     the vector (they are q apart where nodes hold consecutive ranks, and
 *     anywhere under round-robin placement), a lane's share must be one
 *     range;
 *  1. inside the node, the partitioned Reduce_scatter_block of that copy
 *     over the node's q ranks (coll/reduce/partitioned.c), rank i's block
 *     being lane i's share: each rank ends with the node's sum of its
 *     lane's N blocks;
 *  2. between nodes, the host's Reduce_scatter_block of those N blocks on
 *     lane i: node k's member, rank (k, i), receives the whole sum of its
 *     own block, into RECV. Nothing follows on the node.
 * A node of one rank skips step 1 (its copy is its node's sum); one node
 * alone copies its block from step 1 to RECV.
 *
 * Order: each block is combined over the node's ranks in rank order, then
 * over the nodes in node order: MPI's order for a non-commutative
 * operation only where every node's ranks are consecutive (cl->ordered);
 * elsewhere the builder refuses (KCOLL_ERR_UNSUPPORTED).
 *
 * Restrictions: every node has the same number of ranks q (a node with
 * fewer would leave a lane's block without an owner there: uneven nodes
 * need a v-form host reduce-scatter), and cl->rank_of is given; otherwise
 * KCOLL_ERR_UNSUPPORTED.
 *
 * Cost (b bytes per block, p = N q ranks, n = p b the vector):
 *   T = T_copy(n) + T_rsb^part(q, N b) + T_host_rsb(N, b)
 * Each rank moves about n (q-1)/q bytes on the node and N b = n/q between
 * nodes, all q ranks of a node at once: the network sees q endpoints per
 * node where the leaders layout has one carrying n. Step 0's local copy
 * of the vector is the price of any placement; the model's lanes price
 * (model/nodes.c) does not count it.
 */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

/* Step 1's view: the node's q ranks, rank i's block lane i's N blocks. */
static kcoll_args_t kcoll_rsb_lanes_node(const kcoll_args_t *a, const kcoll_cluster_t *cl, int i)
{
    kcoll_args_t b = *a;
    b.coll = KCOLL_COLL_REDUCE_SCATTER_BLOCK;
    b.p = cl->pn;
    b.rank = i;
    b.root = 0;
    b.lv = NULL;
    b.lay = NULL;
    b.counts = NULL;
    b.count = a->count * (size_t)cl->nodes;
    b.bytes = b.count * a->esize;
    b.in_place = 0; /* it reads the copy in TMP */
    return b;
}

/* Step 1's scratch, the most of any rank of the node: peers address this
 * rank's TMP beyond it alike. */
static size_t kcoll_rsb_lanes_scratch(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    size_t most = 0;
    for (int i = 0; cl->pn > 1 && i < cl->pn; i++) {
        kcoll_args_t b = kcoll_rsb_lanes_node(a, cl, i);
        const size_t t = kcoll_reduce_tmp_len(&b);
        most = t > most ? t : most;
    }
    return most;
}

/* Can the layout run here: equal nodes, every rank known? */
static int kcoll_rsb_lanes_fits(const kcoll_cluster_t *cl)
{
    if (!cl->rank_of || cl->pn != cl->lanes)
        return 0;
    for (int i = 0; i < cl->nodes * cl->lanes; i++)
        if (cl->rank_of[i] < 0)
            return 0;
    return 1;
}

size_t kcoll_cluster_rsb_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    if (!kcoll_rsb_lanes_fits(cl))
        return 0;
    const size_t vec = a->count * a->esize * (size_t)cl->nodes * (size_t)cl->pn;
    /* the phase's scratch, the lane-ordered copy, the lane's node sum */
    return kcoll_rsb_lanes_scratch(a, cl) + vec + (cl->pn > 1 ? vec / (size_t)cl->pn : 0);
}

kcoll_status_t kcoll_cluster_rsb_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                       kcoll_sched_t *s)
{
    const int N = cl->nodes, q = cl->pn;
    const size_t blk = a->count * a->esize, share = (size_t)N * blk;
    if (!kcoll_rsb_lanes_fits(cl) || !kcoll_cluster_keeps_order(a, cl))
        return KCOLL_ERR_UNSUPPORTED;
    const size_t T = kcoll_rsb_lanes_scratch(a, cl), A = T, B = A + (size_t)q * share;
    const kcoll_buf_t src = a->in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;

    /* 0: the vector in lane order */
    for (int l = 0; l < q; l++)
        for (int j = 0; j < N; j++)
            kcoll_sched_copy(s, KCOLL_BUF_TMP, A + ((size_t)l * (size_t)N + (size_t)j) * blk, src,
                             (size_t)cl->rank_of[j * cl->lanes + l] * blk, blk);

    /* 1: the node's sum of each lane's share, lane i's at rank i's B */
    size_t mine = A; /* where this rank's node sum of its lane lies */
    if (q > 1) {
        kcoll_bufmap_t *maps = malloc((size_t)q * sizeof *maps);
        if (!maps)
            return KCOLL_ERR_NOMEM;
        for (int i = 0; i < q; i++) {
            kcoll_bufmap_init(&maps[i], 0);
            maps[i].buf[KCOLL_BUF_SEND] = KCOLL_BUF_TMP;
            maps[i].off[KCOLL_BUF_SEND] = A;
            maps[i].buf[KCOLL_BUF_RECV] = KCOLL_BUF_TMP;
            maps[i].off[KCOLL_BUF_RECV] = B;
        }
        kcoll_args_t b = kcoll_rsb_lanes_node(a, cl, cl->me);
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of, 0, maps, q, 0, NULL);
        free(maps);
        mine = B;
    }

    /* 2: across the nodes, on this rank's lane: its own block to RECV */
    if (N == 1) {
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_TMP, mine, blk);
    } else {
        const kcoll_xcoll_t x = {.coll = KCOLL_XC_REDUCE_SCATTER_BLOCK, .sbuf = KCOLL_BUF_TMP,
                                 .soff = mine, .rbuf = KCOLL_BUF_RECV, .roff = 0,
                                 .group = KCOLL_CLUSTER_LANE(cl->me), .len = blk,
                                 .esize = a->esize};
        kcoll_sched_xcoll(s, &x);
    }
    return s->err;
}
