/* MPI_Reduce across nodes to any root, lanes layout: every rank of a node
 * carries a share of the vector between nodes at once (as
 * allreduce_lanes.c), the root's node gathers the shares to the root.
 *
 * The vector is cut into L shares (kcoll_cluster_share), share l
 * travelling on lane l; on a node of pn ranks local rank i carries lanes
 * i, i + pn, ... in rounds of pn (allreduce_lanes.c).
 *  1. inside the node, round by round (phases 0 .. R-1, R = ceil(L/pn)):
 *     the partitioned Reduce_scatter of the round's range (the rounds of
 *     allreduce_lanes.c), each rank's block going to its TMP at
 *     T + (its share's first byte), T the most scratch any rank's rounds
 *     take (the same on every rank, so the others know where to write):
 *     no rank's RECV is written, not even the root's, whose SEND may be
 *     its RECV (MPI_IN_PLACE, which only the root knows);
 *  2. between nodes: for each lane it carries, in increasing lane order,
 *     a rank starts the host's Reduce of that share on the lane's group,
 *     root = the root's node index; on the root's node in place in TMP;
 *  3. on the root's node, round by round (phases R .. 2R-1): the
 *     sequential-read Gatherv (coll/rooted/sequential.c) of the round's
 *     shares from the carriers' TMP into the root's RECV at their places.
 *     A carrier exposes its share only after its lanes' host Reduce: the
 *     root reads each share once it is final.
 * A node of one rank reduces nothing on the node: its SEND (its RECV when
 * in place) goes to the lanes' host Reduce as it is.
 *
 * Order: as allreduce_lanes.c, MPI's order for a user (non-commutative)
 * operation only where every node's ranks are consecutive; elsewhere
 * KCOLL_ERR_UNSUPPORTED.
 *
 * Restrictions: R <= 8 on every node of more than one rank
 * (KCOLL_ERR_UNSUPPORTED).
 *
 * Cost (n bytes, pn ranks on the node, N nodes, R rounds; T_host(N, m) the
 * host's Reduce of m bytes among N processes):
 *   T = sum_j T_rs^part(pn, n_j) + R * T_host(N, n/L) + [root's node]
 *       sum_j T_gather^seq(pn, n_j)
 * with n_j = pn*n/L. Each rank moves n/L bytes between nodes, all at once;
 * the root's gather is serial (one core copies n bytes).
 */
#include <stdlib.h>

#include "cluster/cluster.h"

size_t kcoll_cluster_reduce_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                      int root_node, int root_local)
{
    (void)root_node;
    (void)root_local;
    if (cl->pn == 1)
        return 0;
    return kcoll_cluster_lanes_scratch(a, cl, -1) + a->count * a->esize;
}

kcoll_status_t kcoll_cluster_reduce_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                          int root_node, int root_local, kcoll_sched_t *s)
{
    const int pn = cl->pn, L = cl->lanes, R = (L + pn - 1) / pn;
    const int home = cl->node == root_node, is_root = home && cl->me == root_local;
    const size_t es = a->esize;
    size_t first, len;
    if (!kcoll_cluster_keeps_order(a, cl) || (pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS))
        return KCOLL_ERR_UNSUPPORTED;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    const size_t T = pn > 1 ? kcoll_cluster_lanes_scratch(a, cl, -1) : 0;
    size_t *counts = malloc((size_t)pn * sizeof *counts);
    size_t *rc = malloc(2 * (size_t)pn * sizeof *rc), *rd = rc ? rc + pn : NULL;
    kcoll_bufmap_t *maps = malloc((size_t)pn * sizeof *maps);
    kcoll_layout_t *lay = malloc((size_t)pn * sizeof *lay);
    if (!counts || !rc || !maps || !lay) {
        free(counts);
        free(rc);
        free(maps);
        free(lay);
        return KCOLL_ERR_NOMEM;
    }

    /* 1: reduce-scatter the rounds' ranges, each block to its owner's TMP */
    for (int j = 0; pn > 1 && j < R; j++) {
        kcoll_args_t b;
        const size_t start = kcoll_cluster_lanes_round(a, cl, j, &b, counts);
        size_t at = start;
        b.in_place = 0; /* an in-place root's SEND is its RECV; RECV is not written */
        for (int i = 0; i < pn; i++) {
            kcoll_bufmap_init(&maps[i], 0);
            maps[i].off[KCOLL_BUF_SEND] = start * es;
            maps[i].buf[KCOLL_BUF_RECV] = KCOLL_BUF_TMP;
            maps[i].off[KCOLL_BUF_RECV] = T + at * es;
            at += counts[i];
        }
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of,
                           (uint32_t)j * KCOLL_PHASE_VALUES, maps, pn, 0, NULL);
    }

    /* 2: every lane this rank carries, to the root's node */
    const kcoll_buf_t part = pn > 1 ? KCOLL_BUF_TMP : is_root && a->in_place ? KCOLL_BUF_RECV
                                                                             : KCOLL_BUF_SEND;
    for (int l = cl->me; l < L; l += pn) {
        kcoll_cluster_share(a->count, L, l, &first, &len);
        if (len == 0)
            continue;
        const size_t off = (pn > 1 ? T : 0) + first * es;
        if (cl->nodes == 1) { /* no host: a root alone copies */
            if (is_root && part == KCOLL_BUF_SEND)
                kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, off, len * es);
            continue;
        }
        kcoll_xcoll_t x = {.coll = KCOLL_XC_REDUCE, .sbuf = (uint8_t)part, .soff = off,
                           .rbuf = (uint8_t)part, .roff = off, .group = KCOLL_CLUSTER_LANE(l),
                           .root = root_node, .len = len * es, .esize = es};
        if (is_root && part == KCOLL_BUF_SEND)
            x.rbuf = KCOLL_BUF_RECV; /* a root alone on its node, not in place */
        kcoll_sched_xcoll(s, &x);
    }

    /* 3: the shares to the root */
    for (int j = 0; home && pn > 1 && j < R; j++) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_GATHERV, root_local);
        b.in_place = 0;
        b.lay = lay;
        kcoll_cluster_lanes_shares(a, cl, j, rc, rd, lay);
        for (int i = 0; i < pn; i++) {
            kcoll_bufmap_init(&maps[i], 0);
            maps[i].buf[KCOLL_BUF_SEND] = KCOLL_BUF_TMP; /* i's block: its share */
            maps[i].off[KCOLL_BUF_SEND] = T + rd[i];
        }
        kcoll_phase_append(s, &b, kcoll_gather_sequential_read, cl->peer_of,
                           (uint32_t)(R + j) * KCOLL_PHASE_VALUES, maps, pn, 0, NULL);
    }
    free(counts);
    free(rc);
    free(maps);
    free(lay);
    return s->err;
}
