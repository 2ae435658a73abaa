/* MPI_Barrier inside a node along its topology levels: arrive up the
 * tree, leave down it (paper 000 section IV's leaders, applied to flags;
 * Open MPI's xhc barrier has the same shape).
 *
 * The tree is the team's levels' rooted at rank 0 (coll/levels.h). A rank
 * waits until each of its children has raised DATA (its whole subtree has
 * arrived), raises its own DATA for its parent, waits for its parent's AUX
 * (everyone has arrived: the root raises AUX once all its children have),
 * and raises AUX for its children. No rank leaves before every rank has
 * entered: the root's AUX follows every DATA of the tree.
 *
 * Cost: 2 d flag transfers (d the depth, at most levels + 1), and each
 * flag is polled by at most the members of one group, inside their NUMA
 * domain or cache except at the top level; dissemination needs
 * ceil(log2 p) rounds, most of them across the interconnect. With no
 * levels the tree is flat (a central counter). Any p.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_barrier_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank, parent = kcoll_levels_parent(a->lv, r, 0);
    int nchild = 0;
    for (int q = 0; q < a->p; q++)
        if (kcoll_levels_parent(a->lv, q, 0) == r) {
            kcoll_sched_wait(s, q, KCOLL_FLAG_DATA, 1);
            nchild++;
        }
    if (parent >= 0) {
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
        kcoll_sched_wait(s, parent, KCOLL_FLAG_AUX, 1);
    }
    if (nchild)
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, 1);
    return s->err;
}
