/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block) across nodes:
 * reduce inside each node with kcoll, across the leaders with the host
 * MPI, then hand the result out inside the node (paper 000 section IV,
 * paper 004 section V.C).
 *
 *  1. Each node reduces its ranks' vectors to its leader (local rank 0):
 *     an on-node MPI_Reduce (kcoll's partitioned reduction where it
 *     applies: every rank reduces a slice). The leader keeps the node's
 *     result in its receive buffer where that is where the result ends
 *     (Allreduce; Reduce when the root leads its node), else in scratch.
 *     A node of one rank skips the step: its leader's own vector goes on.
 *  2. The leaders combine the nodes' results with the host MPI on the
 *     leaders' communicator: MPI_Reduce to the root's node (root a), or
 *     MPI_Allreduce (Allreduce, Reduce_scatter).
 *  3. Allreduce: each node broadcasts its leader's result (on-node
 *     MPI_Bcast). Reduce: if the root does not lead its node, its leader
 *     sends it the result (one on-node message; the only detour, since
 *     the leaders' communicator is fixed). Reduce_scatter: each node
 *     scatters its ranks' blocks from the leader's vector (on-node
 *     MPI_Scatterv), whatever the ranks' placement.
 *
 * Order of operands. Step 1 combines a node's ranks in rank order, step
 * 2 the nodes in node order: the result is r_0 op r_1 op ... op r_{p-1}
 * in rank order only when every node holds consecutive ranks, nodes in
 * order (h->blocked). A non-commutative operation on any other placement
 * goes to the host MPI whole (counted mpi:multinode). Floating-point
 * sums are grouped by node (kcoll's on-node order, then the host's over
 * the leaders): identical on every rank of an Allreduce, since step 3
 * copies one result, but not bit-identical to the host MPI alone.
 *
 * Cost (n bytes, node reduction T_red(n), leaders' T_net(n)):
 *   Reduce:    T_red(n) + T_net(n) [+ T_copy(n) if the root is not its node's leader]
 *   Allreduce: T_red(n) + T_allred_net(n) + T_bcast_node(n)
 *   Reduce_scatter: T_red(n) + T_allred_net(n) + T_scatter_node(n_node)
 * against the host alone, whose intra-node part moves every byte twice.
 */
#include <stdlib.h>

#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

/* Can the hierarchy apply op in a rank order that MPI accepts? */
static int kcoll_hier_order_ok(const kcoll_hier_t *h, MPI_Op op)
{
    int commute = 0;
    return h->blocked || (PMPI_Op_commutative(op, &commute) == MPI_SUCCESS && commute);
}

kcoll_hreq_t *kcoll_hier_reduce(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                                const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                                MPI_Op op, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    kcoll_hreq_t *q = kcoll_hreq_new(h, c, mode, comm);
    const int all = root < 0, leader = h->lr == 0, is_root = h->rank == root;
    const int a = all ? 0 : h->node_of[root];
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* this rank's vector */
    void *acc = NULL;
    const void *have;
    int last = -1;
    const kcoll_hop_t base = {.count = count, .dt = dt, .op = op};
    kcoll_hop_t o;

    if (!q)
        return NULL;
    kcoll_reason_t why = kcoll_hier_order_ok(h, op) ? KCOLL_R_NONE : KCOLL_R_MULTINODE;
    if (!why)
        why = kcoll_hier_pick(h, all ? KCOLL_COLL_ALLREDUCE : KCOLL_COLL_REDUCE,
                              kcoll_hier_size(count, dt));
    if (why) {
        kcoll_hreq_host(q, why);
        return q;
    }
    if (h->pn == 1)
        kcoll_hreq_alone(q);
    /* step 1: the node's result at its leader, in acc */
    if (leader && (all || is_root))
        acc = rbuf;
    else if (leader && h->pn > 1 && !(acc = kcoll_hier_tmp(q, count, dt)))
        kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
    have = mine;
    if (h->pn > 1) {
        o = base;
        o.kind = KCOLL_HOP_REDUCE;
        o.where = KCOLL_HOP_NODE;
        o.sbuf = leader && mine == acc ? MPI_IN_PLACE : mine;
        o.rbuf = leader ? acc : NULL;
        o.root = 0;
        last = kcoll_hreq_add(q, o, last, -1);
        have = acc;
    }
    /* step 2: across the leaders */
    if (leader) {
        o = base;
        o.where = KCOLL_HOP_NET;
        if (all) {
            o.kind = KCOLL_HOP_ALLREDUCE;
            o.sbuf = have == rbuf ? MPI_IN_PLACE : have;
            o.rbuf = rbuf;
        } else {
            /* pn == 1 on node a means the root is alone there: acc is rbuf */
            void *dst = h->me != a ? NULL : is_root ? rbuf : acc;
            o.kind = KCOLL_HOP_REDUCE;
            o.sbuf = dst && have == dst ? MPI_IN_PLACE : have;
            o.rbuf = dst;
            o.root = a;
        }
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* step 3 */
    o = base;
    if (all && h->pn > 1) {
        o.kind = KCOLL_HOP_BCAST;
        o.where = KCOLL_HOP_NODE;
        o.rbuf = rbuf;
        o.root = 0;
        kcoll_hreq_add(q, o, last, -1);
    } else if (!all && h->me == a && h->lrank_of[root] != 0 && (leader || is_root)) {
        o.where = KCOLL_HOP_SELF;
        o.kind = leader ? KCOLL_HOP_SEND : KCOLL_HOP_RECV;
        o.sbuf = acc;
        o.rbuf = rbuf;
        o.peer = leader ? h->lrank_of[root] : 0;
        kcoll_hreq_add(q, o, last, -1);
    }
    return q;
}

kcoll_hreq_t *kcoll_hier_reduce_scatter(const kcoll_call_t *c, kcoll_mode_t mode,
                                        MPI_Comm comm, const void *sbuf, void *rbuf,
                                        const int *rcounts, int rcount, MPI_Datatype dt,
                                        MPI_Op op)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    kcoll_hreq_t *q = kcoll_hreq_new(h, c, mode, comm);
    if (!q)
        return NULL;
    const int p = h->p, leader = h->lr == 0;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int *disp = kcoll_hreq_mem(q, (size_t)p * sizeof *disp);
    int *lcount = kcoll_hreq_mem(q, (size_t)h->pn * sizeof *lcount);
    int *ldisp = kcoll_hreq_mem(q, (size_t)h->pn * sizeof *ldisp);
    int total = 0, last = -1;
    void *vec = NULL;
    MPI_Aint lb, extent;
    const kcoll_hop_t base = {.dt = dt, .op = op};
    kcoll_hop_t o;

    if (!kcoll_hier_order_ok(h, op)) {
        kcoll_hreq_host(q, KCOLL_R_MULTINODE);
        return q;
    }
    if (!disp || !lcount || !ldisp) {
        kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
        return q;
    }
    for (int r = 0; r < p; r++) {
        disp[r] = total;
        total += rcounts ? rcounts[r] : rcount;
    }
    for (int i = 0; i < h->pn; i++) {
        const int r = h->members[i];
        lcount[i] = rcounts ? rcounts[r] : rcount;
        ldisp[i] = disp[r];
    }
    /* the model sizes a Reduce_scatter by its (mean) block */
    kcoll_reason_t why = kcoll_hier_pick(h, rcounts ? KCOLL_COLL_REDUCE_SCATTER
                                                    : KCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                         kcoll_hier_size(total, dt) / (size_t)p);
    if (why) {
        kcoll_hreq_host(q, why);
        return q;
    }
    if (h->pn == 1)
        kcoll_hreq_alone(q);
    /* step 1: the node's whole vector at its leader (in scratch: the
     * receive buffer holds one block) */
    if (leader && !(vec = kcoll_hier_tmp(q, total, dt)))
        kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
    if (h->pn > 1) {
        o = base;
        o.kind = KCOLL_HOP_REDUCE;
        o.where = KCOLL_HOP_NODE;
        o.sbuf = mine;
        o.rbuf = vec;
        o.count = total;
        o.root = 0;
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* step 2: every leader gets the whole result */
    if (leader) {
        o = base;
        o.kind = KCOLL_HOP_ALLREDUCE;
        o.where = KCOLL_HOP_NET;
        o.sbuf = h->pn > 1 ? MPI_IN_PLACE : mine;
        o.rbuf = vec;
        o.count = total;
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* step 3: each rank's block */
    o = base;
    o.rbuf = rbuf;
    if (h->pn > 1) {
        o.kind = KCOLL_HOP_SCATTERV;
        o.where = KCOLL_HOP_NODE;
        o.sbuf = vec;
        o.counts = lcount;
        o.displs = ldisp;
        o.rcount = lcount[h->lr];
        o.rdt = dt;
        o.root = 0;
    } else {
        PMPI_Type_get_extent(dt, &lb, &extent);
        o.kind = KCOLL_HOP_LOCAL;
        o.where = KCOLL_HOP_SELF;
        o.fn = kcoll_hier_copy;
        o.sbuf = vec ? (char *)vec + (MPI_Aint)disp[h->rank] * extent : NULL;
        o.count = lcount[h->lr];
    }
    kcoll_hreq_add(q, o, last, -1);
    return q;
}
