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
 *
 * Order: each share is combined over the node's ranks in rank order, then
 * over the nodes in node order: like the leaders layout, MPI's order for
 * a non-commutative (user) operation only when every node's ranks are
 * consecutive (cl->ordered); elsewhere the builder refuses
 * (KCOLL_ERR_UNSUPPORTED). Every rank gets the same bits of a share: one
 * host result per lane, copied.
 *
 * Restrictions: the node's 2R phases each take their own range of flag
 * values (KCOLL_PHASE_VALUES), so R = ceil(L/pn) <= 8 on every node of
 * more than one rank (a node of 1 has no phases): otherwise
 * KCOLL_ERR_UNSUPPORTED.
 *
 * Cost (n bytes, pn ranks on the node, N nodes, R rounds):
 *   T = sum_j T_rs^part(pn, n_j) + ceil(L/pn) * T_host(N, n/L)
 *       + sum_j T_ag^ring(pn, n_j) + T_sync(pn)
 * with n_j = pn*n/L the round's bytes. On even nodes (R = 1) each rank
 * moves only n/L bytes between nodes, all ranks at once: the network sees
 * L endpoints per node instead of the leaders' one, and the on-node
 * phases move about 2n(pn-1)/pn bytes per rank, the bandwidth optimum.
 * The price is L host calls (latency) where the leaders layout makes one.
 */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

size_t kcoll_cluster_allreduce_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    return cl->pn == 1 ? 0 : kcoll_cluster_lanes_scratch(a, cl, cl->me);
}

kcoll_status_t kcoll_cluster_allreduce_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s)
{
    const int pn = cl->pn, L = cl->lanes, R = (L + pn - 1) / pn;
    const size_t es = a->esize;
    if (!kcoll_cluster_keeps_order(a, cl) || (pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS))
        return KCOLL_ERR_UNSUPPORTED;
    size_t *counts = malloc((size_t)pn * sizeof *counts);
    kcoll_bufmap_t *maps = malloc((size_t)pn * sizeof *maps);
    if (!counts || !maps) {
        free(counts);
        free(maps);
        return KCOLL_ERR_NOMEM;
    }

    /* 1: reduce-scatter the rounds' ranges, each rank's lane to its place */
    if (pn == 1 && !a->in_place)
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, a->count * es);
    for (int j = 0; pn > 1 && j < R; j++) {
        kcoll_args_t b;
        const size_t start = kcoll_cluster_lanes_round(a, cl, j, &b, counts);
        size_t at = start;
        for (int i = 0; i < pn; i++) {
            kcoll_bufmap_init(&maps[i], a->in_place);
            maps[i].off[KCOLL_BUF_SEND] = start * es; /* the round's range */
            maps[i].off[KCOLL_BUF_RECV] = at * es;    /* i's block: its lane's share */
            at += counts[i];
        }
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of,
                           (uint32_t)j * KCOLL_PHASE_VALUES, maps, pn, 0, NULL);
    }

    /* 2: every lane this rank carries, between the nodes */
    kcoll_cluster_lanes_xcoll(a, cl, KCOLL_XC_ALLREDUCE, 0, s);

    /* 3: allgather the rounds' shares inside the node */
    kcoll_cluster_lanes_allgather(a, cl, (uint32_t)R, s);
    free(counts);
    free(maps);
    return s->err;
}
