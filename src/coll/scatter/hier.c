/* MPI_Scatter / MPI_Scatterv inside a node along its topology levels
 * (paper 000 section IV's leaders, with its receiver-reading for
 * one-to-all; the mirror of gather/hier.c).
 *
 * Walk-through. The tree is the levels' (coll/levels.h): the root leads
 * every group it is in (its group reads straight from its send buffer),
 * another group's leader is its lowest rank. A leader that is not the
 * root holds its subtree's blocks in TMP, in the tree's preorder (each
 * child, then the child's own subtree), so every child's subtree is one
 * range there. Every rank but the root
 *  1. unless its parent is the root, waits until the parent has fetched
 *     this rank's subtree (the parent's DATA reaches this rank's place
 *     among its children);
 *  2. for each child in rank order, reads that child's subtree from its
 *     parent (the parent's TMP, or block by block from the root's send
 *     buffer, neighbouring blocks of both sides merged into one copy)
 *     into its own TMP, and raises DATA to the child's number + 1, so
 *     that child starts while this rank fetches the next one's;
 *  3. reads its own block into its receive buffer, raises DONE, and
 *     returns once each child is DONE (they read its TMP until then).
 * The root copies its own block (nothing with MPI_IN_PLACE) and returns
 * once each child is DONE.
 *
 * Every byte of a receive buffer is written once; a block to depth d
 * travels d copies (d <= levels + 1), every copy below the top level
 * inside a domain, and a process is read only by its own children. Cost
 * (k the most children of one rank, S the bytes of the largest subtree
 * below the root):
 *   T <= d * (alpha + S*beta + l*gamma_k*ceil(S/s)) + flag rounds
 * (a leader's children read one subtree while it fetches the next),
 * against parallel_read's alpha + n*beta + l*gamma_{p-1}*ceil(n/s) with
 * p-1 readers locking the root's pages, most across the interconnect. It
 * pays where that contention and the interconnect, not the extra copies,
 * are the limit (small and medium blocks, many domains). TMP at a
 * non-root leader: its subtree's blocks. With no levels it is
 * parallel_read's pattern. Any p, root, counts (zeros too).
 */
#include "coll/coll.h"

size_t kcoll_scatter_hier_tmp(const kcoll_args_t *a)
{
    return kcoll_tree_blocks_tmp(a, KCOLL_BUF_SEND);
}

kcoll_status_t kcoll_scatter_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank;
    kcoll_tree_blocks_t b;
    if (kcoll_tree_blocks_make(&b, a, KCOLL_BUF_SEND))
        return KCOLL_ERR_NOMEM;
    const kcoll_tree_t *t = &b.t;
    const int *kid = t->kids + t->first[r], nkid = t->first[r + 1] - t->first[r];
    if (r == a->root) {
        kcoll_sched_expose(s, KCOLL_BUF_SEND);
        kcoll_rooted_copy_own(a, s, KCOLL_ROOTED_SCATTER);
    } else {
        const int v = t->parent[r];
        const size_t mine = b.boff[t->at[r] + 1]; /* where r's TMP starts */
        if (nkid)
            kcoll_sched_expose(s, KCOLL_BUF_TMP);
        if (v != a->root) {
            int nth = 0; /* r's place among v's children */
            while (t->kids[t->first[v] + nth] != r)
                nth++;
            kcoll_sched_wait(s, v, KCOLL_FLAG_DATA, (uint32_t)nth + 1);
        }
        for (int i = 0; i < nkid; i++) {
            const int c = kid[i];
            kcoll_tree_blocks_move(a, s, &b, KCOLL_STEP_READ, v, t->at[c], t->at[c] + t->size[c],
                                   KCOLL_BUF_TMP, b.boff[t->at[c]] - mine);
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)i + 1);
        }
        kcoll_tree_blocks_move(a, s, &b, KCOLL_STEP_READ, v, t->at[r], t->at[r] + 1,
                               KCOLL_BUF_RECV, 0);
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    for (int i = 0; i < nkid; i++)
        kcoll_sched_wait(s, kid[i], KCOLL_FLAG_DONE, 1);
    kcoll_tree_blocks_free(&b);
    return s->err;
}
