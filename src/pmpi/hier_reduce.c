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

int kcoll_hier_reduce(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf, void *rbuf,
                      int count, MPI_Datatype dt, MPI_Op op, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    const int all = root < 0, leader = h->lr == 0, is_root = h->rank == root;
    const int a = all ? 0 : h->node_of[root];
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* this rank's vector */
    void *acc = NULL, *mem = NULL;
    const void *have;
    int rc = MPI_SUCCESS;

    kcoll_call_hier_begin();
    if (!kcoll_hier_order_ok(h, op)) {
        kcoll_call_hier_end(c, 0, KCOLL_R_MULTINODE);
        if (all)
            KCOLL_HIER_HOST(rc, PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm));
        else
            KCOLL_HIER_HOST(rc, PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm));
        return rc;
    }
    /* step 1: the node's result at its leader, in acc */
    if (leader && (all || is_root))
        acc = rbuf;
    else if (leader && h->pn > 1 && !(acc = kcoll_hier_tmp(count, dt, &mem)))
        rc = MPI_ERR_NO_MEM;
    have = mine;
    if (rc == MPI_SUCCESS && h->pn > 1) {
        if (leader)
            rc = MPI_Reduce(mine == acc ? MPI_IN_PLACE : mine, acc, count, dt, op, 0, h->node);
        else
            rc = MPI_Reduce(mine, NULL, count, dt, op, 0, h->node);
        have = acc;
    }
    /* step 2: across the leaders */
    if (rc == MPI_SUCCESS && leader) {
        if (all) {
            KCOLL_HIER_HOST(rc, PMPI_Allreduce(have == rbuf ? MPI_IN_PLACE : have, rbuf, count,
                                               dt, op, h->leaders));
        } else if (h->me == a) {
            /* pn == 1 here means the root is alone on its node: acc is rbuf */
            void *dst = is_root ? rbuf : acc;
            KCOLL_HIER_HOST(rc, PMPI_Reduce(have == dst ? MPI_IN_PLACE : have, dst, count, dt, op,
                                            a, h->leaders));
        } else {
            KCOLL_HIER_HOST(rc, PMPI_Reduce(have, NULL, count, dt, op, a, h->leaders));
        }
    }
    /* step 3 */
    if (rc == MPI_SUCCESS && all && h->pn > 1) {
        rc = MPI_Bcast(rbuf, count, dt, 0, h->node);
    } else if (rc == MPI_SUCCESS && !all && h->me == a && h->lrank_of[root] != 0) {
        if (leader)
            KCOLL_HIER_HOST(rc, PMPI_Send(acc, count, dt, h->lrank_of[root], KCOLL_HIER_TAG,
                                          h->node));
        else if (is_root)
            KCOLL_HIER_HOST(rc, PMPI_Recv(rbuf, count, dt, 0, KCOLL_HIER_TAG, h->node,
                                          MPI_STATUS_IGNORE));
    }
    free(mem);
    kcoll_call_hier_end(c, h->pn == 1, KCOLL_R_NONE);
    return rc;
}

int kcoll_hier_reduce_scatter(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf,
                              void *rbuf, const int *rcounts, int rcount, MPI_Datatype dt,
                              MPI_Op op)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    const int p = h->p, leader = h->lr == 0;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int *disp = malloc((size_t)p * sizeof *disp);
    int *lcount = malloc((size_t)h->pn * sizeof *lcount);
    int *ldisp = malloc((size_t)h->pn * sizeof *ldisp);
    int rc = MPI_SUCCESS, total = 0;
    void *vec = NULL, *mem = NULL;
    MPI_Aint lb, extent;

    kcoll_call_hier_begin();
    if (!kcoll_hier_order_ok(h, op) || !disp || !lcount || !ldisp) {
        kcoll_call_hier_end(c, 0, KCOLL_R_MULTINODE);
        if (rcounts)
            KCOLL_HIER_HOST(rc, PMPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm));
        else
            KCOLL_HIER_HOST(rc, PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm));
        goto out;
    }
    for (int q = 0; q < p; q++) {
        disp[q] = total;
        total += rcounts ? rcounts[q] : rcount;
    }
    for (int i = 0; i < h->pn; i++) {
        const int q = h->members[i];
        lcount[i] = rcounts ? rcounts[q] : rcount;
        ldisp[i] = disp[q];
    }
    /* step 1: the node's whole vector at its leader (in scratch: the
     * receive buffer holds one block) */
    if (leader && !(vec = kcoll_hier_tmp(total, dt, &mem)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && h->pn > 1)
        rc = MPI_Reduce(mine, vec, total, dt, op, 0, h->node);
    /* step 2: every leader gets the whole result */
    if (rc == MPI_SUCCESS && leader)
        KCOLL_HIER_HOST(rc, PMPI_Allreduce(h->pn > 1 ? MPI_IN_PLACE : mine, vec, total, dt, op,
                                           h->leaders));
    /* step 3: each rank's block */
    if (rc == MPI_SUCCESS && h->pn > 1) {
        rc = MPI_Scatterv(vec, lcount, ldisp, dt, rbuf, lcount[h->lr], dt, 0, h->node);
    } else if (rc == MPI_SUCCESS) {
        PMPI_Type_get_extent(dt, &lb, &extent);
        rc = kcoll_hier_copy((char *)vec + (MPI_Aint)disp[h->rank] * extent, rbuf,
                             lcount[h->lr], dt);
    }
    kcoll_call_hier_end(c, h->pn == 1, KCOLL_R_NONE);
out:
    free(mem);
    free(disp);
    free(lcount);
    free(ldisp);
    return rc;
}
