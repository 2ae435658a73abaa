/* MPI_Bcast across nodes, leaders layout: the root's node's leader sends
 * the vector between nodes, segment after segment, and every other node
 * spreads each segment from its leader while the next one travels (paper
 * 000 section IV: leaders first, then their groups; paper 003 section
 * VII.G: pipelined in segments).
 *
 * The vector of n bytes is cut into k segments of s bytes (the last one
 * shorter; cl->segment, or one segment where every node has one rank:
 * there is nothing to overlap). Local rank 0 of a node is its leader; the
 * root is local rank R of its node. One schedule per rank, with no phase
 * boundary between the segments:
 *  - the root exposes its RECV and raises DATA once: the whole vector is
 *    there. On its node every other rank reads it from the root, the
 *    leader segment by segment, each segment's host Bcast between the
 *    leaders (root: the root's node index) right after its read; every
 *    reader raises DONE when it has read, and the root returns once all
 *    have. A root that is the leader itself starts its host Bcasts at
 *    once while its node reads;
 *  - on every other node the leader exposes its RECV and, for each
 *    segment, receives it in the host Bcast and raises DATA to the
 *    segment's number: the node's other ranks read segment i as soon as
 *    DATA reaches i + 1, while the leader is already receiving segment
 *    i + 1. They raise DONE when they have all of it, and the leader
 *    returns once all have.
 * The data crosses the network once per node and is copied once on each
 * rank: the root's bytes never take a detour, and the root is one of its
 * node's sources only when it is not the leader (the leader reads it).
 *
 * Cost, k = ceil(n / s) segments, T_net(s) the host's Bcast of a segment
 * among N leaders, T_rd(s) one rank's read of a segment on its node:
 *   root's node, root the leader: k T_net(s), its node's reads meanwhile;
 *   root's node, root not the leader: k (T_rd(s) + T_net(s));
 *   other nodes: k T_net(s) + T_rd(s) (their reads follow the leader's
 *   receives segment by segment), once the first segment is on its way.
 * A segment costs a host call's latency, so segments stay large (512 KiB
 * by default). The lanes layout (bcast_lanes.c) spreads the bytes between
 * nodes over every rank instead. Restrictions: none (bytes; any datatype
 * is packed by the call layer first).
 */
#include "cluster/cluster.h"

kcoll_status_t kcoll_cluster_bcast_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                           int root_node, int root_local, kcoll_sched_t *s)
{
    const size_t n = a->count * a->esize;
    const int home = cl->node == root_node, me = cl->me, pn = cl->pn;
    if (!kcoll_cluster_root_ok(cl, root_node, root_local))
        return KCOLL_ERR_ARG;
    if (n == 0)
        return KCOLL_OK; /* every rank's vector is empty: MPI's count and type agree */
    /* one cut on every node, so the leaders' host Bcasts match */
    size_t seg = cl->segment && cl->lanes > 1 && cl->segment < n ? cl->segment : n;
    if ((n + seg - 1) / seg > KCOLL_CLUSTER_MAX_SEGMENTS) /* DATA counts segments */
        seg = (n + KCOLL_CLUSTER_MAX_SEGMENTS - 1) / KCOLL_CLUSTER_MAX_SEGMENTS;
    const size_t k = (n + seg - 1) / seg;
    const int src = home ? root_local : 0; /* whom this node's ranks read */
    kcoll_xcoll_t x = {.coll = KCOLL_XC_BCAST, .sbuf = KCOLL_BUF_RECV, .rbuf = KCOLL_BUF_RECV,
                       .group = KCOLL_CLUSTER_LEADERS, .root = root_node, .esize = 1};
    const int net = cl->nodes > 1 && me == 0;

    if (me == src) { /* the root, or another node's leader: the source of the node */
        if (pn > 1)
            kcoll_sched_expose(s, KCOLL_BUF_RECV);
        if (home && pn > 1)
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
        for (size_t i = 0; i < k && net; i++) {
            x.roff = x.soff = i * seg;
            x.len = i + 1 < k ? seg : n - i * seg;
            kcoll_sched_xcoll(s, &x);
            if (!home && pn > 1)
                kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(i + 1));
        }
        for (int q = 0; q < pn; q++) /* its RECV is read until every reader is done */
            if (q != me)
                kcoll_sched_wait(s, cl->peer_of[q], KCOLL_FLAG_DONE, 1);
        return s->err;
    }
    /* a reader: the root's node's ranks once the root is in, the others
     * segment by segment; the root's node's leader sends each segment on */
    const int peer = cl->peer_of[src];
    if (home)
        kcoll_sched_wait(s, peer, KCOLL_FLAG_DATA, 1);
    const int per_segment = !home || net;
    for (size_t i = 0; i < k; i++) {
        const size_t off = i * seg, len = i + 1 < k ? seg : n - off;
        if (!home)
            kcoll_sched_wait(s, peer, KCOLL_FLAG_DATA, (uint32_t)(i + 1));
        if (!per_segment) { /* the whole vector at once */
            kcoll_sched_read(s, peer, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, n);
            break;
        }
        kcoll_sched_read(s, peer, KCOLL_BUF_RECV, off, KCOLL_BUF_RECV, off, len);
        if (i + 1 == k) /* the last read: the source may return */
            kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
        if (net) {
            x.roff = x.soff = off;
            x.len = len;
            kcoll_sched_xcoll(s, &x);
        }
    }
    if (!per_segment)
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    return s->err;
}
