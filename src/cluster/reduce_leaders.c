/* MPI_Reduce across nodes to any root, leaders layout: every node reduces
 * to its leader, the leaders reduce between nodes to the root's node's
 * leader, which hands the result to the root.
 *
 *  1. inside the node (phase 0): the partitioned Reduce of the node's pn
 *     ranks to local rank 0 (coll/reduce/partitioned.c). The node's
 *     result goes to the leader's RECV when the leader is the root, else
 *     to the leader's TMP after the phase's own scratch (a non-root's
 *     RECV is not the caller's to write);
 *  2. between nodes: every leader starts the host's Reduce on the
 *     leaders' group, root = the root's node index: in place on the
 *     root's node (its partial result already lies where the result
 *     goes), from the partial result elsewhere (one EXTERN step);
 *  3. on the root's node, if the root is not its leader (phase 1): the two
 *     of them run the flat hierarchical Bcast (coll/bcast/hier.c) from the
 *     leader's TMP to the root's RECV, the root reading in segments.
 * A node of one rank reduces nothing on the node: its SEND (or, in place,
 * its RECV) goes to the host's Reduce as it is.
 *
 * Order: as the Allreduce layouts (allreduce_leaders.c): each node in
 * rank order, then the nodes in node order, MPI's order for a user
 * (non-commutative) operation only where every node's ranks are
 * consecutive; elsewhere KCOLL_ERR_UNSUPPORTED.
 *
 * Cost (n bytes, pn ranks on the node, N nodes; T_host(N, n) the host's
 * Reduce among N processes):
 *   T = T_reduce^part(pn, n) + T_host(N, n) + T_copy(n) [root not a leader]
 * The leader's one endpoint carries the whole vector; the lanes layout
 * (reduce_lanes.c) spreads step 2 over every rank.
 */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

/* The on-node Reduce's view; this rank's RECV is the caller's only when
 * it is the root and the node's leader. */
static kcoll_args_t kcoll_cluster_reduce_view(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                              int is_root)
{
    kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_REDUCE, 0);
    b.in_place = a->in_place && is_root && cl->me == 0;
    return b;
}

size_t kcoll_cluster_reduce_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                        int root_node, int root_local)
{
    const int home = cl->node == root_node;
    if (cl->pn == 1)
        return 0;
    kcoll_args_t b = kcoll_cluster_reduce_view(a, cl, home && cl->me == root_local);
    size_t t = kcoll_reduce_tmp_len(&b);
    /* the leader of a node whose root it is not keeps the node's result */
    if (cl->me == 0 && !(home && root_local == 0))
        t += a->count * a->esize;
    return t;
}

kcoll_status_t kcoll_cluster_reduce_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                            int root_node, int root_local, kcoll_sched_t *s)
{
    const size_t n = a->count * a->esize;
    const int home = cl->node == root_node, is_root = home && cl->me == root_local;
    const int lead_root = home && root_local == 0; /* the root is its node's leader */
    if (!kcoll_cluster_keeps_order(a, cl))
        return KCOLL_ERR_UNSUPPORTED;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    kcoll_bufmap_t *maps = malloc((size_t)cl->pn * sizeof *maps);
    if (!maps)
        return KCOLL_ERR_NOMEM;

    /* where the leader's partial result lies */
    kcoll_buf_t part = KCOLL_BUF_RECV;
    size_t part_off = 0;

    /* 1: to the leader */
    if (cl->pn > 1) {
        kcoll_args_t b = kcoll_cluster_reduce_view(a, cl, is_root);
        /* the leader's scratch, as every rank sees it (only the root knows
         * MPI_IN_PLACE, so nothing the others build may depend on it: a
         * root that is not its node's leader reads its SEND, the same
         * storage as RECV when in place, and writes RECV only in step 3) */
        kcoll_args_t lb = kcoll_cluster_reduce_view(a, cl, lead_root);
        lb.rank = 0;
        const size_t lt = kcoll_reduce_tmp_len(&lb);
        for (int i = 0; i < cl->pn; i++)
            kcoll_bufmap_init(&maps[i], 0); /* an in-place root's SEND is its RECV */
        if (!lead_root) {
            maps[0].buf[KCOLL_BUF_RECV] = KCOLL_BUF_TMP;
            maps[0].off[KCOLL_BUF_RECV] = lt;
            part = KCOLL_BUF_TMP;
            part_off = lt;
        }
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of, 0, KCOLL_PHASE_VALUES,
                           maps, cl->pn, 0,
                           NULL);
    } else if (!is_root || !a->in_place) {
        part = KCOLL_BUF_SEND;
    }

    /* 2: between the nodes' leaders, to the root's node's */
    if (cl->me == 0 && cl->nodes > 1) {
        kcoll_xcoll_t x = {.coll = KCOLL_XC_REDUCE, .sbuf = (uint8_t)part, .soff = part_off,
                           .rbuf = (uint8_t)part, .roff = part_off,
                           .group = KCOLL_CLUSTER_LEADERS, .root = root_node, .len = n,
                           .esize = a->esize};
        if (is_root && part == KCOLL_BUF_SEND)
            x.rbuf = KCOLL_BUF_RECV; /* a root alone on its node, not in place */
        kcoll_sched_xcoll(s, &x);
    } else if (is_root && cl->pn == 1 && !a->in_place) {
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, n);
    }

    /* 3: from the leader's TMP to the root's RECV */
    if (home && !lead_root && (cl->me == 0 || is_root)) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_BCAST, 0);
        const int two[2] = {cl->peer_of[0], cl->peer_of[root_local]};
        b.p = 2;
        b.rank = cl->me == 0 ? 0 : 1;
        b.in_place = 0;
        kcoll_bufmap_init(&maps[0], 0);
        kcoll_bufmap_init(&maps[1], 0);
        maps[0].buf[KCOLL_BUF_RECV] = (uint8_t)part;
        maps[0].off[KCOLL_BUF_RECV] = part_off;
        kcoll_phase_append(s, &b, kcoll_bcast_hier, two, KCOLL_PHASE_VALUES, KCOLL_PHASE_VALUES,
                           maps, 2, 0, NULL);
    }
    free(maps);
    return s->err;
}
