/* MPI_Allreduce across nodes, leaders layout: the node reduces to its
 * leader, the leaders allreduce between nodes, the node reads the result
 * from its leader.
 *
 *  1. inside the node (phase 1): the partitioned Reduce of the node's pn
 *     ranks to local rank 0, the leader (coll/reduce/partitioned.c): every
 *     rank reduces a 1/pn slice of the node's vectors and writes it into
 *     the leader's RECV, so all cores of the node work;
 *  2. between nodes: the leader starts the host's Allreduce on the
 *     leaders' group, in place on its RECV (one EXTERN step);
 *  3. inside the node (phase 2): the flat hierarchical Bcast of the
 *     leader's RECV (coll/bcast/hier.c without levels: the others read it
 *     in segments, each after the leader's DATA for it, which the leader
 *     raises only once the host's Allreduce is done).
 * A node of one rank copies SEND to RECV (unless in place) and goes
 * straight to step 2.
 *
 * Order: each node combines its ranks in rank order, then the host
 * combines the nodes' partial results in node order. For a predefined
 * (commutative) operation that is fine anywhere; for a user operation,
 * taken to be non-commutative, it is MPI's order only when every node's
 * ranks are consecutive in the communicator (cl->ordered): elsewhere the
 * builder refuses (KCOLL_ERR_UNSUPPORTED) and the host's own Allreduce
 * must serve the call. The result's bits differ from a flat reduction's
 * (grouped by nodes), but every rank gets the same bits: one result is
 * broadcast.
 *
 * Cost (n bytes, pn ranks on the node, N nodes; T_host(N, n) the host's
 * Allreduce of n bytes among N processes):
 *   T = T_reduce^part(pn, n) + T_host(N, n) + T_bcast^flat(pn, n)
 * The leader's one network endpoint carries the whole vector, and the
 * other ranks of the node idle during step 2: the lanes layout
 * (allreduce_lanes.c) spreads step 2 over every rank. It is the layout of
 * choice for short vectors, where the host's latency dominates and one
 * host call beats L of them.
 */
#include "cluster/cluster.h"
#include "coll/reduce/common.h"

size_t kcoll_cluster_allreduce_leaders_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    if (cl->pn == 1)
        return 0;
    kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_REDUCE, 0);
    return kcoll_reduce_tmp_len(&b);
}

kcoll_status_t kcoll_cluster_allreduce_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                               kcoll_sched_t *s)
{
    const size_t n = a->count * a->esize;
    kcoll_bufmap_t map;
    if (!kcoll_cluster_keeps_order(a, cl))
        return KCOLL_ERR_UNSUPPORTED;

    /* 1: to the leader (MPI_IN_PLACE is passed by every rank: SEND is RECV) */
    if (cl->pn > 1) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_REDUCE, 0);
        kcoll_bufmap_init(&map, a->in_place);
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of, 0, KCOLL_PHASE_VALUES,
                           &map, 1, 0, NULL);
    } else if (!a->in_place) {
        kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, n);
    }

    /* 2: between the nodes' leaders */
    if (cl->me == 0 && cl->nodes > 1) {
        kcoll_xcoll_t x = {.coll = KCOLL_XC_ALLREDUCE, .sbuf = KCOLL_BUF_RECV,
                           .rbuf = KCOLL_BUF_RECV, .group = KCOLL_CLUSTER_LEADERS, .len = n,
                           .esize = a->esize};
        kcoll_sched_xcoll(s, &x);
    }

    /* 3: from the leader; its DATA for the bcast comes after step 2 */
    if (cl->pn > 1) {
        kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_BCAST, 0);
        b.in_place = 0;
        kcoll_bufmap_init(&map, 0);
        kcoll_phase_append(s, &b, kcoll_bcast_hier, cl->peer_of, KCOLL_PHASE_VALUES,
                           KCOLL_PHASE_VALUES, &map, 1, 0,
                           NULL);
    }
    return s->err;
}
