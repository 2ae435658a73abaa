/* MPI_Gather, MPI_Allgather and MPI_Allgatherv across nodes, leaders
 * layout: every node gathers its ranks' blocks at its leader, the leaders
 * gather the nodes' runs with the host MPI, and the whole goes to where it
 * is wanted (paper 003 section VII.G: the two-level gather, CMA inside the
 * node, the network between nodes). MPI_Scatter is the same builder run
 * the other way (below).
 *
 * Blocks are kept in node-major order between the steps (node 0's ranks
 * by local rank, then node 1's...: kcoll_cluster_blocks), so that each
 * node's blocks are one run and the leaders' host call moves one run per
 * node whatever the placement of ranks.
 *  1. inside the node: the leader exposes its buffer X and raises AUX;
 *     every other rank WRITEs its block to its place in X (one copy,
 *     every rank moving its own at the same time) and raises DATA; the
 *     leader copies its own and waits for all;
 *  2. between nodes: the leaders run the host's Gatherv to the root's
 *     node (Allgather(v): Allgatherv to every leader), one run per node,
 *     in place in X (the uniform host call where every node's run is one
 *     length);
 *  3. Gather: the root takes the whole from X into its receive buffer,
 *     each block to its rank's place (a local copy on a leader, else a
 *     READ of its leader's X after the leader raised DATA); Allgather(v):
 *     every rank of every node does so from its leader (pn - 1 readers of
 *     one buffer, each reading what it needs once). The readers raise DONE
 *     and the leader waits for them before X goes.
 * X is the leader's TMP: the whole on a leader that receives it, its
 * node's run on the others (Gather). Where node-major order is rank order
 * (every node's ranks consecutive: cl->ordered) and every block is one
 * size, a receiving leader's receive buffer is X itself: the blocks land
 * where they belong and step 3 has nothing to copy on it; so too where
 * every node has one rank and this leader's own v-layout puts the blocks
 * back to back in node order. A leader alone on its node gives the host
 * its own block where it lies (a Gather's; an Allgather's where every
 * node has one rank, since MPI_IN_PLACE is all members' or none's), not
 * in place: with one rank per node the call is the host's own on the
 * user's buffers.
 * Any node sizes, any placement, any root, in place (the own block is
 * taken from the receive buffer), zero-length blocks.
 *
 * Cost (b bytes a block, pn ranks on the node, p in all, N nodes, r the
 * mean run a node sends, T_host the host's Gatherv / Allgatherv among N
 * processes):
 *   Gather:    T_write(b) + T_host(N, r) + T_read(p b)   (root not a leader)
 *   Allgather: T_write(b) + T_host(N, r) + T_read(p b) with pn - 1 readers
 * The network carries each block once per receiving node, as the host
 * alone does, but with N processes instead of p.
 *
 * MPI_Scatter, the mirror: the root's blocks go into node-major order in
 * its leader's X (a local copy, or the leader READs the root's send
 * buffer once the root raised DATA, raising AUX when done); the leaders
 * run the host's Scatterv (Scatter where runs are even) of the runs, each
 * into its X; every rank READs its block from its leader's X (the leader
 * raised DATA) and raises DONE. Where node-major order is rank order and
 * the root leads its node, X is the root's send buffer itself.
 *   Scatter:   T_read(p b) (root not a leader) + T_host(N, r) + T_read(b)
 */
#include <stdlib.h>

#include "cluster/cluster.h"

typedef struct {
    size_t *at, *run, total;
    int direct;        /* a receiving leader's X is its RECV (node-major is rank order) */
    kcoll_buf_t xbuf;  /* this node's leader's X */
    size_t xoff;       /* this node's run in it */
    int whole;         /* this node's leader receives the whole */
} kcoll_gl_t;

/* Where everything lies for this rank (all: Allgather(v); else the root's
 * node is root_node and its root is local rank root_local there).
 * 0, or -1 when out of memory. */
static int kcoll_gl_init(kcoll_gl_t *g, const kcoll_args_t *a, const kcoll_cluster_t *cl, int all,
                         int root_node, int root_local)
{
    const size_t nl = (size_t)cl->nodes * (size_t)cl->lanes;
    g->at = malloc((nl + (size_t)cl->nodes) * sizeof *g->at);
    if (!g->at)
        return -1;
    g->run = g->at + nl;
    g->total = kcoll_cluster_blocks(a, cl, g->at, g->run);
    g->whole = all || cl->node == root_node;
    /* a receiving leader's receive buffer is X where every block's place
     * is its node-major offset: one size and consecutive nodes (alike on
     * every rank), or, with every node one rank (no other rank writes
     * into X), this rank's own v-layout so */
    g->direct = g->whole && (all || root_local == 0) && (!a->lay ? cl->ordered : cl->lanes == 1);
    for (int k = 0; g->direct && a->lay && k < cl->nodes; k++) {
        const int q = cl->rank_of[k];
        g->direct = q < 0 || !kcoll_cluster_blen(a, q) || kcoll_cluster_place(a, q) == g->at[k];
    }
    g->xbuf = g->direct ? KCOLL_BUF_RECV : KCOLL_BUF_TMP;
    /* a leader that receives the whole keeps every run at its place */
    g->xoff = g->whole ? g->at[(size_t)cl->node * (size_t)cl->lanes] : 0;
    return 0;
}

/* This rank's block: in its receive buffer at its place in place, else
 * its SEND. */
static void kcoll_gl_own(const kcoll_args_t *a, int in_place, int q, kcoll_buf_t *buf,
                         size_t *off)
{
    *buf = in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
    *off = in_place ? kcoll_cluster_place(a, q) : 0;
}

/* Step 2 on a leader: the host's uniform collective `coll` (ALLGATHER,
 * GATHER, SCATTER) of the nodes' runs, or its v form where the runs
 * differ: this leader's run from sb at so, the whole (or its run) to rb
 * at ro; in place where the two are one (the runs in X). */
static void kcoll_gl_host(const kcoll_gl_t *g, const kcoll_cluster_t *cl, int coll, int root,
                          kcoll_buf_t sb, size_t so, kcoll_buf_t rb, size_t ro, kcoll_sched_t *s)
{
    int even = 1;
    for (int k = 1; k < cl->nodes; k++)
        even &= g->run[k] == g->run[0];
    kcoll_xcoll_t x = {.coll = (uint8_t)coll, .sbuf = (uint8_t)sb, .soff = so, .rbuf = (uint8_t)rb,
                       .roff = ro, .group = KCOLL_CLUSTER_LEADERS, .root = root,
                       .len = g->run[0], .esize = 1};
    if (even) {
        kcoll_sched_xcoll(s, &x);
        return;
    }
    x.coll = coll == KCOLL_XC_ALLGATHER ? KCOLL_XC_ALLGATHERV
             : coll == KCOLL_XC_GATHER  ? KCOLL_XC_GATHERV
                                        : KCOLL_XC_SCATTERV;
    kcoll_sched_xcoll_v(s, &x, g->run, cl->nodes);
}

static kcoll_status_t kcoll_gl_build(const kcoll_args_t *a, const kcoll_cluster_t *cl, int all,
                                     int root_node, int root_local, kcoll_sched_t *s)
{
    kcoll_gl_t g;
    if (!cl->rank_of)
        return KCOLL_ERR_UNSUPPORTED;
    if (!all && !kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    if (kcoll_gl_init(&g, a, cl, all, root_node, root_local))
        return KCOLL_ERR_NOMEM;
    if (!g.total) { /* nothing moves */
        free(g.at);
        return KCOLL_OK;
    }
    const size_t row = (size_t)cl->node * (size_t)cl->lanes;
    const int me = cl->rank_of[row + (size_t)cl->me];
    const int is_root = !all && cl->node == root_node && cl->me == root_local;
    /* MPI_IN_PLACE: every rank's of an Allgather(v), the root's of a Gather */
    const int in_place = a->in_place && (all || is_root);
    const size_t mine = kcoll_cluster_blen(a, me), rel = g.at[row + (size_t)cl->me] - g.at[row];
    const int leader = cl->peer_of[0];
    kcoll_buf_t ob;
    size_t oo;
    kcoll_gl_own(a, in_place, me, &ob, &oo);
    /* A leader alone on its node gives the host its own block where it
     * is (no copy into X), unless in place: a Gather's sender or root; an
     * Allgather's every leader where every node has one rank (MPI_IN_PLACE
     * is every member's or none's, and an Allgather's is every rank's) */
    const int from_own = cl->me == 0 && cl->pn == 1 && (!all || cl->lanes == 1) && !in_place;

    /* 1: the node's run at its leader */
    if (cl->me == 0) {
        if (cl->pn > 1) {
            kcoll_sched_expose(s, g.xbuf);
            kcoll_sched_signal(s, KCOLL_FLAG_AUX, 1);
        }
        if (!(g.direct && in_place) && !from_own) /* else it is at its place already */
            kcoll_sched_copy(s, g.xbuf, g.xoff + rel, ob, oo, mine);
        for (int i = 1; i < cl->pn; i++)
            kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DATA, 1);
    } else {
        kcoll_sched_wait(s, leader, KCOLL_FLAG_AUX, 1);
        kcoll_sched_write(s, leader, g.xbuf, g.xoff + rel, ob, oo, mine);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    }

    /* 2: the runs between the leaders, in place in X (every run at its
     * node-major offset on a receiving leader; its own run at 0 on a
     * non-receiving one, whose X is only that) */
    if (cl->me == 0 && cl->nodes > 1)
        kcoll_gl_host(&g, cl, all ? KCOLL_XC_ALLGATHER : KCOLL_XC_GATHER, all ? 0 : root_node,
                      from_own ? ob : g.xbuf, from_own ? oo : 0, g.xbuf, 0, s);

    /* 3: the whole to the receivers' places */
    if (g.whole) {
        const int readers = all ? cl->pn - 1 : root_local != 0;
        if (cl->me == 0) {
            if (readers)
                kcoll_sched_signal(s, KCOLL_FLAG_DATA, 2);
            if ((all || is_root) && !g.direct)
                kcoll_cluster_move_blocks(s, a, cl, g.at, -1, -1, 1, g.xbuf, 0,
                                          KCOLL_BUF_RECV);
            for (int i = 1; i < cl->pn; i++)
                if (all || i == root_local)
                    kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
        } else if (all || is_root) {
            kcoll_sched_wait(s, leader, KCOLL_FLAG_DATA, 2);
            kcoll_cluster_move_blocks(s, a, cl, g.at, -1, leader, 1, g.xbuf, 0, KCOLL_BUF_RECV);
            kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        }
    }
    free(g.at);
    return s->err;
}

/* TMP: the leader's X, where it is not its RECV (or SEND), nor only the
 * block of a leader alone on its node that takes no whole. */
static size_t kcoll_gl_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl, int all,
                           int root_node, int root_local)
{
    kcoll_gl_t g;
    if (!cl->rank_of || cl->me != 0 || kcoll_gl_init(&g, a, cl, all, root_node, root_local))
        return 0;
    const size_t t = g.direct || (!g.whole && cl->pn == 1) ? 0
                     : g.whole                             ? g.total
                                                           : g.run[cl->node];
    free(g.at);
    return t;
}

kcoll_status_t kcoll_cluster_gather_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                            int root_node, int root_local, kcoll_sched_t *s)
{
    return kcoll_gl_build(a, cl, 0, root_node, root_local, s);
}

size_t kcoll_cluster_gather_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                        int root_node, int root_local)
{
    return kcoll_gl_tmp(a, cl, 0, root_node, root_local);
}

kcoll_status_t kcoll_cluster_allgather_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                               kcoll_sched_t *s)
{
    return kcoll_gl_build(a, cl, 1, -1, -1, s);
}

size_t kcoll_cluster_allgather_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    return kcoll_gl_tmp(a, cl, 1, -1, -1);
}

/* MPI_Scatter: the builder above the other way. X on the root's node's
 * leader holds the whole (the root's SEND where that is node-major), on
 * the others their node's run. */
kcoll_status_t kcoll_cluster_scatter_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             int root_node, int root_local, kcoll_sched_t *s)
{
    kcoll_gl_t g;
    if (!cl->rank_of)
        return KCOLL_ERR_UNSUPPORTED;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    if (kcoll_gl_init(&g, a, cl, 0, root_node, root_local))
        return KCOLL_ERR_NOMEM;
    if (!g.total) {
        free(g.at);
        return KCOLL_OK;
    }
    if (g.direct) /* the root leads its node: its send buffer is node-major */
        g.xbuf = KCOLL_BUF_SEND;
    const size_t row = (size_t)cl->node * (size_t)cl->lanes;
    const int me = cl->rank_of[row + (size_t)cl->me];
    const int is_root = cl->node == root_node && cl->me == root_local;
    const int keep = is_root && a->in_place; /* its block stays in its SEND */
    const size_t mine = kcoll_cluster_blen(a, me), rel = g.at[row + (size_t)cl->me] - g.at[row];
    const int leader = cl->peer_of[0];

    /* 1: the root's blocks in node-major order in its leader's X */
    if (g.whole && !g.direct) {
        if (cl->me == 0 && root_local == 0) {
            kcoll_cluster_move_blocks(s, a, cl, g.at, -1, -1, 0, g.xbuf, 0, KCOLL_BUF_SEND);
        } else if (cl->me == 0) {
            const int root = cl->peer_of[root_local];
            kcoll_sched_wait(s, root, KCOLL_FLAG_DATA, 1);
            kcoll_cluster_move_blocks(s, a, cl, g.at, -1, root, 0, g.xbuf, 0, KCOLL_BUF_SEND);
            kcoll_sched_signal(s, KCOLL_FLAG_AUX, 1);
        } else if (is_root) {
            kcoll_sched_expose(s, KCOLL_BUF_SEND);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
            kcoll_sched_wait(s, leader, KCOLL_FLAG_AUX, 1);
        }
    }

    /* 2: every leader's run into its X; a leader alone on its node takes
     * its block into its receive buffer (the root not in place) */
    const int to_own = cl->me == 0 && cl->pn == 1 && !keep;
    if (cl->me == 0 && cl->nodes > 1)
        kcoll_gl_host(&g, cl, KCOLL_XC_SCATTER, root_node, g.xbuf, 0,
                      to_own ? KCOLL_BUF_RECV : g.xbuf, 0, s);

    /* 3: every rank's block from its leader's X */
    if (cl->me == 0) {
        if (cl->pn > 1) {
            kcoll_sched_expose(s, g.xbuf);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, 2);
        }
        if (!keep && !to_own)
            kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, g.xbuf, g.xoff + rel, mine);
        for (int i = 1; i < cl->pn; i++)
            kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
    } else {
        if (!keep) {
            kcoll_sched_wait(s, leader, KCOLL_FLAG_DATA, 2);
            kcoll_sched_read(s, leader, g.xbuf, g.xoff + rel, KCOLL_BUF_RECV, 0, mine);
        }
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    free(g.at);
    return s->err;
}

size_t kcoll_cluster_scatter_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                         int root_node, int root_local)
{
    return kcoll_gl_tmp(a, cl, 0, root_node, root_local);
}
