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
 * Pipelined (a vector longer than the segment, with more than one lane):
 * in pieces, as allreduce_lanes.c (kcoll_cluster_lanes_pieces): step 1 of
 * piece i, its lanes begun, piece i - 1's ended and gathered. A carrier's
 * TMP stays exposed from the piece before, so there the root first waits
 * for every carrier's AUX, raised after its lanes of the piece.
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
 * the root's gather is serial (one core copies n bytes). In pieces the
 * lanes of a piece run while the node reduces the next and gathers the
 * one before (model/nodes.c, kcoll_nodes_pipe).
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

/* What the steps of one call share. */
typedef struct {
    size_t T;       /* the rounds' scratch: the shares lie in TMP from T on */
    int root_local; /* the root on its node */
    int home;       /* this rank is on the root's node */
    size_t *counts, *rc, *rd;
    kcoll_bufmap_t *maps;
    kcoll_layout_t *lay;
    char *need; /* a non-root's sync waits for nobody */
} kcoll_rl_room_t;

/* Step 1 of the piece a (its vector from byte `at` on): the rounds'
 * Reduce_scatters, each rank's block to its TMP. */
static void kcoll_rl_scatter(void *ctx, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                             size_t at, uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s)
{
    const kcoll_rl_room_t *r = ctx;
    (void)pieces;
    kcoll_cluster_lanes_scatter(a, cl, at, KCOLL_BUF_TMP, r->T, ph, step, r->counts, r->maps, s);
}

/* Step 3 of the piece a, on the root's node: the rounds' shares gathered
 * from their carriers' TMP into the root's RECV. In one piece a carrier
 * exposes its TMP only after its lanes, which orders the root's reads; in
 * several, TMP stays exposed from the piece before, so the root first
 * waits until every carrier has raised AUX (after its lanes of the piece). */
static void kcoll_rl_gather(void *ctx, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                            size_t at, uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s)
{
    const kcoll_rl_room_t *r = ctx;
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn;
    for (int j = 0; r->home && pn > 1 && j < R; j++) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_GATHERV, r->root_local);
        b.in_place = 0;
        b.lay = r->lay;
        kcoll_cluster_lanes_shares(a, cl, j, r->rc, r->rd, r->lay);
        for (int i = 0; i < pn; i++) {
            kcoll_bufmap_init(&r->maps[i], 0);
            r->maps[i].buf[KCOLL_BUF_SEND] = KCOLL_BUF_TMP; /* i's block: its share */
            r->maps[i].off[KCOLL_BUF_SEND] = r->T + at + r->rd[i];
            r->maps[i].off[KCOLL_BUF_RECV] = at; /* the root's: the piece's place */
        }
        kcoll_phase_append(s, &b, kcoll_gather_sequential_read, cl->peer_of, (*ph)++ * step,
                           step, r->maps, pn, pieces && j == 0,
                           cl->me == r->root_local ? NULL : r->need);
    }
}

kcoll_status_t kcoll_cluster_reduce_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                          int root_node, int root_local, kcoll_sched_t *s)
{
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn;
    const int home = cl->node == root_node, is_root = home && cl->me == root_local;
    if (!kcoll_cluster_keeps_order(a, cl) || (pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS))
        return KCOLL_ERR_UNSUPPORTED;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    kcoll_rl_room_t r = {.T = pn > 1 ? kcoll_cluster_lanes_scratch(a, cl, -1) : 0,
                         .root_local = root_local, .home = home,
                         .counts = malloc((size_t)pn * sizeof *r.counts),
                         .rc = malloc(2 * (size_t)pn * sizeof *r.rc),
                         .maps = malloc((size_t)pn * sizeof *r.maps),
                         .lay = malloc((size_t)pn * sizeof *r.lay),
                         .need = calloc((size_t)pn, 1)};
    kcoll_status_t rc = KCOLL_ERR_NOMEM;
    if (r.counts && r.rc && r.maps && r.lay && r.need) {
        r.rd = r.rc + pn;
        /* step 2: on a node of several, the node's sums in TMP; alone, the
         * rank's own vector (SEND, or an in-place root's RECV) */
        const kcoll_buf_t part = pn > 1                   ? KCOLL_BUF_TMP
                                 : is_root && a->in_place ? KCOLL_BUF_RECV
                                                          : KCOLL_BUF_SEND;
        kcoll_lanes_stages_t st = {.before = kcoll_rl_scatter, .after = kcoll_rl_gather,
                                   .ctx = &r,
                                   .x = {.coll = KCOLL_XC_REDUCE, .sbuf = (uint8_t)part,
                                         .soff = r.T, .rbuf = (uint8_t)part, .roff = r.T,
                                         .root = root_node}};
        if (is_root && part == KCOLL_BUF_SEND)
            st.x.rbuf = KCOLL_BUF_RECV; /* a root alone on its node, not in place */
        if (cl->nodes == 1 && is_root && part == KCOLL_BUF_SEND) /* no host: a root alone */
            kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, a->count * a->esize);
        rc = kcoll_cluster_lanes_pieces(a, cl, &st, s);
    }
    free(r.counts);
    free(r.rc);
    free(r.maps);
    free(r.lay);
    free(r.need);
    return rc;
}
