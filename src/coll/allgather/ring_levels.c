/* MPI_Allgather / MPI_Allgatherv, a ring in the order of the topology
 * levels (paper 000 section VI.D: a ring-style Allgather spreads the
 * memory accesses over the NUMA nodes, where gathering through one root
 * is bound by the root's; paper 002: a hierarchy whose speed does not
 * depend on where the ranks were placed).
 *
 * Walk-through. The ranks are put in the preorder of the levels' tree
 * from rank 0 (coll/levels.h): a group's ranks follow each other, groups
 * inside one outer group follow each other. Then it is ring_neighbor's
 * ring (j = 1) over that order: in step i = 1..p-1 every rank reads, from
 * its predecessor in the order, the block that predecessor got in step
 * i-1 (its own, in step 1), and raises DATA to i; it returns once its
 * successor has raised DATA to p-1. Each process is read by one peer at
 * a time, and only where the order passes from one group to the next does
 * a copy leave a NUMA domain (package): with two packages, two of the p
 * readers cross between them, whatever the placement, where the ring in
 * rank order has every reader cross when ranks alternate between
 * packages (by-socket binding).
 *
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s)) + waits, as
 * ring_neighbor's; the gain is in the terms the interconnect raises (the
 * inter-package contention curve, the links' bandwidth). Against hier
 * (gather to the outermost groups' leaders, exchange, spread back down):
 * twice the bytes across the links (every block crosses twice per pair of
 * packages, not once), but no process read by a whole group at once.
 * With no levels it is ring_neighbor with j = 1. Any p, n, layout; in
 * place or not.
 */
#include <stdlib.h>

#include "coll/coll.h"

kcoll_status_t kcoll_allgather_ring_levels(const kcoll_args_t *a, kcoll_sched_t *s)
{
    kcoll_tree_t t;
    if (kcoll_tree_make(&t, a->lv, a->p, 0, 0))
        return KCOLL_ERR_NOMEM;
    kcoll_status_t rc = kcoll_allgather_ring_order(a, s, t.order, t.at[a->rank]);
    kcoll_tree_free(&t);
    return rc;
}
