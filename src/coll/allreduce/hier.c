/* MPI_Allreduce inside a node along its topology levels: partitioned
 * inside groups, then across leaders, then back down (paper 000 section
 * IV's leaders; paper 004's partitioned reduction at every level).
 *
 * Composed of other builders' schedules, one phase each, for the ranks
 * of one group (kcoll_phase_append maps group ranks to team ranks and
 * gives each phase its own range of flag values):
 *  up, level k = 0 .. L-1: in every level-k group, the ranks still active
 *     (all at level 0; at level k the leaders of level k-1) run the
 *     partitioned Reduce to the group's leader (its lowest rank): every
 *     member reduces a 1/m slice of the group's vectors, so all cores
 *     work and each copy stays inside the group's domain. Level 0 reads
 *     the ranks' SEND buffers, higher levels the leaders' RECV (where the
 *     level below left its result). Before a level reads a peer's RECV the
 *     members raise AUX to the phase's base and wait for each other's: a
 *     leader's result is complete only when its own level below is done.
 *  top: the leaders of the outermost groups run the partitioned Allreduce
 *     on their RECV (in place).
 *  down, level k = L-1 .. 0: every level-k leader broadcasts its result to
 *     its group's active ranks (each reads it from the leader in segments,
 *     the flat form of the hierarchical broadcast).
 * With no levels it is the partitioned Allreduce.
 *
 * Order: each group combines its members in rank order (kcoll's order,
 * common.h) and passes one operand up, so the result is the ranks'
 * values grouped by the levels: a sum's bits differ from the flat
 * algorithm's (but every rank gets the same bits: one result is copied
 * down). Predefined operations are commutative; a user operation is
 * treated as non-commutative and runs the flat partitioned algorithm
 * unless every group is a run of consecutive ranks (then the grouping is
 * rank order, which MPI's associativity allows).
 *
 * Cost (L levels, group sizes m_k, n bytes): sum over k of the
 * partitioned Reduce of m_k ranks, inside a domain, 2n(m_k-1)/m_k bytes
 * per rank at most; the top Allreduce among the outer leaders; L flat
 * broadcasts of n from a leader to its group. Against flat partitioned,
 * which moves 2n(p-1)/p per rank with p-1 readers of every process across
 * the interconnect, it trades L extra passes over n for locality: it pays
 * where the interconnect, not the copy, is the limit (many domains).
 */
#include <stdlib.h>

#include "coll/reduce/common.h"

/* One phase among the m members (this rank is index me) with the builder
 * `build`, on RECV when send_is_recv (the members' operands are earlier
 * phases' results); `sync`: members first raise AUX to the base and wait
 * for each other's (their RECV is final). */
static void kcoll_allreduce_hier_phase(const kcoll_args_t *a, kcoll_sched_t *s, kcoll_coll_t coll,
                                       kcoll_builder_fn build, const int *members, int m, int me,
                                       uint32_t base, int send_is_recv, int sync)
{
    kcoll_args_t b = *a;
    kcoll_bufmap_t map;
    b.coll = coll;
    b.p = m;
    b.rank = me;
    b.root = 0;
    b.lv = NULL;
    b.in_place = send_is_recv || a->in_place;
    b.bytes = a->count * a->esize;
    kcoll_bufmap_init(&map, send_is_recv);
    kcoll_phase_append(s, &b, build, members, base, KCOLL_PHASE_VALUES, &map, 1, sync, NULL);
}

kcoll_status_t kcoll_allreduce_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const kcoll_levels_t *lv = a->lv;
    const int r = a->rank;
    if (!kcoll_red_by_levels(a))
        return kcoll_reduce_partitioned(a, s);
    int *members = malloc((size_t)a->p * sizeof *members);
    if (!members)
        return KCOLL_ERR_NOMEM;
    uint32_t phase = 0, base;
    int m, me = 0;
    /* up */
    for (int k = 0; k < lv->n; k++, phase++) {
        base = phase * KCOLL_PHASE_VALUES;
        if (!kcoll_levels_active(lv, k, r, 0))
            continue;
        m = kcoll_levels_members(lv, k, r, 0, members, &me);
        if (m > 1)
            kcoll_allreduce_hier_phase(a, s, KCOLL_COLL_REDUCE, kcoll_reduce_partitioned, members,
                                       m, me, base, k > 0, k > 0);
        else if (k == 0) /* alone in its group: its own vector is its result */
            kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0,
                             a->in_place ? 0 : a->count * a->esize);
    }
    /* top */
    base = phase++ * KCOLL_PHASE_VALUES;
    if (kcoll_levels_active(lv, lv->n, r, 0)) {
        m = kcoll_levels_members(lv, lv->n, r, 0, members, &me);
        if (m > 1)
            kcoll_allreduce_hier_phase(a, s, KCOLL_COLL_ALLREDUCE, kcoll_reduce_partitioned,
                                       members, m, me, base, 1, 1);
    }
    /* down */
    for (int k = lv->n - 1; k >= 0; k--, phase++) {
        base = phase * KCOLL_PHASE_VALUES;
        if (!kcoll_levels_active(lv, k, r, 0))
            continue;
        m = kcoll_levels_members(lv, k, r, 0, members, &me);
        if (m > 1)
            kcoll_allreduce_hier_phase(a, s, KCOLL_COLL_BCAST, kcoll_bcast_hier, members, m, me,
                                       base, 0, 0);
    }
    free(members);
    return s->err;
}
