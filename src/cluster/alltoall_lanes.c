/* MPI_Alltoall and MPI_Alltoallv across nodes, lanes layout: every local
 * rank carries, on its lane, what its whole node sends to the ranks of its
 * own local rank on the other nodes, so that each rank exchanges N - 1
 * messages between nodes instead of p - q (the node-aware all-to-all of
 * Bienz, Gropp and Olson, 2019; UCC's split_rail for the gather-type
 * collectives).
 *
 * Lane l is local rank l of every node (cluster.h); on a node with fewer
 * ranks than lanes, local rank i also carries lanes i + pn, i + 2pn, ...
 * (for which its node has no rank to receive anything).
 *  1. inside the node: every rank exposes its send buffer and raises AUX;
 *     for each lane l it carries, a rank collects from every rank s of its
 *     node (itself included) the blocks s sends to the ranks of lane l,
 *     into its TMP in the order the lane's host call sends them: for node
 *     d (in node order) a run of its node's blocks to (d, l), by local
 *     rank s (nothing for a node that has no rank l); it READs them from
 *     s's send buffer, copies its own, and raises DONE;
 *  2. between nodes: for each lane it carries, in increasing lane order,
 *     the host's Alltoall on the lane's group (Alltoallv where the runs
 *     differ: nodes of other sizes, or MPI_Alltoallv's counts): member d
 *     receives from every node e the run of e's blocks for it, in node
 *     order, by local rank: node-major order;
 *  3. the rank places the blocks of its own lane, each at its sender's
 *     place in its receive buffer (kcoll_cluster_move_blocks). Where
 *     node-major order is where the blocks go (every node's ranks
 *     consecutive, cl->ordered, and, for MPI_Alltoallv, this rank's
 *     receive displacements back to back in rank order) the host call
 *     receives straight into the receive buffer and there is nothing to
 *     place;
 *  4. a rank waits for every other rank's DONE before its send buffer
 *     goes (in place, before its receive buffer is written: the blocks
 *     the others read from lie there).
 * Every block crosses the network once, as with the host alone, but in
 * runs of a node's blocks: per rank N - 1 messages of a node's blocks (m of
 * them on a rank that carries m lanes) instead of p - pn. Any node sizes
 * and placement, in place (the send blocks are read from the receive
 * buffer), zero-length blocks (nothing moves for them).
 *
 * MPI_Alltoallv: a carrier must know what each rank of its node sends to
 * each rank of its lanes, and a rank what it receives from every rank,
 * which its own counts say; a->lay holds the node's send layouts by local
 * rank (cluster.h), which the runtime exchanges inside the node before
 * the call (span/run.c). The same steps, each block at its own length and
 * displacement.
 *
 * Cost (b bytes a block, the largest of an Alltoallv's; N nodes, pn ranks
 * on the node, L lanes, m = ceil(L / pn) lanes on the busiest rank;
 * T_host(N, x) the host's Alltoall among N processes of x-byte blocks, the
 * node's lanes running at once and sharing its link):
 *   T = T_a2a(pn, m N b) + m T_host(N, L b) [+ T_copy(p b) placed]
 * against the host alone's (p - pn) message latencies per rank; an
 * Alltoallv adds the exchange of its send layouts inside the node
 * (model/nodes.c).
 */
#include <stdlib.h>

#include "cluster/cluster.h"

/* Does node d have a rank on lane l? */
static int kcoll_a2l_has(const kcoll_cluster_t *cl, int d, int l)
{
    return cl->rank_of[(size_t)d * (size_t)cl->lanes + (size_t)l] >= 0;
}

/* Ranks on node e. */
static int kcoll_a2l_size(const kcoll_cluster_t *cl, int e)
{
    int n = 0;
    while (n < cl->lanes && kcoll_a2l_has(cl, e, n))
        n++;
    return n;
}

/* The bytes local rank i of this node sends to communicator rank q, and
 * where they start in its send buffer (its receive buffer in place). */
static size_t kcoll_a2l_count(const kcoll_args_t *a, int i, int q)
{
    return a->lay ? a->lay[i].scount[q] : a->bytes;
}
static size_t kcoll_a2l_displ(const kcoll_args_t *a, int i, int q)
{
    return a->lay ? a->lay[i].sdispl[q] : (size_t)q * a->bytes;
}

/* This rank's receive side as kcoll_cluster_blen and _place read it: an
 * Alltoallv's own layout. */
static kcoll_args_t kcoll_a2l_own(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    kcoll_args_t o = *a;
    if (a->lay)
        o.lay = &a->lay[cl->me];
    return o;
}

/* Does this rank's own lane receive straight into RECV: node-major order
 * is rank order, and every block's place is its node-major offset? */
static int kcoll_a2l_direct(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    if (!cl->ordered || !a->lay)
        return cl->ordered;
    const kcoll_args_t o = kcoll_a2l_own(a, cl);
    size_t at = 0;
    for (size_t i = 0; i < (size_t)cl->nodes * (size_t)cl->lanes; i++) {
        const int q = cl->rank_of[i];
        const size_t len = q >= 0 ? kcoll_cluster_blen(&o, q) : 0;
        if (len && kcoll_cluster_place(&o, q) != at)
            return 0;
        at += len;
    }
    return 1;
}

/* The lanes this rank carries (l = me, me + pn, ...), worked out once for
 * the whole build: for lane number t, at kcoll_a2l_lane(plan, cl, t),
 *   pre[d (pn + 1) + i]  where node d's run for lane l's rank starts the
 *                        block of local rank i (i = pn: the run's length);
 *   len[0..2N)           the lane's host call: the bytes sent to each
 *                        node, then received from each (own lane only);
 *   sent, area           the bytes sent, and where the lane's TMP starts:
 *                        the runs it sends, then, on this rank's own lane
 *                        where the host call does not receive into RECV,
 *                        the runs it receives; the lanes one after another.
 * Returns the plan (NULL: out of memory) and the TMP of all into *tmp. */
typedef struct {
    size_t *pre, *len, sent, area;
} kcoll_a2l_lane_t;

static size_t kcoll_a2l_stride(const kcoll_cluster_t *cl)
{
    return (size_t)cl->nodes * ((size_t)cl->pn + 1) + 2 * (size_t)cl->nodes;
}

static kcoll_a2l_lane_t kcoll_a2l_lane(size_t *plan, const kcoll_cluster_t *cl, int t)
{
    size_t *b = plan + (size_t)t * (kcoll_a2l_stride(cl) + 2);
    const size_t *tail = b + kcoll_a2l_stride(cl);
    kcoll_a2l_lane_t ln = {.pre = b, .len = b + (size_t)cl->nodes * ((size_t)cl->pn + 1),
                           .sent = tail[0], .area = tail[1]};
    return ln;
}

static size_t *kcoll_a2l_plan(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t *tmp)
{
    const int N = cl->nodes, L = cl->lanes, pn = cl->pn;
    const int lanes = (L - cl->me + pn - 1) / pn, direct = kcoll_a2l_direct(a, cl);
    const kcoll_args_t o = kcoll_a2l_own(a, cl);
    size_t *plan = malloc((size_t)lanes * (kcoll_a2l_stride(cl) + 2) * sizeof *plan);
    *tmp = 0;
    for (int t = 0; plan && t < lanes; t++) {
        const int l = cl->me + t * pn;
        kcoll_a2l_lane_t ln = kcoll_a2l_lane(plan, cl, t);
        size_t sent = 0, got = 0;
        for (int d = 0; d < N; d++) {
            const int q = cl->rank_of[(size_t)d * (size_t)L + (size_t)l];
            size_t *pre = ln.pre + (size_t)d * ((size_t)pn + 1);
            pre[0] = 0;
            for (int i = 0; i < pn; i++)
                pre[i + 1] = pre[i] + (q >= 0 ? kcoll_a2l_count(a, i, q) : 0);
            ln.len[d] = pre[pn];
            ln.len[N + d] = 0;
            for (int s = 0; l == cl->me && s < L; s++) {
                const int from = cl->rank_of[(size_t)d * (size_t)L + (size_t)s];
                ln.len[N + d] += from >= 0 ? kcoll_cluster_blen(&o, from) : 0;
            }
            sent += ln.len[d];
            got += ln.len[N + d];
        }
        size_t *tail = ln.len + 2 * (size_t)N;
        tail[0] = sent;
        tail[1] = *tmp;
        *tmp += sent + (direct ? 0 : got);
    }
    return plan;
}

size_t kcoll_cluster_alltoall_lanes_tmp(const kcoll_args_t *a, const kcoll_cluster_t *cl)
{
    size_t t = 0;
    if (cl->rank_of)
        free(kcoll_a2l_plan(a, cl, &t));
    return t;
}

/* Wait for every other rank of the node's DONE. */
static void kcoll_a2l_wait_done(kcoll_sched_t *s, const kcoll_cluster_t *cl)
{
    for (int i = 0; i < cl->pn; i++)
        if (i != cl->me)
            kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_DONE, 1);
}

kcoll_status_t kcoll_cluster_alltoall_lanes(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                            kcoll_sched_t *s)
{
    if (!cl->rank_of)
        return KCOLL_ERR_UNSUPPORTED;
    if (!a->bytes) /* nothing moves (the block size, an Alltoallv's largest, is alike on
                    * every rank) */
        return KCOLL_OK;
    const int N = cl->nodes, L = cl->lanes, pn = cl->pn;
    const size_t b = a->bytes;
    const kcoll_buf_t src = a->in_place ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
    const int direct = kcoll_a2l_direct(a, cl);
    size_t tmp;
    size_t *plan = kcoll_a2l_plan(a, cl, &tmp);
    size_t *at = malloc(((size_t)N * (size_t)L + (size_t)N) * sizeof *at);
    if (!plan || !at) {
        free(plan);
        free(at);
        return KCOLL_ERR_NOMEM;
    }
    int even = !a->lay; /* one run length everywhere: the uniform host call */
    for (int e = 0; e < N; e++)
        even &= kcoll_a2l_size(cl, e) == L;

    /* 1: every rank's blocks for the ranks of my lanes, from the node's
     * send buffers, starting with my own */
    if (pn > 1) {
        kcoll_sched_expose(s, src);
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, 1);
    }
    for (int k = 0; k < pn; k++) {
        const int i = (cl->me + k) % pn;
        if (i != cl->me)
            kcoll_sched_wait(s, cl->peer_of[i], KCOLL_FLAG_AUX, 1);
        for (int l = cl->me, t = 0; l < L; l += pn, t++) {
            const kcoll_a2l_lane_t ln = kcoll_a2l_lane(plan, cl, t);
            size_t run = 0; /* node d's run in the lane's area: len[d] bytes */
            for (int d = 0; d < N; run += ln.len[d++]) {
                const int q = cl->rank_of[(size_t)d * (size_t)L + (size_t)l];
                if (q < 0)
                    continue;
                const size_t to = ln.area + run + ln.pre[(size_t)d * ((size_t)pn + 1) + (size_t)i];
                const size_t n = kcoll_a2l_count(a, i, q), from = kcoll_a2l_displ(a, i, q);
                if (!n)
                    continue;
                if (i == cl->me)
                    kcoll_sched_copy(s, KCOLL_BUF_TMP, to, src, from, n);
                else
                    kcoll_sched_read(s, cl->peer_of[i], src, from, KCOLL_BUF_TMP, to, n);
            }
        }
    }
    if (pn > 1)
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    /* in place, the others' blocks lie in my receive buffer until they
     * have read them */
    if (pn > 1 && a->in_place)
        kcoll_a2l_wait_done(s, cl);

    /* 2: my lanes between the nodes, in lane order */
    size_t rarea = 0;
    for (int l = cl->me, t = 0; l < L; l += pn, t++) {
        const kcoll_a2l_lane_t ln = kcoll_a2l_lane(plan, cl, t);
        kcoll_xcoll_t x = {.sbuf = KCOLL_BUF_TMP, .soff = ln.area, .rbuf = KCOLL_BUF_TMP,
                           .roff = ln.area + ln.sent, .group = KCOLL_CLUSTER_LANE(l),
                           .len = (size_t)L * b, .esize = 1};
        if (l == cl->me) {
            rarea = x.roff;
            if (direct) {
                x.rbuf = KCOLL_BUF_RECV;
                x.roff = 0;
            }
        }
        if (even) {
            x.coll = KCOLL_XC_ALLTOALL;
            kcoll_sched_xcoll(s, &x);
        } else {
            x.coll = KCOLL_XC_ALLTOALLV;
            kcoll_sched_xcoll_v(s, &x, ln.len, 2 * N);
        }
    }

    /* 3: my lane's blocks to their senders' places */
    if (!direct) {
        const kcoll_args_t o = kcoll_a2l_own(a, cl);
        kcoll_cluster_blocks(&o, cl, at, at + (size_t)N * (size_t)L);
        kcoll_cluster_move_blocks(s, &o, cl, at, -1, -1, 1, KCOLL_BUF_TMP, rarea, KCOLL_BUF_RECV);
    }
    /* 4: the others have read my send buffer */
    if (pn > 1 && !a->in_place)
        kcoll_a2l_wait_done(s, cl);
    free(plan);
    free(at);
    return s->err;
}
