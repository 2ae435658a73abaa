/* MPI_Gather, MPI_Allgather and MPI_Allgatherv across nodes: gather inside each node with
 * kcoll, across the leaders with the host MPI (paper 003 section VII.G:
 * the two-level multi-node Gather, CMA inside the node, the network
 * between nodes).
 *
 * Every rank knows every block's size: MPI makes them all one size in
 * Gather and Allgather, and every rank passes all counts to Allgatherv
 * (Gatherv, where only the root knows them, stays with the host MPI).
 *  1. Each node gathers its ranks' blocks to its leader, in local-rank
 *     order (an on-node MPI_Gather of bytes: kcoll's gather algorithms).
 *     A rank whose datatype has gaps packs its block first.
 *  2. The leaders gather the nodes' runs of blocks with the host MPI:
 *     MPI_Gatherv to the root's node (root a), or MPI_Allgatherv to every
 *     leader, into node-major order (node 0's ranks, then node 1's...).
 *  3. Gather: if the root does not lead its node, its leader sends it the
 *     whole (one on-node message). Allgather: each node broadcasts it from
 *     its leader (on-node MPI_Bcast).
 *  4. The receiver puts block q where rank q's belongs (it lies at
 *     at[q] in node-major order, kcoll_hier_blocks), unpacking for
 *     datatypes with gaps.
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

int kcoll_hier_gather(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf, int scount,
                      MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                      int rcount, MPI_Datatype rtype, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    const int all = root < 0, is_root = h->rank == root, leader = h->lr == 0;
    const int a = all ? -1 : h->node_of[root], receives = all || is_root;
    MPI_Aint lb, rext = 0;
    int rc = MPI_SUCCESS, rsize = 0;
    void *pmem = NULL, *lmem = NULL, *gmem = NULL;
    char *L, *G = NULL;
    const char *mine;
    kcoll_hier_blocks_t k = {0};

    if (receives) {
        PMPI_Type_get_extent(rtype, &lb, &rext);
        PMPI_Type_size(rtype, &rsize);
    }
    /* every block's size: the receivers' counts (Allgather(v): all know
     * them), or the one every rank's block has (Gather) */
    const size_t b = receives ? kcoll_hier_size(rcount, rtype) : kcoll_hier_size(scount, stype);
    kcoll_call_hier_begin();
    if (kcoll_hier_blocks(h, rcounts, b, (size_t)rsize, &k)) { /* the leaders' counts are ints */
        kcoll_hier_blocks_free(&k);
        kcoll_call_hier_end(c, 0, KCOLL_R_MULTINODE);
        if (rcounts)
            KCOLL_HIER_HOST(rc, PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, rdispls, rtype,
                                                comm));
        else if (all)
            KCOLL_HIER_HOST(rc, PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
        else
            KCOLL_HIER_HOST(rc, PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
        return rc;
    }
    const size_t mb = k.b[h->rank];
#define DISPL(q) ((MPI_Aint)(rdispls ? rdispls[q] : (q) * rcount) * rext)
#define COUNT(q) (rcounts ? rcounts[q] : rcount)
    if (!k.total) /* nothing moves */
        goto out;
    if (sbuf == MPI_IN_PLACE) /* this rank's block already lies in its place */
        mine = kcoll_hier_bytes((char *)rbuf + DISPL(h->rank), COUNT(h->rank), rtype, mb, &pmem);
    else
        mine = kcoll_hier_bytes(sbuf, scount, stype, mb, &pmem);
    /* Direct: where node-major order is rank order, the receive datatype
     * has no gaps and the blocks follow each other in the receive buffer
     * as in node-major order, the whole lands in the receive buffer itself
     * (no step 4), and a receiving leader gathers its node's run straight
     * into its place there. */
    const char *rat;
    int direct = receives && h->blocked && kcoll_hier_contiguous(rbuf, rtype, &rat);
    for (int q = 0; direct && q < h->p; q++)
        direct = k.b[q] == 0 || (size_t)DISPL(q) == k.at[q];
    const int needs_all = all || (h->me == a && (leader || is_root));
    if (direct)
        G = (char *)rat;
    else if (needs_all)
        G = gmem = malloc(k.total);
    const int in_place_run = direct && leader && h->pn > 1;
    L = (char *)mine;
    if (in_place_run)
        L = G + k.ndsp[h->me];
    else if (leader && h->pn > 1)
        L = lmem = malloc((size_t)k.ncnt[h->me] + 1);
    if ((!mine && mb) || !L || (needs_all && !G)) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* 1: the node's blocks at its leader */
    if (h->pn > 1 && rcounts)
        rc = MPI_Gatherv(leader && mine == L ? MPI_IN_PLACE : mine, (int)mb, MPI_BYTE, L, k.lcnt,
                         k.ldsp, MPI_BYTE, 0, h->node);
    else if (h->pn > 1)
        rc = MPI_Gather(leader && mine == L ? MPI_IN_PLACE : mine, (int)b, MPI_BYTE, L, (int)b,
                        MPI_BYTE, 0, h->node);
    /* 2: across the leaders, node-major */
    if (rc == MPI_SUCCESS && leader) {
        const void *run = L == G + k.ndsp[h->me] ? MPI_IN_PLACE : L;
        if (all)
            KCOLL_HIER_HOST(rc, PMPI_Allgatherv(run, k.ncnt[h->me], MPI_BYTE, G, k.ncnt, k.ndsp,
                                                MPI_BYTE, h->leaders));
        else if (h->me == a)
            KCOLL_HIER_HOST(rc, PMPI_Gatherv(is_root ? run : L, k.ncnt[h->me], MPI_BYTE, G,
                                             k.ncnt, k.ndsp, MPI_BYTE, a, h->leaders));
        else
            KCOLL_HIER_HOST(rc, PMPI_Gatherv(L, k.ncnt[h->me], MPI_BYTE, NULL, NULL, NULL,
                                             MPI_BYTE, a, h->leaders));
    }
    /* 3: to the root, or to every rank of the node */
    if (rc == MPI_SUCCESS && all && h->pn > 1) {
        rc = MPI_Bcast(G, (int)k.total, MPI_BYTE, 0, h->node);
    } else if (rc == MPI_SUCCESS && !all && h->me == a && h->lrank_of[root] != 0) {
        if (leader)
            KCOLL_HIER_HOST(rc, PMPI_Send(G, (int)k.total, MPI_BYTE, h->lrank_of[root],
                                          KCOLL_HIER_TAG, h->node));
        else if (is_root)
            KCOLL_HIER_HOST(rc, PMPI_Recv(G, (int)k.total, MPI_BYTE, 0, KCOLL_HIER_TAG, h->node,
                                          MPI_STATUS_IGNORE));
    }
    /* 4: every block to its place */
    for (int q = 0; rc == MPI_SUCCESS && receives && !direct && q < h->p; q++)
        rc = kcoll_hier_unbytes(G + k.at[q], k.b[q], (char *)rbuf + DISPL(q), COUNT(q), rtype);
#undef DISPL
#undef COUNT
out:
    kcoll_hier_blocks_free(&k);
    free(pmem);
    free(lmem);
    free(gmem);
    kcoll_call_hier_end(c, h->pn == 1, KCOLL_R_NONE);
    return rc;
}
