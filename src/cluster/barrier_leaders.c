/* MPI_Barrier across nodes, leaders layout: every node arrives at its
 * leader, the leaders meet in the host's Barrier, and every node leaves
 * once its leader is back.
 *
 *  1. arrive (phase 0): every other rank of the node raises DATA; the
 *     leader waits for all of them (the flat tree of coll/barrier/hier.c,
 *     its arriving half);
 *  2. between nodes: the leader runs the host's Barrier on the leaders'
 *     group (one EXTERN step);
 *  3. leave (phase 1): the leader raises AUX, the others wait for it (the
 *     leaving half).
 * No rank leaves before every rank of every node has entered: a rank
 * leaves after its leader's host Barrier, which ends only once every
 * leader has entered it, each after its whole node arrived. A node of one
 * rank only takes part in step 2.
 *
 * Cost (pn ranks on the node, N nodes; T_host(N) the host's Barrier among
 * N processes, T_flag one flag seen by another core):
 *   T = T_flag + T_host(N) + T_flag
 * (the leader polls pn - 1 flags, the others one); the host MPI alone
 * crosses the network with every rank where this layout sends only the
 * leaders. There is no lanes layout: a barrier carries no data to share.
 */
#include "cluster/cluster.h"

/* The two halves, as builders for the node's view (rank 0 the leader). */
static kcoll_status_t kcoll_cluster_arrive(const kcoll_args_t *b, kcoll_sched_t *s)
{
    if (b->rank != 0)
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, 1);
    else
        for (int q = 1; q < b->p; q++)
            kcoll_sched_wait(s, q, KCOLL_FLAG_DATA, 1);
    return s->err;
}

static kcoll_status_t kcoll_cluster_leave(const kcoll_args_t *b, kcoll_sched_t *s)
{
    if (b->rank == 0)
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, 1);
    else
        kcoll_sched_wait(s, 0, KCOLL_FLAG_AUX, 1);
    return s->err;
}

kcoll_status_t kcoll_cluster_barrier_leaders(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                             kcoll_sched_t *s)
{
    kcoll_bufmap_t map;
    kcoll_bufmap_init(&map, 0);
    kcoll_args_t b = kcoll_cluster_node_view(a, cl, KCOLL_COLL_BARRIER, 0);
    if (cl->pn > 1) /* 1: the node arrives */
        kcoll_phase_append(s, &b, kcoll_cluster_arrive, cl->peer_of, 0, KCOLL_PHASE_VALUES, &map,
                           1, 0, NULL);
    if (cl->me == 0 && cl->nodes > 1) { /* 2: the leaders meet */
        kcoll_xcoll_t x = {.coll = KCOLL_XC_BARRIER, .sbuf = KCOLL_BUF_RECV,
                           .rbuf = KCOLL_BUF_RECV, .group = KCOLL_CLUSTER_LEADERS,
                           .len = 0, .esize = 1};
        kcoll_sched_xcoll(s, &x);
    }
    if (cl->pn > 1) /* 3: the node leaves */
        kcoll_phase_append(s, &b, kcoll_cluster_leave, cl->peer_of, KCOLL_PHASE_VALUES,
                           KCOLL_PHASE_VALUES, &map, 1,
                           0, NULL);
    return s->err;
}
