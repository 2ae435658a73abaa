/* MPI_Bcast across nodes, leaders layout: the data reaches the root's
 * node's leader, the leaders broadcast between nodes, every other node
 * reads it from its leader.
 *
 *  1. on the root's node, if the root is not its leader (phase 0): the
 *     flat hierarchical Bcast from the root over the whole node
 *     (coll/bcast/hier.c without levels). The carrier between nodes stays
 *     the leader, not the root: the leaders' group is fixed (local rank 0
 *     of every node, the communicator a runtime makes once), and the
 *     node's other ranks need the data anyway, so the one on-node Bcast
 *     that gives it to the leader gives it to all of them: no second
 *     on-node phase on the root's node;
 *  2. between nodes: every leader starts the host's Bcast on the leaders'
 *     group, root = the root's node index, on its RECV (one EXTERN step);
 *  3. on every other node, and on the root's node when the root is its
 *     leader (phase 1): the flat hierarchical Bcast from the leader, whose
 *     DATA comes after step 2.
 * A node of one rank only takes part in step 2.
 *
 * Cost (n bytes, pn ranks on the node, N nodes; T_host(N, n) the host's
 * Bcast among N processes):
 *   T = T_bcast^flat(pn_root, n) [root not a leader] + T_host(N, n)
 *       + T_bcast^flat(pn, n)
 * The other nodes wait for the root's node's Bcast when the root is not a
 * leader; the leader reads segments as they come, but the host's Bcast
 * starts only once the leader holds the whole vector. The leader's one
 * endpoint carries the whole vector: the lanes layout (bcast_lanes.c)
 * spreads it over every rank.
 */
#include "cluster/cluster.h"

kcoll_status_t kcoll_cluster_bcast_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                           int root_node, int root_local, kcoll_sched_t *s)
{
    const int home = cl->node == root_node;
    kcoll_bufmap_t map;
    kcoll_bufmap_init(&map, 0);
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;

    /* 1: to the root's node's leader (and the rest of the node) */
    if (home && root_local != 0) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_BCAST, root_local);
        b.in_place = 0;
        kcoll_phase_append(s, &b, kcoll_bcast_hier, cl->peer_of, 0, &map, 1, 0, NULL);
    }

    /* 2: between the nodes' leaders */
    if (cl->me == 0 && cl->nodes > 1) {
        kcoll_xcoll_t x = {.coll = KCOLL_XC_BCAST, .sbuf = KCOLL_BUF_RECV,
                           .rbuf = KCOLL_BUF_RECV, .group = KCOLL_CLUSTER_LEADERS,
                           .root = root_node, .len = a->count * a->esize, .esize = a->esize};
        kcoll_sched_xcoll(s, &x);
    }

    /* 3: from the leader */
    if (cl->pn > 1 && !(home && root_local != 0)) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_BCAST, 0);
        b.in_place = 0;
        kcoll_phase_append(s, &b, kcoll_bcast_hier, cl->peer_of, KCOLL_PHASE_VALUES, &map, 1, 0,
                           NULL);
    }
    return s->err;
}
