/* MPI_Reduce_scatter_block and MPI_Reduce_scatter across nodes, lanes
 * layout: every rank of a node carries, between nodes, the blocks of the
 * lanes it carries, all ranks at once.
 *
 * The vector holds one block per communicator rank: rank q's is a->count
 * elements (the _block form) or a->counts[q], at the sum of the blocks
 * before q. Lane l's share is the blocks of local rank l of every node,
 * in node order; a node with no local rank l has no block in it (lane l's
 * member there is local rank l mod q_k, which carries the lane for the
 * others: cluster.h). Lane l's host reduce-scatter hands node k's member
 * the block of rank (k, l), or nothing where there is no such rank: no
 * lane waits for data a node cannot have, and nothing is left to hand
 * out afterwards. So, on a node of q ranks where local rank i carries
 * lanes i, i + q, i + 2q, ... (below L, the most ranks on a node):
 *  0. every rank copies its vector into TMP in carrier order: the shares
 *     of rank 0's lanes (in lane order), then rank 1's, ...: a lane's
 *     blocks are spread over the vector (q apart where nodes hold
 *     consecutive ranks, anywhere under round-robin placement), and what
 *     a rank carries must be one range;
 *  1. inside the node, the partitioned Reduce_scatter of that copy over
 *     the node's q ranks (coll/reduce/partitioned.c), rank i's block being
 *     the shares of its lanes: each rank ends with the node's sum of them;
 *  2. between nodes, for each lane it carries, in increasing lane order
 *     (every member of every lane starts them in one global order, so the
 *     host calls cannot wait on each other in a circle): the host's
 *     Reduce_scatter of the lane's share on lane l, the uniform
 *     Reduce_scatter_block where every node has local rank l and the
 *     blocks are one size; its own lane's block lands in RECV, the others
 *     give this rank nothing. Nothing follows on the node.
 * A node of one rank skips step 1 (its copy is its node's sum); one node
 * alone copies its block from step 1 to RECV.
 *
 * Order: each block is combined over the node's ranks in rank order, then
 * over the nodes in node order: MPI's order for a non-commutative
 * operation only where every node's ranks are consecutive (cl->ordered);
 * elsewhere the builder refuses (KCOLL_ERR_UNSUPPORTED). cl->rank_of is
 * needed (else KCOLL_ERR_UNSUPPORTED).
 *
 * Cost (b bytes per block, p ranks, n = p b the vector, L lanes, a node of
 * q ranks whose busiest rank carries m = ceil(L / q) lanes):
 *   T = T_copy(n) + T_rs^part(q, m n / L) + m T_host_rs(N, b)
 * Each rank moves about n (q-1)/q bytes on the node and its lanes' shares,
 * m n / L, between nodes, all q ranks of a node at once: the network sees
 * q endpoints per node where the leaders layout has one carrying n. Step
 * 0's local copy of the vector is the price of any placement.
 */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

/* Where everything lies, alike on every rank of a node. */
typedef struct {
    int p;          /* ranks of the communicator */
    size_t *off;    /* [p] rank q's block in the vector */
    size_t *len;    /* [nodes] a lane's block lengths, scratch */
    size_t *share;  /* [L] lane l's share, bytes */
    size_t *at;     /* [L] lane l's share in the carrier-ordered copy */
    size_t *counts; /* [pn] local rank i's part of the copy, elements */
    size_t vec;     /* the vector, bytes */
    size_t most;    /* the largest part of any local rank, bytes */
} kcoll_rsl_t;

static size_t kcoll_rsl_blen(const kcoll_args_t *a, int q)
{
    return (a->counts ? a->counts[q] : a->count) * a->esize;
}

static void kcoll_rsl_free(kcoll_rsl_t *w)
{
    free(w->off);
    free(w->len);
    free(w->share);
    free(w->at);
    free(w->counts);
}

/* Lane l's block lengths, node by node, into w->len; their sum. */
static size_t kcoll_rsl_lane(const kcoll_args_t *a, const kcoll_cluster_t *cl, int l,
                             kcoll_rsl_t *w)
{
    size_t total = 0;
    for (int j = 0; j < cl->nodes; j++) {
        const int q = cl->rank_of[(size_t)j * (size_t)cl->lanes + (size_t)l];
        w->len[j] = q < 0 ? 0 : kcoll_rsl_blen(a, q);
        total += w->len[j];
    }
    return total;
}

/* Fill w: 0, or -1 (no rank_of, out of memory). */
static int kcoll_rsl_make(const kcoll_args_t *a, const kcoll_cluster_t *cl, kcoll_rsl_t *w)
{
    const int L = cl->lanes, N = cl->nodes, q = cl->pn;
    *w = (kcoll_rsl_t){0};
    if (!cl->rank_of || q < 1)
        return -1;
    for (int i = 0; i < N * L; i++)
        w->p += cl->rank_of[i] >= 0;
    w->off = malloc((size_t)w->p * sizeof *w->off);
    w->len = malloc((size_t)N * sizeof *w->len);
    w->share = malloc((size_t)L * sizeof *w->share);
    w->at = malloc((size_t)L * sizeof *w->at);
    w->counts = malloc((size_t)q * sizeof *w->counts);
    if (!w->off || !w->len || !w->share || !w->at || !w->counts) {
        kcoll_rsl_free(w);
        return -1;
    }
    for (int r = 0; r < w->p; r++) {
        w->off[r] = w->vec;
        w->vec += kcoll_rsl_blen(a, r);
    }
    size_t at = 0;
    for (int i = 0; i < q; i++) { /* carrier order */
        size_t part = 0;
        for (int l = i; l < L; l += q) {
            w->share[l] = kcoll_rsl_lane(a, cl, l, w);
            w->at[l] = at + part;
            part += w->share[l];
        }
        w->counts[i] = part / a->esize;
        w->most = part > w->most ? part : w->most;
        at += part;
    }
    return 0;
}

/* Step 1's view: the node's q ranks, rank i's block its lanes' shares. */
static kcoll_args_t kcoll_rsl_node(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                   const kcoll_rsl_t *w, int i)
{
    kcoll_args_t b = *a;
    b.coll = KCOLL_COLL_REDUCE_SCATTER;
    b.p = cl->pn;
    b.rank = i;
    b.root = 0;
    b.lv = NULL;
    b.lay = NULL;
    b.counts = w->counts;
    b.count = 0;
    b.bytes = w->vec;
    b.in_place = 0; /* it reads the copy in TMP */
    return b;
}

/* Step 1's scratch, the most of any rank of the node: peers address this
 * rank's TMP beyond it alike. */
static size_t kcoll_rsl_scratch(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                const kcoll_rsl_t *w)
{
    size_t most = 0;
    for (int i = 0; cl->pn > 1 && i < cl->pn; i++) {
        kcoll_args_t b = kcoll_rsl_node(a, cl, w, i);
        const size_t t = kcoll_reduce_tmp_len(&b);
        most = t > most ? t : most;
    }
    return most;
}

size_t kcoll_cluster_rs_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    kcoll_rsl_t w;
    if (kcoll_rsl_make(a, cl, &w))
        return 0;
    /* the phase's scratch, the carrier-ordered copy, the node's sums */
    const size_t t = kcoll_rsl_scratch(a, cl, &w) + w.vec + (cl->pn > 1 ? w.most : 0);
    kcoll_rsl_free(&w);
    return t;
}

kcoll_status_t kcoll_cluster_rs_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                       kcoll_sched_t *s)
{
    const int N = cl->nodes, q = cl->pn, L = cl->lanes;
    kcoll_rsl_t w;
    if (!cl->rank_of || !kcoll_cluster_keeps_order(a, cl))
        return KCOLL_ERR_UNSUPPORTED;
    if (kcoll_rsl_make(a, cl, &w))
        return KCOLL_ERR_NOMEM;
    if (!w.vec) { /* nothing moves */
        kcoll_rsl_free(&w);
        return KCOLL_OK;
    }
    const size_t A = kcoll_rsl_scratch(a, cl, &w), B = A + w.vec;
    const kcoll_buf_t src = a->in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
    const int me = cl->rank_of[(size_t)cl->node * (size_t)L + (size_t)cl->me];

    /* 0: the vector in carrier order (a lane's blocks in node order) */
    for (int l = 0; l < L; l++) {
        size_t at = A + w.at[l];
        for (int j = 0; j < N; j++) {
            const int r = cl->rank_of[(size_t)j * (size_t)L + (size_t)l];
            if (r < 0)
                continue;
            kcoll_sched_copy(s, KCOLL_BUF_TMP, at, src, w.off[r], kcoll_rsl_blen(a, r));
            at += kcoll_rsl_blen(a, r);
        }
    }

    /* 1: the node's sum of each rank's lanes, local rank i's at its B */
    size_t mine = A + w.at[cl->me]; /* where this rank's first lane's node sum lies */
    if (q > 1) {
        kcoll_bufmap_t *maps = malloc((size_t)q * sizeof *maps);
        if (!maps) {
            kcoll_rsl_free(&w);
            return KCOLL_ERR_NOMEM;
        }
        for (int i = 0; i < q; i++) {
            kcoll_bufmap_init(&maps[i], 0);
            maps[i].buf[KCOLL_BUF_SEND] = KCOLL_BUF_TMP;
            maps[i].off[KCOLL_BUF_SEND] = A;
            maps[i].buf[KCOLL_BUF_RECV] = KCOLL_BUF_TMP;
            maps[i].off[KCOLL_BUF_RECV] = B;
        }
        kcoll_args_t b = kcoll_rsl_node(a, cl, &w, cl->me);
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of, 0, KCOLL_PHASE_VALUES,
                           maps, q, 0, NULL);
        free(maps);
        mine = B;
    }

    /* 2: across the nodes, each lane this rank carries, in lane order: its
     * own block to RECV */
    if (N == 1) {
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_TMP, mine, kcoll_rsl_blen(a, me));
    } else {
        for (int l = cl->me; l < L; l += q) {
            if (!w.share[l]) /* alike on every node: a lane's blocks are known everywhere */
                continue;
            kcoll_rsl_lane(a, cl, l, &w); /* its blocks' lengths, node by node, into w.len */
            int even = 1;
            for (int j = 0; j < N; j++)
                even &= cl->rank_of[(size_t)j * (size_t)L + (size_t)l] >= 0 && w.len[j] == w.len[0];
            kcoll_xcoll_t x = {.sbuf = KCOLL_BUF_TMP, .soff = mine + (w.at[l] - w.at[cl->me]),
                               .rbuf = KCOLL_BUF_RECV, .roff = 0,
                               .group = KCOLL_CLUSTER_LANE(l), .esize = a->esize};
            if (even) {
                x.coll = KCOLL_XC_REDUCE_SCATTER_BLOCK;
                x.len = w.len[0];
                kcoll_sched_xcoll(s, &x);
            } else {
                x.coll = KCOLL_XC_REDUCE_SCATTER;
                x.len = w.share[l];
                kcoll_sched_xcoll_v(s, &x, w.len, N);
            }
        }
    }
    kcoll_rsl_free(&w);
    return s->err;
}
