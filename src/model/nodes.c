/* Communicators that span nodes, priced.
 *
 * Walk-through. A call on such a communicator can move its data in
 * several layouts, and the model prices each as a candidate:
 *
 *   host     the host MPI alone over all ranks;
 *   leaders  on-node phases priced as kcoll's one-node calls on each
 *            node, and one phase between the nodes, the host MPI's
 *            collective among the leaders (local rank 0 of every node),
 *            which carries all the traffic between nodes (src/cluster/
 *            *_leaders.c, gather_leaders.c for Gather, Scatter and
 *            Allgather(v); docs/hierarchy.md);
 *   lanes    every local rank carries a share between nodes: lane i is
 *            local rank i of every node, and the lanes' host collectives
 *            run at once, each on its share (UCC's split_rail, MPICH's
 *            multi-leader; src/cluster/ *_lanes.c).
 *
 * The pick is the cheapest layout among those the caller may run
 * (kcoll_nodes_pick; the runtime: kcoll_nodes_runs). For N nodes,
 * q_k ranks on node k (placed in blocks, p in all, root 0 on node 0), q
 * the fullest node's:
 *
 * Leaders:
 *   Barrier      on(Barrier) + net(Barrier, N) + on(Barrier)
 *   Bcast        max(on0(Bcast, n), pipeline): segments of s bytes cross
 *                the network while the previous one spreads on its node:
 *                net(s) + (k - 1) max(net(s), on(s)) + on(s), k = n / s
 *   Reduce       on(Reduce, n) + net(Reduce, n)
 *   Allreduce    on(Reduce, n) + net(Allreduce, n) + on(Bcast, n)
 *   Reduce_scatter(_block), block b: on(Reduce, p b) + net(Allreduce,
 *                p b) + on(Scatter, b)
 *   Gather       on(Gather, b) + net(Gather, r b)
 *   Scatter      net(Scatter, r b) + on(Scatter, b)
 *   Allgather(v) on(Gather, b) + net(Allgather, r b) + on(Bcast, p b)
 *   with r = q on even nodes; on uneven ones the mean run the root's node
 *   receives from (sends to) each other node, (p - q0) / (N - 1), q0 the
 *   root's node's ranks, and for Allgather(v) the emptiest node's,
 *   (p - min q_k) / (N - 1) (the node that receives the most)
 *
 * Lanes: L = q lanes, each with one member on every node. A node of
 * fewer ranks, q_k < L, has its local rank i carry lanes i, i + q_k,
 * i + 2 q_k, ... (below L): so every lane has exactly one member per node
 * and every share is the same size, and no lane waits for data a node
 * cannot have. Its busiest rank carries m_k = ceil(L / q_k) lanes. The
 * lanes run in R = ceil(L / c) rounds of c = min q_k lanes (lanes r c to
 * (r + 1) c - 1 in round r): two lanes less than q_k apart sit on
 * different ranks of node k, so no rank carries two lanes in one round.
 *   Allreduce    on(RSB, m s) + lanes(Allreduce, s) + on(Allgather, m s),
 *                share s = n / L
 *   Reduce       on(RSB, m s) + lanes(Reduce, s) + on0(Gather, m s)
 *   Reduce_scatter(_block), block b, s = p b / L: on(RSB, m s) +
 *                lanes(RSB, b): lane l's host reduce-scatter hands each
 *                node's member the block of that node's local rank l, or
 *                nothing where the node has none (a v form), so no phase
 *                follows; on uneven nodes the lanes past the smallest
 *                node's carry fewer blocks than priced
 *   Allgather(v) lanes(Allgather, b) + on(Allgather, N m b)
 *   In pieces: an Allgather(v)'s blocks, the vector of an Allreduce, a
 *                Reduce or a Bcast longer than the segment s go in k = ceil(b / s)
 *                pieces (the last one l bytes), each a call of the plan
 *                above at its size, overlapped (kcoll_nodes_pipe): the
 *                node runs its phases before and after one after another
 *                (before of piece i, then after of piece i - 1), the
 *                network the pieces' lanes one after another, each once
 *                its before is done. An Allgather (nothing before) so
 *                costs h(s) + (k - 2) max(h(s), r(s)) + max(h(l), r(s)) +
 *                r(l), h the lanes', r the node's allgather of a piece
 *                (the network's messages move while the node copies: the
 *                executor lets the host drive them between its batches of
 *                copies)
 *   Bcast        on0(Scatter, m s) + lanes(Bcast, s) + on(Allgather, m s),
 *                s = n / L
 *   Alltoall     on(Alltoall, m N b) + lanes(Alltoall, L b): a rank
 *                collects its node's blocks for its lanes' ranks (N runs
 *                from each rank of the node), each lane exchanges runs of
 *                a node's blocks; the own lane receives them in place
 *                (blocked placement); Alltoall has no leaders' layout
 * with lanes(c, x) = the sum over rounds r < R of net(c, x) with the
 * network's per-byte cost times c_r = min(c, L - r c), the lanes of the
 * round. The lanes of a round share each node's link: each of the c_r
 * flows gets 1/c_r of it, as when the link is the bottleneck (one flow
 * could fill it, as net_beta says one process does), and each pays its
 * algorithm's latencies itself, at the same time as the others: once per
 * round. A share is moved between nodes as its own host collective over
 * N ranks.
 * Both compositions are data: a table of phases per collective
 * (kcoll_nodes_plans, kcoll_lanes_plans), each phase a collective, a
 * size and the nodes it runs on; only the leaders' pipelined Bcast is
 * priced apart.
 *
 * on(c, x) is what the model gives a one-node call of q_k ranks at x
 * (m = m_k; the selector's pick: kcoll's cheapest algorithm or the host
 * MPI on the node), the slowest node's, on0 the root's node's; net(c, x)
 * the textbook cost of the host MPI's algorithm over N ranks (model/cost.c)
 * with the network's latency and per-byte cost, net_alpha and net_beta.
 * A node of one rank has no on-node phase. The phases run one after the
 * other: the phase between nodes starts when the slowest node is done
 * with its phase before.
 *
 * Host: the host MPI alone over all p ranks, the textbook formulas of
 * model/cost.c (kcoll_host_formula_nodes) with two kinds of messages:
 * inside a node at the host's own on-node alpha and beta, between nodes at
 * the network's. The host's own terms (on-node latency and per-byte cost,
 * reducing, copying) are scaled by what the host measured on a node
 * (kcoll_host_measured_scale: its time at two ranks over the formula's at
 * that size: 0.8-10x on the built-in defaults, Open MPI's
 * Reduce_scatter_block the farthest), as the one-node price scales its
 * measured times: the host is not priced by an ideal formula against kcoll
 * phases priced with measured terms. The same scaling holds for the host's
 * collectives inside the leaders' and lanes' phases. The messages inside a
 * node that run at once share the node's memory: a two-copy message's
 * bytes go through it twice (copied in, copied out), so c messages at once
 * cost each max(host_beta, 2 c / package_bw) per byte. Where every rank
 * moves data at once (rings, pairwise exchanges, recursive halving and
 * doubling) a node has c = q messages going; a tree's rounds inside a node
 * 1, 2, 4...; a linear root one. With package_bw 0 (no limit: the built-in
 * defaults, and every machine where kcoll-calibrate could not fill a
 * package) this is the price of every pair at the full copy rate; kcoll's
 * on-node phases are priced with the same memory (model/cost.c shares
 * package_bw between their copies), so neither side gets a limit the other
 * does not.
 *
 * Choosing (kcoll_nodes_pick): the cheapest allowed layout per size
 * class, so that kcoll across nodes is never predicted slower than the
 * host MPI alone. A layout carries kcoll's bookkeeping, which the
 * phases' prices do not hold (measured at 2 nodes x 1 rank: 0.3-1.1 us,
 * 0.87-0.93x the host's Allgather from 8 B to 16 KiB, docs/hierarchy.md),
 * so it must beat the host alone by more than one call's overhead
 * (m->call): a tie goes to the host. That happens where every phase is
 * the host's own (a small Reduce: the host's tree on the node, then
 * between the nodes, is the host's whole tree), and with one rank on
 * every node, which kcoll never runs across nodes. Alltoallv, Gatherv and
 * Scatterv have no layout: the host MPI runs them whole.
 *
 * Restrictions: blocked placement; a node is one memory domain (no
 * packages, no links between them, on either side); the host's rounds do
 * not overlap; but for a ring's (whose message arriving from the network
 * and the one leaving count as one more on the node), the host's messages
 * between nodes cost its nodes' memory nothing; the reductions' own
 * memory traffic is not shared either; one process can fill the node's
 * link, so lanes
 * gain no bandwidth on the network, only latency rounds, reduction work
 * and on-node phases (a real network may give several processes more
 * than one: the model then under-prices lanes); a lane's collective is
 * priced as if every node had a block or share in it (a node of fewer
 * ranks has none for some lanes' Allgather); contention inside a node
 * only as the on-node model prices it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "model/cost.h"
#include "model/nodes.h"
#include "model/select.h"

/* The shape of one call across nodes. */
typedef struct {
    const kcoll_machine_t *m;
    const int *ppn;
    int N, p;
    int qmax, qmin, q0; /* the fullest, the emptiest and the root's node's ranks */
} kcoll_nshape_t;

const char *kcoll_nodes_layout_name(kcoll_nodes_layout_t l)
{
    static const char *const names[KCOLL_NODES_NLAYOUTS] = {"host", "leaders", "lanes"};
    return l >= 0 && l < KCOLL_NODES_NLAYOUTS ? names[l] : "?";
}

static kcoll_pcall_t kcoll_nodes_call(kcoll_coll_t c, int p, size_t bytes)
{
    kcoll_pcall_t pc = {.coll = c, .p = p, .bytes = bytes, .esize = 8,
                        .rclass = KCOLL_RCLASS_DOUBLE};
    return pc;
}

/* A one-node call of q ranks, as the selector would run it. */
static double kcoll_nodes_on(const kcoll_machine_t *m, kcoll_coll_t c, int q, size_t bytes)
{
    if (q <= 1)
        return 0;
    const kcoll_pcall_t pc = kcoll_nodes_call(c, q, bytes);
    kcoll_cand_t *cand = malloc(KCOLL_MAX_CANDS * sizeof *cand);
    int n = cand ? kcoll_model_rank(m, &pc, 1, cand, KCOLL_MAX_CANDS) : 0;
    double t = n > 0 ? cand[0].t : kcoll_price_host(m, &pc);
    free(cand);
    return t;
}

/* The slowest node's one-node call: bytes on every node, or, with
 * per_lane, bytes times the lanes its busiest rank carries (L lanes). */
static double kcoll_nodes_on_max(const kcoll_nshape_t *s, kcoll_coll_t c, double bytes,
                                 int per_lane)
{
    double t = 0;
    for (int k = 0; k < s->N; k++) {
        const int q = s->ppn[k];
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = s->ppn[j] == q; /* the price depends on q alone */
        if (seen)
            continue;
        const double lanes = per_lane ? ceil((double)s->qmax / q) : 1;
        const double tk = kcoll_nodes_on(s->m, c, q, (size_t)ceil(lanes * bytes));
        t = tk > t ? tk : t;
    }
    return t;
}

/* The host MPI over the N leaders, on the network. */
static double kcoll_nodes_net(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, size_t bytes)
{
    return kcoll_host_formula_nodes(m, c, nodes, NULL, (double)bytes, KCOLL_RCLASS_DOUBLE, 1);
}

/* The lanes' host collectives between nodes, x bytes each: in rounds of
 * c = min q_k lanes, the lanes of a round sharing each node's link. */
static double kcoll_nodes_lanes_net(const kcoll_nshape_t *s, kcoll_coll_t c, double x, int *rounds)
{
    const int L = s->qmax, per = s->qmin;
    double t = 0;
    *rounds = 0;
    for (int first = 0; first < L; first += per) {
        const int flows = L - first < per ? L - first : per;
        t += kcoll_host_formula_nodes(s->m, c, s->N, NULL, x, KCOLL_RCLASS_DOUBLE, flows);
        (*rounds)++;
    }
    return t;
}

/* A layout in k pieces (k - 1 of seg bytes, then the last):
 * per piece a phase on the node before (b), the host collectives between
 * the nodes (h) and a phase on the node after (a); full[] a whole piece's three,
 * last[] the last's. Each rank runs b(0), then for i = 1 .. k - 1: b(i),
 * begins piece i's lanes, waits for piece i - 1's and runs a(i - 1); then
 * a(k - 1) once the last piece is in (allreduce_lanes.c; the Allgather,
 * b = 0, is the same order). The node's phases run one after another;
 * the network takes the pieces one after another, piece i once its b(i)
 * is done (the leaders' Bcast, b = 0, likewise). Returns the time from
 * the first b to the last a. */
static double kcoll_nodes_pipe(size_t k, const double full[3], const double last[3])
{
    double node = 0, net = 0; /* when the node, the network are free */
    for (size_t i = 0; i < k; i++) {
        const double *w = i + 1 < k ? full : last;
        node += w[0];                               /* b(i) */
        const double prev = net;                    /* piece i - 1 in */
        net = (node > net ? node : net) + w[1];     /* piece i crosses */
        if (i > 0)                                  /* a(i - 1) */
            node = (node > prev ? node : prev) + full[2];
    }
    return (node > net ? node : net) + last[2];
}

/* The leaders' compositions of src/cluster/ (the walk-through's list, but
 * the pipelined Bcast): before on each node, between the leaders, after
 * on each node; each phase a collective at a size. */
enum { KCOLL_SZ_NONE, KCOLL_SZ_ZERO, KCOLL_SZ_B, KCOLL_SZ_QB, KCOLL_SZ_PB };
typedef struct {
    kcoll_coll_t coll;
    int sz; /* KCOLL_SZ_*: absent, 0, the call's bytes, q or p times them */
} kcoll_nodes_phase_t;
typedef struct {
    kcoll_coll_t c;
    kcoll_nodes_phase_t ph[3];
} kcoll_nodes_plan_t;
#define KCOLL_NP(c, s) {KCOLL_COLL_##c, KCOLL_SZ_##s}
static const kcoll_nodes_plan_t kcoll_nodes_plans[] = {
    {KCOLL_COLL_BARRIER,
     {KCOLL_NP(BARRIER, ZERO), KCOLL_NP(BARRIER, ZERO), KCOLL_NP(BARRIER, ZERO)}},
    {KCOLL_COLL_REDUCE, {KCOLL_NP(REDUCE, B), KCOLL_NP(REDUCE, B), KCOLL_NP(REDUCE, NONE)}},
    {KCOLL_COLL_ALLREDUCE, {KCOLL_NP(REDUCE, B), KCOLL_NP(ALLREDUCE, B), KCOLL_NP(BCAST, B)}},
    {KCOLL_COLL_REDUCE_SCATTER,
     {KCOLL_NP(REDUCE, PB), KCOLL_NP(ALLREDUCE, PB), KCOLL_NP(SCATTER, B)}},
    {KCOLL_COLL_REDUCE_SCATTER_BLOCK,
     {KCOLL_NP(REDUCE, PB), KCOLL_NP(ALLREDUCE, PB), KCOLL_NP(SCATTER, B)}},
    {KCOLL_COLL_GATHER, {KCOLL_NP(GATHER, B), KCOLL_NP(GATHER, QB), KCOLL_NP(GATHER, NONE)}},
    {KCOLL_COLL_SCATTER, {KCOLL_NP(SCATTER, NONE), KCOLL_NP(SCATTER, QB), KCOLL_NP(SCATTER, B)}},
    /* (at the mean block; plus their agreement, below) */
    {KCOLL_COLL_GATHERV, {KCOLL_NP(GATHER, B), KCOLL_NP(GATHER, QB), KCOLL_NP(GATHER, NONE)}},
    {KCOLL_COLL_SCATTERV,
     {KCOLL_NP(SCATTER, NONE), KCOLL_NP(SCATTER, QB), KCOLL_NP(SCATTER, B)}},
    {KCOLL_COLL_ALLGATHER, {KCOLL_NP(GATHER, B), KCOLL_NP(ALLGATHER, QB), KCOLL_NP(BCAST, PB)}},
    {KCOLL_COLL_ALLGATHERV, {KCOLL_NP(GATHER, B), KCOLL_NP(ALLGATHER, QB), KCOLL_NP(BCAST, PB)}},
};
#undef KCOLL_NP

/* The leaders' layout (0 where it is not a candidate). */
static void kcoll_nodes_leaders(const kcoll_nshape_t *s, kcoll_coll_t c, size_t bytes,
                                size_t segment, kcoll_nodes_lprice_t *out)
{
    const kcoll_machine_t *m = s->m;
    const int N = s->N, q = s->qmax;
    out->coll[0] = out->coll[1] = out->coll[2] = KCOLL_NCOLL;
    if (N == 1) { /* one node: no hierarchy, kcoll's flat call */
        out->before = kcoll_nodes_on(m, c, q, bytes);
        out->t = out->before;
        out->coll[0] = c;
        out->priced = 1;
        return;
    }
    if (c == KCOLL_COLL_BCAST) {
        const size_t b = bytes;
        size_t seg = segment && segment < b && q > 1 ? segment : b;
        double k = seg ? ceil((double)b / (double)seg) : 1;
        const double ph[3] = {0, kcoll_nodes_net(m, c, N, seg),
                              kcoll_nodes_on_max(s, c, (double)seg, 0)};
        out->after = ph[2];
        out->net = kcoll_nodes_pipe((size_t)k, ph, ph) - out->after;
        double root = kcoll_nodes_on(m, c, s->q0, b); /* the root's node, meanwhile */
        out->t = out->net + out->after > root ? out->net + out->after : root;
        out->coll[1] = out->coll[2] = c;
        out->priced = 1;
        return;
    }
    const kcoll_nodes_plan_t *plan = NULL;
    for (size_t i = 0; i < sizeof kcoll_nodes_plans / sizeof kcoll_nodes_plans[0]; i++)
        if (kcoll_nodes_plans[i].c == c)
            plan = &kcoll_nodes_plans[i];
    if (!plan) /* Alltoall(v): lanes only */
        return;
    /* a node's run between the leaders: what the root's node receives
     * (sends) from (to) each other node on average, and for Allgather(v)
     * what the emptiest node receives (q b on even nodes) */
    const int rooted = c == KCOLL_COLL_GATHER || c == KCOLL_COLL_SCATTER ||
                       c == KCOLL_COLL_GATHERV || c == KCOLL_COLL_SCATTERV;
    const int others = s->p - (rooted ? s->q0 : s->qmin);
    const size_t run = (size_t)ceil((double)others * (double)bytes / (N - 1));
    const size_t size[] = {[KCOLL_SZ_ZERO] = 0, [KCOLL_SZ_B] = bytes, [KCOLL_SZ_QB] = run,
                           [KCOLL_SZ_PB] = (size_t)s->p * bytes};
    const kcoll_nodes_phase_t *ph = plan->ph;
    if (ph[0].sz != KCOLL_SZ_NONE) {
        out->before = kcoll_nodes_on_max(s, ph[0].coll, (double)size[ph[0].sz], 0);
        out->coll[0] = ph[0].coll;
    }
    out->net = kcoll_nodes_net(m, ph[1].coll, N, size[ph[1].sz]);
    out->coll[1] = ph[1].coll;
    if (ph[2].sz != KCOLL_SZ_NONE) {
        out->after = kcoll_nodes_on_max(s, ph[2].coll, (double)size[ph[2].sz], 0);
        out->coll[2] = ph[2].coll;
    }
    /* a Gatherv's or Scatterv's agreement (span/run.c): the host's Bcast
     * of the root's counts and displacements (2 p + 1 words) over every
     * rank */
    if (c == KCOLL_COLL_GATHERV || c == KCOLL_COLL_SCATTERV)
        out->agree = kcoll_host_formula_nodes(m, KCOLL_COLL_BCAST, N, s->ppn, 8.0 * (2 * s->p + 1),
                                              KCOLL_RCLASS_DOUBLE, 1);
    out->t = out->agree + out->before + out->net + out->after;
    out->priced = 1;
}

/* The lanes' layouts (the walk-through's list), as data: per collective,
 * before, between nodes and after, each a collective at a size, on a set
 * of nodes. Sizes: the share s = n / L, p b / L (a node's reduce-scatter
 * of the whole run), the call's bytes b, N b (one rank's blocks from every
 * node), L b (a node's blocks for one rank). */
enum {
    KCOLL_LSZ_NONE,
    KCOLL_LSZ_SHARE,
    KCOLL_LSZ_PSHARE,
    KCOLL_LSZ_B,
    KCOLL_LSZ_NB,
    KCOLL_LSZ_LB
};
enum {
    KCOLL_LON_EACH, /* every node, times the lanes its busiest rank carries */
    KCOLL_LON_ROOT  /* the root's node only, likewise */
};
typedef struct {
    kcoll_coll_t coll; /* KCOLL_NCOLL: the call's own collective */
    int sz, on;        /* KCOLL_LSZ_*, KCOLL_LON_* */
} kcoll_lanes_phase_t;
typedef struct {
    kcoll_coll_t c;
    kcoll_lanes_phase_t ph[3];
} kcoll_lanes_plan_t;
#define KCOLL_LP(c, s, o) {KCOLL_COLL_##c, KCOLL_LSZ_##s, KCOLL_LON_##o}
#define KCOLL_LP_NET(s) {KCOLL_NCOLL, KCOLL_LSZ_##s, KCOLL_LON_EACH}
#define KCOLL_LP_NONE {KCOLL_NCOLL, KCOLL_LSZ_NONE, KCOLL_LON_EACH}
static const kcoll_lanes_plan_t kcoll_lanes_plans[] = {
    {KCOLL_COLL_ALLREDUCE,
     {KCOLL_LP(REDUCE_SCATTER_BLOCK, SHARE, EACH), KCOLL_LP_NET(SHARE),
      KCOLL_LP(ALLGATHER, SHARE, EACH)}},
    {KCOLL_COLL_REDUCE,
     {KCOLL_LP(REDUCE_SCATTER_BLOCK, SHARE, EACH), KCOLL_LP_NET(SHARE),
      KCOLL_LP(GATHER, SHARE, ROOT)}},
    {KCOLL_COLL_REDUCE_SCATTER,
     {KCOLL_LP(REDUCE_SCATTER_BLOCK, PSHARE, EACH), KCOLL_LP_NET(B), KCOLL_LP_NONE}},
    {KCOLL_COLL_REDUCE_SCATTER_BLOCK,
     {KCOLL_LP(REDUCE_SCATTER_BLOCK, PSHARE, EACH), KCOLL_LP_NET(B), KCOLL_LP_NONE}},
    {KCOLL_COLL_ALLGATHER, {KCOLL_LP_NONE, KCOLL_LP_NET(B), KCOLL_LP(ALLGATHER, NB, EACH)}},
    {KCOLL_COLL_ALLGATHERV, {KCOLL_LP_NONE, KCOLL_LP_NET(B), KCOLL_LP(ALLGATHER, NB, EACH)}},
    /* (on the root's node the ranks read the shares they lack from their
     * carriers, bcast_lanes.c: the allgather's bytes per rank, the root
     * itself reading none; priced as the allgather, an upper bound) */
    {KCOLL_COLL_BCAST,
     {KCOLL_LP(SCATTER, SHARE, ROOT), KCOLL_LP_NET(SHARE), KCOLL_LP(ALLGATHER, SHARE, EACH)}},
    {KCOLL_COLL_ALLTOALL, {KCOLL_LP(ALLTOALL, NB, EACH), KCOLL_LP_NET(LB), KCOLL_LP_NONE}},
    /* (at its largest block, an upper bound; plus its agreement, below) */
    {KCOLL_COLL_ALLTOALLV, {KCOLL_LP(ALLTOALL, NB, EACH), KCOLL_LP_NET(LB), KCOLL_LP_NONE}},
};
#undef KCOLL_LP
#undef KCOLL_LP_NET
#undef KCOLL_LP_NONE

/* One on-node phase of the lanes' plan, the slowest node's. */
static double kcoll_lanes_on(const kcoll_nshape_t *s, const kcoll_lanes_phase_t *ph, double x)
{
    const double L = s->qmax;
    if (ph->on == KCOLL_LON_ROOT)
        return kcoll_nodes_on(s->m, ph->coll, s->q0, (size_t)ceil(ceil(L / s->q0) * x));
    return kcoll_nodes_on_max(s, ph->coll, x, 1);
}

/* Phase i (0 before, 1 between nodes, 2 after) of a lanes plan for c,
 * ph, at x bytes of its size (0 where the plan has no such phase); the
 * phase between nodes sets *rounds. */
static double kcoll_lanes_phase(const kcoll_nshape_t *s, kcoll_coll_t c,
                                const kcoll_lanes_phase_t *ph, int i, double x, int *rounds)
{
    if (ph->sz == KCOLL_LSZ_NONE)
        return 0;
    return i == 1 ? kcoll_nodes_lanes_net(s, c, x, rounds) : kcoll_lanes_on(s, ph, x);
}

/* The lanes' layout (priced: 0 where it is not a candidate). */
static void kcoll_nodes_lanes(const kcoll_nshape_t *s, kcoll_coll_t c, size_t bytes,
                              size_t segment, kcoll_nodes_lprice_t *out, int *rounds)
{
    const double L = s->qmax, b = (double)bytes;
    out->coll[0] = out->coll[1] = out->coll[2] = KCOLL_NCOLL;
    if (s->N == 1)
        return;
    const kcoll_lanes_plan_t *plan = NULL;
    for (size_t i = 0; i < sizeof kcoll_lanes_plans / sizeof kcoll_lanes_plans[0]; i++)
        if (kcoll_lanes_plans[i].c == c)
            plan = &kcoll_lanes_plans[i];
    if (!plan)
        return;
    const double size[] = {[KCOLL_LSZ_NONE] = 0, [KCOLL_LSZ_SHARE] = b / L,
                           [KCOLL_LSZ_PSHARE] = (double)s->p * b / L, [KCOLL_LSZ_B] = b,
                           [KCOLL_LSZ_NB] = s->N * b, [KCOLL_LSZ_LB] = L * b};
    double *t[3] = {&out->before, &out->net, &out->after};
    for (int i = 0; i < 3; i++) {
        const kcoll_lanes_phase_t *ph = &plan->ph[i];
        if (ph->sz == KCOLL_LSZ_NONE)
            continue;
        *t[i] = kcoll_lanes_phase(s, c, ph, i, size[ph->sz], rounds);
        out->coll[i] = i == 1 ? c : ph->coll;
        if (i != 1 && ph->on == KCOLL_LON_ROOT)
            out->rootnode |= 1u << i;
    }
    /* the reduce-scatters' copy of the vector (p blocks) in lane order
     * first (reduce_scatter_lanes.c, step 0) */
    if (c == KCOLL_COLL_REDUCE_SCATTER_BLOCK || c == KCOLL_COLL_REDUCE_SCATTER)
        out->before += s->p * s->m->copy_alpha + s->p * b * s->m->copy_beta;
    /* an Alltoallv's agreement (span/run.c): the host's Allreduce of two
     * words over every rank, then its Allgather of every rank's send
     * layout (2 p words) on the fullest node */
    if (c == KCOLL_COLL_ALLTOALLV)
        out->agree = kcoll_host_formula_nodes(s->m, KCOLL_COLL_ALLREDUCE, s->N, s->ppn, 16,
                                                KCOLL_RCLASS_DOUBLE, 1) +
                       kcoll_host_formula_nodes(s->m, KCOLL_COLL_ALLGATHER, 1, &s->qmax,
                                                16.0 * s->p, KCOLL_RCLASS_DOUBLE, 1);
    /* in pieces of the segment (allgather_lanes.c, and allreduce_lanes.c,
     * reduce_lanes.c and bcast_lanes.c, as they cut them): piece i
     * crosses the network while the node works on the pieces before and
     * after it (kcoll_nodes_pipe) */
    const double seg = (double)segment;
    if ((c == KCOLL_COLL_ALLGATHER || c == KCOLL_COLL_ALLGATHERV || c == KCOLL_COLL_ALLREDUCE ||
         c == KCOLL_COLL_REDUCE || c == KCOLL_COLL_BCAST) &&
        segment && L > 1 && seg < b) {
        const double k = ceil(b / seg), last = b - (k - 1) * seg;
        /* a piece's phases at x bytes of the call (the plan's sizes scale
         * with the call's bytes) */
        double ph[2][3];
        for (int w = 0; w < 2; w++) {
            const double x = w ? last : seg, r = x / b;
            for (int i = 0; i < 3; i++) {
                int rr;
                ph[w][i] = kcoll_lanes_phase(s, c, &plan->ph[i], i, size[plan->ph[i].sz] * r, &rr);
            }
        }
        /* only where the pieces pay: each costs its phases' and host
         * calls' fixed costs, which a node whose phases dominate (many
         * ranks) does not win back (alike on every rank: the runtime
         * takes the pick's, kcoll_nodes_pick) */
        const double cut = kcoll_nodes_pipe((size_t)k, ph[0], ph[1]);
        if (cut < out->before + out->net + out->after) {
            out->before = ph[0][0];
            out->after = ph[1][2];
            out->net = cut - out->before - out->after;
            out->pieces = (int)k;
        }
    }
    out->t = out->agree + out->before + out->net + out->after;
    out->priced = 1;
}

/* Price the layouts in `which` (KCOLL_NODES_BIT; the host's always). */
static int kcoll_nodes_price_some(const kcoll_machine_t *m, kcoll_coll_t c, const int *ppn,
                                  int nodes, size_t bytes, size_t segment, unsigned which,
                                  kcoll_nodes_price_t *out)
{
    memset(out, 0, sizeof *out);
    if (nodes < 1 || !ppn)
        return -1;
    kcoll_nshape_t s = {.m = m, .ppn = ppn, .N = nodes, .qmax = ppn[0], .qmin = ppn[0],
                        .q0 = ppn[0]};
    for (int k = 0; k < nodes; k++) {
        if (ppn[k] < 1)
            return -1;
        s.p += ppn[k];
        s.qmax = ppn[k] > s.qmax ? ppn[k] : s.qmax;
        s.qmin = ppn[k] < s.qmin ? ppn[k] : s.qmin;
    }
    out->lanes = s.qmax;
    out->rounds = 1;
    kcoll_nodes_lprice_t *h = &out->lay[KCOLL_NODES_HOST];
    h->priced = 1;
    h->t = kcoll_host_formula_nodes(m, c, nodes, ppn, (double)bytes, KCOLL_RCLASS_DOUBLE, 1);
    h->coll[0] = h->coll[1] = h->coll[2] = KCOLL_NCOLL;
    if (which & KCOLL_NODES_BIT(KCOLL_NODES_LEADERS))
        kcoll_nodes_leaders(&s, c, bytes, segment, &out->lay[KCOLL_NODES_LEADERS]);
    if (which & KCOLL_NODES_BIT(KCOLL_NODES_LANES))
        kcoll_nodes_lanes(&s, c, bytes, segment, &out->lay[KCOLL_NODES_LANES], &out->rounds);
    return 0;
}

int kcoll_price_nodes_counts(const kcoll_machine_t *m, kcoll_coll_t c, const int *ppn, int nodes,
                             size_t bytes, size_t segment, kcoll_nodes_price_t *out)
{
    return kcoll_nodes_price_some(m, c, ppn, nodes, bytes, segment, KCOLL_NODES_ALL, out);
}

int kcoll_price_nodes(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, int ppn, size_t bytes,
                      size_t segment, kcoll_nodes_price_t *out)
{
    memset(out, 0, sizeof *out);
    if (nodes < 1 || ppn < 1)
        return -1;
    int *counts = malloc((size_t)nodes * sizeof *counts);
    if (!counts)
        return -1;
    for (int k = 0; k < nodes; k++)
        counts[k] = ppn;
    int rc = kcoll_price_nodes_counts(m, c, counts, nodes, bytes, segment, out);
    free(counts);
    return rc;
}

kcoll_nodes_layout_t kcoll_nodes_pick(const kcoll_machine_t *m, kcoll_coll_t c, const int *ppn,
                                      int nodes, size_t bytes, size_t segment, unsigned allowed,
                                      size_t *cut)
{
    kcoll_nodes_price_t np;
    if (cut)
        *cut = 0;
    if (kcoll_nodes_price_some(m, c, ppn, nodes, kcoll_class_bytes(bytes), segment, allowed, &np))
        return KCOLL_NODES_HOST;
    if (np.lanes <= 1) /* one rank on every node */
        return KCOLL_NODES_HOST;
    kcoll_nodes_layout_t best = KCOLL_NODES_HOST;
    double bar = np.lay[KCOLL_NODES_HOST].t - m->call; /* a composition's bookkeeping */
    for (int l = KCOLL_NODES_LEADERS; l < KCOLL_NODES_NLAYOUTS; l++)
        if ((allowed & KCOLL_NODES_BIT(l)) && np.lay[l].priced && np.lay[l].t < bar) {
            best = (kcoll_nodes_layout_t)l;
            bar = np.lay[l].t;
        }
    if (cut && best == KCOLL_NODES_LANES && np.lay[KCOLL_NODES_LANES].pieces > 1)
        *cut = segment;
    return best;
}

unsigned kcoll_nodes_runs(kcoll_coll_t c, const int *ppn, int nodes)
{
    if (!kcoll_cluster_lanes_fit(ppn, nodes))
        return KCOLL_NODES_BIT(KCOLL_NODES_HOST) | KCOLL_NODES_BIT(KCOLL_NODES_LEADERS);
    const unsigned lanes = c == KCOLL_COLL_ALLREDUCE || c == KCOLL_COLL_REDUCE ||
                                   c == KCOLL_COLL_ALLGATHER || c == KCOLL_COLL_ALLGATHERV ||
                                   c == KCOLL_COLL_BCAST || c == KCOLL_COLL_REDUCE_SCATTER ||
                                   c == KCOLL_COLL_REDUCE_SCATTER_BLOCK ||
                                   c == KCOLL_COLL_ALLTOALL || c == KCOLL_COLL_ALLTOALLV
                               ? KCOLL_NODES_BIT(KCOLL_NODES_LANES)
                               : 0u;
    return KCOLL_NODES_BIT(KCOLL_NODES_HOST) | KCOLL_NODES_BIT(KCOLL_NODES_LEADERS) | lanes;
}

size_t kcoll_nodes_segment(int64_t v)
{
    return v < 0 ? (size_t)512 << 10 : (size_t)v;
}
