/* MPI_Bcast across nodes, lanes layout: every rank of a node carries a
 * share of the vector between nodes at once (as allreduce_lanes.c).
 *
 * The vector is cut into L shares (kcoll_cluster_share), share l
 * travelling on lane l; on a node of pn ranks local rank i carries lanes
 * i, i + pn, ... (cluster.h).
 *  1. on the root's node: every other rank reads the shares it carries
 *     from the root (a scatter by single copies: n/L bytes per lane, all
 *     ranks at once), exposes its buffer and says so (DATA);
 *  2. between nodes: for each lane it carries, in increasing lane order,
 *     a rank starts the host's Bcast of that share on the lane's group,
 *     root = the root's node index, in place in RECV (one EXTERN each);
 *  3. on the root's node, meanwhile: every rank but the root reads each
 *     share it lacks from the share's carrier (from the root where the
 *     root carries it), carriers in turn from the next local rank on, so
 *     that no carrier serves all readers at once; every rank waits until
 *     the others have read from it (DONE). Only the root's buffer is never
 *     written: MPI gives the call the root's buffer to read;
 *     on every other node, round by round (phases R .. 2R-1, R =
 *     ceil(L/pn)): the ring-source Allgatherv in place of the round's
 *     shares (coll/allgather/ring_source_read.c), after a sync that waits
 *     for every rank's lanes (kcoll_cluster_lanes_allgather).
 * A node of one rank carries every lane itself.
 *
 * Restrictions: as allreduce_lanes.c, R = ceil(L/pn) <= 8 on every node of
 * more than one rank that is not the root's (KCOLL_ERR_UNSUPPORTED).
 *
 * Cost (n bytes, pn ranks on the node, N nodes, R rounds; T_host(N, m) the
 * host's Bcast of m bytes among N processes; the root's node's phase 3
 * runs beside the other nodes' and is an allgather of the same shares):
 *   T = T_scatter(pn, R n/L) + R * T_host(N, n/L) + sum_j T_ag^ring(pn, n_j) + T_sync(pn)
 * Each rank moves n/L bytes between nodes, all ranks at once, where the
 * leaders layout (bcast_leaders.c) sends the whole vector through one
 * endpoint per node; the price is L host calls instead of one.
 */
#include "cluster/cluster.h"

/* READs of the shares of the lanes local rank c carries, from team rank
 * peer's RECV to the same place in this rank's. */
static void kcoll_bcast_lanes_from(const kcoll_args_t *a, const kcoll_cluster_t *cl, int c,
                                   int peer, kcoll_sched_t *s)
{
    size_t first, len;
    for (int l = c; l < cl->lanes; l += cl->pn) {
        kcoll_cluster_share(a->count, cl->lanes, l, &first, &len);
        if (len)
            kcoll_sched_read(s, peer, KCOLL_BUF_RECV, first * a->esize, KCOLL_BUF_RECV,
                             first * a->esize, len * a->esize);
    }
}

kcoll_status_t kcoll_cluster_bcast_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                         int root_node, int root_local, kcoll_sched_t *s)
{
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn, home = cl->node == root_node;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    if (!home && pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS)
        return KCOLL_ERR_UNSUPPORTED;

    /* 1: the root's node: every carrier its shares, from the root */
    if (home && pn > 1) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        if (cl->me != root_local) {
            kcoll_bcast_lanes_from(a, cl, cl->me, cl->peer_of[root_local], s);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
        }
    }

    /* 2: every lane this rank carries, between the nodes */
    kcoll_cluster_lanes_xcoll(a, cl, KCOLL_XC_BCAST, root_node, s);

    /* 3: the shares inside every node */
    if (!home) {
        kcoll_cluster_lanes_allgather(a, cl, (uint32_t)R, s);
    } else if (pn > 1) {
        for (int k = 1; cl->me != root_local && k < pn; k++) {
            const int c = (cl->me + k) % pn; /* the next carrier */
            if (c != root_local)
                kcoll_sched_wait(s, cl->peer_of[c], KCOLL_FLAG_DATA, 1);
            kcoll_bcast_lanes_from(a, cl, c, cl->peer_of[c], s);
        }
        if (cl->me != root_local)
            kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        for (int i = 0; i < pn; i++)
            if (i != cl->me && i != root_local)
                kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
    }
    return s->err;
}
