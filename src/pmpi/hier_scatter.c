/* MPI_Scatter across nodes: the mirror of the hierarchical gather
 * (hier_gather.c): across the leaders with the host MPI, then inside each
 * node with kcoll.
 *
 * Every block is b bytes.
 *  1. The root lays its blocks out in node-major order (node 0's ranks,
 *     then node 1's..., packing datatypes with gaps: local steps); if it does not lead
 *     its node a, it sends them to its leader (one on-node message, the
 *     only detour: the leaders' communicator is fixed).
 *  2. The leaders scatter the nodes' runs of blocks with the host MPI
 *     (MPI_Scatterv from node a on the leaders' communicator).
 *  3. Each node scatters its run from its leader (an on-node scatter of
 *     bytes: kcoll's scatter algorithms); a rank whose datatype has gaps
 *     unpacks its block (a local step). With MPI_IN_PLACE the root keeps
 *     its block.
 * Any placement, uneven nodes, any root. Where ranks lie in blocks per
 * node and the root's datatype has no gaps, step 1 copies nothing; a
 * rank whose receive datatype has no gaps gets its block in place.
 *
 * Cost (p ranks, pn per node, block b):
 *   T_copy(p b) [+ T_copy_node(p b) when the root is not a leader]
 *   + T_net_scatterv(p b) + T_scatter_node(pn, b)
 */
#include <stdlib.h>

#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

kcoll_hreq_t *kcoll_hier_scatter(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                                 const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 int rcount, MPI_Datatype rtype, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    kcoll_hreq_t *q = kcoll_hreq_new(h, c, mode, comm);
    const int is_root = h->rank == root, leader = h->lr == 0, a = h->node_of[root];
    const int keep = is_root && rbuf == MPI_IN_PLACE; /* the root's block stays */
    MPI_Aint lb, sext = 0;
    int last = -1;
    kcoll_hier_blocks_t k;
    char *G = NULL, *L = NULL, *D = NULL;
    kcoll_hop_t o;

    if (!q)
        return NULL;
    if (is_root)
        PMPI_Type_get_extent(stype, &lb, &sext);
    const size_t b = is_root ? kcoll_hier_size(scount, stype) : kcoll_hier_size(rcount, rtype);
    if (kcoll_hier_blocks(q, NULL, b, 0, &k))
        return q;
    kcoll_reason_t why = kcoll_hier_pick(h, KCOLL_COLL_SCATTER, b);
    if (why) {
        kcoll_hreq_host(q, why);
        return q;
    }
    if (h->pn == 1)
        kcoll_hreq_alone(q);
    if (!b)
        return q;
    /* The root's blocks are already in node-major order where that is
     * rank order and its datatype has no gaps; a rank's block lands in its
     * receive buffer itself where that has none. */
    const char *sat, *rat;
    const int direct = is_root && h->blocked && kcoll_hier_contiguous(sbuf, stype, &sat);
    if (direct)
        G = (char *)sat;
    else if (is_root || (leader && h->me == a))
        G = kcoll_hreq_mem(q, k.total);
    if (!keep && kcoll_hier_contiguous(rbuf, rtype, &rat))
        D = (char *)rat;
    else if (!keep || !leader)
        D = kcoll_hreq_mem(q, b); /* unpacked from here, or (in place) dropped */
    if (is_root && leader)
        L = G + k.ndsp[h->me]; /* the node's run, in place */
    else if (leader && h->pn == 1)
        L = D;
    else if (leader)
        L = kcoll_hreq_mem(q, (size_t)h->pn * b);
    if (((is_root || (leader && h->me == a)) && !G) || (leader && !L) ||
        (!D && !(keep && leader))) {
        kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
        return q;
    }
    /* 1: the root's blocks in node-major order (a local step each), at
     * its node's leader */
    for (int r = 0; is_root && !direct && r < h->p; r++) {
        const char *blk = (const char *)sbuf + (MPI_Aint)r * scount * sext;
        const char *at;
        o = (kcoll_hop_t){.kind = KCOLL_HOP_LOCAL,
                          .where = KCOLL_HOP_SELF,
                          .sbuf = blk,
                          .count = scount,
                          .dt = stype,
                          .rbuf = G + k.at[r],
                          .rcount = (int)b};
        if (kcoll_hier_contiguous(blk, stype, &at)) { /* a copy of the bytes */
            o.fn = kcoll_hier_memcpy;
            o.sbuf = at;
        } else {
            o.fn = kcoll_hier_pack;
        }
        last = kcoll_hreq_add(q, o, last, -1);
    }
    if (h->me == a && h->lrank_of[root] != 0 && (is_root || leader)) {
        o = (kcoll_hop_t){.kind = is_root ? KCOLL_HOP_SEND : KCOLL_HOP_RECV,
                          .where = KCOLL_HOP_SELF,
                          .sbuf = G,
                          .rbuf = G,
                          .count = (int)k.total,
                          .dt = MPI_BYTE,
                          .peer = is_root ? 0 : h->lrank_of[root]};
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* 2: across the leaders */
    if (leader) {
        o = (kcoll_hop_t){.kind = kcoll_hier_runs_alike(&k, h->nn) ? KCOLL_HOP_SCATTER
                                                                    : KCOLL_HOP_SCATTERV,
                          .where = KCOLL_HOP_NET,
                          .sbuf = G,
                          .count = k.ncnt[0],
                          .counts = k.ncnt,
                          .displs = k.ndsp,
                          .dt = MPI_BYTE,
                          .rbuf = is_root ? MPI_IN_PLACE : L,
                          .rcount = k.ncnt[h->me],
                          .rdt = MPI_BYTE,
                          .root = a};
        last = kcoll_hreq_add(q, o, last, -1);
    }
    /* 3: inside the node */
    if (h->pn > 1) {
        o = (kcoll_hop_t){.kind = KCOLL_HOP_SCATTER,
                          .where = KCOLL_HOP_NODE,
                          .sbuf = L,
                          .count = (int)b,
                          .dt = MPI_BYTE,
                          .rbuf = keep && leader ? MPI_IN_PLACE : D,
                          .rcount = (int)b,
                          .rdt = MPI_BYTE,
                          .root = 0};
        last = kcoll_hreq_add(q, o, last, -1);
    }
    if (!keep) { /* a node of one: the block is in L */
        o = (kcoll_hop_t){.kind = KCOLL_HOP_LOCAL,
                          .where = KCOLL_HOP_SELF,
                          .fn = kcoll_hier_unpack,
                          .sbuf = h->pn == 1 ? L : D,
                          .rcount = (int)b,
                          .rbuf = rbuf,
                          .count = rcount,
                          .dt = rtype};
        kcoll_hreq_add(q, o, last, -1);
    }
    return q;
}
