/* MPI_Bcast across nodes, lanes layout: every rank of a node carries a
 * share of the vector between nodes at once (as allreduce_lanes.c).
 *
 * The vector is cut into L shares (kcoll_cluster_share), share l
 * travelling on lane l; on a node of pn ranks local rank i carries lanes
 * i, i + pn, ... (cluster.h).
 *  1. on the root's node (phase 0): the flat hierarchical Bcast of the
 *     whole vector from the root (coll/bcast/hier.c without levels). Every
 *     rank of that node needs the whole vector in the end, and a Bcast
 *     gives each carrier its shares and the rest in one phase, where a
 *     Scatter of the shares would need an Allgather after it (that writes
 *     into the root's buffer, which MPI gives the call to read only) or a
 *     second Bcast. The price: the node's ranks all read from the root,
 *     and a carrier starts its lanes only once it holds the whole vector;
 *  2. between nodes: for each lane it carries, in increasing lane order,
 *     a rank starts the host's Bcast of that share on the lane's group,
 *     root = the root's node index, in place in RECV (one EXTERN each);
 *  3. on every other node, round by round (phases R .. 2R-1, R =
 *     ceil(L/pn)): the ring-source Allgatherv in place of the round's
 *     shares (coll/allgather/ring_source_read.c), after a sync that waits
 *     for every rank's lanes (kcoll_cluster_lanes_allgather).
 * A node of one rank carries every lane itself.
 *
 * Restrictions: as allreduce_lanes.c, R = ceil(L/pn) <= 8 on every node of
 * more than one rank that is not the root's (KCOLL_ERR_UNSUPPORTED).
 *
 * Cost (n bytes, pn ranks on the node, N nodes, R rounds; T_host(N, m) the
 * host's Bcast of m bytes among N processes):
 *   root's node:  T = T_bcast^flat(pn, n) + R * T_host(N, n/L)
 *   other nodes:  T = R * T_host(N, n/L) + sum_j T_ag^ring(pn, n_j) + T_sync(pn)
 * Each rank moves n/L bytes between nodes, all ranks at once, where the
 * leaders layout (bcast_leaders.c) sends the whole vector through one
 * endpoint per node; the price is L host calls instead of one.
 */
#include "cluster/cluster.h"

kcoll_status_t kcoll_cluster_bcast_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                         int root_node, int root_local, kcoll_sched_t *s)
{
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn, home = cl->node == root_node;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    if (!home && pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS)
        return KCOLL_ERR_UNSUPPORTED;

    /* 1: the whole vector to the root's node */
    if (home && pn > 1) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_BCAST, root_local);
        kcoll_bufmap_t map;
        kcoll_bufmap_init(&map, 0);
        b.in_place = 0;
        kcoll_phase_append(s, &b, kcoll_bcast_hier, cl->peer_of, 0, &map, 1, 0, NULL);
    }

    /* 2: every lane this rank carries, between the nodes */
    kcoll_cluster_lanes_xcoll(a, cl, KCOLL_XC_BCAST, root_node, s);

    /* 3: the shares inside every other node */
    if (!home)
        kcoll_cluster_lanes_allgather(a, cl, (uint32_t)R, s);
    return s->err;
}
