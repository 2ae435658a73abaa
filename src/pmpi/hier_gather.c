/* MPI_Gather, MPI_Allgather and MPI_Allgatherv across nodes: gather inside each node with
 * kcoll, across the leaders with the host MPI (paper 003 section VII.G:
 * the two-level multi-node Gather, CMA inside the node, the network
 * between nodes).
 *
 * Every rank knows every block's size: MPI makes them all one size in
 * Gather and Allgather, and every rank passes all counts to Allgatherv
 * (Gatherv, where only the root knows them, stays with the host MPI).
 *  1. Each node gathers its ranks' blocks to its leader, in local-rank
 *     order (an on-node gather of bytes: kcoll's gather algorithms).
 *     A rank whose datatype has gaps packs its block first (a local step).
 *  2. The leaders gather the nodes' runs of blocks with the host MPI:
 *     MPI_Gatherv to the root's node (root a), or MPI_Allgatherv to every
 *     leader, into node-major order (node 0's ranks, then node 1's...).
 *  3. Gather: if the root does not lead its node, its leader sends it the
 *     whole (one on-node message). Allgather: each node broadcasts it from
 *     its leader (on-node broadcast).
 *  4. The receiver puts block q where rank q's belongs (it lies at
 *     at[q] in node-major order, kcoll_hier_blocks), unpacking for
 *     datatypes with gaps (a local step per block).
 * Any placement of ranks on nodes, uneven nodes, any root, in place.
 * Where ranks lie in blocks per node (node-major order is rank order) and
 * the receive datatype has no gaps, the blocks land in the receive buffer
 * directly: a receiving leader gathers its node into its place there, the
 * leaders' call is in place, and step 4 has nothing to do.
 *
 * Cost (p ranks, pn per node, block b):
 *   Gather:    T_gather_node(pn, b) + T_net_gatherv(p b) + T_copy(p b)
 *   Allgather: T_gather_node(pn, b) + T_net_allgatherv(p b)
 *              + T_bcast_node(p b) + T_copy(p b)
 * The network carries each block once per receiving node, as the host
 * alone would; the final copy is local memory bandwidth.
 */
#include <stdlib.h>

#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

kcoll_hreq_t *kcoll_hier_gather(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                                const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                const int *rcounts, const int *rdispls, int rcount,
                                MPI_Datatype rtype, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    kcoll_hreq_t *q = kcoll_hreq_new(h, c, mode, comm);
    const int all = root < 0, is_root = h->rank == root, leader = h->lr == 0;
    const int a = all ? -1 : h->node_of[root], receives = all || is_root;
    MPI_Aint lb, rext = 0;
    int rsize = 0, last = -1;
    char *L, *G = NULL;
    const char *mine;
    kcoll_hier_blocks_t k;
    kcoll_hop_t o;

    if (!q)
        return NULL;
    if (receives) {
        PMPI_Type_get_extent(rtype, &lb, &rext);
        PMPI_Type_size(rtype, &rsize);
    }
    /* every block's size: the receivers' counts (Allgather(v): all know
     * them), or the one every rank's block has (Gather) */
    const size_t b = receives ? kcoll_hier_size(rcount, rtype) : kcoll_hier_size(scount, stype);
    if (kcoll_hier_blocks(q, rcounts, b, (size_t)rsize, &k))
        return q;
    /* the model sizes a gather by its (mean) block */
    kcoll_reason_t why = kcoll_hier_pick(h, !all ? KCOLL_COLL_GATHER
                                             : rcounts ? KCOLL_COLL_ALLGATHERV
                                                       : KCOLL_COLL_ALLGATHER,
                                         k.total / (size_t)h->p);
    if (why) {
        kcoll_hreq_host(q, why);
        return q;
    }
    if (h->pn == 1)
        kcoll_hreq_alone(q);
    const size_t mb = k.b[h->rank];
#define DISPL(r) ((MPI_Aint)(rdispls ? rdispls[r] : (r) * rcount) * rext)
#define COUNT(r) (rcounts ? rcounts[r] : rcount)
    if (!k.total) /* nothing moves */
        return q;
    if (sbuf == MPI_IN_PLACE) /* this rank's block already lies in its place */
        mine = kcoll_hier_bytes(q, (char *)rbuf + DISPL(h->rank), COUNT(h->rank), rtype, mb,
                                &last);
    else
        mine = kcoll_hier_bytes(q, sbuf, scount, stype, mb, &last);
    /* Direct: where node-major order is rank order, the receive datatype
     * has no gaps and the blocks follow each other in the receive buffer
     * as in node-major order, the whole lands in the receive buffer itself
     * (no step 4), and a receiving leader gathers its node's run straight
     * into its place there. */
    const char *rat;
    int direct = receives && h->blocked && kcoll_hier_contiguous(rbuf, rtype, &rat);
    for (int r = 0; direct && r < h->p; r++)
        direct = k.b[r] == 0 || (size_t)DISPL(r) == k.at[r];
    const int needs_all = all || (h->me == a && (leader || is_root));
    if (direct)
        G = (char *)rat;
    else if (needs_all)
        G = kcoll_hreq_mem(q, k.total);
    const int in_place_run = direct && leader && h->pn > 1;
    L = (char *)mine;
    if (in_place_run)
        L = G + k.ndsp[h->me];
    else if (leader && h->pn > 1)
        L = kcoll_hreq_mem(q, (size_t)k.ncnt[h->me]);
    if ((!mine && mb) || !L || (needs_all && !G)) {
        kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
        return q;
    }
    /* 1: the node's blocks at its leader */
    if (h->pn > 1) {
        o = (kcoll_hop_t){.where = KCOLL_HOP_NODE,
                          .sbuf = leader && mine == L ? MPI_IN_PLACE : mine,
                          .dt = MPI_BYTE,
                          .rbuf = L,
                          .rdt = MPI_BYTE,
                          .root = 0};
        if (rcounts) {
            o.kind = KCOLL_HOP_GATHERV;
            o.count = (int)mb;
            o.counts = k.lcnt;
            o.displs = k.ldsp;
        } else {
            o.kind = KCOLL_HOP_GATHER;
            o.count = o.rcount = (int)b;
        }
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* 2: across the leaders, node-major */
    if (leader) {
        const void *run = L == G + k.ndsp[h->me] ? MPI_IN_PLACE : L;
        o = (kcoll_hop_t){.where = KCOLL_HOP_NET,
                          .count = k.ncnt[h->me],
                          .dt = MPI_BYTE,
                          .rdt = MPI_BYTE};
        /* nodes' runs of one size (one rank per node, or even nodes):
         * the host's plain Gather/Allgather, often faster than its v form */
        const int same = kcoll_hier_runs_alike(&k, h->nn);
        if (all) {
            o.kind = same ? KCOLL_HOP_ALLGATHER : KCOLL_HOP_ALLGATHERV;
            o.sbuf = run;
        } else {
            o.kind = same ? KCOLL_HOP_GATHER : KCOLL_HOP_GATHERV;
            o.sbuf = h->me == a && is_root ? run : L;
            o.root = a;
        }
        if (all || h->me == a) {
            o.rbuf = G;
            o.rcount = k.ncnt[0];
            o.counts = k.ncnt;
            o.displs = k.ndsp;
        }
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* 3: to the root, or to every rank of the node */
    if (all && h->pn > 1) {
        o = (kcoll_hop_t){.kind = KCOLL_HOP_BCAST,
                          .where = KCOLL_HOP_NODE,
                          .rbuf = G,
                          .count = (int)k.total,
                          .dt = MPI_BYTE,
                          .root = 0};
        last = kcoll_hreq_add(q, o, last, -1);
    } else if (!all && h->me == a && h->lrank_of[root] != 0 && (leader || is_root)) {
        o = (kcoll_hop_t){.kind = leader ? KCOLL_HOP_SEND : KCOLL_HOP_RECV,
                          .where = KCOLL_HOP_SELF,
                          .sbuf = G,
                          .rbuf = G,
                          .count = (int)k.total,
                          .dt = MPI_BYTE,
                          .peer = leader ? h->lrank_of[root] : 0};
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* 4: every block to its place */
    for (int r = 0; receives && !direct && r < h->p; r++) {
        o = (kcoll_hop_t){.kind = KCOLL_HOP_LOCAL,
                          .where = KCOLL_HOP_SELF,
                          .fn = kcoll_hier_unpack,
                          .sbuf = G + k.at[r],
                          .rcount = (int)k.b[r],
                          .rbuf = (char *)rbuf + DISPL(r),
                          .count = COUNT(r),
                          .dt = rtype};
        kcoll_hreq_add(q, o, last, -1);
    }
#undef DISPL
#undef COUNT
    return q;
}
