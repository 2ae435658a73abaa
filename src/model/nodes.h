/* Communicators that span nodes, priced: kcoll's composition (on-node
 * kcoll phases, host-MPI phases between the nodes' leaders) against the
 * host MPI alone over all ranks (model/nodes.c; docs/hierarchy.md).
 */
#ifndef KCOLL_MODEL_NODES_H
#define KCOLL_MODEL_NODES_H

#include <stddef.h>

#include "coll/coll.h"
#include "model/machine.h"

/* A price of one call by nodes x ppn ranks (blocked by node, root 0),
 * seconds. The composition's phases: before, the on-node phase(s) before
 * the leaders' phase; net, the leaders' phase; after, the on-node phase
 * after it (for the pipelined Bcast, the pipeline's total is in net and
 * before/after hold one segment's on-node time). composed is 0 where
 * kcoll hands the collective to the host MPI whole (Alltoall(v), Gatherv,
 * Scatterv): hier is flat there. */
typedef struct {
    double flat, hier;
    double before, net, after;
    int composed;
} kcoll_nodes_price_t;

/* Price collective c (bytes sized as kcoll sizes a call: the block of a
 * blocked collective, the vector of a reduction, the message of a Bcast)
 * on machine m, whose network between nodes is net_alpha and net_beta.
 * The segment of the pipelined Bcast is `segment` bytes (0: whole).
 * Returns 0, or -1 for nodes < 1 or ppn < 1. */
int kcoll_price_nodes(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, int ppn,
                      size_t bytes, size_t segment, kcoll_nodes_price_t *out);

/* Does kcoll's composition of collective c pay on `nodes` nodes of at
 * most ppn ranks at `bytes` (sized as above)? The size class of bytes is
 * priced at its middle (model/select.h), so every rank decides alike
 * whatever size of the class it sees. 1: compose (a tie too: the
 * composition's overhead is in its phases' prices); 0: the host MPI alone
 * is predicted faster, or c is not composed. */
int kcoll_nodes_compose(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, int ppn,
                        size_t bytes, size_t segment);

#endif
