/* The price of communicators that span nodes (model/nodes.c): every
 * layout of a call across nodes. The leaders' composition is the sum of
 * its phases, each priced as the model prices a one-node call or as the
 * host formula over the nodes' leaders with the network's terms; the
 * lanes' likewise, with the phase between nodes on 1/L of the vector per
 * lane, L lanes sharing the link, and uneven nodes carrying lanes in
 * rounds; the flat host price reduces to the one-node host formula on one
 * node and to the network's formula with one rank per node, and shares
 * the node's memory bandwidth where the machine has a limit; the runtime's
 * layouts never include lanes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/cost.h"
#include "model/machine.h"
#include "model/nodes.h"
#include "model/select.h"

#define HOST KCOLL_NODES_HOST
#define LEAD KCOLL_NODES_LEADERS
#define LANE KCOLL_NODES_LANES

static kcoll_machine_t hand(void)
{
    kcoll_machine_t m;
    memset(&m, 0, sizeof m);
    m.alpha = 1e-6;
    m.beta = m.beta_write = 1e-10;
    m.l = 0.1e-6;
    m.page = 4096;
    m.gamma_intra.poly[1] = 1;
    m.gamma_inter = m.gamma_intra;
    m.copy_beta = 0.5e-10;
    for (int k = 0; k < KCOLL_NRCLASS; k++)
        m.reduce_beta[k] = 0.2e-10;
    m.host_alpha = 0.5e-6;
    m.host_beta = 2e-10;
    m.net_alpha = 2e-6;
    m.net_beta = 0.8e-10;
    return m;
}

static int near(double got, double want)
{
    return fabs(got - want) <= 1e-9 * (fabs(want) + 1e-12) + 1e-15;
}

/* What the selector's model gives a one-node call. */
static double on_node(const kcoll_machine_t *m, kcoll_coll_t c, int q, size_t bytes)
{
    kcoll_pcall_t pc = {.coll = c, .p = q, .bytes = bytes, .esize = 8,
                        .rclass = KCOLL_RCLASS_DOUBLE};
    static kcoll_cand_t cand[KCOLL_MAX_CANDS];
    int n = kcoll_model_rank(m, &pc, 1, cand, KCOLL_MAX_CANDS);
    return n > 0 ? cand[0].t : -1;
}

/* The host formula over p ranks with the given latency and per-byte cost. */
static double host(const kcoll_machine_t *m, kcoll_coll_t c, int p, size_t bytes, double a,
                   double b)
{
    kcoll_machine_t h = *m;
    h.host_alpha = a;
    h.host_beta = b;
    memset(h.nhost, 0, sizeof h.nhost);
    kcoll_pcall_t pc = {.coll = c, .p = p, .bytes = bytes, .esize = 8,
                        .rclass = KCOLL_RCLASS_DOUBLE};
    return kcoll_price_host(&h, &pc);
}

/* One lane's host collective over N nodes at x bytes, its per-byte
 * network cost `flows` times the link's. */
static double lane(const kcoll_machine_t *m, kcoll_coll_t c, int N, double x, int flows)
{
    return host(m, c, N, (size_t)x, m->net_alpha, m->net_beta * flows);
}

/* The leaders' composition and the flat host price, as before lanes. */
static void leaders(const kcoll_machine_t *m)
{
    const size_t n = 1 << 20;
    kcoll_nodes_price_t np;
    const kcoll_nodes_lprice_t *h = &np.lay[HOST], *l = &np.lay[LEAD];

    CHECK(kcoll_price_nodes(m, KCOLL_COLL_BCAST, 0, 4, n, 0, &np) == -1, "0 nodes refused");
    CHECK(kcoll_price_nodes(m, KCOLL_COLL_BCAST, 2, 0, n, 0, &np) == -1, "0 ranks refused");
    const int hole[] = {4, 0, 4};
    CHECK(kcoll_price_nodes_counts(m, KCOLL_COLL_BCAST, hole, 3, n, 0, &np) == -1,
          "a node of 0 ranks refused");

    /* Allreduce = reduce on the node, allreduce of the leaders over the
     * network, broadcast on the node */
    CHECK(kcoll_price_nodes(m, KCOLL_COLL_ALLREDUCE, 4, 8, n, 0, &np) == 0, "priced");
    CHECK(l->priced && near(l->before, on_node(m, KCOLL_COLL_REDUCE, 8, n)) &&
              near(l->net, host(m, KCOLL_COLL_ALLREDUCE, 4, n, m->net_alpha, m->net_beta)) &&
              near(l->after, on_node(m, KCOLL_COLL_BCAST, 8, n)) &&
              near(l->t, l->before + l->net + l->after) && l->coll[0] == KCOLL_COLL_REDUCE &&
              l->coll[1] == KCOLL_COLL_ALLREDUCE && l->coll[2] == KCOLL_COLL_BCAST,
          "Allreduce 4 x 8: %.3f = %.3f + %.3f + %.3f us", l->t * 1e6, l->before * 1e6,
          l->net * 1e6, l->after * 1e6);
    /* Gather: the leaders move their node's q blocks */
    kcoll_price_nodes(m, KCOLL_COLL_GATHER, 3, 4, 4096, 0, &np);
    CHECK(near(l->before, on_node(m, KCOLL_COLL_GATHER, 4, 4096)) &&
              near(l->net, host(m, KCOLL_COLL_GATHER, 3, 4 * 4096, m->net_alpha, m->net_beta)) &&
              l->after == 0 && l->coll[2] == KCOLL_NCOLL,
          "Gather 3 x 4");
    /* uneven: the slowest node's on-node phase; the root's node receives
     * 2 + 3 blocks from the two others, 2.5 each on average */
    const int un[] = {4, 2, 3};
    kcoll_price_nodes_counts(m, KCOLL_COLL_GATHER, un, 3, 4096, 0, &np);
    double g4 = on_node(m, KCOLL_COLL_GATHER, 4, 4096), g2 = on_node(m, KCOLL_COLL_GATHER, 2, 4096);
    double g3 = on_node(m, KCOLL_COLL_GATHER, 3, 4096);
    CHECK(near(l->before, fmax(g4, fmax(g2, g3))) &&
              near(l->net, host(m, KCOLL_COLL_GATHER, 3, 10240, m->net_alpha, m->net_beta)),
          "Gather 4+2+3: the slowest node, the other nodes' mean run");
    /* Allgather: the emptiest node's leader receives 4 + 3 blocks */
    kcoll_price_nodes_counts(m, KCOLL_COLL_ALLGATHER, un, 3, 4096, 0, &np);
    CHECK(near(l->net, host(m, KCOLL_COLL_ALLGATHER, 3, 14336, m->net_alpha, m->net_beta)),
          "Allgather 4+2+3: the emptiest node's runs");
    /* one rank per node: no on-node phase, the network's host formula */
    kcoll_price_nodes(m, KCOLL_COLL_ALLREDUCE, 4, 1, n, 0, &np);
    double net4 = host(m, KCOLL_COLL_ALLREDUCE, 4, n, m->net_alpha, m->net_beta);
    CHECK(l->before == 0 && l->after == 0 && near(l->t, net4), "4 x 1: the leaders alone");
    CHECK(near(h->t, net4), "4 x 1: flat is the network's formula: %.3f against %.3f us",
          h->t * 1e6, net4 * 1e6);
    /* one node: kcoll's one-node call, and the host's on-node formula */
    static const kcoll_coll_t all[] = {
        KCOLL_COLL_BARRIER, KCOLL_COLL_BCAST,     KCOLL_COLL_SCATTER,
        KCOLL_COLL_GATHER,  KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLTOALL,
        KCOLL_COLL_REDUCE,  KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE_SCATTER_BLOCK};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        size_t b = all[i] == KCOLL_COLL_BARRIER ? 0 : 65536;
        kcoll_price_nodes(m, all[i], 1, 6, b, 0, &np);
        CHECK(near(h->t, host(m, all[i], 6, b, m->host_alpha, m->host_beta)),
              "%s 1 x 6: flat %.3f us, the host formula %.3f us", kcoll_coll_name(all[i]),
              h->t * 1e6, host(m, all[i], 6, b, m->host_alpha, m->host_beta) * 1e6);
        CHECK(near(l->t, on_node(m, all[i], 6, b)), "%s 1 x 6: kcoll's one-node call",
              kcoll_coll_name(all[i]));
        CHECK(!np.lay[LANE].priced, "%s 1 x 6: no lanes on one node", kcoll_coll_name(all[i]));
    }
    /* the pipelined broadcast: k = 4 segments */
    const size_t s = n / 4;
    kcoll_price_nodes(m, KCOLL_COLL_BCAST, 4, 8, n, s, &np);
    double ts = host(m, KCOLL_COLL_BCAST, 4, s, m->net_alpha, m->net_beta);
    double os = on_node(m, KCOLL_COLL_BCAST, 8, s), root = on_node(m, KCOLL_COLL_BCAST, 8, n);
    double pipe = ts + 3 * (ts > os ? ts : os) + os;
    CHECK(near(l->net + l->after, pipe) && near(l->t, pipe > root ? pipe : root),
          "Bcast 4 x 8 in 4 segments: %.3f us, want %.3f", l->t * 1e6,
          (pipe > root ? pipe : root) * 1e6);
    const double piped = l->t;
    kcoll_price_nodes(m, KCOLL_COLL_BCAST, 4, 8, n, 0, &np);
    CHECK(piped < l->t, "segments overlap the network with the nodes: %.3f < %.3f us",
          piped * 1e6, l->t * 1e6);
    /* Alltoall: lanes only. 4 x 8, 4 KiB blocks: each rank collects its
     * node's 8 x 4 blocks for its lane (an on-node Alltoall of 4 x 4 KiB
     * blocks), then the 8 lanes exchange 8-block runs among 4 nodes at
     * once, sharing each node's link */
    kcoll_price_nodes(m, KCOLL_COLL_ALLTOALL, 4, 8, 4096, 0, &np);
    const kcoll_nodes_lprice_t *a2a = &np.lay[LANE];
    const double a2a_on = on_node(m, KCOLL_COLL_ALLTOALL, 8, 4 * 4096);
    const double a2a_net = kcoll_host_formula_nodes(m, KCOLL_COLL_ALLTOALL, 4, NULL, 8 * 4096.0,
                                                    KCOLL_RCLASS_DOUBLE, 8);
    CHECK(!l->priced && a2a->priced && near(a2a->before, a2a_on) && near(a2a->net, a2a_net) &&
              a2a->after == 0 && near(a2a->t, a2a_on + a2a_net),
          "Alltoall 4 x 8 lanes: %.3f us (before %.3f, between %.3f), want %.3f + %.3f",
          a2a->t * 1e6, a2a->before * 1e6, a2a->net * 1e6, a2a_on * 1e6, a2a_net * 1e6);
    /* Alltoallv: the lanes of its largest block, plus its agreement: the
     * host's Allreduce of two words over the 32 ranks and its Allgather of
     * the send layouts (2 x 32 words a rank) on a node of 8 */
    const double a2a_t = a2a->t;
    kcoll_price_nodes(m, KCOLL_COLL_ALLTOALLV, 4, 8, 4096, 0, &np);
    const int eight[4] = {8, 8, 8, 8};
    const double agree =
        kcoll_host_formula_nodes(m, KCOLL_COLL_ALLREDUCE, 4, eight, 16, KCOLL_RCLASS_DOUBLE, 1) +
        kcoll_host_formula_nodes(m, KCOLL_COLL_ALLGATHER, 1, eight, 16.0 * 32, KCOLL_RCLASS_DOUBLE,
                                 1);
    CHECK(!l->priced && a2a->priced && near(a2a->agree, agree) && near(a2a->before, a2a_on) &&
              near(a2a->net, a2a_net) && near(a2a->t, a2a_t + agree),
          "Alltoallv 4 x 8 lanes: %.3f us (agreeing %.3f), want the Alltoall's %.3f + %.3f",
          a2a->t * 1e6, a2a->agree * 1e6, a2a_t * 1e6, agree * 1e6);
    /* Gatherv, Scatterv: the Gather's (Scatter's) leaders at the mean
     * block, plus their agreement: the host's Bcast of the root's layout
     * (2 x 32 + 1 words) over the 32 ranks; no lanes */
    const double bagree = kcoll_host_formula_nodes(m, KCOLL_COLL_BCAST, 4, eight, 8.0 * 65,
                                                   KCOLL_RCLASS_DOUBLE, 1);
    for (int g = 0; g < 2; g++) {
        kcoll_price_nodes(m, g ? KCOLL_COLL_SCATTER : KCOLL_COLL_GATHER, 4, 8, 4096, 0, &np);
        const double fixed = l->t;
        kcoll_price_nodes(m, g ? KCOLL_COLL_SCATTERV : KCOLL_COLL_GATHERV, 4, 8, 4096, 0, &np);
        CHECK(l->priced && !np.lay[LANE].priced && near(l->agree, bagree) &&
                  near(l->t, fixed + bagree),
              "%s 4 x 8 leaders: %.3f us (agreeing %.3f), want %.3f + %.3f",
              g ? "Scatterv" : "Gatherv", l->t * 1e6, l->agree * 1e6, fixed * 1e6, bagree * 1e6);
    }
    /* flat, by hand: Scatter 2 x 4, 1 KiB blocks: the root sends 4 blocks
     * over the network and 3 on its node, one round each way of the tree */
    kcoll_price_nodes(m, KCOLL_COLL_SCATTER, 2, 4, 1024, 0, &np);
    double want = 1 * m->net_alpha + 2 * m->host_alpha + 4 * 1024 * m->net_beta +
                  3 * 1024 * m->host_beta + 1024 * m->copy_beta;
    CHECK(near(h->t, want), "Scatter 2 x 4 flat: %.4f us, want %.4f", h->t * 1e6, want * 1e6);
    /* ... and uneven, 4 + 2 with the root on the node of 4: the root sends
     * 2 blocks over the network, 3 on its node, two rounds inside */
    const int sc[] = {4, 2};
    kcoll_price_nodes_counts(m, KCOLL_COLL_SCATTER, sc, 2, 1024, 0, &np);
    want = m->net_alpha + 2 * m->host_alpha + 2 * 1024 * m->net_beta + 3 * 1024 * m->host_beta +
           1024 * m->copy_beta;
    CHECK(near(h->t, want), "Scatter 4 + 2 flat: %.4f us, want %.4f", h->t * 1e6, want * 1e6);
}

/* Lanes, even and uneven. */
static void lanes(const kcoll_machine_t *m)
{
    const size_t n = 1 << 20;
    kcoll_nodes_price_t np;
    const kcoll_nodes_lprice_t *w = &np.lay[LANE];

    /* Allreduce 4 x 8: reduce-scatter on the node, 8 lanes' allreduces on
     * n / 8 each sharing the link, allgather on the node */
    kcoll_price_nodes(m, KCOLL_COLL_ALLREDUCE, 4, 8, n, 0, &np);
    CHECK(w->priced && np.lanes == 8 && np.rounds == 1 &&
              near(w->before, on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, n / 8)) &&
              near(w->net, lane(m, KCOLL_COLL_ALLREDUCE, 4, n / 8.0, 8)) &&
              near(w->after, on_node(m, KCOLL_COLL_ALLGATHER, 8, n / 8)) &&
              near(w->t, w->before + w->net + w->after) &&
              w->coll[0] == KCOLL_COLL_REDUCE_SCATTER_BLOCK &&
              w->coll[1] == KCOLL_COLL_ALLREDUCE && w->coll[2] == KCOLL_COLL_ALLGATHER,
          "lanes Allreduce 4 x 8: %.3f = %.3f + %.3f + %.3f us", w->t * 1e6, w->before * 1e6,
          w->net * 1e6, w->after * 1e6);
    /* the share is 1/L of the vector: a lane moves n / 8, not n */
    CHECK(w->net < lane(m, KCOLL_COLL_ALLREDUCE, 4, (double)n, 8),
          "lanes move 1/L of the vector each");
    const double even = w->t, even_net = w->net;

    /* a node of one rank carries all 8 lanes, one after another */
    const int one[] = {8, 8, 1, 8};
    kcoll_price_nodes_counts(m, KCOLL_COLL_ALLREDUCE, one, 4, n, 0, &np);
    CHECK(np.lanes == 8 && np.rounds == 8 &&
              near(w->net, 8 * lane(m, KCOLL_COLL_ALLREDUCE, 4, n / 8.0, 1)),
          "8 + 8 + 1 + 8: 8 rounds of one lane: %.3f us", w->net * 1e6);
    CHECK(w->t >= even && w->net >= even_net,
          "a node of one rank is not cheaper than the even shape: %.3f against %.3f us",
          w->t * 1e6, even * 1e6);
    /* a node of 4: two lanes on each of its ranks, rounds of 4 lanes */
    const int half[] = {8, 8, 4, 8};
    kcoll_price_nodes_counts(m, KCOLL_COLL_ALLREDUCE, half, 4, n, 0, &np);
    double b8 = on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, n / 8);
    double b4 = on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 4, n / 4);
    double a8 = on_node(m, KCOLL_COLL_ALLGATHER, 8, n / 8);
    double a4 = on_node(m, KCOLL_COLL_ALLGATHER, 4, n / 4);
    CHECK(np.rounds == 2 && near(w->before, fmax(b8, b4)) && near(w->after, fmax(a8, a4)) &&
              near(w->net, 2 * lane(m, KCOLL_COLL_ALLREDUCE, 4, n / 8.0, 4)),
          "8 + 8 + 4 + 8: 2 rounds of 4 lanes, the slowest node's phases");
    CHECK(w->t >= even, "8 + 8 + 4 + 8 not cheaper than 4 x 8");
    /* 8 lanes over nodes of 3: rounds of 3, 3 and 2 lanes */
    const int three[] = {8, 3};
    kcoll_price_nodes_counts(m, KCOLL_COLL_ALLREDUCE, three, 2, n, 0, &np);
    double r = 2 * lane(m, KCOLL_COLL_ALLREDUCE, 2, n / 8.0, 3) +
               lane(m, KCOLL_COLL_ALLREDUCE, 2, n / 8.0, 2);
    CHECK(np.rounds == 3 && near(w->net, r), "8 + 3: rounds of 3, 3, 2 lanes: %.3f, want %.3f us",
          w->net * 1e6, r * 1e6);

    /* in pieces of 3 n / 8 (two and a last of n / 4): per piece the
     * node's reduce-scatter b, the lanes' h and the node's allgather a;
     * the node runs b0, b1, a0 (once h0 is in), b2, a1, a2 and the
     * network h0, h1, h2, each once its b is done */
    {
        const double s = 3.0 * n / 8, l = n / 4.0;
        double full[3] = {on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, (size_t)(s / 8)),
                          lane(m, KCOLL_COLL_ALLREDUCE, 4, s / 8, 8),
                          on_node(m, KCOLL_COLL_ALLGATHER, 8, (size_t)(s / 8))};
        double last[3] = {on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, (size_t)(l / 8)),
                          lane(m, KCOLL_COLL_ALLREDUCE, 4, l / 8, 8),
                          on_node(m, KCOLL_COLL_ALLGATHER, 8, (size_t)(l / 8))};
        double node = full[0], h0 = node + full[1];                   /* b0, h0 */
        node += full[0];                                              /* b1 */
        const double h1 = fmax(node, h0) + full[1];                   /* h1 */
        node = fmax(node, h0) + full[2];                              /* a0 */
        node += last[0];                                              /* b2 */
        const double h2 = fmax(node, h1) + last[1];                   /* h2 */
        node = fmax(node, h1) + full[2];                              /* a1 */
        const double want = fmax(node, h2) + last[2];                 /* a2 */
        kcoll_price_nodes(m, KCOLL_COLL_ALLREDUCE, 4, 8, n, (size_t)s, &np);
        CHECK(w->pieces == 3 && near(w->t, want) && near(w->before, full[0]) &&
                  near(w->after, last[2]) && near(w->before + w->net + w->after, want),
              "lanes Allreduce 4 x 8 in 3 pieces: %.2f us, want %.2f", w->t * 1e6, want * 1e6);
        kcoll_price_nodes(m, KCOLL_COLL_ALLREDUCE, 4, 8, n, 0, &np);
        CHECK(w->pieces == 0 && w->t > want, "whole: %.2f us, more than in pieces", w->t * 1e6);
    }

    /* Reduce: the shares to the root on its node */
    kcoll_price_nodes(m, KCOLL_COLL_REDUCE, 4, 8, n, 0, &np);
    CHECK(w->priced && near(w->net, lane(m, KCOLL_COLL_REDUCE, 4, n / 8.0, 8)) &&
              near(w->after, on_node(m, KCOLL_COLL_GATHER, 8, n / 8)) && w->rootnode == 4u,
          "lanes Reduce 4 x 8");
    /* ...in pieces as the Allreduce, the gather on the root's node after */
    {
        const double whole = w->t;
        kcoll_price_nodes(m, KCOLL_COLL_REDUCE, 4, 8, n, n / 4, &np);
        CHECK(w->pieces == 4 && w->t < whole &&
                  near(w->before, on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, n / 32)) &&
                  near(w->after, on_node(m, KCOLL_COLL_GATHER, 8, n / 32)) && w->rootnode == 4u,
              "lanes Reduce 4 x 8 in 4 pieces: %.2f us (whole %.2f us)", w->t * 1e6,
              whole * 1e6);
    }
    /* Bcast: scatter on the root's node, lanes, allgather on every node */
    kcoll_price_nodes(m, KCOLL_COLL_BCAST, 4, 8, n, 0, &np);
    CHECK(w->priced && near(w->before, on_node(m, KCOLL_COLL_SCATTER, 8, n / 8)) &&
              near(w->net, lane(m, KCOLL_COLL_BCAST, 4, n / 8.0, 8)) &&
              near(w->after, on_node(m, KCOLL_COLL_ALLGATHER, 8, n / 8)) && w->rootnode == 1u,
          "lanes Bcast 4 x 8");
    /* Allgather, block b: each lane allgathers its members' blocks, then
     * the node allgathers the N blocks of each rank */
    const size_t b = 65536;
    kcoll_price_nodes(m, KCOLL_COLL_ALLGATHER, 4, 8, b, 0, &np);
    CHECK(w->priced && w->before == 0 && w->coll[0] == KCOLL_NCOLL &&
              near(w->net, lane(m, KCOLL_COLL_ALLGATHER, 4, (double)b, 8)) &&
              near(w->after, on_node(m, KCOLL_COLL_ALLGATHER, 8, 4 * b)),
          "lanes Allgather 4 x 8");
    /* pipelined in pieces of 24 KiB: 2 of 24 KiB and a last of 16 KiB,
     * each piece's lanes while the node shares the piece before */
    {
        const double hs = lane(m, KCOLL_COLL_ALLGATHER, 4, 24576.0, 8),
                     hl = lane(m, KCOLL_COLL_ALLGATHER, 4, 16384.0, 8),
                     rs = on_node(m, KCOLL_COLL_ALLGATHER, 8, 4 * 24576),
                     rl = on_node(m, KCOLL_COLL_ALLGATHER, 8, 4 * 16384);
        const double whole = w->t;
        kcoll_price_nodes(m, KCOLL_COLL_ALLGATHER, 4, 8, b, 24576, &np);
        CHECK(w->pieces == 3 &&
                  near(w->net, hs + (hs > rs ? hs : rs) + (hl > rs ? hl : rs)) &&
                  near(w->after, rl) && w->t < whole,
              "lanes Allgather 4 x 8 in 3 pieces: %.2f us (whole %.2f us)", w->t * 1e6,
              whole * 1e6);
        kcoll_price_nodes(m, KCOLL_COLL_ALLGATHER, 4, 8, b, b, &np);
        CHECK(w->pieces == 0 && near(w->t, whole), "a segment of the whole block: one piece");
    }
    /* Reduce_scatter_block: the vector's 32 blocks copied in lane order,
     * the node's reduce-scatter; lane i's host reduce-scatter hands each
     * node's local rank i its own block, so nothing after */
    kcoll_price_nodes(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 4, 8, b, 0, &np);
    const double lane_copy = 32 * m->copy_alpha + 32.0 * (double)b * m->copy_beta;
    CHECK(w->priced &&
              near(w->before, on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, 4 * b) + lane_copy) &&
              near(w->net, lane(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 4, (double)b, 8)) &&
              w->after == 0 && w->coll[2] == KCOLL_NCOLL,
          "lanes Reduce_scatter_block 4 x 8");
    /* on a node of 4 each rank carries two lanes' shares (a lane's
     * member there receives nothing: no such rank), still nothing after */
    kcoll_price_nodes_counts(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, half, 4, b, 0, &np);
    const double copy28 = 28 * m->copy_alpha + 28.0 * (double)b * m->copy_beta;
    const double rs8 = on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, 28 * b / 8),
                 rs4 = on_node(m, KCOLL_COLL_REDUCE_SCATTER_BLOCK, 4, 2 * (28 * b / 8));
    CHECK(w->priced && near(w->before, fmax(rs8, rs4) + copy28) && w->after == 0 &&
              w->coll[2] == KCOLL_NCOLL,
          "lanes Reduce_scatter_block 8 + 8 + 4 + 8: %.3f us before, want %.3f; %.3f after",
          w->before * 1e6, (fmax(rs8, rs4) + copy28) * 1e6, w->after * 1e6);
    /* not candidates */
    static const kcoll_coll_t no[] = {KCOLL_COLL_BARRIER, KCOLL_COLL_GATHER, KCOLL_COLL_SCATTER,
                                      KCOLL_COLL_GATHERV, KCOLL_COLL_SCATTERV};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        kcoll_price_nodes(m, no[i], 4, 8, 4096, 0, &np);
        CHECK(!w->priced, "%s: lanes are not a candidate", kcoll_coll_name(no[i]));
    }
}

/* The pick: the cheapest allowed layout; the runtime's lanes only where
 * it runs them (Allreduce, Reduce, Allgather(v), Reduce_scatter_block). */
static void pick(const kcoll_machine_t *m, const char *what)
{
    static const kcoll_coll_t comp[] = {KCOLL_COLL_BARRIER,   KCOLL_COLL_BCAST,
                                        KCOLL_COLL_REDUCE,    KCOLL_COLL_ALLREDUCE,
                                        KCOLL_COLL_GATHER,    KCOLL_COLL_SCATTER,
                                        KCOLL_COLL_ALLGATHER, KCOLL_COLL_REDUCE_SCATTER_BLOCK};
    static const size_t sizes[] = {1000, 70000, 1500000};
    static const int shapes[][4] = {{2, 2, 2}, {4, 16, 16, 16}, {8, 8, 8, 8},
                                    {3, 16, 16, 12}, {3, 2, 1, 2}, {2, 8, 3}};
    int yes = 0, no = 0, lane_best = 0, runs_lanes = 0, lanes_run = 0;
    for (size_t i = 0; i < sizeof comp / sizeof comp[0]; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (size_t l = 0; l < sizeof shapes / sizeof shapes[0]; l++) {
                const int N = shapes[l][0], *ppn = &shapes[l][1];
                size_t b = comp[i] == KCOLL_COLL_BARRIER ? 0 : sizes[k];
                /* (a reduce-scatter of 1.5 MB blocks prices 100 MB
                 * vectors on the nodes: seconds) */
                if (comp[i] == KCOLL_COLL_REDUCE_SCATTER_BLOCK && b > 100000)
                    continue;
                kcoll_nodes_price_t np;
                kcoll_price_nodes_counts(m, comp[i], ppn, N, kcoll_class_bytes(b), 1 << 19, &np);
                const kcoll_nodes_lprice_t *h = &np.lay[HOST], *e = &np.lay[LEAD],
                                           *w = &np.lay[LANE];
                /* a composition must beat the host by more than one
                 * call's bookkeeping */
                int want_run = e->priced && e->t < h->t - m->call ? LEAD : HOST;
                int want_all = want_run;
                if (w->priced && w->t < (want_all == HOST ? h->t - m->call : e->t))
                    want_all = LANE;
                const unsigned runs = kcoll_nodes_runs(comp[i], ppn, N);
                const int has_lanes = (runs & KCOLL_NODES_BIT(LANE)) != 0;
                if (has_lanes)
                    want_run = want_all;
                int run = kcoll_nodes_pick(m, comp[i], ppn, N, b, 1 << 19, runs, NULL);
                int any = kcoll_nodes_pick(m, comp[i], ppn, N, b, 1 << 19, KCOLL_NODES_ALL, NULL);
                int host_only = kcoll_nodes_pick(m, comp[i], ppn, N, b, 1 << 19,
                                                 KCOLL_NODES_BIT(HOST), NULL);
                CHECK(run == want_run && any == want_all && host_only == HOST,
                      "%s: %s on %d nodes (%d...), %zu bytes: runtime %s, want %s; all %s, want "
                      "%s",
                      what, kcoll_coll_name(comp[i]), N, ppn[0], b,
                      kcoll_nodes_layout_name(run), kcoll_nodes_layout_name(want_run),
                      kcoll_nodes_layout_name(any), kcoll_nodes_layout_name(want_all));
                CHECK(has_lanes == (comp[i] == KCOLL_COLL_ALLREDUCE ||
                                    comp[i] == KCOLL_COLL_REDUCE ||
                                    comp[i] == KCOLL_COLL_BCAST ||
                                    comp[i] == KCOLL_COLL_ALLGATHER ||
                                    comp[i] == KCOLL_COLL_REDUCE_SCATTER_BLOCK),
                      "%s: %s: the runtime runs lanes for Allreduce, Reduce, Bcast, Allgather and "
                      "Reduce_scatter_block only (of these)", what, kcoll_coll_name(comp[i]));
                runs_lanes += run == LANE && !has_lanes;
                lanes_run += run == LANE && has_lanes;
                lane_best += any == LANE;
                yes += run == LEAD;
                no += run == HOST;
            }
    CHECK(runs_lanes == 0, "%s: the runtime picks lanes only where it runs them (%d picks)", what,
          runs_lanes);
    /* no rank of a node of several carries more than 8 lanes (the lanes'
     * rounds take flag ranges): 17 + 2 runs the leaders or the host, 16 + 2
     * and 9 + 1 (a node of one rank has no rounds) may run lanes */
    static const int fit[][2] = {{16, 2}, {9, 1}, {8, 8}}, nofit[][2] = {{17, 2}, {2, 40}};
    for (int f = 0; f < 3; f++)
        CHECK(kcoll_nodes_runs(KCOLL_COLL_ALLREDUCE, fit[f], 2) & KCOLL_NODES_BIT(LANE),
              "%s: %d + %d runs lanes", what, fit[f][0], fit[f][1]);
    for (int f = 0; f < 2; f++) {
        const unsigned r = kcoll_nodes_runs(KCOLL_COLL_ALLREDUCE, nofit[f], 2);
        CHECK(!(r & KCOLL_NODES_BIT(LANE)) && (r & KCOLL_NODES_BIT(LEAD)),
              "%s: %d + %d: too many lanes per rank, no lanes", what, nofit[f][0], nofit[f][1]);
        for (size_t b = 1024; b <= ((size_t)16 << 20); b *= 16)
            CHECK(kcoll_nodes_pick(m, KCOLL_COLL_ALLREDUCE, nofit[f], 2, b, 1 << 19, r, NULL) !=
                      LANE,
                  "%s: %d + %d at %zu bytes: lanes picked where they cannot run", what,
                  nofit[f][0], nofit[f][1], b);
    }
    CHECK(lanes_run > 0, "%s: the runtime picks lanes for some Allreduce or Reduce", what);
    CHECK(yes > 0 && no > 0, "%s: the runtime composes some calls (%d), hands others (%d) over",
          what, yes, no);
    CHECK(lane_best > 0, "%s: lanes the cheapest layout somewhere (else the runtime's "
                         "never picking them says nothing)", what);
    printf("%s: lanes the cheapest layout in %d of the calls priced\n", what, lane_best);
}

/* The host's price of a 1 MiB call on N nodes of q ranks: the optimistic
 * formula's (*old) and the one with the node's memory shared (*now). */
static void host_both(const kcoll_machine_t *m, kcoll_coll_t c, int N, int q, double *old,
                      double *now)
{
    int ppn[8];
    for (int k = 0; k < N; k++)
        ppn[k] = q;
    *old = kcoll_host_formula(m, c, N, q, 1 << 20, KCOLL_RCLASS_DOUBLE);
    *now = kcoll_host_formula_nodes(m, c, N, ppn, 1 << 20, KCOLL_RCLASS_DOUBLE, 1);
}

/* The host's price with the node's memory shared, against the optimistic
 * one (every pair at the full copy rate). */
static void honest(const kcoll_machine_t *m0)
{
    kcoll_machine_t m = *m0;
    static const kcoll_coll_t all[] = {
        KCOLL_COLL_BARRIER, KCOLL_COLL_BCAST,     KCOLL_COLL_SCATTER,
        KCOLL_COLL_GATHER,  KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLTOALL,
        KCOLL_COLL_REDUCE,  KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE_SCATTER_BLOCK};
    static const int shapes[][2] = {{1, 8}, {2, 2}, {4, 16}, {8, 8}, {2, 32}};
    /* without a limit: the optimistic price itself */
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (size_t l = 0; l < sizeof shapes / sizeof shapes[0]; l++) {
            const int N = shapes[l][0], q = shapes[l][1];
            double old, now;
            host_both(&m, all[i], N, q, &old, &now);
            CHECK(near(now, old), "%s %d x %d, no memory limit: %.3f, optimistic %.3f us",
                  kcoll_coll_name(all[i]), N, q, now * 1e6, old * 1e6);
        }
    /* a node's memory delivers 20 GB/s to all copies: two ranks' messages
     * (4 copies at 5 GB/s) already fill it */
    m.package_bw = 20e9;
    int more = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (size_t l = 0; l < sizeof shapes / sizeof shapes[0]; l++) {
            const int N = shapes[l][0], q = shapes[l][1];
            double old, now;
            host_both(&m, all[i], N, q, &old, &now);
            CHECK(now >= old * (1 - 1e-12), "%s %d x %d: shared %.3f below optimistic %.3f us",
                  kcoll_coll_name(all[i]), N, q, now * 1e6, old * 1e6);
            more += now > old * 1.01;
            kcoll_nodes_price_t np;
            kcoll_price_nodes(&m, all[i], N, q, 1 << 20, 0, &np);
            CHECK(near(np.lay[HOST].t, now), "%s %d x %d: the flat price is the shared one",
                  kcoll_coll_name(all[i]), N, q);
        }
    CHECK(more > 0, "sharing the node's memory raises some prices (%d)", more);
    /* bandwidth-bound, the same bytes per rank: the more ranks share the
     * node, the dearer each byte (the optimistic price grows only with the
     * rounds) */
    static const kcoll_coll_t bw[] = {KCOLL_COLL_ALLGATHER, KCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                      KCOLL_COLL_ALLTOALL};
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
        double last = 0, last_ratio = 0;
        for (int q = 4; q <= 64; q *= 2) {
            double old = kcoll_host_formula(&m, bw[i], 1, q, 65536, KCOLL_RCLASS_DOUBLE);
            double now = kcoll_host_formula_nodes(&m, bw[i], 1, &q, 65536, KCOLL_RCLASS_DOUBLE, 1);
            CHECK(now > last && now / old > last_ratio,
                  "%s 1 x %d, 64 KiB per rank: %.3f us, %.2fx the optimistic price (before: "
                  "%.3f us, %.2fx)",
                  kcoll_coll_name(bw[i]), q, now * 1e6, now / old, last * 1e6, last_ratio);
            last = now;
            last_ratio = now / old;
        }
    }
    /* Allgather 1 x 16 by hand: a ring, 16 messages at once, each byte
     * through the memory twice: 32 / W per byte against host_beta */
    int q = 16;
    double want = 4 * m.host_alpha + 15 * 65536 * (32 / m.package_bw) + 65536 * m.copy_beta;
    double got = kcoll_host_formula_nodes(&m, KCOLL_COLL_ALLGATHER, 1, &q, 65536,
                                          KCOLL_RCLASS_DOUBLE, 1);
    CHECK(near(got, want), "Allgather 1 x 16 shared: %.3f us, want %.3f", got * 1e6, want * 1e6);
    /* a linear root has one message going: Gather keeps its price while a
     * pair's copies fit in the memory */
    double g0 = kcoll_host_formula(&m, KCOLL_COLL_GATHER, 2, 16, 65536, KCOLL_RCLASS_DOUBLE);
    int two[] = {16, 16};
    double g1 = kcoll_host_formula_nodes(&m, KCOLL_COLL_GATHER, 2, two, 65536, KCOLL_RCLASS_DOUBLE,
                                         1);
    CHECK(near(g0, g1), "Gather 2 x 16: one message at a time, unshared");
    pick(&m, "with the node's memory shared");
}

/* The host's own terms (on-node messages, reducing, copying) scaled by
 * its measured times: with the host measured k times its formula at two
 * ranks, a node of two prices the measured time, the network's terms keep
 * their price, every on-node term is k times dearer, and measuring a
 * slower host hands calls the flat host had to a layout. */
static void measured(const kcoll_machine_t *m0)
{
    kcoll_machine_t m = *m0;
    static const kcoll_coll_t all[] = {KCOLL_COLL_BCAST, KCOLL_COLL_ALLGATHER,
                                       KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE_SCATTER_BLOCK};
    static const double sizes[] = {1024, 65536, 1 << 20};
    const double k = 3;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
            m.host[all[i]][m.nhost[all[i]]++] = (kcoll_hostpt_t){
                2, sizes[j],
                k * kcoll_host_formula(m0, all[i], 1, 2, sizes[j], KCOLL_RCLASS_DOUBLE)};
    /* (a machine that scales every host term by hand, to compare with) */
    kcoll_machine_t s = *m0;
    s.host_alpha *= k;
    s.host_beta *= k;
    s.copy_beta *= k;
    for (int c = 0; c < KCOLL_NRCLASS; c++)
        s.reduce_beta[c] *= k;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            const kcoll_coll_t c = all[i];
            const double x = sizes[j];
            int two = 2, four[] = {16, 16, 16, 16};
            double got = kcoll_host_formula_nodes(&m, c, 1, &two, x, KCOLL_RCLASS_DOUBLE, 1);
            CHECK(near(got, m.host[c][j].t), "%s 1 x 2, %.0f bytes: %.3f us, measured %.3f",
                  kcoll_coll_name(c), x, got * 1e6, m.host[c][j].t * 1e6);
            got = kcoll_host_formula_nodes(&m, c, 4, four, x, KCOLL_RCLASS_DOUBLE, 1);
            double want = kcoll_host_formula(&s, c, 4, 16, x, KCOLL_RCLASS_DOUBLE);
            CHECK(near(got, want), "%s 4 x 16, %.0f bytes: %.3f us, want the host's terms %gx: %.3f",
                  kcoll_coll_name(c), x, got * 1e6, k, want * 1e6);
            CHECK(got > kcoll_host_formula(m0, c, 4, 16, x, KCOLL_RCLASS_DOUBLE),
                  "%s 4 x 16: dearer than unmeasured", kcoll_coll_name(c));
        }
    /* one rank per node and nothing to reduce or copy: the network's
     * terms alone, unscaled */
    double b1 = kcoll_host_formula_nodes(&m, KCOLL_COLL_BCAST, 4, NULL, 65536,
                                         KCOLL_RCLASS_DOUBLE, 1);
    CHECK(near(b1, kcoll_host_formula(m0, KCOLL_COLL_BCAST, 4, 1, 65536, KCOLL_RCLASS_DOUBLE)),
          "Bcast 4 x 1: the network's price, whatever the host measures on a node");
    /* the picks move away from the flat host */
    int flat0 = 0, flat1 = 0;
    const int ppn[] = {16, 16, 16, 16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            flat0 += kcoll_nodes_pick(m0, all[i], ppn, 4, (size_t)sizes[j], 0,
                                      KCOLL_NODES_ALL, NULL) == HOST;
            flat1 += kcoll_nodes_pick(&m, all[i], ppn, 4, (size_t)sizes[j], 0,
                                      KCOLL_NODES_ALL, NULL) == HOST;
        }
    CHECK(flat1 < flat0, "a host measured %gx slower keeps fewer calls whole: %d, unmeasured %d",
          k, flat1, flat0);
}

/* Pieces only where they pay: the lanes' price is the cheaper of the
 * call whole and in pieces of the segment, and the pick's segment (what
 * the runtime runs, kcoll_nodes_pick) says which, at the size class's
 * middle, wherever the lanes are picked. With both (the built-in
 * defaults): 4 x 16 gains from pieces,
 * 2 x 32's 16 MiB Allreduce, whose on-node phases dominate, loses (16 x
 * 128 too, in docs/hierarchy.md's table; left out here: a minute and a
 * half of pricing). */
static void cut(const kcoll_machine_t *m, const char *what, int both)
{
    static const kcoll_coll_t cs[] = {KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE, KCOLL_COLL_BCAST,
                                      KCOLL_COLL_ALLGATHER};
    static const int shapes[][2] = {{4, 16}, {2, 32}, {8, 8}};
    static const size_t sizes[] = {1u << 20, 16u << 20};
    const size_t seg = 512u << 10;
    int whole = 0, cut_ = 0, picked = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                const int N = shapes[j][0];
                int ppn[16];
                for (int q = 0; q < N; q++)
                    ppn[q] = shapes[j][1];
                kcoll_nodes_price_t a, b;
                const size_t bytes = kcoll_class_bytes(sizes[k]);
                kcoll_price_nodes_counts(m, cs[i], ppn, N, bytes, 0, &a);
                kcoll_price_nodes_counts(m, cs[i], ppn, N, bytes, seg, &b);
                const kcoll_nodes_lprice_t *wa = &a.lay[LANE], *wb = &b.lay[LANE];
                size_t got;
                const int lanes = kcoll_nodes_pick(m, cs[i], ppn, N, sizes[k], seg,
                                                   KCOLL_NODES_BIT(LANE), &got) == LANE;
                const int pieces = wb->pieces > 1;
                CHECK(wb->t <= wa->t * (1 + 1e-12) && (got == seg) == (lanes && pieces) &&
                          (pieces ? wb->t < wa->t : near(wb->t, wa->t)),
                      "%s: %s %d x %d at %zu: whole %.2f us, with the segment %.2f us in %d "
                      "pieces, runs %s with segment %zu",
                      what, kcoll_coll_name(cs[i]), N, shapes[j][1], sizes[k], wa->t * 1e6,
                      wb->t * 1e6, wb->pieces, lanes ? "lanes" : "the host", got);
                picked += lanes;
                whole += !pieces;
                cut_ += pieces;
            }
    CHECK(cut_ > 0 && (whole > 0 || !both) && picked > 0,
          "%s: pieces in %d, whole in %d of the long calls, lanes picked in %d", what, cut_, whole,
          picked);
}

int main(void)
{
    const kcoll_machine_t m = hand();
    kcoll_machine_t builtin;
    kcoll_machine_defaults(&builtin);
    cut(&m, "hand machine", 0);
    cut(&builtin, "built-in defaults", 1);
    leaders(&m);
    lanes(&m);
    pick(&m, "hand machine");
    /* one rank per node: the composition would be the host's call plus
     * bookkeeping (a tie in price): the host MPI whole, in every layout */
    kcoll_nodes_price_t np;
    const size_t n = 1 << 20;
    const int ones[] = {1, 1, 1, 1};
    kcoll_price_nodes(&m, KCOLL_COLL_ALLREDUCE, 4, 1, kcoll_class_bytes(n), 0, &np);
    CHECK(np.lay[LEAD].priced && np.lay[LEAD].t == np.lay[HOST].t &&
              kcoll_nodes_pick(&m, KCOLL_COLL_ALLREDUCE, ones, 4, n, 0, KCOLL_NODES_ALL, NULL) ==
                  HOST,
          "4 x 1 Allreduce: a tie, handed to the host MPI (leaders %.3f, flat %.3f us)",
          np.lay[LEAD].t * 1e6, np.lay[HOST].t * 1e6);
    const int fours[] = {4, 4, 4, 4};
    CHECK(kcoll_nodes_pick(&m, KCOLL_COLL_ALLTOALLV, fours, 4, n, 0, KCOLL_NODES_ALL, NULL) ==
                  HOST &&
              kcoll_nodes_pick(&m, KCOLL_COLL_GATHERV, ones, 4, n, 0, KCOLL_NODES_ALL, NULL) ==
                  HOST,
          "Alltoallv of 1 MiB blocks, Gatherv with one rank on every node: the host MPI whole");
    /* Alltoall on 4 x 16: lanes where the host's p - q message latencies
     * per rank dominate (8 B), the host alone where the network's bytes
     * do and the lanes' on-node phase only adds (1 MiB) */
    const int sixteens[] = {16, 16, 16, 16};
    CHECK(kcoll_nodes_pick(&m, KCOLL_COLL_ALLTOALL, sixteens, 4, 8, 0, KCOLL_NODES_ALL, NULL) ==
                  LANE &&
              kcoll_nodes_pick(&m, KCOLL_COLL_ALLTOALL, sixteens, 4, n, 0, KCOLL_NODES_ALL, NULL) ==
                  HOST,
          "Alltoall 4 x 16: lanes at 8 B, the host at 1 MiB");
    honest(&m);
    measured(&m);
    return check_report("test_nodes");
}
