/* Pieces the hierarchical algorithms share (see coll.h).
 *
 * Composed schedules, one phase per group of ranks (kcoll_phase_append):
 * the hierarchical reductions are made of other builders' schedules, each
 * run for the ranks of one group and appended with its ranks, flag values
 * and buffers moved to where the composition keeps them (sched/sched.h,
 * kcoll_sched_append_mapped).
 *
 * Blocks along the tree (kcoll_tree_blocks_*): the rooted data movers keep
 * a leader's subtree in its TMP in the tree's preorder, so every child's
 * subtree is one range there. */
#include <stdlib.h>

#include "coll/coll.h"

int kcoll_tree_blocks_make(kcoll_tree_blocks_t *b, const kcoll_args_t *a, kcoll_buf_t side)
{
    size_t at;
    b->side = side;
    b->boff = NULL;
    if (kcoll_tree_make(&b->t, a->lv, a->p, a->root, 0))
        return -1;
    if (!(b->boff = malloc(((size_t)a->p + 1) * sizeof *b->boff))) {
        kcoll_tree_free(&b->t);
        return -1;
    }
    b->boff[0] = 0;
    for (int i = 0; i < a->p; i++)
        b->boff[i + 1] = b->boff[i] + (side == KCOLL_BUF_SEND
                                           ? kcoll_sblock(a, a->root, b->t.order[i], &at)
                                           : kcoll_rblock(a, a->root, b->t.order[i], &at));
    return 0;
}

void kcoll_tree_blocks_free(kcoll_tree_blocks_t *b)
{
    kcoll_tree_free(&b->t);
    free(b->boff);
    b->boff = NULL;
}

size_t kcoll_tree_blocks_tmp(const kcoll_args_t *a, kcoll_buf_t side)
{
    kcoll_tree_blocks_t b;
    const int r = a->rank;
    if (r == a->root || kcoll_tree_blocks_make(&b, a, side))
        return 0;
    size_t len = b.boff[b.t.at[r] + b.t.size[r]] - b.boff[b.t.at[r] + 1];
    kcoll_tree_blocks_free(&b);
    return len;
}

void kcoll_tree_blocks_move(const kcoll_args_t *a, kcoll_sched_t *s, const kcoll_tree_blocks_t *b,
                            int kind, int v, int i0, int i1, kcoll_buf_t lbuf, size_t loff)
{
    const size_t *boff = b->boff;
    if (v != a->root) {
        const size_t poff = boff[i0] - boff[b->t.at[v] + 1], len = boff[i1] - boff[i0];
        if (kind == KCOLL_STEP_READ)
            kcoll_sched_read(s, v, KCOLL_BUF_TMP, poff, lbuf, loff, len);
        else
            kcoll_sched_write(s, v, KCOLL_BUF_TMP, poff, lbuf, loff, len);
        return;
    }
    kcoll_run_t run;
    kcoll_run_init(&run);
    for (int i = i0; i < i1; i++) {
        size_t off, len = b->side == KCOLL_BUF_SEND ? kcoll_sblock(a, v, b->t.order[i], &off)
                                                    : kcoll_rblock(a, v, b->t.order[i], &off);
        kcoll_run_add(s, &run, kind, v, b->side, off, lbuf, loff + boff[i] - boff[i0], len);
    }
    kcoll_run_flush(s, &run);
}

void kcoll_phase_append(kcoll_sched_t *s, const kcoll_args_t *b, kcoll_builder_fn build,
                        const int *members, uint32_t base, uint32_t values,
                        const kcoll_bufmap_t *map, int nmap, int sync, const char *need)
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
    kcoll_sched_append_mapped(s, &sub, members, base, values, map, nmap, b->rank);
    kcoll_sched_free(&sub);
}
