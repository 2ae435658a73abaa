/* MPI_Reduce_scatter and MPI_Reduce_scatter_block across nodes, leaders
 * layout: every node reduces the whole vector to its leader, the leaders
 * allreduce it between nodes, and every rank reads its own block from its
 * leader (paper 000 section IV, paper 004 section V.C).
 *
 * The vector holds rank q's block of counts[q] elements (a->counts, or
 * a->count each for the _block form) at the sum of the counts before q,
 * in communicator rank order whatever the placement.
 *  1. inside the node (phase 0): the partitioned Reduce of the node's pn
 *     ranks' whole vectors to local rank 0 (coll/reduce/partitioned.c),
 *     the result into the leader's TMP after the phase's own scratch (the
 *     leader's RECV holds one block). In place (every rank's vector is in
 *     its RECV, which the request also names SEND) every rank reads its
 *     SEND: nobody writes a RECV before step 3;
 *  2. between nodes: the leader runs the host's Allreduce of that vector
 *     in place on the leaders' group (one EXTERN step);
 *  3. inside the node: the leader exposes its TMP and raises DATA; every
 *     rank reads its own block from there into its RECV, raises DONE, and
 *     the leader waits for all before it returns (its own block: a local
 *     copy).
 * A node of one rank copies its vector into TMP for the host's Allreduce
 * (in place on every leader) and copies its block out.
 *
 * Order: each node combines its ranks in rank order, then the host
 * combines the nodes' partial results in node order: MPI's order for a
 * non-commutative operation only where every node's ranks are consecutive
 * (cl->ordered); elsewhere KCOLL_ERR_UNSUPPORTED (kcoll_cluster_keeps_order).
 *
 * Restrictions: cl->rank_of is given (a rank finds its block by its
 * communicator rank), else KCOLL_ERR_UNSUPPORTED. Any node sizes.
 *
 * Cost (n bytes the whole vector, b this rank's block, pn ranks on the
 * node, N nodes; T_host(N, n) the host's Allreduce among N processes):
 *   T = T_reduce^part(pn, n) + T_host(N, n) + T_read(b)
 * The leader's one endpoint carries the whole vector: the lanes layout
 * (reduce_scatter_lanes.c) spreads it over every rank on nodes of one
 * size.
 */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

/* The communicator rank of local rank i here, or -1. */
static int kcoll_rs_rank(const kcoll_cluster_t *cl, int i)
{
    return cl->rank_of[(size_t)cl->node * (size_t)cl->lanes + (size_t)i];
}

/* Elements of the whole vector, and rank r's block's first element and
 * count (r < 0: none). */
static size_t kcoll_rs_blocks(const kcoll_args_t *a, const kcoll_cluster_t *cl, int r,
                              size_t *first, size_t *count)
{
    size_t total = 0;
    for (int k = 0; k < cl->nodes; k++)
        for (int l = 0; l < cl->lanes; l++) {
            const int q = cl->rank_of[(size_t)k * (size_t)cl->lanes + (size_t)l];
            if (q < 0)
                continue;
            const size_t c = a->counts ? a->counts[q] : a->count;
            total += c;
        }
    *first = *count = 0;
    for (int q = 0; q < r; q++)
        *first += a->counts ? a->counts[q] : a->count;
    if (r >= 0)
        *count = a->counts ? a->counts[r] : a->count;
    return total;
}

/* Step 1's view: the whole vector, reduced to local rank 0, read from
 * every rank's SEND. */
static kcoll_args_t kcoll_rs_view(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t total)
{
    kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_REDUCE, 0);
    b.count = total;
    b.bytes = total * a->esize;
    b.in_place = 0;
    return b;
}

size_t kcoll_cluster_rs_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    size_t first, count;
    if (!cl->rank_of)
        return 0;
    const size_t total = kcoll_rs_blocks(a, cl, -1, &first, &count);
    if (cl->pn == 1)
        return total * a->esize;
    kcoll_args_t b = kcoll_rs_view(a, cl, total);
    size_t t = kcoll_reduce_tmp_len(&b);
    if (cl->me == 0)
        t += total * a->esize; /* the node's vector */
    return t;
}

kcoll_status_t kcoll_cluster_rs_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                        kcoll_sched_t *s)
{
    size_t first, count;
    if (!cl->rank_of || !kcoll_cluster_keeps_order(a, cl))
        return KCOLL_ERR_UNSUPPORTED;
    const size_t es = a->esize;
    const size_t total = kcoll_rs_blocks(a, cl, kcoll_rs_rank(cl, cl->me), &first, &count);
    const size_t n = total * es;
    if (n == 0)
        return KCOLL_OK;
    /* the leader's vector: in TMP after the node phase's scratch */
    size_t vec = 0;
    if (cl->pn > 1) {
        kcoll_args_t lb = kcoll_rs_view(a, cl, total);
        lb.rank = 0;
        vec = kcoll_reduce_tmp_len(&lb);
    }

    /* 1: the node's vector at its leader */
    if (cl->pn > 1) {
        kcoll_args_t b = kcoll_rs_view(a, cl, total);
        kcoll_bufmap_t *maps = malloc((size_t)cl->pn * sizeof *maps);
        if (!maps)
            return KCOLL_ERR_NOMEM;
        for (int i = 0; i < cl->pn; i++)
            kcoll_bufmap_init(&maps[i], 0);
        maps[0].buf[KCOLL_BUF_RECV] = KCOLL_BUF_TMP; /* the leader's result */
        maps[0].off[KCOLL_BUF_RECV] = vec;
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of, 0, KCOLL_PHASE_VALUES,
                           maps, cl->pn, 0,
                           NULL);
        free(maps);
    }

    /* 2: every leader gets the whole sum, in place in its TMP on every
     * leader (MPI_IN_PLACE is every member's or none's: Open MPI 5's
     * libnbc truncated a message where one-rank nodes passed their SEND
     * and the others MPI_IN_PLACE); a node of one rank copies its vector
     * there first */
    if (cl->pn == 1)
        kcoll_sched_copy(s, KCOLL_BUF_TMP, 0, KCOLL_BUF_SEND, 0, n);
    if (cl->me == 0 && cl->nodes > 1) {
        const kcoll_xcoll_t x = {.coll = KCOLL_XC_ALLREDUCE, .sbuf = KCOLL_BUF_TMP, .soff = vec,
                                 .rbuf = KCOLL_BUF_TMP, .roff = vec,
                                 .group = KCOLL_CLUSTER_LEADERS, .len = n, .esize = es};
        kcoll_sched_xcoll(s, &x);
    }

    /* 3: each rank's own block */
    if (cl->me == 0) {
        if (cl->pn > 1) {
            kcoll_sched_expose(s, KCOLL_BUF_TMP);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, KCOLL_PHASE_VALUES + 1);
        }
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_TMP, vec + first * es, count * es);
        for (int i = 1; i < cl->pn; i++)
            kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, KCOLL_PHASE_VALUES + 1);
    } else {
        const int leader = cl->peer_of[0];
        kcoll_sched_wait(s, leader, KCOLL_FLAG_DATA, KCOLL_PHASE_VALUES + 1);
        kcoll_sched_read(s, leader, KCOLL_BUF_TMP, vec + first * es, KCOLL_BUF_RECV, 0,
                         count * es);
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, KCOLL_PHASE_VALUES + 1);
    }
    return s->err;
}
