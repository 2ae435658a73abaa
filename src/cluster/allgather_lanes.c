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
 * Pipelined (blocks longer than the segment s, cl->segment, on nodes of
 * more than one rank): every block is cut into k = ceil(b / s) pieces of
 * s bytes, and steps 1 and 2 run piece by piece, overlapped: a rank
 * begins the lanes' host collectives of piece i + 1 (split: BEGIN, END)
 * before it places and reads piece i, so the messages between nodes
 * move while the node copies (the executor lets the host drive them
 * between its batches of READs). DATA counts the pieces in. A lane's
 * area in TMP holds its pieces piece by piece, each piece's N parts in
 * node order (so each host call receives into one run); piece i of
 * member j is bytes [i s, i s + s) of its block, empty past its end (the
 * host Allgatherv then names its true lengths; a piece no member has is
 * not sent).
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
 * and pipelined in k pieces, with T_h = m T_host(N, b / k) and T_r =
 * T_read((p - m N) b / k) a piece's:
 *   T = T_h + (k - 1) max(T_h, T_r) + T_r
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

/* Piece i of a block of len bytes, pieces of seg bytes: its length. */
static size_t kcoll_agl_piece(size_t len, size_t i, size_t seg)
{
    return len > i * seg ? (len - i * seg < seg ? len - i * seg : seg) : 0;
}

/* Where piece i's parts start in a lane's area (the earlier pieces of
 * every member's block before them) and their lengths into plen; returns
 * their total. */
static size_t kcoll_agl_pieces(const kcoll_cluster_t *cl, const size_t *len, size_t i, size_t seg,
                               size_t *at, size_t *plen)
{
    size_t total = 0;
    *at = 0;
    for (int j = 0; j < cl->nodes; j++) {
        *at += len[j] < i * seg ? len[j] : i * seg;
        plen[j] = kcoll_agl_piece(len[j], i, seg);
        total += plen[j];
    }
    return total;
}

/* Move piece i of lane l's blocks (len: their lengths, plen: room for
 * the pieces') from its area (at `area` in the TMP of peer, or of this
 * rank: peer < 0) to their ranks' places in RECV. */
static void kcoll_agl_place(kcoll_sched_t *s, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                            int l, size_t area, int peer, size_t i, size_t seg, const size_t *len,
                            size_t *plen)
{
    size_t at;
    kcoll_agl_pieces(cl, len, i, seg, &at, plen);
    at += area;
    for (int j = 0; j < cl->nodes; j++) {
        if (!plen[j]) /* past the block's end, or no rank l on node j */
            continue;
        const int q = cl->rank_of[(size_t)j * (size_t)cl->lanes + (size_t)l];
        const size_t y = kcoll_cluster_place(a, q) + i * seg;
        if (peer < 0)
            kcoll_sched_copy(s, KCOLL_BUF_RECV, y, KCOLL_BUF_TMP, at, plen[j]);
        else
            kcoll_sched_read(s, peer, KCOLL_BUF_TMP, at, KCOLL_BUF_RECV, y, plen[j]);
        at += plen[j];
    }
}

/* Start piece i of lane l between the nodes (len: its blocks' lengths,
 * plen: room for the pieces'; its area at `area`, lt its blocks' total),
 * whole or split; returns the descriptor of a split one, or -1 (whole, or
 * no piece to send). */
static int kcoll_agl_send(kcoll_sched_t *s, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                          int l, size_t area, size_t lt, size_t i, size_t seg, int split,
                          const size_t *len, size_t *plen)
{
    size_t at;
    if (!kcoll_agl_pieces(cl, len, i, seg, &at, plen))
        return -1; /* alike on every member */
    int even = 1;
    for (int j = 1; j < cl->nodes; j++)
        even &= plen[j] == plen[0];
    /* every member sends, none in place (MPI_IN_PLACE is all members' or
     * none's): its own block's piece, or on a lane it carries for a rank
     * its node lacks, nothing (an empty block just past the area) */
    kcoll_xcoll_t x = {.coll = even ? KCOLL_XC_ALLGATHER : KCOLL_XC_ALLGATHERV,
                       .sbuf = KCOLL_BUF_TMP, .soff = area + lt, .rbuf = KCOLL_BUF_TMP,
                       .roff = area + at, .group = KCOLL_CLUSTER_LANE(l), .len = plen[0],
                       .esize = 1};
    if (l == cl->me && plen[cl->node]) {
        const int me = cl->rank_of[(size_t)cl->node * (size_t)cl->lanes + (size_t)cl->me];
        x.sbuf = a->in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
        x.soff = (a->in_place ? kcoll_cluster_place(a, me) : 0) + i * seg;
    }
    if (split)
        return kcoll_sched_xbegin(s, &x, even ? NULL : plen, cl->nodes);
    if (even)
        kcoll_sched_xcoll(s, &x);
    else
        kcoll_sched_xcoll_v(s, &x, plen, cl->nodes);
    return -1;
}

kcoll_status_t kcoll_cluster_allgather_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s)
{
    if (!cl->rank_of)
        return KCOLL_ERR_UNSUPPORTED;
    const int L = cl->lanes, pn = cl->pn, N = cl->nodes, m = (L - cl->me + pn - 1) / pn;
    /* every lane's block lengths (lane l's at len + l N), room for a piece's */
    size_t *len = malloc(((size_t)L + 1) * (size_t)N * sizeof *len), *plen = len + (size_t)L * N;
    /* every lane's area in its carrier's TMP (the lanes a rank carries lie
     * one after another, in lane order) and its blocks' total */
    size_t *area = malloc((size_t)L * 2 * sizeof *area), *lt = area + L;
    int *id = malloc((size_t)m * sizeof *id); /* a split piece per lane this rank carries (m) */
    if (!len || !area || !id) {
        free(len);
        free(area);
        free(id);
        return KCOLL_ERR_NOMEM;
    }
    size_t total = 0, maxb = 0;
    for (int l = 0; l < L; l++) {
        total += lt[l] = kcoll_agl_lane(a, cl, l, len + (size_t)l * N);
        area[l] = l < pn ? 0 : area[l - pn] + lt[l - pn];
        for (int j = 0; j < N; j++)
            maxb = len[(size_t)l * N + j] > maxb ? len[(size_t)l * N + j] : maxb;
    }
    /* the pieces, alike on every rank (the blocks' lengths are every rank's) */
    size_t seg = cl->segment && L > 1 && cl->segment < maxb ? cl->segment : maxb;
    if (seg && (maxb + seg - 1) / seg > KCOLL_CLUSTER_MAX_SEGMENTS) /* DATA counts pieces */
        seg = (maxb + KCOLL_CLUSTER_MAX_SEGMENTS - 1) / KCOLL_CLUSTER_MAX_SEGMENTS;
    const size_t k = total ? (maxb + seg - 1) / seg : 0;
    if (total && pn > 1)
        kcoll_sched_expose(s, KCOLL_BUF_TMP);
    /* 1 (piece 0; whole where there is one piece): this rank's lanes
     * between the nodes, in lane order */
    for (int c = 0, l = cl->me; c < m; c++, l += pn)
        id[c] = k ? kcoll_agl_send(s, a, cl, l, area[l], lt[l], 0, seg, k > 1, len + (size_t)l * N,
                                   plen)
                  : -1;
    for (size_t i = 0; i < k; i++) {
        for (int c = 0; c < m; c++)
            if (id[c] >= 0)
                kcoll_sched_xend(s, id[c]);
        if (pn > 1)
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(i + 1));
        /* the next piece travels while this one is shared */
        for (int c = 0, l = cl->me; i + 1 < k && c < m; c++, l += pn)
            id[c] = kcoll_agl_send(s, a, cl, l, area[l], lt[l], i + 1, seg, 1,
                                   len + (size_t)l * N, plen);
        /* 2: every lane's piece to its places, from whoever carries it */
        for (int l = cl->me; l < L; l += pn)
            kcoll_agl_place(s, a, cl, l, area[l], -1, i, seg, len + (size_t)l * N, plen);
        for (int d = 1; d < pn; d++) { /* the others, starting with the next rank */
            const int r = (cl->me + d) % pn;
            kcoll_sched_wait(s, cl->peer_of[r], KCOLL_FLAG_DATA, (uint32_t)(i + 1));
            for (int l = r; l < L; l += pn)
                kcoll_agl_place(s, a, cl, l, area[l], cl->peer_of[r], i, seg,
                                len + (size_t)l * N, plen);
        }
    }
    if (k && pn > 1) {
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        for (int i = 0; i < pn; i++)
            if (i != cl->me)
                kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
    }
    free(len);
    free(area);
    free(id);
    return s->err;
}
