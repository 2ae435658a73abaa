/* The cost model: the pricer against times computed by hand from paper
 * 003's formula on a machine with round numbers, and the model's choices
 * for paper 003's Table IV machines against the paper's findings (model
 * outputs, not timings).
 *
 * The hand machine: alpha 1 us, beta 1 ns/byte, l 0.1 us per 4 KiB page,
 * gamma(c) = c, and every other term 0, so a copy of n bytes (10 pages)
 * with c concurrent accessors of the source costs 1 + n/1000 + c us. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/coll.h"
#include "model/cost.h"
#include "xfer/engine.h"
#include "model/machine.h"
#include "model/select.h"

static kcoll_machine_t hand(void)
{
    kcoll_machine_t m;
    memset(&m, 0, sizeof m);
    m.alpha = 1e-6;
    m.beta = 1e-9;
    m.beta_write = 1e-9;
    m.l = 0.1e-6;
    m.page = 4096;
    m.gamma_intra.poly[1] = 1;
    m.gamma_inter = m.gamma_intra;
    return m;
}

static int price_engine; /* the engine price() prices steps for (0: cma) */

static double price(const kcoll_machine_t *m, kcoll_coll_t c, const char *spec, int p,
                    size_t bytes, kcoll_price_t *pr)
{
    const kcoll_algo_t *a;
    kcoll_aparam_t prm;
    char err[160];
    kcoll_price_t tmp;
    if (!pr)
        pr = &tmp;
    if (kcoll_algo_parse(c, spec, &a, &prm, err, sizeof err) || !a) {
        CHECK(0, "spec %s: %s", spec, err);
        return -1;
    }
    kcoll_pcall_t pc = {.coll = c, .p = p, .bytes = bytes, .engine = price_engine};
    if (kcoll_price(m, a, &prm, &pc, pr)) {
        CHECK(0, "%s p=%d n=%zu: not priced", spec, p, bytes);
        return -1;
    }
    return pr->t;
}

static int near(double got, double want)
{
    return fabs(got - want) <= 1e-9 * (fabs(want) + 1e-12) + 1e-15;
}

/* The model's candidates for a call on a Table IV machine, ranks placed
 * compactly on its packages, kcoll's algorithms only, cheapest first. */
static int rank_on(const char *machine, kcoll_coll_t c, int p, size_t n, kcoll_cand_t *cand)
{
    kcoll_machine_t m;
    kcoll_machine_preset(&m, machine);
    int *pkg = malloc((size_t)p * sizeof *pkg);
    for (int q = 0; q < p; q++)
        pkg[q] = m.pkg_cores ? q / m.pkg_cores : 0;
    kcoll_pcall_t pc = {.coll = c, .p = p, .bytes = n, .pkg = pkg};
    int nc = kcoll_model_rank(&m, &pc, 0, cand, KCOLL_MAX_CANDS);
    free(pkg);
    return nc;
}

/* The throttle factor of the cheapest throttled candidate. */
static int best_k(const char *machine, kcoll_coll_t c, int p, size_t n)
{
    static kcoll_cand_t cand[KCOLL_MAX_CANDS];
    int nc = rank_on(machine, c, p, n, cand);
    for (int i = 0; i < nc; i++)
        if (strstr(cand[i].ch.algo->name, "throttled"))
            return cand[i].ch.prm.k;
    return -1;
}

/* The winner's name. */
static const char *winner(const char *machine, kcoll_coll_t c, int p, size_t n)
{
    static kcoll_cand_t cand[KCOLL_MAX_CANDS];
    int nc = rank_on(machine, c, p, n, cand);
    return nc ? cand[0].ch.algo->name : "none";
}

int main(void)
{
    const kcoll_machine_t m = hand();
    const size_t n = 40960; /* 10 pages: 1 + 40.96 + 1 * c us */
    kcoll_price_t pr;

    /* one reader: alpha + n beta + l gamma(1) 10 */
    double t = price(&m, KCOLL_COLL_BCAST, "direct_read", 2, n, &pr);
    CHECK(near(t, (1 + 40.96 + 1.0) * 1e-6), "one reader: %.6f us", t * 1e6);
    CHECK(pr.crit == 0 || pr.crit == 1, "critical rank");
    CHECK(pr.crit == 0 || (near(pr.alpha, 1e-6) && near(pr.lock, 1e-6) && near(pr.bytes, 40.96e-6)),
          "terms of the reader: alpha %.3g lock %.3g bytes %.3g", pr.alpha, pr.lock, pr.bytes);

    /* c concurrent readers of one source: all overlap fully, so each sees
     * c = 4 and locks at gamma(4) = 4 */
    t = price(&m, KCOLL_COLL_BCAST, "direct_read", 5, n, &pr);
    CHECK(near(t, (1 + 40.96 + 4.0) * 1e-6), "4 readers: %.6f us", t * 1e6);
    CHECK(fabs(pr.cmax - 4) < 1e-9, "contention seen: %.3f", pr.cmax);

    /* a crowded node, 5 ranks on 2 cores: the 4 readers take turns two at
     * a time (contention 2, not 4), each pair after the other, and every
     * reader that waited for the root's exposure gets its core back a
     * handover later (the root exposes at once: nobody waits for it) */
    {
        const kcoll_algo_t *dr;
        kcoll_aparam_t prm;
        char err[160];
        kcoll_algo_parse(KCOLL_COLL_BCAST, "direct_read", &dr, &prm, err, sizeof err);
        kcoll_pcall_t pc = {.coll = KCOLL_COLL_BCAST, .p = 5, .bytes = n, .cores = 2};
        CHECK(kcoll_price(&m, dr, &prm, &pc, &pr) == 0, "crowded: priced");
        CHECK(pr.cmax <= 2 + 1e-9, "crowded: at most 2 copies at once (%.3f)", pr.cmax);
        CHECK(near(pr.t, 2 * (1 + 40.96 + 2.0) * 1e-6),
              "crowded: two rounds of two readers: %.6f us", pr.t * 1e6);
        pc.cores = 5; /* a core each: as before */
        CHECK(kcoll_price(&m, dr, &prm, &pc, &pr) == 0 &&
                  near(pr.t, (1 + 40.96 + 4.0) * 1e-6),
              "a core per rank: not crowded: %.6f us", pr.t * 1e6);
        kcoll_pcall_t hc = {.coll = KCOLL_COLL_BCAST, .p = 8, .bytes = n};
        double spread = kcoll_price_host(&m, &hc);
        hc.cores = 2;
        CHECK(near(kcoll_price_host(&m, &hc), 4 * spread), "crowded host: 4 ranks a core");
    }

    /* the root writes to each in turn: one accessor per destination, but
     * sequential: 4 copies, alpha each (different peers) */
    t = price(&m, KCOLL_COLL_BCAST, "direct_write", 5, n, NULL);
    CHECK(near(t, 4 * (1 + 40.96 + 1.0) * 1e-6), "direct write, 4 peers: %.6f us", t * 1e6);
    /* writes are priced at their own rate, reads are not affected */
    kcoll_machine_t mw = m;
    mw.beta_write = 0.5e-9;
    t = price(&mw, KCOLL_COLL_BCAST, "direct_write", 5, n, NULL);
    CHECK(near(t, 4 * (1 + 20.48 + 1.0) * 1e-6), "direct write at beta_write: %.6f us", t * 1e6);
    t = price(&mw, KCOLL_COLL_BCAST, "direct_read", 2, n, NULL);
    CHECK(near(t, (1 + 40.96 + 1.0) * 1e-6), "a read keeps beta: %.6f us", t * 1e6);

    /* copies between packages share the links' bandwidth: two readers on
     * package 1 of the root on package 0, at once, each at 2 / link_bw
     * per byte where that is above beta (the walks settle there within
     * their 0.5%); on one package, or with no link_bw, nothing changes */
    {
        const int pkg2[3] = {0, 1, 1}, pkg1[3] = {0, 0, 0};
        kcoll_machine_t ml = m;
        ml.link_bw = 1e9; /* 2 crossing at once: 2 ns per byte */
        const kcoll_algo_t *dr = kcoll_algo_find(KCOLL_COLL_BCAST, "direct_read");
        kcoll_aparam_t prm;
        kcoll_algo_defaults(dr, &prm);
        kcoll_pcall_t pc = {.coll = KCOLL_COLL_BCAST, .p = 3, .bytes = n, .pkg = pkg2};
        CHECK(!kcoll_price(&ml, dr, &prm, &pc, &pr), "priced");
        CHECK(fabs(pr.t - (1 + 81.92 + 2.0) * 1e-6) < 0.01 * 84.92e-6,
              "2 readers across the link: %.3f us, want about 84.92", pr.t * 1e6);
        pc.pkg = pkg1;
        CHECK(!kcoll_price(&ml, dr, &prm, &pc, &pr) && near(pr.t, (1 + 40.96 + 2.0) * 1e-6),
              "2 readers on the root's package: %.6f us", pr.t * 1e6);
        pc.pkg = pkg2;
        CHECK(!kcoll_price(&m, dr, &prm, &pc, &pr) && near(pr.t, (1 + 40.96 + 2.0) * 1e-6),
              "no link_bw: %.6f us", pr.t * 1e6);
    }
    /* the other engines (docs/engines.md): loads and stores at a COPY's
     * price, no lock; two copies at shm_beta times the owner's load, and
     * the pipeline's fill (one cell) where the owner is idle: an idle
     * owner (a root waiting for its reader) has load 1 and shows the
     * fill, one that copies at the same time (a pairwise exchange, both
     * reading) load 2, which hides it */
    kcoll_machine_t me = m;
    me.copy_alpha = 0.5e-6;
    me.copy_beta = 0.5e-9;
    me.shm_alpha = 2e-6;
    me.shm_beta = 0.25e-9;
    me.shm_cell = 4096;
    price_engine = KCOLL_ENGINE_DIRECT;
    t = price(&me, KCOLL_COLL_BCAST, "direct_read", 2, n, &pr);
    CHECK(near(t, (0.5 + 20.48) * 1e-6) && pr.lock == 0, "direct: %.6f us", t * 1e6);
    price_engine = KCOLL_ENGINE_SHM;
    t = price(&me, KCOLL_COLL_BCAST, "direct_read", 2, n, &pr);
    CHECK(near(t, (2 + 10.24 + 1.024) * 1e-6), "shm, the owner idle: %.6f us", t * 1e6);
    t = price(&me, KCOLL_COLL_ALLTOALL, "pairwise", 2, n, &pr);
    const double copies = 2 * 0.5e-9 * (double)n; /* both ranks copy their own block too */
    CHECK(fabs(pr.bytes - 2 * 10.24 * 1e-6) < 0.05 * pr.bytes,
          "shm, the owner copying too: bytes term %.3f us (%.3f us of local copies aside)",
          pr.bytes * 1e6, copies * 1e6);
    price_engine = 0;

    /* reductions: the in-cache rate, plus the stream of operands no
     * recent step touched. Serial Reduce, root 0: the chunks read from
     * the others (into RECV, TMP) are in cache, the root's own SEND is
     * not, so exactly n bytes stream, at any p */
    kcoll_machine_t mr = m;
    for (int k = 0; k < KCOLL_NRCLASS; k++)
        mr.reduce_beta[k] = 0.1e-9;
    for (int q = 2; q <= 4; q++) {
        double t1 = price(&mr, KCOLL_COLL_REDUCE, "serial", q, n, NULL);
        mr.stream_beta = 0.2e-9;
        double t2 = price(&mr, KCOLL_COLL_REDUCE, "serial", q, n, NULL);
        mr.stream_beta = 0;
        CHECK(near(t2 - t1, n * 0.2e-9), "serial Reduce, p = %d: the own contribution streams: "
              "%.6f us more", q, (t2 - t1) * 1e6);
    }
    mr.stream_beta = 0;
    t = price(&mr, KCOLL_COLL_REDUCE, "serial", 2, n, NULL);
    CHECK(near(t, (1 + 40.96 + 1.0 + 4.096) * 1e-6), "serial Reduce at 2 ranks: %.6f us", t * 1e6);

    /* the call's fixed cost: call on every call, call_data more on calls
     * that move data, outside the steps (the same on top of any schedule) */
    kcoll_machine_t mc = m;
    mc.call = 0.25e-6;
    mc.call_data = 0.5e-6;
    t = price(&mc, KCOLL_COLL_BCAST, "direct_read", 2, n, &pr);
    CHECK(near(t, (1 + 40.96 + 1.0 + 0.75) * 1e-6) && near(pr.call, 0.75e-6),
          "a call that moves data: %.6f us, call term %.3f us", t * 1e6, pr.call * 1e6);
    double t0 = price(&m, KCOLL_COLL_BARRIER, "dissemination", 4, 0, NULL);
    t = price(&mc, KCOLL_COLL_BARRIER, "dissemination", 4, 0, &pr);
    CHECK(near(t, t0 + 0.25e-6) && near(pr.call, 0.25e-6), "a Barrier: call only: %.6f us",
          t * 1e6);
    t0 = price(&m, KCOLL_COLL_ALLGATHER, "ring_neighbor", 4, 0, NULL);
    t = price(&mc, KCOLL_COLL_ALLGATHER, "ring_neighbor", 4, 0, NULL);
    CHECK(near(t, t0 + 0.25e-6), "0 bytes: call only: %.6f us", t * 1e6);

    /* a throttled chain: 8 readers, k at a time, each round at gamma(k) */
    for (int k = 1; k <= 8; k *= 2) {
        char spec[32];
        snprintf(spec, sizeof spec, "throttled_read:k=%d", k);
        t = price(&m, KCOLL_COLL_SCATTER, spec, 9, n, NULL);
        double want = (8 / k) * (1 + 40.96 + 1.0 * k) * 1e-6;
        CHECK(near(t, want), "throttled k=%d: %.6f us, want %.6f", k, t * 1e6, want * 1e6);
    }

    /* a ring without forwarding: p-1 steps, one reader per source each */
    t = price(&m, KCOLL_COLL_ALLGATHER, "ring_source_read", 4, n, NULL);
    CHECK(near(t, 3 * (1 + 40.96 + 1.0) * 1e-6), "ring of 4: %.6f us", t * 1e6);

    /* batching: consecutive reads from one peer pay alpha once; a
     * barrier costs flags only */
    kcoll_machine_t mf = m;
    mf.flag = 0.5e-6;
    t = price(&mf, KCOLL_COLL_BARRIER, "dissemination", 8, 0, NULL);
    CHECK(near(t, 3 * 0.5e-6), "dissemination barrier of 8: 3 flag latencies, %.3f us",
          t * 1e6);

    /* gamma: measured values win within their range, the polynomial beyond */
    kcoll_gamma_t g = {{0, 2, 0}, 3, {1, 1.5, 2.5}};
    CHECK(near(kcoll_gamma(&g, 2), 1.5) && near(kcoll_gamma(&g, 2.5), 2.0) &&
              near(kcoll_gamma(&g, 10), 20),
          "gamma: measured %.3f %.3f, polynomial %.3f", kcoll_gamma(&g, 2), kcoll_gamma(&g, 2.5),
          kcoll_gamma(&g, 10));

    /* the host MPI: the formula without measurements, measured points
     * interpolated, scaled to other process counts */
    kcoll_machine_t mh = m;
    mh.host_alpha = 1e-6;
    mh.host_beta = 1e-9;
    kcoll_pcall_t hc = {.coll = KCOLL_COLL_ALLTOALL, .p = 4, .bytes = 1000};
    CHECK(near(kcoll_price_host(&mh, &hc), 3 * (1e-6 + 1e-6)), "host alltoall formula");
    mh.nhost[KCOLL_COLL_ALLTOALL] = 2;
    mh.host[KCOLL_COLL_ALLTOALL][0] = (kcoll_hostpt_t){4, 1000, 10e-6};
    mh.host[KCOLL_COLL_ALLTOALL][1] = (kcoll_hostpt_t){4, 4000, 40e-6};
    hc.bytes = 2000;
    CHECK(near(kcoll_price_host(&mh, &hc), 20e-6), "host: log-log interpolation");
    hc.p = 7; /* formula ratio (6 (a + nb)) / (3 (a + nb)) = 2 */
    CHECK(near(kcoll_price_host(&mh, &hc), 40e-6), "host: scaled to 7 processes: %.3f us",
          kcoll_price_host(&mh, &hc) * 1e6);

    /* Paper 003 (Table IV machines, its process counts). Scatter: parallel
     * read wins small messages and loses large ones; the best throttle
     * factor for large messages is 4-8 on KNL, 4 on Broadwell, about 10 on
     * Power8 (inter-socket contention). */
    CHECK(!strcmp(winner("knl", KCOLL_COLL_SCATTER, 64, 1024), "parallel_read"),
          "KNL 64, 1 KiB Scatter: parallel_read (got %s)",
          winner("knl", KCOLL_COLL_SCATTER, 64, 1024));
    CHECK(strcmp(winner("knl", KCOLL_COLL_SCATTER, 64, 1 << 20), "parallel_read"),
          "KNL 64, 1 MiB Scatter: not parallel_read");
    int k = best_k("knl", KCOLL_COLL_SCATTER, 64, 1 << 20);
    CHECK(k >= 4 && k <= 8, "KNL 64, 1 MiB Scatter: throttle factor %d, paper 4-8", k);
    k = best_k("broadwell", KCOLL_COLL_SCATTER, 28, 1 << 20);
    CHECK(k >= 3 && k <= 5, "Broadwell 28, 1 MiB Scatter: throttle factor %d, paper 4", k);
    k = best_k("power8", KCOLL_COLL_SCATTER, 20, 1 << 20);
    CHECK(k >= 8 && k <= 12, "Power8 20, 1 MiB Scatter: throttle factor %d, paper about 10", k);
    k = best_k("knl", KCOLL_COLL_GATHER, 64, 1 << 20);
    CHECK(k >= 4 && k <= 8, "KNL 64, 1 MiB Gather: throttle factor %d, paper 4-8", k);
    /* Bcast: k-nomial and scatter-allgather overtake direct read as
     * messages grow */
    const char *small = winner("broadwell", KCOLL_COLL_BCAST, 28, 1024);
    const char *large = winner("broadwell", KCOLL_COLL_BCAST, 28, 4 << 20);
    CHECK(strcmp(large, "direct_read") && strcmp(large, small),
          "Broadwell 28 Bcast: %s at 1 KiB, %s at 4 MiB", small, large);

    /* A rank moves at most 64 MiB in a priced schedule; beyond that the
     * time is scaled: a 128-rank Reduce_scatter of 16 MiB blocks (2 GiB
     * per rank) costs 32 times one of 512 KiB blocks, and a Bcast of
     * 256 MiB 4 times one of 64 MiB. */
    kcoll_choice_t ch;
    double t1, t2;
    kcoll_pcall_t big = {.coll = KCOLL_COLL_REDUCE_SCATTER, .p = 128, .bytes = (size_t)16 << 20};
    kcoll_pcall_t cap = big;
    cap.bytes = (size_t)512 << 10;
    CHECK(!kcoll_model_predict(&big, "partitioned:chunk=64", 0, &ch, &t1) &&
              !kcoll_model_predict(&cap, "partitioned:chunk=64", 0, &ch, &t2) &&
              near(t1, 32 * t2),
          "Reduce_scatter, 128 ranks, 16 MiB blocks: %.3f us, 32 x %.3f us", t1 * 1e6, t2 * 1e6);
    big = (kcoll_pcall_t){.coll = KCOLL_COLL_BCAST, .p = 8, .bytes = (size_t)256 << 20};
    cap = big;
    cap.bytes = (size_t)64 << 20;
    CHECK(!kcoll_model_predict(&big, "knomial:k=2", 0, &ch, &t1) &&
              !kcoll_model_predict(&cap, "knomial:k=2", 0, &ch, &t2) && near(t1, 4 * t2),
          "Bcast, 8 ranks, 256 MiB: %.3f us, 4 x %.3f us", t1 * 1e6, t2 * 1e6);
    /* the built-in defaults carry the host MPI's own measured times (7
     * sizes at 2 ranks, for the MPI this was built for), not only the
     * textbook formulas: Reduce_scatter_block at 1 MiB, which both hosts
     * run slower than the formula's ring, goes to kcoll */
    static kcoll_machine_t d;
    kcoll_machine_defaults(&d);
    CHECK(d.nhost[KCOLL_COLL_REDUCE_SCATTER_BLOCK] == 7 && d.nhost[KCOLL_COLL_BARRIER] == 1 &&
              d.host[KCOLL_COLL_BCAST][5].p == 2 && d.host[KCOLL_COLL_BCAST][5].bytes == 1 << 20,
          "the defaults' host times: %d points", d.nhost[KCOLL_COLL_REDUCE_SCATTER_BLOCK]);
    kcoll_pcall_t rsb = {.coll = KCOLL_COLL_REDUCE_SCATTER_BLOCK, .p = 2, .bytes = 1 << 20};
    static kcoll_cand_t rc[KCOLL_MAX_CANDS];
    CHECK(kcoll_model_rank(&d, &rsb, 1, rc, KCOLL_MAX_CANDS) > 0 && rc[0].ch.algo,
          "Reduce_scatter_block, 2 ranks, 1 MiB: kcoll, not the host (%.1f us)", rc[0].t * 1e6);
    return check_report("test_cost");
}
