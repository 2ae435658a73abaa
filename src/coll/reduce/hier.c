/* MPI_Reduce inside a node along its topology levels: partitioned inside
 * each group, then among the groups' leaders, up to the root (paper 000
 * section IV's leaders; paper 004's partitioned reduction at every level).
 *
 * Walk-through. The groups' leaders are the root where a group holds it,
 * else the group's lowest rank (coll/levels.h), so the root's own group
 * reduces straight into the root and its data never takes a detour.
 *  level 0: in every level-0 group the ranks run the partitioned Reduce
 *     to the group's leader: every member reduces a 1/m slice of the
 *     group's vectors, reading it from the others, and writes it into the
 *     leader. Every copy stays inside the group's domain.
 *  level k = 1 .. L-1: the same among the leaders of the level k-1 groups
 *     inside every level-k group, their operands being their groups'
 *     partial results;
 *  top: the leaders of the outermost groups reduce to the root.
 * A phase is the partitioned builder's schedule for the group's ranks
 * (coll/phase.c), with its buffers placed per rank: a member's operand is
 * its SEND until it has led a group of two or more, then its partial
 * result; the root keeps its partial results in its RECV (where the final
 * one belongs), every other leader in its TMP after the partitioned
 * algorithm's scratch (a non-root's receive buffer is not significant in
 * MPI_Reduce). Before a phase reads leaders' partials, the members raise
 * AUX to the phase's base and wait for those of the members holding one
 * (a partial is complete only when its own phase below is done).
 * MPI_IN_PLACE at the root: its level-0 operand is its RECV already; every
 * later phase is in place at the root anyway.
 *
 * Order: each group combines its members in rank order (kcoll's order,
 * common.h) and passes one operand up, so the result is the ranks' values
 * grouped by the levels (the bits of a double sum differ from the flat
 * algorithm's). A user operation, which may not commute, runs the flat
 * partitioned algorithm unless every group is a run of consecutive ranks
 * (then the grouping is rank order, which MPI's associativity allows).
 *
 * Cost (L levels, m_k ranks in a level-k phase, n bytes, c chunk): the sum
 * over the L + 1 phases of the partitioned Reduce of m_k ranks, each
 * member reading n(m_k-1)/m_k bytes and writing n/m_k into its leader,
 * inside a domain below the top:
 *   T = sum_k [ceil(n/(m_k c)) (m_k-1) (alpha + c beta + l gamma_{m_k-1} ceil(c/s))
 *              + (m_k-1) n w / m_k + n beta / m_k] + L flag round trips
 * against the flat partitioned's one phase of p ranks, with p-1 readers
 * of every process across the interconnect. It pays where the
 * interconnect, not the copy, is the limit (many domains). TMP: two
 * chunks, and n bytes at a non-root leader. Any p, root and count.
 */
#include <stdlib.h>

#include "coll/reduce/common.h"

/* Ranks in q's level-l group. */
static int kcoll_red_group_size(const kcoll_levels_t *lv, int l, int q)
{
    int n = 0;
    for (int x = 0; x < lv->p; x++)
        n += lv->group[l][x] == lv->group[l][q];
    return n;
}

/* Does q hold a partial result at level k: has it led a group of two or
 * more below? An active rank at level k leads its level k-1 group, and
 * it has led a phase of two or more exactly when that group is not q
 * alone (at the innermost level where its groups grow past q, q leads and
 * another leader joins it). */
static int kcoll_red_holds(const kcoll_levels_t *lv, int k, int q)
{
    return k > 0 && kcoll_red_group_size(lv, k - 1, q) > 1;
}

size_t kcoll_red_up_off(const kcoll_args_t *a)
{
    kcoll_args_t b = *a;
    b.coll = KCOLL_COLL_REDUCE;
    b.count = kcoll_red_vector(a) / a->esize;
    b.in_place = 0;
    return kcoll_reduce_tmp_len(&b);
}

size_t kcoll_red_up_tmp(const kcoll_args_t *a, int root, int res_tmp)
{
    const kcoll_levels_t *lv = a->lv;
    const int r = a->rank;
    int holds = res_tmp && r == root;
    for (int k = 1; k <= lv->n && !holds && r != root; k++)
        holds = kcoll_levels_active(lv, k, r, root) && kcoll_red_holds(lv, k, r);
    return kcoll_red_up_off(a) + (holds ? kcoll_red_vector(a) : 0);
}

void kcoll_red_up(const kcoll_args_t *a, kcoll_sched_t *s, int root, int res_tmp)
{
    const kcoll_levels_t *lv = a->lv;
    const int r = a->rank;
    const size_t x = kcoll_red_up_off(a);
    int *members = malloc((size_t)a->p * sizeof *members);
    kcoll_bufmap_t *map = malloc((size_t)a->p * sizeof *map);
    char *need = malloc((size_t)a->p);
    kcoll_args_t b = *a;
    b.coll = KCOLL_COLL_REDUCE;
    b.count = kcoll_red_vector(a) / a->esize;
    b.counts = NULL;
    b.lay = NULL;
    b.lv = NULL;
    if (!members || !map || !need) {
        s->err = KCOLL_ERR_NOMEM;
        goto out;
    }
    for (int k = 0; k <= lv->n && kcoll_levels_active(lv, k, r, root); k++) {
        int me = 0, lead = 0, m = kcoll_levels_members(lv, k, r, root, members, &me);
        if (m < 2)
            continue;
        const int leader = k < lv->n ? kcoll_levels_leader(lv, k, r, root) : root;
        for (int i = 0; i < m; i++) {
            const int q = members[i];
            /* where q keeps its partial results */
            const kcoll_buf_t pb = q == root && !res_tmp ? KCOLL_BUF_RECV : KCOLL_BUF_TMP;
            const size_t po = pb == KCOLL_BUF_TMP ? x : 0;
            kcoll_bufmap_init(&map[i], 0);
            need[i] = (char)kcoll_red_holds(lv, k, q);
            if (need[i]) {
                map[i].buf[KCOLL_BUF_SEND] = (uint8_t)pb;
                map[i].off[KCOLL_BUF_SEND] = po;
            }
            if (q == leader) {
                lead = i;
                map[i].buf[KCOLL_BUF_RECV] = (uint8_t)pb;
                map[i].off[KCOLL_BUF_RECV] = po;
            }
        }
        const kcoll_bufmap_t *mine = &map[me];
        b.p = m;
        b.rank = me;
        b.root = lead;
        /* in place where the leader's operand already lies where its
         * result goes: its partial, or its RECV under MPI_IN_PLACE */
        b.in_place = me == lead && ((mine->buf[KCOLL_BUF_SEND] == mine->buf[KCOLL_BUF_RECV] &&
                                     mine->off[KCOLL_BUF_SEND] == mine->off[KCOLL_BUF_RECV]) ||
                                    (a->in_place && mine->buf[KCOLL_BUF_SEND] == KCOLL_BUF_SEND &&
                                     mine->buf[KCOLL_BUF_RECV] == KCOLL_BUF_RECV));
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, members,
                           (uint32_t)k * KCOLL_PHASE_VALUES, KCOLL_PHASE_VALUES, map, m, k > 0,
                           need);
    }
out:
    free(members);
    free(map);
    free(need);
}

size_t kcoll_reduce_hier_tmp(const kcoll_args_t *a)
{
    return kcoll_red_by_levels(a) ? kcoll_red_up_tmp(a, a->root, 0) : kcoll_reduce_tmp_len(a);
}

kcoll_status_t kcoll_reduce_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    if (!kcoll_red_by_levels(a))
        return kcoll_reduce_partitioned(a, s);
    kcoll_red_up(a, s, a->root, 0);
    return s->err;
}
