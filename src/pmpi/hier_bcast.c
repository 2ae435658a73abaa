/* MPI_Bcast across nodes: kcoll on each node, the host MPI between the
 * nodes' leaders, pipelined in segments (paper 000 section IV: leaders
 * first, then their groups, segment i distributed while segment i+1
 * travels; paper 003 section VII.G).
 *
 * The message is cut into segments of KCOLL_HIER_SEGMENT bytes (whole
 * elements), and each segment is two operations of the composed request:
 *  - node a (the root's): N_i, an on-node broadcast of segment i from r
 *    (kcoll's algorithm for the node, the leader among the receivers),
 *    all started at once (their order on the node's lanes keeps them
 *    apart); on the leader, L_i, the segment's host broadcast to the
 *    other leaders (MPI_Ibcast on the leaders' communicator, root a),
 *    once N_i and L_{i-1} are done: the network carries segment i while
 *    the node broadcasts segment i+1.
 *  - every other node: the leader receives L_0, L_1, ... one after the
 *    other; N_i, the node's broadcast of segment i from its leader, starts
 *    on the leader once L_i is in (its other ranks start it at once and
 *    wait inside it), so the node spreads segment i while segment i+1
 *    crosses the network.
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

kcoll_hreq_t *kcoll_hier_bcast(const kcoll_call_t *c, kcoll_mode_t mode, MPI_Comm comm,
                               void *buf, int count, MPI_Datatype dt, int root)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    kcoll_hreq_t *q = kcoll_hreq_new(h, c, mode, comm);
    const int a = h->node_of[root], lroot = h->lrank_of[root], leader = h->lr == 0;
    MPI_Aint lb, extent;
    if (!q)
        return NULL;
    kcoll_reason_t why = kcoll_hier_pick(h, KCOLL_COLL_BCAST, kcoll_hier_size(count, dt));
    if (why) {
        kcoll_hreq_host(q, why);
        return q;
    }
    if (h->pn == 1)
        kcoll_hreq_alone(q);
    PMPI_Type_get_extent(dt, &lb, &extent);
    const int64_t segv = kcoll_param_int(KCOLL_P_HIER_SEGMENT); /* "auto" (-1): 512 KiB */
    const size_t seg = segv < 0 ? (size_t)512 << 10 : (size_t)segv;
    int per = count;
    if (seg && h->maxpn > 1 && extent > 0 && (size_t)extent * (size_t)count > seg)
        per = seg / (size_t)extent ? (int)(seg / (size_t)extent) : 1;
    const int nseg = count > 0 ? (count + per - 1) / per : 1;
    int net = -1; /* this leader's last host broadcast */
    for (int i = 0; i < nseg; i++) {
        kcoll_hop_t o = {.kind = KCOLL_HOP_BCAST,
                         .rbuf = (char *)buf + (MPI_Aint)i * per * extent,
                         .count = i == nseg - 1 ? count - i * per : per,
                         .dt = dt};
        kcoll_hop_t on_node = o, between = o;
        on_node.where = KCOLL_HOP_NODE;
        between.where = KCOLL_HOP_NET;
        between.root = a;
        if (h->me == a) {
            on_node.root = lroot;
            int n = h->pn > 1 ? kcoll_hreq_add(q, on_node, -1, -1) : -1;
            if (leader)
                net = kcoll_hreq_add(q, between, n, net);
        } else {
            if (leader)
                net = kcoll_hreq_add(q, between, net, -1);
            on_node.root = 0;
            if (h->pn > 1)
                kcoll_hreq_add(q, on_node, leader ? net : -1, -1);
        }
    }
    return q;
}
