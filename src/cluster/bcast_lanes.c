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
 * Pipelined (a vector longer than the segment, with more than one lane):
 * in pieces, as allreduce_lanes.c (kcoll_cluster_lanes_pieces): steps 1
 * of piece i, its lanes begun, piece i - 1's ended and step 3. On the
 * root's node DATA counts the pieces a carrier has read from the root,
 * and the ranks wait for each other's DONE once, after the last piece.
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
 * endpoint per node; the price is L host calls instead of one. In pieces
 * a piece crosses the network while the root's node scatters the next one
 * and the other nodes share the one before (model/nodes.c,
 * kcoll_nodes_pipe).
 */
#include "cluster/cluster.h"

/* READs of the shares of the lanes local rank c carries of the piece a
 * (its vector from byte `at` on), from team rank peer's RECV to the same
 * place in this rank's. */
static void kcoll_bcast_lanes_from(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t at,
                                   int c, int peer, kcoll_sched_t *s)
{
    size_t first, len;
    for (int l = c; l < cl->lanes; l += cl->pn) {
        kcoll_cluster_share(a->count, cl->lanes, l, &first, &len);
        if (len)
            kcoll_sched_read(s, peer, KCOLL_BUF_RECV, at + first * a->esize, KCOLL_BUF_RECV,
                             at + first * a->esize, len * a->esize);
    }
}

/* What the steps of one call share. */
typedef struct {
    int home, root_local;
    size_t n;          /* the vector's bytes: the piece that ends there is the last */
    uint32_t in, out;  /* pieces through step 1, step 3 so far */
} kcoll_bl_room_t;

/* Step 1 of piece a (its vector from byte `at` on): on the root's node
 * every carrier reads its shares from the root and raises DATA to the
 * piece's number (from 1). */
static void kcoll_bl_scatter(void *ctx, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                             size_t at, uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s)
{
    kcoll_bl_room_t *r = ctx;
    (void)ph;
    (void)step;
    (void)pieces;
    r->in++;
    if (!r->home || cl->pn == 1 || cl->me == r->root_local)
        return;
    kcoll_bcast_lanes_from(a, cl, at, cl->me, cl->peer_of[r->root_local], s);
    kcoll_sched_signal(s, KCOLL_FLAG_DATA, r->in);
}

/* Step 3 of piece a: on the root's node every rank but the root reads
 * the shares it lacks from their carriers once they have them (the next
 * carrier first, so that no carrier serves all readers at once), and
 * after the last piece every rank waits until the others have read from
 * it (DONE); on every other node the rounds' Allgatherv. */
static void kcoll_bl_gather(void *ctx, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                            size_t at, uint32_t *ph, uint32_t step, int pieces, kcoll_sched_t *s)
{
    kcoll_bl_room_t *r = ctx;
    const int pn = cl->pn, me = cl->me;
    (void)pieces;
    r->out++;
    if (!r->home) {
        kcoll_cluster_lanes_allgather(a, cl, *ph * step, step, at, s);
        *ph += pn > 1 ? (uint32_t)((cl->lanes + pn - 1) / pn) : 0;
        return;
    }
    if (pn == 1)
        return;
    for (int k = 1; me != r->root_local && k < pn; k++) {
        const int c = (me + k) % pn; /* the next carrier */
        if (c != r->root_local)
            kcoll_sched_wait(s, cl->peer_of[c], KCOLL_FLAG_DATA, r->out);
        kcoll_bcast_lanes_from(a, cl, at, c, cl->peer_of[c], s);
    }
    if (at + a->count * a->esize < r->n)
        return;
    if (me != r->root_local)
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    for (int i = 0; i < pn; i++)
        if (i != me && i != r->root_local)
            kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
}

kcoll_status_t kcoll_cluster_bcast_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                         int root_node, int root_local, kcoll_sched_t *s)
{
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn, home = cl->node == root_node;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    if (!home && pn > 1 && R > KCOLL_CLUSTER_MAX_ROUNDS)
        return KCOLL_ERR_UNSUPPORTED;
    kcoll_bl_room_t r = {.home = home, .root_local = root_local, .n = a->count * a->esize};
    if (home && pn > 1) /* the root's node reads from every rank's RECV */
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
    /* step 2: the lanes' host Bcast, in place in RECV */
    const kcoll_lanes_stages_t st = {
        .before = kcoll_bl_scatter, .after = kcoll_bl_gather, .ctx = &r,
        .x = {.coll = KCOLL_XC_BCAST, .sbuf = KCOLL_BUF_RECV, .rbuf = KCOLL_BUF_RECV,
              .root = root_node}};
    return kcoll_cluster_lanes_pieces(a, cl, &st, s);
}
