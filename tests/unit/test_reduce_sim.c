/* Every reduction algorithm (Reduce: partitioned, staggered, serial;
 * Allreduce: partitioned, staggered, reduce_bcast, hier, also on 2- and
 * 3-level topologies, where its result is grouped by the levels;
 * Reduce_scatter_block and Reduce_scatter: partitioned, staggered), checked by the simulator for p = 1..64, counts 0, 1, odd
 * and large (several chunks), every root (a few for large p), in place
 * and not, uneven Reduce_scatter blocks (some empty).
 *
 * The first operation is a user function, non-commutative and
 * associative: composition of affine maps x -> a*x + b modulo 2^32,
 * (f op g) = f o g. A schedule that reduced in any order but
 * r_0 o (r_1 o (... o r_{p-1})) would give other maps (the inputs are drawn
 * so that any two differ), so the values check the order as well as the
 * delivery. The second is the predefined double SUM (p <= 24), whose
 * rounding checks the association and exercises the reversed REDUCE of
 * rank p-1. The run must be free of deadlock,
 * races and use-after-return (in place, SEND and RECV are declared one
 * buffer, so a peer reading a rank's contribution unordered with that
 * rank's overwriting it is a race); every result byte is written at least once
 * and at most p times, bytes outside the result never, SEND never (and
 * not at all where it is a separate buffer). */
#include <stdlib.h>
#include <string.h>

#include "affine_op.h"
#include "check.h"
#include "coll/coll.h"
#include "levels_fixture.h"
#include "coll/reduce/common.h"
#include "op/op.h"
#include "sched/sim.h"

/* double SUM: predefined (rank p-1 then reduces with reversed operands);
 * values of mixed magnitudes, so that another association of the sums
 * gives other bits */
static const kcoll_op_t dsum_op = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_DOUBLE,
    .esize = sizeof(double)};
static int use_double;

static void input_elem(int rank, size_t i, uint8_t *dst)
{
    affine_t v = affine_input(rank, i);
    if (use_double) {
        double d = ((double)(v.a % 2000001u) - 1e6) * (v.b & 1 ? 1e-7 : 1e3);
        memcpy(dst, &d, sizeof d);
    } else {
        memcpy(dst, &v, sizeof v);
    }
}

/* inout = in op inout for one element */
static void ref_combine(const uint8_t *in, uint8_t *inout)
{
    if (use_double) {
        double a, b;
        memcpy(&a, in, sizeof a);
        memcpy(&b, inout, sizeof b);
        b = a + b;
        memcpy(inout, &b, sizeof b);
    } else {
        compose(in, inout, 1, &affine_op);
    }
}

/* The hierarchical reductions' order (coll/allreduce/hier.c,
 * coll/reduce/hier.c): level by level, every group's active ranks fold
 * element i right to left in rank order into the group's leader (the
 * root where the group holds it, else its lowest rank), which alone stays
 * active; the top level is one group of all that are left. */
static void ref_grouped(const kcoll_levels_t *lv, int p, int root, size_t i, size_t es,
                        uint8_t *out)
{
    uint8_t *val = malloc((size_t)p * es);
    int *active = malloc((size_t)p * sizeof *active), *g = malloc((size_t)p * sizeof *g);
    char *done = malloc((size_t)p);
    for (int q = 0; q < p; q++) {
        input_elem(q, i, val + (size_t)q * es);
        active[q] = 1;
    }
    for (int k = 0; k <= lv->n; k++) {
        memset(done, 0, (size_t)p);
        for (int q0 = 0; q0 < p; q0++) {
            if (!active[q0] || done[q0])
                continue;
            int m = 0, lead = q0;
            for (int q = q0; q < p; q++)
                if (active[q] && (k == lv->n || lv->group[k][q] == lv->group[k][q0])) {
                    g[m++] = q;
                    done[q] = 1;
                    if (q == root)
                        lead = root;
                }
            uint8_t acc[8];
            memcpy(acc, val + (size_t)g[m - 1] * es, es);
            for (int x = m - 2; x >= 0; x--)
                ref_combine(val + (size_t)g[x] * es, acc);
            for (int x = 0; x < m; x++)
                active[g[x]] = g[x] == lead;
            memcpy(val + (size_t)lead * es, acc, es);
        }
    }
    memcpy(out, val + (size_t)root * es, es);
    free(val);
    free(active);
    free(g);
    free(done);
}

/* Does a hierarchical reduction group by levels here (else it runs flat)? */
static int grouped(const kcoll_levels_t *lv, const kcoll_op_t *op)
{
    if (!lv || lv->n == 0)
        return 0;
    return op->kind != KCOLL_OP_USER || kcoll_levels_runs(lv);
}

static int check_one(const kcoll_algo_t *algo, kcoll_coll_t coll, int p, int root, size_t count,
                     int in_place, int k, unsigned seed, const kcoll_levels_t *lv)
{
    kcoll_sim_t *sim = kcoll_sim_new(p);
    const kcoll_op_t *op = use_double ? &dsum_op : &affine_op;
    kcoll_sim_set_op(sim, op);
    const size_t es = op->esize;
    size_t *counts = NULL;
    if (coll == KCOLL_COLL_REDUCE_SCATTER) {
        counts = malloc((size_t)p * sizeof *counts);
        for (int q = 0; q < p; q++) /* uneven, some empty */
            counts[q] = (q % 3 == 1) ? 0 : count + (size_t)q;
    }
    uint8_t **send = calloc((size_t)p, sizeof *send), **recv = calloc((size_t)p, sizeof *recv),
            **tmp = calloc((size_t)p, sizeof *tmp);
    size_t *rlen = calloc((size_t)p, sizeof *rlen);
    kcoll_args_t a0 = {.coll = coll, .p = p, .root = root, .prm = {.chunk = k}, .count = count, .esize = es,
                       .counts = counts, .op = op, .lv = lv};
    const size_t vec = kcoll_red_vector(&a0), nel = vec / es;
    int ok = 1;

    for (int r = 0; r < p; r++) {
        kcoll_args_t a = a0;
        a.rank = r;
        a.in_place = in_place && (coll != KCOLL_COLL_REDUCE || r == root);
        size_t off, len;
        kcoll_red_slice(&a, r, &off, &len);
        send[r] = malloc(vec + 1);
        for (size_t i = 0; i < nel; i++)
            input_elem(r, i, send[r] + i * es);
        int has_recv = coll != KCOLL_COLL_REDUCE || r == root;
        int rs = coll == KCOLL_COLL_REDUCE_SCATTER || coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK;
        rlen[r] = !has_recv ? 0 : (rs && !a.in_place) ? len : vec;
        if (a.in_place) {
            recv[r] = send[r];
        } else if (has_recv) {
            recv[r] = malloc(rlen[r] + 1);
            memset(recv[r], 0xee, rlen[r]);
            kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, send[r], vec);
        } else {
            kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, send[r], vec);
        }
        if (has_recv)
            kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, recv[r], rlen[r]);
        if (a.in_place) { /* the same memory under both names */
            kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, send[r], vec);
            kcoll_sim_alias(sim, r, KCOLL_BUF_SEND, KCOLL_BUF_RECV);
        }
        size_t tl = algo->tmp ? algo->tmp(&a) : 0; /* what the call layer gives it */
        tmp[r] = malloc(tl);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, tmp[r], tl);
        if (algo->build(&a, kcoll_sim_sched(sim, r))) {
            CHECK(0, "%s %s p=%d: builder failed on rank %d", kcoll_coll_name(coll), algo->name, p, r);
            ok = 0;
        }
    }
    /* the expected vector, right to left */
    uint8_t *want = malloc(nel ? vec : 1), elem[8];
    const int by_levels = algo->levels && grouped(lv, op);
    for (size_t i = 0; i < nel; i++) {
        if (by_levels) {
            ref_grouped(lv, p, coll == KCOLL_COLL_REDUCE ? root : 0, i, es, want + i * es);
            continue;
        }
        input_elem(p - 1, i, want + i * es);
        for (int q = p - 2; q >= 0; q--) {
            input_elem(q, i, elem);
            ref_combine(elem, want + i * es);
        }
    }
    if (ok && kcoll_sim_run(sim, seed) != KCOLL_OK) {
        CHECK(0, "%s %s %s p=%d root=%d count=%zu in_place=%d k=%d: %s", kcoll_coll_name(coll),
              algo->name, use_double ? "double SUM" : "affine", p, root, count, in_place, k,
              kcoll_sim_error(sim));
        ok = 0;
    }
    for (int r = 0; ok && r < p; r++) {
        kcoll_args_t a = a0;
        a.rank = r;
        a.in_place = in_place && (coll != KCOLL_COLL_REDUCE || r == root);
        size_t off, len;
        kcoll_red_slice(&a, r, &off, &len);
        /* where the result lies in RECV and which part of the vector it is */
        size_t roff = 0, rbytes = 0, voff = 0;
        if (coll == KCOLL_COLL_ALLREDUCE || (coll == KCOLL_COLL_REDUCE && r == root))
            rbytes = vec;
        else if (coll != KCOLL_COLL_REDUCE) {
            rbytes = len;
            voff = off;
        }
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        for (size_t i = 0; ok && i < rlen[r]; i++) {
            int inside = i >= roff && i < roff + rbytes;
            if (inside && (w[i] < 1 || w[i] > p)) {
                CHECK(0, "%s %s p=%d root=%d count=%zu in_place=%d: rank %d result byte %zu written %u times",
                      kcoll_coll_name(coll), algo->name, p, root, count, in_place, r, i, w[i]);
                ok = 0;
            } else if (!inside && w[i]) {
                CHECK(0, "%s %s p=%d: rank %d RECV byte %zu outside the result written",
                      kcoll_coll_name(coll), algo->name, p, r, i);
                ok = 0;
            } else if (inside && recv[r][i] != want[voff + i - roff]) {
                CHECK(0, "%s %s p=%d root=%d count=%zu in_place=%d k=%d: rank %d result byte %zu wrong",
                      kcoll_coll_name(coll), algo->name, p, root, count, in_place, k, r, i);
                ok = 0;
            }
        }
        const uint16_t *ws = kcoll_sim_writes(sim, r, KCOLL_BUF_SEND);
        for (size_t i = 0; ok && i < vec; i++)
            if (ws[i]) {
                CHECK(0, "%s %s p=%d: rank %d SEND byte %zu written", kcoll_coll_name(coll),
                      algo->name, p, r, i);
                ok = 0;
            }
    }
    if (ok)
        CHECK(1, "ok");
    for (int r = 0; r < p; r++) {
        if (recv[r] != send[r])
            free(recv[r]);
        free(send[r]);
        free(tmp[r]);
    }
    free(send);
    free(recv);
    free(tmp);
    free(rlen);
    free(want);
    free(counts);
    kcoll_sim_free(sim);
    return ok;
}

int main(void)
{
    static const kcoll_coll_t colls[] = {KCOLL_COLL_REDUCE, KCOLL_COLL_ALLREDUCE,
                                         KCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                         KCOLL_COLL_REDUCE_SCATTER};
    static const size_t counts[] = {0, 1, 37, 20011};
    long runs = 0;
    for (use_double = 0; use_double < 2; use_double++)
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
        kcoll_coll_t coll = colls[ci];
        for (int ai = 0; ai < kcoll_nalgos; ai++) {
            const kcoll_algo_t *algo = &kcoll_algos[ai];
            /* hier: below, with levels (without, it is partitioned) */
            if (algo->family != kcoll_coll_family(coll) || algo->levels)
                continue;
            for (int p = 1; p <= (use_double ? 24 : 64); p++)
                for (size_t si = 0; si < sizeof counts / sizeof counts[0]; si++) {
                    size_t count = counts[si];
                    /* the large count: block collectives get p times it */
                    if (count > 1000 && (p > 16 || (coll != KCOLL_COLL_REDUCE &&
                                                    coll != KCOLL_COLL_ALLREDUCE && p > 6)))
                        continue;
                    int nroots = coll == KCOLL_COLL_REDUCE ? p : 1;
                    for (int root = 0; root < nroots; root++) {
                        if (p > 8 && root != 0 && root != 1 && root != p / 2 && root != p - 1)
                            continue;
                        for (int in_place = 0; in_place < 2; in_place++) {
                            /* 4 KiB chunks: many chunks per slice; the default: one */
                            int k = count > 1000 ? ((root + in_place) % 2 ? 4 : 128) : 4;
                            check_one(algo, coll, p, root, count, in_place, k,
                                      (unsigned)(root + si + (size_t)in_place) % 3, NULL);
                            runs++;
                        }
                    }
                }
        }
    }
    /* the hierarchical algorithms on 2- and 3-level topologies: grouped
     * by the levels (the affine operation only where the groups are runs
     * of ranks: elsewhere they run flat), both operations; every root of
     * a Reduce up to 8 ranks, four beyond; without levels (shape 0, the
     * flat partitioned algorithm) up to 8 ranks */
    for (use_double = 0; use_double < 2; use_double++)
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
        const kcoll_algo_t *hier = kcoll_algo_find(colls[ci], "hier");
        for (int shape = 0; hier && shape < LEVEL_SHAPES; shape++)
            for (int p = 1; p <= (shape ? use_double ? 24 : 64 : 8); p++) {
                kcoll_levels_t lv;
                levels_fixture(&lv, p, shape);
                int nroots = colls[ci] == KCOLL_COLL_REDUCE ? p : 1;
                for (size_t si = 0; si < sizeof counts / sizeof counts[0]; si++) {
                    /* the large count: block collectives get p times it */
                    if (counts[si] > 1000 &&
                        (p > 16 || (colls[ci] != KCOLL_COLL_REDUCE &&
                                    colls[ci] != KCOLL_COLL_ALLREDUCE && p > 6)))
                        continue;
                    for (int root = 0; root < nroots; root++) {
                        if ((p > 8 || counts[si] > 1000) && root != 0 && root != 1 &&
                            root != p / 2 && root != p - 1)
                            continue;
                        for (int in_place = 0; in_place < 2; in_place++) {
                            /* 4 KiB chunks (small scratch) but for half of the large counts */
                            int k = counts[si] > 1000 && (in_place + root) % 2 ? 128 : 4;
                            check_one(hier, colls[ci], p, root, counts[si], in_place, k,
                                      (unsigned)(si + (size_t)in_place + (size_t)shape) % 3, &lv);
                            runs++;
                        }
                    }
                }
                kcoll_levels_free(&lv);
            }
    }
    printf("%ld simulated reductions\n", runs);
    return check_report("test_reduce_sim");
}
