/* MPI_Reduce_scatter_block / MPI_Reduce_scatter inside a node along its
 * topology levels: the hierarchical Reduce of the whole vector to rank 0,
 * then the hierarchical Scatter of its blocks (the composition the flat
 * reduce-then-scatter would be, with each half kept inside the domains).
 *
 * Walk-through. Two composed halves (coll/phase.c):
 *  1. reduce (reduce/hier.c, kcoll_red_up): the partitioned Reduce of the
 *     whole vector inside every level-0 group to its leader, then among
 *     the leaders level by level, to rank 0. Every rank that leads a group
 *     keeps its partial result in TMP after the partitioned algorithm's
 *     scratch, rank 0 its final one too (its receive buffer holds only
 *     its own block).
 *  2. scatter (scatter/hier.c) from rank 0, the blocked buffer being that
 *     result in 0's TMP: every leader reads its subtree's blocks from its
 *     parent into the same TMP range (its partial is no longer read: its
 *     last reduce phase ended when every member was done), every rank its
 *     own block into its receive buffer. Rank 0 raises AUX once its result
 *     is complete; its children in the tree wait for it before reading.
 * In place (the vector in the receive buffer) needs nothing more: a
 * rank's vector is read only in its first phase of two or more ranks,
 * which it leaves when every member is done, before its own block
 * overwrites the buffer's start.
 *
 * Order: the Reduce's, grouped by the levels (rank order where groups are
 * runs of ranks; a user operation runs the flat partitioned algorithm
 * otherwise), the same for every block.
 *
 * Cost: the hierarchical Reduce of the p-block vector (n bytes) plus the
 * hierarchical Scatter of n/p-byte blocks from rank 0. Each group member
 * reads (m-1)/m of the vector in its level-0 phase, about what the flat
 * partitioned algorithm's rank reads ((p-1)/p of it, one block from every
 * peer), but inside its domain; the leaders then pass whole vectors up
 * and the blocks come back down, about 2n more bytes through each level's
 * leaders and one funnel through rank 0. So it pays only where copies
 * across the interconnect are much dearer than inside a domain; the model
 * decides. TMP: two chunks, and n bytes at every leader. Any p, counts
 * (zeros too).
 */
#include <stdlib.h>

#include "coll/reduce/common.h"

size_t kcoll_reduce_scatter_hier_tmp(const kcoll_args_t *a)
{
    return kcoll_red_by_levels(a) ? kcoll_red_up_tmp(a, 0, 1) : kcoll_reduce_tmp_len(a);
}

kcoll_status_t kcoll_reduce_scatter_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    if (!kcoll_red_by_levels(a))
        return kcoll_reduce_partitioned(a, s);
    const size_t x = kcoll_red_up_off(a); /* where the partial results lie in TMP */
    const uint32_t base = (uint32_t)(a->lv->n + 1) * KCOLL_PHASE_VALUES;
    kcoll_sched_t sub;
    kcoll_tree_t t = {0};
    kcoll_args_t b;
    int *ranks = malloc((size_t)p * sizeof *ranks);
    size_t *count = malloc(2 * (size_t)p * sizeof *count);
    kcoll_layout_t *lay = calloc((size_t)p, sizeof *lay);
    kcoll_bufmap_t *map = malloc((size_t)p * sizeof *map);
    kcoll_sched_init(&sub);
    if (!ranks || !count || !lay || !map || kcoll_tree_make(&t, a->lv, p, 0, 0)) {
        s->err = KCOLL_ERR_NOMEM;
        goto out;
    }
    /* 1. the vector reduced to rank 0's TMP */
    kcoll_red_up(a, s, 0, 1);
    /* 2. its blocks scattered from there: rank 0's SEND is its TMP from
     * x, a leader's TMP (its subtree's blocks) starts at x */
    for (int q = 0; q < p; q++) {
        size_t off, len;
        kcoll_red_slice(a, q, &off, &len);
        count[q] = len;
        count[p + q] = off;
        ranks[q] = q;
        kcoll_bufmap_init(&map[q], 0);
        map[q].buf[KCOLL_BUF_SEND] = KCOLL_BUF_TMP;
        map[q].off[KCOLL_BUF_SEND] = x;
        map[q].off[KCOLL_BUF_TMP] = x;
    }
    lay[0] = (kcoll_layout_t){count, count + p, NULL, NULL};
    b = *a;
    b.coll = a->coll == KCOLL_COLL_REDUCE_SCATTER ? KCOLL_COLL_SCATTERV : KCOLL_COLL_SCATTER;
    b.root = 0;
    b.in_place = 0;
    b.bytes = a->count * a->esize;
    b.lay = a->coll == KCOLL_COLL_REDUCE_SCATTER ? lay : NULL;
    if (r == 0)
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, base);
    else if (t.parent[r] == 0)
        kcoll_sched_wait(s, 0, KCOLL_FLAG_AUX, base);
    if (kcoll_scatter_hier(&b, &sub) != KCOLL_OK && !s->err)
        s->err = sub.err ? sub.err : KCOLL_ERR_NOMEM;
    kcoll_sched_append_mapped(s, &sub, ranks, base, KCOLL_PHASE_VALUES, map, p, r);
out:
    kcoll_sched_free(&sub);
    kcoll_tree_free(&t);
    free(ranks);
    free(count);
    free(lay);
    free(map);
    return s->err;
}
