/* MPI_Gather / MPI_Gatherv inside a node along its topology levels
 * (paper 000 section IV's leaders, with its sender-writing for
 * all-to-one; paper 003 section VII.G gathers to node leaders first).
 *
 * Walk-through. The tree is the levels' (coll/levels.h): the root leads
 * every group it is in (its group's blocks go straight into its receive
 * buffer), another group's leader is its lowest rank. A leader that is
 * not the root collects its subtree's blocks in TMP, in the tree's
 * preorder (each child, then the child's own subtree), so every child's
 * subtree is one range there. Every rank but the root
 *  1. writes its own block from its send buffer into its parent: into the
 *     parent's TMP at the block's place, or into the root's receive
 *     buffer at the block's displacement;
 *  2. for each child in rank order: waits until the child has raised
 *     DATA (its whole subtree lies in this rank's TMP) and writes that
 *     range on to its parent the same way (block by block into the
 *     root, where neighbouring blocks of both sides merge into one copy);
 *  3. raises DATA.
 * The root copies its own block into place (nothing with MPI_IN_PLACE)
 * and returns once each child has raised DATA. A leader forwards a
 * child's subtree while its other children still write into it: the
 * pipeline's unit is a child's subtree. Nobody reads a buffer of another
 * rank, so a rank returns after its last write.
 *
 * Every byte is written once into the root's receive buffer; a block from
 * depth d travels d copies (d <= levels + 1), every copy below the top
 * level inside a domain, and a process is written into only by its own
 * children. Cost (k the most children of one rank, S the bytes of the
 * largest subtree below the root):
 *   T <= d * (alpha + S*beta_w + l*gamma_k*ceil(S/s)) + flag rounds
 * (the levels overlap: a leader forwards one child's subtree while the
 * next still arrives), against parallel_write's
 *   alpha + n*beta_w + l*gamma_{p-1}*ceil(n/s)
 * with p-1 writers locking the root's pages, most across the
 * interconnect. It pays where that contention and the interconnect, not
 * the extra copies, are the limit (small and medium blocks, many
 * domains). TMP at a non-root leader: its subtree's blocks. With no
 * levels it is parallel_write's pattern. Any p, root, counts (zeros too).
 */
#include <stdlib.h>

#include "coll/coll.h"

/* Write the blocks of the preorder places [i0, i1), which lie one after
 * the other in local lbuf from loff, into parent v. */
static void kcoll_gather_hier_up(const kcoll_args_t *a, kcoll_sched_t *s, const kcoll_tree_t *t,
                                 const size_t *boff, int v, int i0, int i1, kcoll_buf_t lbuf,
                                 size_t loff)
{
    if (v != a->root) {
        kcoll_sched_write(s, v, KCOLL_BUF_TMP, boff[i0] - boff[t->at[v] + 1], lbuf, loff,
                          boff[i1] - boff[i0]);
        return;
    }
    kcoll_run_t run;
    kcoll_run_init(&run);
    for (int i = i0; i < i1; i++) {
        size_t off, len = kcoll_rblock(a, a->root, t->order[i], &off);
        kcoll_run_add(s, &run, KCOLL_STEP_WRITE, v, KCOLL_BUF_RECV, off, lbuf,
                      loff + boff[i] - boff[i0], len);
    }
    kcoll_run_flush(s, &run);
}

size_t kcoll_gather_hier_tmp(const kcoll_args_t *a)
{
    kcoll_tree_t t;
    size_t *boff, len = 0;
    const int r = a->rank;
    if (r == a->root || kcoll_tree_make(&t, a->lv, a->p, a->root, 0))
        return 0;
    if ((boff = kcoll_tree_bytes(&t, a, a->root, KCOLL_BUF_RECV)))
        len = boff[t.at[r] + t.size[r]] - boff[t.at[r] + 1];
    free(boff);
    kcoll_tree_free(&t);
    return len;
}

kcoll_status_t kcoll_gather_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank;
    kcoll_tree_t t;
    size_t *boff = NULL;
    if (kcoll_tree_make(&t, a->lv, a->p, a->root, 0) ||
        !(boff = kcoll_tree_bytes(&t, a, a->root, KCOLL_BUF_RECV))) {
        kcoll_tree_free(&t);
        return KCOLL_ERR_NOMEM;
    }
    const int *kid = t.kids + t.first[r], nkid = t.first[r + 1] - t.first[r];
    if (r == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_gather_copy_own(a, s);
        for (int i = 0; i < nkid; i++)
            kcoll_sched_wait(s, kid[i], KCOLL_FLAG_DATA, 1);
    } else {
        const int v = t.parent[r], mine = t.at[r] + 1; /* r's TMP: places mine.. */
        if (nkid)
            kcoll_sched_expose(s, KCOLL_BUF_TMP);
        kcoll_gather_hier_up(a, s, &t, boff, v, t.at[r], t.at[r] + 1, KCOLL_BUF_SEND, 0);
        for (int i = 0; i < nkid; i++) {
            const int c = kid[i];
            kcoll_sched_wait(s, c, KCOLL_FLAG_DATA, 1);
            kcoll_gather_hier_up(a, s, &t, boff, v, t.at[c], t.at[c] + t.size[c], KCOLL_BUF_TMP,
                                 boff[t.at[c]] - boff[mine]);
        }
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    }
    free(boff);
    kcoll_tree_free(&t);
    return s->err;
}
