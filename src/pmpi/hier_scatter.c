/* MPI_Scatter across nodes: the mirror of the hierarchical gather
 * (hier_gather.c): across the leaders with the host MPI, then inside each
 * node with kcoll.
 *
 * Every block is b bytes.
 *  1. The root lays its blocks out in node-major order (node 0's ranks,
 *     then node 1's..., packing datatypes with gaps); if it does not lead
 *     its node a, it sends them to its leader (one on-node message, the
 *     only detour: the leaders' communicator is fixed).
 *  2. The leaders scatter the nodes' runs of blocks with the host MPI
 *     (MPI_Scatterv from node a on the leaders' communicator).
 *  3. Each node scatters its run from its leader (an on-node MPI_Scatter
 *     of bytes: kcoll's scatter algorithms); a rank whose datatype has
 *     gaps unpacks its block. With MPI_IN_PLACE the root keeps its block.
 * Any placement, uneven nodes, any root. Where ranks lie in blocks per
 * node and the root's datatype has no gaps, step 1 copies nothing; a
 * rank whose receive datatype has no gaps gets its block in place.
 *
 * Cost (p ranks, pn per node, block b):
 *   T_copy(p b) [+ T_copy_node(p b) when the root is not a leader]
 *   + T_net_scatterv(p b) + T_scatter_node(pn, b)
 */
#include <stdlib.h>
#include <string.h>

#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

int kcoll_hier_scatter(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf, int scount,
                       MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    const int is_root = h->rank == root, leader = h->lr == 0, a = h->node_of[root];
    const int keep = is_root && rbuf == MPI_IN_PLACE; /* the root's block stays */
    MPI_Aint lb, sext = 0;
    int rc = MPI_SUCCESS;
    kcoll_hier_blocks_t k = {0};
    void *gmem = NULL, *lmem = NULL, *dmem = NULL, *pmem = NULL;
    char *G = NULL, *L = NULL, *D = NULL;

    if (is_root)
        PMPI_Type_get_extent(stype, &lb, &sext);
    const size_t b = is_root ? kcoll_hier_size(scount, stype) : kcoll_hier_size(rcount, rtype);
    kcoll_call_hier_begin();
    if (kcoll_hier_blocks(h, NULL, b, 0, &k)) { /* the leaders' counts are ints */
        kcoll_hier_blocks_free(&k);
        kcoll_call_hier_end(c, 0, KCOLL_R_MULTINODE);
        KCOLL_HIER_HOST(rc, PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
        return rc;
    }
    if (!b)
        goto out;
    /* The root's blocks are already in node-major order where that is
     * rank order and its datatype has no gaps; a rank's block lands in its
     * receive buffer itself where that has none. */
    const char *sat, *rat;
    const int direct = is_root && h->blocked && kcoll_hier_contiguous(sbuf, stype, &sat);
    if (direct)
        G = (char *)sat;
    else if (is_root || (leader && h->me == a))
        G = gmem = malloc(k.total);
    if (!keep && kcoll_hier_contiguous(rbuf, rtype, &rat))
        D = (char *)rat;
    else if (!keep || !leader)
        D = dmem = malloc(b); /* unpacked from here, or (in place) dropped */
    if (is_root && leader)
        L = G + k.ndsp[h->me]; /* the node's run, in place */
    else if (leader && h->pn == 1)
        L = D;
    else if (leader)
        L = lmem = malloc((size_t)h->pn * b);
    if (((is_root || (leader && h->me == a)) && !G) || (leader && !L) || (!D && !(keep && leader))) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* 1: the root's blocks in node-major order, at its node's leader */
    for (int q = 0; is_root && !direct && q < h->p; q++) {
        const char *blk = kcoll_hier_bytes((const char *)sbuf + (MPI_Aint)q * scount * sext,
                                           scount, stype, b, &pmem);
        if (!blk) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        memcpy(G + k.at[q], blk, b);
        free(pmem);
        pmem = NULL;
    }
    if (rc == MPI_SUCCESS && h->me == a && h->lrank_of[root] != 0) {
        if (is_root)
            KCOLL_HIER_HOST(rc, PMPI_Send(G, (int)k.total, MPI_BYTE, 0, KCOLL_HIER_TAG, h->node));
        else if (leader)
            KCOLL_HIER_HOST(rc, PMPI_Recv(G, (int)k.total, MPI_BYTE, h->lrank_of[root],
                                          KCOLL_HIER_TAG, h->node, MPI_STATUS_IGNORE));
    }
    /* 2: across the leaders */
    if (rc == MPI_SUCCESS && leader)
        KCOLL_HIER_HOST(rc, PMPI_Scatterv(G, k.ncnt, k.ndsp, MPI_BYTE,
                                          is_root ? MPI_IN_PLACE : L, k.ncnt[h->me], MPI_BYTE,
                                          a, h->leaders));
    /* 3: inside the node */
    if (rc == MPI_SUCCESS && h->pn > 1)
        rc = MPI_Scatter(L, (int)b, MPI_BYTE, keep && leader ? MPI_IN_PLACE : D, (int)b, MPI_BYTE,
                         0, h->node);
    if (rc == MPI_SUCCESS && !keep) /* a node of one: the block is in L */
        rc = kcoll_hier_unbytes(h->pn == 1 ? L : D, b, rbuf, rcount, rtype);
out:
    kcoll_hier_blocks_free(&k);
    free(gmem);
    free(lmem);
    free(dmem);
    kcoll_call_hier_end(c, h->pn == 1, KCOLL_R_NONE);
    return rc;
}
