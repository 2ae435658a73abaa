/* MPI_Allgather / MPI_Allgatherv inside a node along its topology levels:
 * gathered up to the leaders of the outermost groups, exchanged among
 * them, and spread back down (paper 000 section IV's leaders; its section
 * VI.D found gather-then-broadcast through one root bound by that root's
 * NUMA node, hence the exchange at the top).
 *
 * Walk-through. The tree is the levels' rooted at rank 0 (coll/levels.h),
 * cut below the outermost leaders (the lowest rank of each outermost
 * group, which leads all its groups): one tree per outermost group, its
 * top that leader. Every rank copies its own block into its receive
 * buffer (nothing in place); blocks always lie at their own places in the
 * receive buffers, so nobody needs scratch.
 *  up: every rank but a top writes its own block into its parent's
 *     receive buffer, then, child by child in rank order, waits until the
 *     child has raised DATA (its subtree's blocks are in this rank) and
 *     writes that subtree's blocks on to its parent; then raises DATA.
 *     A top only waits for its children's DATA. Then every rank raises
 *     AUX to 1: its subtree is complete ("piece 0").
 *  across: each top reads every other top's subtree, in a ring (the next
 *     top first), once that top's AUX is 1, raising its own AUX to j + 1
 *     after the j-th ("piece j").
 *  down: every other rank reads its parent's pieces in the parent's order,
 *     each once the parent's AUX says it is there, leaving out the blocks
 *     it has (its own subtree): from its parent's subtree, then from each
 *     ancestor's subtree what lies outside the one below it, then the
 *     other tops' subtrees; after its piece j it raises AUX to j + 2, so
 *     its children follow one piece behind.
 * A rank raises DONE once it has read everything (from its parent, or a
 * top from the other tops) and returns once those reading from it are
 * DONE. Every receive byte is written exactly once: by the rank (own
 * block), a child (its subtree) or a read (the rest).
 *
 * Cost (T tops, d the depth, n bytes per block, m_top the largest
 * outermost group): up: d rounds of at most a group's blocks written into
 * a leader, inside domains; across: each top reads (p - m_top') n bytes
 * from T - 1 others, the only copies across the interconnect (each block
 * crosses once per other outermost group, not once per rank); down:
 * every rank reads (p - subtree) n bytes from its parent, pieces
 * pipelined level by level. Against ring_source_read's p - 1 reads per
 * rank, most across the interconnect and each process read by p - 1
 * peers, it moves about twice the bytes but keeps all but the top's
 * inside a domain: it pays where the interconnect is the limit. With no
 * levels every rank is a top: each reads every block from its owner. Any
 * p, counts (zeros too), layouts; in place or not.
 */
#include <stdlib.h>

#include "coll/coll.h"

/* Move, block by block in rank order, the blocks of the ranks q with
 * in(q) (as the flags below say) between this rank's receive buffer and
 * peer's (kind READ or WRITE), neighbouring blocks merged. in: q lies in
 * the subtree of `inside` (-1: anywhere) and not in that of `outside`
 * (-1: nowhere). */
static void kcoll_allgather_hier_move(const kcoll_args_t *a, kcoll_sched_t *s,
                                      const kcoll_tree_t *t, int kind, int peer, int inside,
                                      int outside)
{
    kcoll_run_t run;
    kcoll_run_init(&run);
    for (int q = 0; q < a->p; q++) {
        if ((inside >= 0 && !kcoll_tree_under(t, q, inside)) ||
            (outside >= 0 && kcoll_tree_under(t, q, outside)))
            continue;
        size_t poff, loff, len = kcoll_rblock(a, a->rank, q, &loff);
        kcoll_rblock(a, peer, q, &poff);
        kcoll_run_add(s, &run, kind, peer, KCOLL_BUF_RECV, poff, KCOLL_BUF_RECV, loff, len);
    }
    kcoll_run_flush(s, &run);
}

kcoll_status_t kcoll_allgather_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank;
    kcoll_tree_t t;
    int *tops = malloc((size_t)a->p * sizeof *tops);
    if (!tops || kcoll_tree_make(&t, a->lv, a->p, 0, 1)) {
        free(tops);
        return KCOLL_ERR_NOMEM;
    }
    const int *kid = t.kids + t.first[r], nkid = t.first[r + 1] - t.first[r];
    const int v = t.parent[r];
    /* the tops in rank order; r's tree's is tops[me], its ring starts at
     * the next one */
    int ntop = 0, me = 0, top = r;
    while (t.parent[top] >= 0)
        top = t.parent[top];
    for (int q = 0; q < a->p; q++)
        if (t.parent[q] < 0) {
            if (q == top)
                me = ntop;
            tops[ntop++] = q;
        }

    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    if (!a->in_place) {
        size_t off, len = kcoll_rblock(a, r, r, &off);
        kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
    }
    /* up */
    if (v >= 0) {
        size_t own, poff, len = kcoll_rblock(a, v, r, &poff);
        kcoll_buf_t b = kcoll_ag_own(a, r, &own);
        kcoll_sched_write(s, v, KCOLL_BUF_RECV, poff, b, own, len);
    }
    for (int i = 0; i < nkid; i++) {
        kcoll_sched_wait(s, kid[i], KCOLL_FLAG_DATA, 1);
        if (v >= 0)
            kcoll_allgather_hier_move(a, s, &t, KCOLL_STEP_WRITE, v, kid[i], -1);
    }
    if (v >= 0)
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    if (nkid || v < 0)
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, 1);
    uint32_t j = 0; /* pieces read so far */
    if (v < 0) {
        /* across: the other tops' subtrees, pieces 1 .. ntop-1 */
        for (int i = 1; i < ntop; i++) {
            const int other = tops[(me + i) % ntop];
            kcoll_sched_wait(s, other, KCOLL_FLAG_AUX, 1);
            kcoll_allgather_hier_move(a, s, &t, KCOLL_STEP_READ, other, other, -1);
            if (nkid)
                kcoll_sched_signal(s, KCOLL_FLAG_AUX, (uint32_t)i + 1);
        }
    } else {
        /* down: the parent's pieces in its order, each ancestor's subtree
         * without the one below it on r's path, then the other tops' */
        for (int below = r, up = v; up >= 0; below = up, up = t.parent[up], j++) {
            kcoll_sched_wait(s, v, KCOLL_FLAG_AUX, j + 1);
            kcoll_allgather_hier_move(a, s, &t, KCOLL_STEP_READ, v, up, below);
            if (nkid)
                kcoll_sched_signal(s, KCOLL_FLAG_AUX, j + 2);
        }
        for (int i = 1; i < ntop; i++, j++) {
            kcoll_sched_wait(s, v, KCOLL_FLAG_AUX, j + 1);
            kcoll_allgather_hier_move(a, s, &t, KCOLL_STEP_READ, v, tops[(me + i) % ntop], -1);
            if (nkid)
                kcoll_sched_signal(s, KCOLL_FLAG_AUX, j + 2);
        }
    }
    /* DONE: read everything; wait for those who read from r */
    kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    for (int i = 0; i < nkid; i++)
        kcoll_sched_wait(s, kid[i], KCOLL_FLAG_DONE, 1);
    for (int i = 1; v < 0 && i < ntop; i++)
        kcoll_sched_wait(s, tops[(me + i) % ntop], KCOLL_FLAG_DONE, 1);
    free(tops);
    kcoll_tree_free(&t);
    return s->err;
}
