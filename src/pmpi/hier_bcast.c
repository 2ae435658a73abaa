/* MPI_Bcast across nodes: kcoll on each node, the host MPI between the
 * nodes' leaders, pipelined in segments (paper 000 section IV: leaders
 * first, then their groups, segment i distributed while segment i+1
 * travels; paper 003 section VII.G).
 *
 * The message is cut into segments of KCOLL_HIER_SEGMENT bytes (whole
 * elements). With root r on node a:
 *  - node a: for each segment, an on-node broadcast from r (kcoll's
 *    algorithm for the node, the leader among the receivers), after which
 *    the leader starts the segment's host broadcast to the other leaders
 *    (MPI_Ibcast on the leaders' communicator, root a). While the node
 *    broadcasts the next segment, the leader keeps that request moving
 *    (its waiting polls it), and waits for it before starting the next.
 *  - every other node: the leader starts receiving segment 0 from the
 *    leaders' broadcast; for each segment i it waits for it, starts
 *    segment i+1, and the node broadcasts segment i from the leader
 *    while segment i+1 arrives.
 * The root's data never takes a detour: r is the root of its node's
 * broadcasts, and its leader is one of their receivers.
 *
 * Cost, S segments of a message of n bytes, nodes' broadcast T_node(m),
 * the leaders' T_net(m):
 *   T = T_node(n/S) + max(T_node(n/S), T_net(n/S)) * (S - 1) + T_net(n/S)
 *       (+ the first T_net on the other nodes)
 * so the slower of the two stages sets the pace once S is large; a
 * segment costs one on-node call's fixed overhead (an agreement-free
 * kcoll call, a few microseconds), so segments stay large (512 KiB).
 * A node with one rank skips its on-node phase; when every node has one
 * rank there is nothing to overlap and the message goes whole. Any
 * datatype and count.
 */
#include "base/params.h"
#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

/* The leader's in-flight host request, polled while the node works. */
static int kcoll_hier_poll(void *ctx)
{
    MPI_Request *q = ctx;
    int flag = 0;
    if (*q == MPI_REQUEST_NULL)
        return 0;
    PMPI_Test(q, &flag, MPI_STATUS_IGNORE);
    return flag;
}

int kcoll_hier_bcast(const kcoll_call_t *c, MPI_Comm comm, void *buf, int count,
                     MPI_Datatype dt, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    const int a = h->node_of[root], lroot = h->lrank_of[root], leader = h->lr == 0;
    MPI_Aint lb, extent;
    MPI_Request q = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    PMPI_Type_get_extent(dt, &lb, &extent);
    const int64_t segv = kcoll_param_int(KCOLL_P_HIER_SEGMENT); /* "auto" (-1): 512 KiB */
    const size_t seg = segv < 0 ? (size_t)512 << 10 : (size_t)segv;
    int per = count;
    if (seg && h->maxpn > 1 && extent > 0 && (size_t)extent * (size_t)count > seg)
        per = seg / (size_t)extent ? (int)(seg / (size_t)extent) : 1;
    const int nseg = count > 0 ? (count + per - 1) / per : 1;
#define SEG_AT(i) ((char *)buf + (MPI_Aint)(i) * per * extent)
#define SEG_N(i) ((i) == nseg - 1 ? count - (i) * per : per)

    kcoll_call_hier_begin();
    if (leader)
        kcoll_call_poll_set(kcoll_hier_poll, &q);
    if (h->me == a) {
        for (int i = 0; i < nseg && rc == MPI_SUCCESS; i++) {
            if (h->pn > 1)
                rc = MPI_Bcast(SEG_AT(i), SEG_N(i), dt, lroot, h->node);
            if (leader && rc == MPI_SUCCESS) {
                rc = kcoll_pmpi_host_wait(MPI_SUCCESS, &q, MPI_STATUS_IGNORE);
                if (rc == MPI_SUCCESS)
                    rc = PMPI_Ibcast(SEG_AT(i), SEG_N(i), dt, a, h->leaders, &q);
            }
        }
    } else {
        if (leader)
            rc = PMPI_Ibcast(SEG_AT(0), SEG_N(0), dt, a, h->leaders, &q);
        for (int i = 0; i < nseg && rc == MPI_SUCCESS; i++) {
            if (leader) {
                rc = kcoll_pmpi_host_wait(MPI_SUCCESS, &q, MPI_STATUS_IGNORE);
                if (rc == MPI_SUCCESS && i + 1 < nseg)
                    rc = PMPI_Ibcast(SEG_AT(i + 1), SEG_N(i + 1), dt, a, h->leaders, &q);
            }
            if (rc == MPI_SUCCESS && h->pn > 1)
                rc = MPI_Bcast(SEG_AT(i), SEG_N(i), dt, 0, h->node);
        }
    }
    if (leader) {
        int rc2 = kcoll_pmpi_host_wait(MPI_SUCCESS, &q, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = rc2;
        kcoll_call_poll_set(NULL, NULL);
    }
#undef SEG_AT
#undef SEG_N
    kcoll_call_hier_end(c, h->pn == 1, KCOLL_R_NONE);
    return rc;
}
