/* MPI_Allgather and MPI_Allgatherv across nodes, lanes layout: every
 * local rank carries its own block between the nodes, on its lane, at the
 * same time as the others, and the node then shares what its lanes
 * brought (UCC's split_rail, MPICH's multi-leader, for the gather).
 *
 * Lane l is local rank l of every node (cluster.h); on a node with fewer
 * ranks than lanes, local rank i also carries lanes i + pn, i + 2pn, ...,
 * for which it has no block of its own.
 *  1. between nodes: for each lane it carries, in increasing lane order,
 *     a rank runs the host's Allgatherv on the lane's group (the uniform
 *     Allgather where every member's block is one length): member j gives
 *     the block of local rank l of node j, or nothing where node j has no
 *     such rank, and every member receives the lane's blocks in node
 *     order into its TMP (one area per lane it carries);
 *  2. inside the node: every rank raises DATA once its lanes are in; then
 *     each rank copies its own lanes' blocks to their ranks' places in its
 *     receive buffer and READs every other lane's from the rank that
 *     carries it, raises DONE, and waits for every other rank's DONE
 *     before its TMP goes.
 * Every block crosses the network once per receiving node, as with the
 * host alone, but from every rank of a node at once instead of from one
 * leader; inside the node each rank reads the p - N blocks of the other
 * lanes once. Any node sizes and placement (the blocks are placed by
 * communicator rank, cl->rank_of), in place (a rank's own block is taken
 * from its place in its receive buffer), zero-length blocks.
 *
 * Cost (b bytes a block, N nodes, pn ranks on the node, L lanes, m =
 * ceil(L / pn) lanes on the busiest rank; T_host(N, b) the host's
 * Allgather among N processes, its lanes running at once):
 *   T = m T_host(N, b) + T_read((p - m N) b)
 * against the leaders' T_gather(pn, b) + T_host(N, pn b) + T_read(p b)
 * with one leader carrying the node's whole traffic.
 */
#include <stdlib.h>

#include "cluster/cluster.h"

/* Lane l's blocks: member j's length into len (room for nodes), and the
 * total. */
static size_t kcoll_agl_lane(const kcoll_args_t *a, const kcoll_cluster_t *cl, int l,
                             size_t *len)
{
    size_t total = 0;
    for (int j = 0; j < cl->nodes; j++) {
        const int q = cl->rank_of[(size_t)j * (size_t)cl->lanes + (size_t)l];
        len[j] = q < 0 ? 0 : kcoll_cluster_blen(a, q);
        total += len[j];
    }
    return total;
}

/* Where lane l's area starts in the TMP of its carrier on this node (the
 * lanes a rank carries lie one after another, in lane order). */
static size_t kcoll_agl_area(const kcoll_args_t *a, const kcoll_cluster_t *cl, int l,
                             size_t *len)
{
    size_t at = 0;
    for (int k = l % cl->pn; k < l; k += cl->pn)
        at += kcoll_agl_lane(a, cl, k, len);
    return at;
}

size_t kcoll_cluster_allgather_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    size_t *len = cl->rank_of ? malloc((size_t)cl->nodes * sizeof *len) : NULL, t = 0;
    if (!len)
        return 0;
    for (int l = cl->me; l < cl->lanes; l += cl->pn)
        t += kcoll_agl_lane(a, cl, l, len);
    free(len);
    return t;
}

/* Move lane l's blocks from its area (at `area` in the TMP of peer, or of
 * this rank: peer < 0) to their ranks' places in RECV. */
static void kcoll_agl_place(kcoll_sched_t *s, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                            int l, size_t area, int peer)
{
    for (int j = 0; j < cl->nodes; j++) {
        const int q = cl->rank_of[(size_t)j * (size_t)cl->lanes + (size_t)l];
        if (q < 0)
            continue;
        const size_t b = kcoll_cluster_blen(a, q), y = kcoll_cluster_place(a, q);
        if (peer < 0)
            kcoll_sched_copy(s, KCOLL_BUF_RECV, y, KCOLL_BUF_TMP, area, b);
        else
            kcoll_sched_read(s, peer, KCOLL_BUF_TMP, area, KCOLL_BUF_RECV, y, b);
        area += b;
    }
}

kcoll_status_t kcoll_cluster_allgather_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s)
{
    if (!cl->rank_of)
        return KCOLL_ERR_UNSUPPORTED;
    size_t *len = malloc((size_t)cl->nodes * sizeof *len);
    if (!len)
        return KCOLL_ERR_NOMEM;
    size_t total = 0;
    for (int l = 0; l < cl->lanes; l++)
        total += kcoll_agl_lane(a, cl, l, len);
    if (!total) { /* nothing moves */
        free(len);
        return KCOLL_OK;
    }
    const int me = cl->rank_of[(size_t)cl->node * (size_t)cl->lanes + (size_t)cl->me];

    /* 1: this rank's lanes between the nodes, in lane order */
    size_t area = 0;
    for (int l = cl->me; l < cl->lanes; l += cl->pn) {
        const size_t lt = kcoll_agl_lane(a, cl, l, len);
        int even = 1;
        for (int j = 1; j < cl->nodes; j++)
            even &= len[j] == len[0];
        /* every member sends, none in place (MPI_IN_PLACE is all members'
         * or none's): its own block, or on a lane it carries for a rank
         * its node lacks, nothing (an empty block just past the area) */
        kcoll_xcoll_t x = {.sbuf = KCOLL_BUF_TMP, .soff = area + lt, .rbuf = KCOLL_BUF_TMP,
                           .roff = area, .group = KCOLL_CLUSTER_LANE(l), .len = len[0],
                           .esize = 1};
        if (l == cl->me && len[cl->node]) {
            x.sbuf = a->in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
            x.soff = a->in_place ? kcoll_cluster_place(a, me) : 0;
        }
        if (even) {
            x.coll = KCOLL_XC_ALLGATHER;
            kcoll_sched_xcoll(s, &x);
        } else {
            x.coll = KCOLL_XC_ALLGATHERV;
            kcoll_sched_xcoll_v(s, &x, len, cl->nodes);
        }
        area += lt;
    }

    /* 2: every lane's blocks to their places, from whoever carries it */
    if (cl->pn > 1) {
        kcoll_sched_expose(s, KCOLL_BUF_TMP);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    }
    for (int l = cl->me; l < cl->lanes; l += cl->pn)
        kcoll_agl_place(s, a, cl, l, kcoll_agl_area(a, cl, l, len), -1);
    for (int d = 1; d < cl->pn; d++) { /* the others, starting with the next rank */
        const int i = (cl->me + d) % cl->pn;
        kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DATA, 1);
        for (int l = i; l < cl->lanes; l += cl->pn)
            kcoll_agl_place(s, a, cl, l, kcoll_agl_area(a, cl, l, len), cl->peer_of[i]);
    }
    if (cl->pn > 1) {
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        for (int i = 0; i < cl->pn; i++)
            if (i != cl->me)
                kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
    }
    free(len);
    return s->err;
}
