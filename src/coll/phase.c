/* Pieces the hierarchical algorithms share (see coll.h).
 *
 * Composed schedules, one phase per group of ranks (kcoll_phase_append):
 * the hierarchical reductions are made of other builders' schedules, each
 * run for the ranks of one group and appended with its ranks, flag values
 * and buffers moved to where the composition keeps them (sched/sched.h,
 * kcoll_sched_append_mapped).
 *
 * Blocks along the tree (kcoll_tree_bytes): the rooted data movers keep a
 * leader's subtree in its TMP in the tree's preorder, so every child's
 * subtree is one range there. */
#include <stdlib.h>

#include "coll/coll.h"

size_t *kcoll_tree_bytes(const kcoll_tree_t *t, const kcoll_args_t *a, int who, kcoll_buf_t side)
{
    size_t *off = malloc(((size_t)t->p + 1) * sizeof *off), at;
    if (!off)
        return NULL;
    off[0] = 0;
    for (int i = 0; i < t->p; i++)
        off[i + 1] = off[i] + (side == KCOLL_BUF_SEND ? kcoll_sblock(a, who, t->order[i], &at)
                                                      : kcoll_rblock(a, who, t->order[i], &at));
    return off;
}

void kcoll_phase_append(kcoll_sched_t *s, const kcoll_args_t *b, kcoll_builder_fn build,
                        const int *members, uint32_t base, const kcoll_bufmap_t *map, int nmap,
                        int sync, const char *need)
{
    kcoll_sched_t sub;
    if (sync && b->p > 1) {
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, base);
        for (int i = 0; i < b->p; i++)
            if (i != b->rank && (!need || need[i]))
                kcoll_sched_wait(s, members[i], KCOLL_FLAG_AUX, base);
    }
    kcoll_sched_init(&sub);
    if (build(b, &sub) != KCOLL_OK && !s->err)
        s->err = sub.err ? sub.err : KCOLL_ERR_ARG;
    kcoll_sched_append_mapped(s, &sub, members, base, map, nmap, b->rank);
    kcoll_sched_free(&sub);
}
