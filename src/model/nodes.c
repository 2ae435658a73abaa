/* Communicators that span nodes, priced.
 *
 * Walk-through. kcoll composes a call on such a communicator
 * (pmpi/hier*.c, docs/hierarchy.md) of on-node phases, which are ordinary
 * kcoll calls on each node's communicator, and one inter-node phase, the
 * host MPI's collective on the leaders' communicator (local rank 0 of
 * every node). The price follows the composition, for N nodes of q ranks
 * placed in blocks, root 0 (a leader):
 *
 *   Barrier      on(Barrier) + net(Barrier, N) + on(Barrier)
 *   Bcast        max(on(Bcast, n), pipeline): segments of s bytes cross
 *                the network while the previous one spreads on its node:
 *                net(s) + (k - 1) max(net(s), on(s)) + on(s), k = n / s
 *   Reduce       on(Reduce, n) + net(Reduce, n)
 *   Allreduce    on(Reduce, n) + net(Allreduce, n) + on(Bcast, n)
 *   Reduce_scatter(_block), block b: on(Reduce, p b) + net(Allreduce,
 *                p b) + on(Scatter, b)
 *   Gather       on(Gather, b) + net(Gather, q b)
 *   Scatter      net(Scatter, q b) + on(Scatter, b)
 *   Allgather(v) on(Gather, b) + net(Allgather, q b) + on(Bcast, p b)
 *
 * on(...) is what the model gives a one-node call of q ranks (the
 * selector's pick: kcoll's cheapest algorithm or the host MPI on the
 * node); net(...) the textbook cost of the host MPI's algorithm over N
 * ranks (model/cost.c) with the network's latency and per-byte cost,
 * net_alpha and net_beta. A node of one rank skips its on-node phases.
 * Alltoall(v), Gatherv and Scatterv are not composed: the host MPI runs
 * them whole, so their hierarchical price is the flat one.
 *
 * Choosing (kcoll_nodes_compose): a call is composed where its price is
 * at most the host's alone (KCOLL_HIER=auto, pmpi/hier.c), per size
 * class, so that kcoll across nodes is never predicted slower than the
 * host MPI alone; but never with one rank on every node, where the
 * composition is the host's own call on the same ranks plus kcoll's
 * bookkeeping, which the formulas above do not price (a tie; measured at
 * 2 nodes x 1 rank: 0.3-1.1 us, 0.87-0.93x the host's Allgather from 8 B
 * to 16 KiB, docs/hierarchy.md).
 *
 * Flat: the host MPI alone over all p = N q ranks, the textbook formulas
 * of model/cost.c (kcoll_host_formula) with two kinds of messages: inside
 * a node at the host's own on-node alpha and beta, between nodes at the
 * network's. Restrictions: blocked placement, every node alike (q ranks),
 * no overlap of the host's rounds, one process per node driving the
 * network (a 100 Gb/s link is often more than one process can fill: a
 * real host MPI may do better with several); contention inside a node
 * only as the on-node model prices it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "model/nodes.h"
#include "model/select.h"

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

/* The host MPI over the N leaders, on the network. */
static double kcoll_nodes_net(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, size_t bytes)
{
    return kcoll_host_formula(m, c, nodes, 1, (double)bytes, KCOLL_RCLASS_DOUBLE);
}

/* The compositions of pmpi/hier*.c (the walk-through's list, but the
 * pipelined Bcast): before on each node, between the leaders, after on
 * each node; each phase a collective at a size. */
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
    {KCOLL_COLL_ALLGATHER, {KCOLL_NP(GATHER, B), KCOLL_NP(ALLGATHER, QB), KCOLL_NP(BCAST, PB)}},
    {KCOLL_COLL_ALLGATHERV, {KCOLL_NP(GATHER, B), KCOLL_NP(ALLGATHER, QB), KCOLL_NP(BCAST, PB)}},
};
#undef KCOLL_NP

int kcoll_price_nodes(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, int ppn,
                      size_t bytes, size_t segment, kcoll_nodes_price_t *out)
{
    memset(out, 0, sizeof *out);
    if (nodes < 1 || ppn < 1)
        return -1;
    const int N = nodes, q = ppn, p = N * q;
    out->flat = kcoll_host_formula(m, c, N, q, (double)bytes, KCOLL_RCLASS_DOUBLE);
    if (N == 1) { /* one node: no hierarchy, kcoll's flat call */
        out->before = kcoll_nodes_on(m, c, q, bytes);
        out->hier = out->before;
        out->composed = 1;
        return 0;
    }
    const size_t b = bytes, qb = (size_t)q * bytes, pb = (size_t)p * bytes;
    out->composed = 1;
    if (c == KCOLL_COLL_BCAST) {
        size_t s = segment && segment < b && q > 1 ? segment : b;
        double k = s ? ceil((double)b / (double)s) : 1;
        double ts = kcoll_nodes_net(m, c, N, s), os = kcoll_nodes_on(m, c, q, s);
        out->net = ts + (k - 1) * (ts > os ? ts : os);
        out->after = os;
        double root = kcoll_nodes_on(m, c, q, b); /* the root's node, meanwhile */
        out->hier = out->net + os > root ? out->net + os : root;
        return 0;
    }
    const kcoll_nodes_plan_t *plan = NULL;
    for (size_t i = 0; i < sizeof kcoll_nodes_plans / sizeof kcoll_nodes_plans[0]; i++)
        if (kcoll_nodes_plans[i].c == c)
            plan = &kcoll_nodes_plans[i];
    if (!plan) { /* Alltoall(v), Gatherv, Scatterv: the host MPI, whole */
        out->composed = 0;
        out->hier = out->flat;
        return 0;
    }
    const size_t size[] = {[KCOLL_SZ_ZERO] = 0, [KCOLL_SZ_B] = b, [KCOLL_SZ_QB] = qb,
                           [KCOLL_SZ_PB] = pb};
    const kcoll_nodes_phase_t *ph = plan->ph;
    if (ph[0].sz != KCOLL_SZ_NONE)
        out->before = kcoll_nodes_on(m, ph[0].coll, q, size[ph[0].sz]);
    out->net = kcoll_nodes_net(m, ph[1].coll, N, size[ph[1].sz]);
    if (ph[2].sz != KCOLL_SZ_NONE)
        out->after = kcoll_nodes_on(m, ph[2].coll, q, size[ph[2].sz]);
    out->hier = out->before + out->net + out->after;
    return 0;
}

int kcoll_nodes_compose(const kcoll_machine_t *m, kcoll_coll_t c, int nodes, int ppn,
                        size_t bytes, size_t segment)
{
    kcoll_nodes_price_t np;
    if (kcoll_price_nodes(m, c, nodes, ppn, kcoll_class_bytes(bytes), segment, &np) ||
        !np.composed)
        return 0;
    return ppn > 1 && np.hier <= np.flat;
}
