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
#include "coll/coll.h"

size_t kcoll_gather_hier_tmp(const kcoll_args_t *a)
{
    return kcoll_tree_blocks_tmp(a, KCOLL_BUF_RECV);
}

kcoll_status_t kcoll_gather_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank;
    kcoll_tree_blocks_t b;
    if (kcoll_tree_blocks_make(&b, a, KCOLL_BUF_RECV))
        return KCOLL_ERR_NOMEM;
    const kcoll_tree_t *t = &b.t;
    const int *kid = t->kids + t->first[r], nkid = t->first[r + 1] - t->first[r];
    if (r == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_RECV);
        kcoll_rooted_copy_own(a, s, KCOLL_ROOTED_GATHER);
        for (int i = 0; i < nkid; i++)
            kcoll_sched_wait(s, kid[i], KCOLL_FLAG_DATA, 1);
    } else {
        const int v = t->parent[r];
        const size_t mine = b.boff[t->at[r] + 1]; /* where r's TMP starts */
        if (nkid)
            kcoll_sched_expose(s, KCOLL_BUF_TMP);
        kcoll_tree_blocks_move(a, s, &b, KCOLL_STEP_WRITE, v, t->at[r], t->at[r] + 1,
                               KCOLL_BUF_SEND, 0);
        for (int i = 0; i < nkid; i++) {
            const int c = kid[i];
            kcoll_sched_wait(s, c, KCOLL_FLAG_DATA, 1);
            kcoll_tree_blocks_move(a, s, &b, KCOLL_STEP_WRITE, v, t->at[c], t->at[c] + t->size[c],
                                   KCOLL_BUF_TMP, b.boff[t->at[c]] - mine);
        }
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    }
    kcoll_tree_blocks_free(&b);
    return s->err;
}
