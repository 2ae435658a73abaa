/* The price of communicators that span nodes (model/nodes.c): kcoll's
 * composition is the sum of its phases, each priced as the model prices
 * a one-node call or as the host formula over the nodes' leaders with the
 * network's terms; the flat host price reduces to the one-node host
 * formula on one node and to the network's formula with one rank per
 * node; the broadcast's pipeline; collectives that are not composed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/cost.h"
#include "model/machine.h"
#include "model/nodes.h"
#include "model/select.h"

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

int main(void)
{
    const kcoll_machine_t m = hand();
    const size_t n = 1 << 20;
    kcoll_nodes_price_t np;

    CHECK(kcoll_price_nodes(&m, KCOLL_COLL_BCAST, 0, 4, n, 0, &np) == -1, "0 nodes refused");
    CHECK(kcoll_price_nodes(&m, KCOLL_COLL_BCAST, 2, 0, n, 0, &np) == -1, "0 ranks refused");

    /* the composition: Allreduce = reduce on the node, allreduce of the
     * leaders over the network, broadcast on the node */
    CHECK(kcoll_price_nodes(&m, KCOLL_COLL_ALLREDUCE, 4, 8, n, 0, &np) == 0, "priced");
    CHECK(np.composed && near(np.before, on_node(&m, KCOLL_COLL_REDUCE, 8, n)) &&
              near(np.net, host(&m, KCOLL_COLL_ALLREDUCE, 4, n, m.net_alpha, m.net_beta)) &&
              near(np.after, on_node(&m, KCOLL_COLL_BCAST, 8, n)) &&
              near(np.hier, np.before + np.net + np.after),
          "Allreduce 4 x 8: %.3f = %.3f + %.3f + %.3f us", np.hier * 1e6, np.before * 1e6,
          np.net * 1e6, np.after * 1e6);
    /* Gather: the leaders move their node's q blocks */
    kcoll_price_nodes(&m, KCOLL_COLL_GATHER, 3, 4, 4096, 0, &np);
    CHECK(near(np.before, on_node(&m, KCOLL_COLL_GATHER, 4, 4096)) &&
              near(np.net, host(&m, KCOLL_COLL_GATHER, 3, 4 * 4096, m.net_alpha, m.net_beta)) &&
              np.after == 0,
          "Gather 3 x 4");
    /* one rank per node: no on-node phase, the network's host formula */
    kcoll_price_nodes(&m, KCOLL_COLL_ALLREDUCE, 4, 1, n, 0, &np);
    double net4 = host(&m, KCOLL_COLL_ALLREDUCE, 4, n, m.net_alpha, m.net_beta);
    CHECK(np.before == 0 && np.after == 0 && near(np.hier, net4), "4 x 1: the leaders alone");
    CHECK(near(np.flat, net4), "4 x 1: flat is the network's formula: %.3f against %.3f us",
          np.flat * 1e6, net4 * 1e6);
    /* one node: kcoll's one-node call, and the host's on-node formula */
    static const kcoll_coll_t all[] = {
        KCOLL_COLL_BARRIER, KCOLL_COLL_BCAST,     KCOLL_COLL_SCATTER,
        KCOLL_COLL_GATHER,  KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLTOALL,
        KCOLL_COLL_REDUCE,  KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE_SCATTER_BLOCK};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        size_t b = all[i] == KCOLL_COLL_BARRIER ? 0 : 65536;
        kcoll_price_nodes(&m, all[i], 1, 6, b, 0, &np);
        CHECK(near(np.flat, host(&m, all[i], 6, b, m.host_alpha, m.host_beta)),
              "%s 1 x 6: flat %.3f us, the host formula %.3f us", kcoll_coll_name(all[i]),
              np.flat * 1e6, host(&m, all[i], 6, b, m.host_alpha, m.host_beta) * 1e6);
        CHECK(near(np.hier, on_node(&m, all[i], 6, b)), "%s 1 x 6: kcoll's one-node call",
              kcoll_coll_name(all[i]));
    }
    /* the pipelined broadcast: k = 4 segments */
    const size_t s = n / 4;
    kcoll_price_nodes(&m, KCOLL_COLL_BCAST, 4, 8, n, s, &np);
    double ts = host(&m, KCOLL_COLL_BCAST, 4, s, m.net_alpha, m.net_beta);
    double os = on_node(&m, KCOLL_COLL_BCAST, 8, s), root = on_node(&m, KCOLL_COLL_BCAST, 8, n);
    double pipe = ts + 3 * (ts > os ? ts : os) + os;
    CHECK(near(np.net + np.after, pipe) && near(np.hier, pipe > root ? pipe : root),
          "Bcast 4 x 8 in 4 segments: %.3f us, want %.3f", np.hier * 1e6,
          (pipe > root ? pipe : root) * 1e6);
    kcoll_nodes_price_t whole;
    kcoll_price_nodes(&m, KCOLL_COLL_BCAST, 4, 8, n, 0, &whole);
    CHECK(np.hier < whole.hier, "segments overlap the network with the nodes: %.3f < %.3f us",
          np.hier * 1e6, whole.hier * 1e6);
    /* not composed: the host MPI whole */
    kcoll_price_nodes(&m, KCOLL_COLL_ALLTOALL, 4, 8, 4096, 0, &np);
    CHECK(!np.composed && np.hier == np.flat, "Alltoall: the host MPI whole");
    kcoll_price_nodes(&m, KCOLL_COLL_GATHERV, 4, 8, 4096, 0, &np);
    CHECK(!np.composed && np.hier == np.flat, "Gatherv: the host MPI whole");
    /* flat, by hand: Scatter 2 x 4, 1 KiB blocks: the root sends 4 blocks
     * over the network and 3 on its node, one round each way of the tree */
    kcoll_price_nodes(&m, KCOLL_COLL_SCATTER, 2, 4, 1024, 0, &np);
    double want = 1 * m.net_alpha + 2 * m.host_alpha + 4 * 1024 * m.net_beta +
                  3 * 1024 * m.host_beta + 1024 * m.copy_beta;
    CHECK(near(np.flat, want), "Scatter 2 x 4 flat: %.4f us, want %.4f", np.flat * 1e6,
          want * 1e6);

    /* KCOLL_HIER=auto: composed exactly where the composition's price at
     * the size class's middle is at most the host's alone; both ways occur */
    static const kcoll_coll_t comp[] = {KCOLL_COLL_BARRIER,   KCOLL_COLL_BCAST,
                                        KCOLL_COLL_REDUCE,    KCOLL_COLL_ALLREDUCE,
                                        KCOLL_COLL_GATHER,    KCOLL_COLL_SCATTER,
                                        KCOLL_COLL_ALLGATHER, KCOLL_COLL_REDUCE_SCATTER_BLOCK};
    static const size_t sizes[] = {1000, 70000, 1500000, 20000000};
    static const int layouts[][2] = {{2, 2}, {4, 16}, {8, 8}};
    int yes = 0, no = 0;
    for (size_t i = 0; i < sizeof comp / sizeof comp[0]; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
                const int N = layouts[l][0], q = layouts[l][1];
                size_t b = comp[i] == KCOLL_COLL_BARRIER ? 0 : sizes[k];
                kcoll_price_nodes(&m, comp[i], N, q, kcoll_class_bytes(b), 1 << 19, &np);
                int want_c = np.hier <= np.flat, got = kcoll_nodes_compose(&m, comp[i], N, q, b,
                                                                           1 << 19);
                CHECK(got == want_c, "%s %d x %d, %zu bytes: compose %d, want %d",
                      kcoll_coll_name(comp[i]), N, q, b, got, want_c);
                yes += got;
                no += !got;
            }
    CHECK(yes > 0 && no > 0, "the model composes some calls (%d) and hands others (%d) over", yes,
          no);
    /* one rank per node: the composition would be the host's call plus
     * bookkeeping (a tie in price): the host MPI whole */
    kcoll_price_nodes(&m, KCOLL_COLL_ALLREDUCE, 4, 1, kcoll_class_bytes(n), 0, &np);
    CHECK(np.composed && np.hier == np.flat &&
              !kcoll_nodes_compose(&m, KCOLL_COLL_ALLREDUCE, 4, 1, n, 0),
          "4 x 1 Allreduce: a tie, handed to the host MPI (hier %.3f, flat %.3f us)", np.hier * 1e6,
          np.flat * 1e6);
    CHECK(!kcoll_nodes_compose(&m, KCOLL_COLL_ALLTOALL, 4, 4, n, 0) &&
              !kcoll_nodes_compose(&m, KCOLL_COLL_GATHERV, 4, 4, n, 0),
          "Alltoall, Gatherv: never composed");
    return check_report("test_nodes");
}
