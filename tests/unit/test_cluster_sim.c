/* Schedules of calls spanning nodes (src/cluster/), checked by the
 * simulator with ranks on nodes and host collectives between them.
 *
 * First the simulator's own model of host collectives: one rank per node,
 * each kind on a group, results against a reference computed here.
 *
 * Then the Allreduce layouts (leaders, lanes) on node shapes 2x2, 2x3,
 * 3x2, 4x1, uneven 3+2+1, the same ranks placed round-robin, and 8 nodes
 * of 1 to 16 ranks, in blocks and round-robin: every rank's RECV must hold
 * the reference byte for byte, with no deadlock, race, use after return or
 * mismatch of host collectives, for vectors of 0, 1, odd and several
 * chunks, in place and not, under interleavings drawn from seeds (the
 * segment is 64 bytes: the lanes Allreduce of 37 and 1200 elements runs in
 * pieces, each crossing the nodes while the next is reduced). The
 * operations: int32 SUM, and a user function that is not commutative
 * (composition of affine maps modulo 2^32), which the layouts must combine
 * in rank order where the nodes' ranks are consecutive and refuse where
 * they are not.
 *
 * Last, mutants the simulator must catch: a READ across nodes, a rank
 * that starts its lanes in another order (whole, blocking host calls), a
 * rank that waits for a piece's lanes only after the node shared that
 * piece, a leader whose host collective
 * has another shape, two host collectives of a group started in swapped
 * order on one rank, a host collective on a group the rank is not in, a
 * lanes schedule stripped of the wait before its allgather, and one
 * leader alone passing MPI_IN_PLACE to its host Allreduce. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster/cluster.h"
#include "op/op.h"
#include "sched/sim.h"
#include "cluster_fixture.h"

/* -- the simulator's host collectives, one rank per node -- */

/* n ranks, one per node, all in group 0 (rank q is group rank q), each
 * running host collective kind `coll` (root 1 where rooted), blocks of B
 * bytes, in place or not; returns the failures. */
static int host_kind(int coll, int n, size_t B, int in_place)
{
    enum { MAXN = 5 };
    const size_t N = (size_t)n * B;
    uint8_t send[MAXN][64], recv[MAXN][64], want[MAXN][64];
    int node_of[MAXN], members[MAXN], bad = 0;
    const int root = n > 1 ? 1 : 0;
    kcoll_sim_t *sim = kcoll_sim_new(n);
    for (int q = 0; q < n; q++)
        node_of[q] = members[q] = q;
    kcoll_sim_set_nodes(sim, node_of);
    kcoll_sim_set_group(sim, 0, n, members);
    kcoll_sim_set_op(sim, &isum);
    for (int q = 0; q < n; q++) {
        for (size_t i = 0; i < N; i += 4)
            input(&isum, q, i, send[q] + i);
        memset(recv[q], 0xee, sizeof recv[q]);
        if (in_place || (coll == KCOLL_XC_BCAST && q == root))
            memcpy(recv[q], send[q], sizeof recv[q]); /* the data in the receive side */
    }
    /* the reference, from the inputs */
    memcpy(want, recv, sizeof want);
    for (int q = 0; q < n; q++) {
        uint8_t acc[64];
        switch (coll) {
        case KCOLL_XC_ALLREDUCE:
        case KCOLL_XC_REDUCE:
            if (coll == KCOLL_XC_REDUCE && q != root)
                break;
            for (size_t i = 0; i < B; i += 4)
                reference(&isum, n, i, want[q] + i);
            break;
        case KCOLL_XC_REDUCE_SCATTER_BLOCK:
            for (size_t i = 0; i < B; i += 4)
                reference(&isum, n, (size_t)q * B + i, acc + i);
            memcpy(want[q], acc, B);
            break;
        case KCOLL_XC_BCAST:
            memcpy(want[q], send[root], B);
            break;
        case KCOLL_XC_ALLGATHER:
        case KCOLL_XC_GATHER:
            if (coll == KCOLL_XC_GATHER && q != root)
                break;
            for (int o = 0; o < n; o++) /* in place: a gather's root, all of an allgather,
                                          * keep the own block at its place */
                memcpy(want[q] + (size_t)o * B,
                       in_place && (coll == KCOLL_XC_ALLGATHER || o == root)
                           ? send[o] + (size_t)o * B
                           : send[o],
                       B);
            break;
        case KCOLL_XC_SCATTER:
            if (!(in_place && q == root))
                memcpy(want[q], send[root] + (size_t)q * B, B);
            break;
        }
    }
    for (int q = 0; q < n; q++) {
        kcoll_xcoll_t x = {.coll = (uint8_t)coll, .sbuf = KCOLL_BUF_SEND, .rbuf = KCOLL_BUF_RECV,
                           .group = 0, .len = B, .esize = 4};
        if (coll == KCOLL_XC_REDUCE || coll == KCOLL_XC_BCAST || coll == KCOLL_XC_GATHER ||
            coll == KCOLL_XC_SCATTER)
            x.root = root;
        if (in_place || coll == KCOLL_XC_BCAST)
            x.sbuf = KCOLL_BUF_RECV;
        kcoll_sim_set_buffer(sim, q, KCOLL_BUF_SEND, send[q], sizeof send[q]);
        kcoll_sim_set_buffer(sim, q, KCOLL_BUF_RECV, recv[q], sizeof recv[q]);
        kcoll_sched_xcoll(kcoll_sim_sched(sim, q), &x);
    }
    kcoll_status_t rc = kcoll_sim_run(sim, 3);
    CHECK(rc == KCOLL_OK, "host %s n %d: %s", kcoll_xcoll_name(coll), n, kcoll_sim_error(sim));
    bad += rc != KCOLL_OK;
    for (int q = 0; q < n && !rc; q++) {
        int ok = !memcmp(recv[q], want[q], sizeof recv[q]);
        CHECK(ok, "host %s n %d in_place %d: rank %d's result", kcoll_xcoll_name(coll), n,
              in_place, q);
        bad += !ok;
    }
    kcoll_sim_free(sim);
    return bad;
}

/* -- the Allreduce layouts -- */

/* The layouts as the request engine finds them (src/cluster/registry.c). */
#define LEADERS kcoll_cluster_find(KCOLL_COLL_ALLREDUCE, 0)
#define LANES kcoll_cluster_find(KCOLL_COLL_ALLREDUCE, 1)

static void test_layouts(void)
{
    static const size_t counts[] = {0, 1, 5, 37, 1200};
    int node_of[64];
    char why[900];
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const shape_t *sh = &shapes[si];
        const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
        const int big = p > 16;
        kcoll_cluster_t cl;
        int peer_of[64];
        kcoll_cluster_make(&cl, peer_of, p, node_of, 0);
        for (int li = 0; li < 2; li++) {
            const layout_t *ly = li ? LANES : LEADERS;
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                if (big && (ci == 1 || ci == 3))
                    continue;
                for (int ip = 0; ip < 2; ip++)
                    for (int o = 0; o < 2; o++) {
                        const kcoll_op_t *op = o ? &affine_op : &isum;
                        unsigned seeds[] = {0, 5 + (unsigned)ci, 77};
                        for (int k = 0; k < (big ? 1 : 3); k++) {
                            /* 4 KiB chunks (the smallest), so 1200 elements take several */
                            int rc = cluster_run(ly, p, node_of, 0, counts[ci], op, ip, 4,
                                                   seeds[k], NULL, why, sizeof why);
                            if (o && !cl.ordered) {
                                CHECK(rc == 1, "%s %s: a non-commutative op across "
                                      "non-consecutive nodes must be refused (got %d)",
                                      sh->name, ly->name, rc);
                                break;
                            }
                            CHECK(rc == 0, "%s %s count %zu in_place %d op %s seed %u: %s",
                                  sh->name, ly->name, counts[ci], ip, o ? "affine" : "isum",
                                  seeds[k], rc == 1 ? "refused" : why);
                        }
                    }
            }
        }
    }
}

/* -- Reduce_scatter(_block), leaders -- */

/* Both forms in both layouts on every shape, uneven and round robin
 * included, blocks of 0..count elements for the v form (zeros among
 * them), in place and not: every rank's RECV holds its block of the
 * rank-order reduction; a non-commutative user operation runs where the
 * nodes' ranks are consecutive and is refused elsewhere, a commutative one
 * runs anywhere; then 8 nodes of 1 to 16 ranks, and 8 x 16 blocked and
 * round robin. */
static void test_reduce_scatter(void)
{
    static const size_t counts[] = {0, 1, 5, 37};
    static const kcoll_coll_t colls[] = {KCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                         KCOLL_COLL_REDUCE_SCATTER};
    static const int big[8] = {16, 16, 16, 16, 16, 16, 16, 16};
    const kcoll_op_t *const ops[] = {&isum, &affine_op, &usum};
    int node_of[128], peer_of[128];
    char why[900];
    for (int lanes = 0; lanes < 2; lanes++)
        for (size_t k = 0; k < 2; k++) {
            const layout_t *ly = kcoll_cluster_find(colls[k], lanes);
            CHECK(ly != NULL, "%s has a %s layout", k ? "Reduce_scatter" : "Reduce_scatter_block",
                  lanes ? "lanes" : "leaders");
            if (!ly)
                continue;
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
                const shape_t *sh = &shapes[si];
                const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
                kcoll_cluster_t cl;
                kcoll_cluster_make(&cl, peer_of, p, node_of, 0);
                for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                    for (int ip = 0; ip < 2; ip++)
                        for (int o = 0; o < 3; o++) {
                            if (p > 16 && (ci == 1 || o == 2))
                                continue;
                            int rc = cluster_run(ly, p, node_of, 0, counts[ci], ops[o], ip, 4,
                                                 (unsigned)(ci * 5 + ip + o), NULL, why,
                                                 sizeof why);
                            if (o == 1 && !cl.ordered) {
                                CHECK(rc == 1, "%s %s: a non-commutative op across "
                                      "non-consecutive nodes must be refused (got %d)", sh->name,
                                      ly->name, rc);
                                continue;
                            }
                            CHECK(rc == 0, "%s %s count %zu in_place %d op %d: %s", sh->name,
                                  ly->name, counts[ci], ip, o, rc == 1 ? "refused" : why);
                        }
            }
            for (int rr = 0; lanes && rr < 2; rr++) {
                const int p = place(big, 8, rr, node_of);
                int rc = cluster_run(ly, p, node_of, 0, 9, &isum, rr, 4, 3, NULL, why, sizeof why);
                CHECK(rc == 0, "8 x 16 %s %s: %s", rr ? "round-robin" : "blocked", ly->name,
                      rc == 1 ? "refused" : why);
            }
        }
}

/* -- the Barrier -- */

/* The leaders' Barrier on every shape: no deadlock, race or mismatch under
 * any interleaving drawn; the host Barrier on the leaders' group started
 * by every node's leader, once, and by nobody else; nothing else crosses
 * the nodes. Then a leader that leaves out its host Barrier must be
 * caught (the other leaders wait in theirs). */
static void test_barrier(void)
{
    const kcoll_cluster_algo_t *ly = kcoll_cluster_find(KCOLL_COLL_BARRIER, 0);
    CHECK(ly && !kcoll_cluster_find(KCOLL_COLL_BARRIER, 1),
          "the Barrier runs across nodes in the leaders' layout only");
    if (!ly)
        return;
    int node_of[128], peer_of[128], members[128];
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const shape_t *sh = &shapes[si];
        const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
        for (int mutant = 0; mutant < 2; mutant++)
            for (unsigned seed = 0; seed < 4; seed++) {
                kcoll_sim_t *sim = kcoll_sim_new(p);
                kcoll_cluster_t cl;
                int starts = 0, left_out = -1;
                kcoll_sim_set_nodes(sim, node_of);
                kcoll_cluster_make(&cl, peer_of, p, node_of, 0);
                for (int g = 0; g <= cl.lanes; g++)
                    kcoll_sim_set_group(sim, g, kcoll_cluster_group(p, node_of, g, members),
                                        members);
                for (int r = 0; r < p; r++) {
                    kcoll_cluster_make(&cl, peer_of, p, node_of, r);
                    kcoll_args_t a = {.coll = KCOLL_COLL_BARRIER, .p = p, .rank = r};
                    kcoll_sched_t *s = kcoll_sim_sched(sim, r);
                    CHECK(ly->build(&a, &cl, 0, 0, s) == KCOLL_OK, "%s rank %d: built",
                          sh->name, r);
                    for (int i = 0; i < s->nxc; i++) {
                        const int ok = s->xc[i].coll == KCOLL_XC_BARRIER &&
                                       s->xc[i].group == KCOLL_CLUSTER_LEADERS && cl.me == 0;
                        CHECK(ok, "%s rank %d: host collective %d is the leaders' Barrier",
                              sh->name, r, i);
                        starts++;
                    }
                    if (mutant && cl.node == 1 && cl.me == 0 && left_out < 0) {
                        s->n = 0; /* the leader of node 1 starts nothing */
                        left_out = r;
                    }
                }
                CHECK(starts == (sh->nodes > 1 ? sh->nodes : 0),
                      "%s: %d host Barriers started, one per node's leader", sh->name, starts);
                const kcoll_status_t rc = kcoll_sim_run(sim, seed);
                if (!mutant)
                    CHECK(rc == KCOLL_OK, "%s barrier seed %u: %s", sh->name, seed,
                          kcoll_sim_error(sim));
                else if (left_out >= 0)
                    CHECK(rc != KCOLL_OK && strstr(kcoll_sim_error(sim), "deadlock"),
                          "%s barrier without node 1's host Barrier must deadlock (seed %u): "
                          "got %s", sh->name, seed, rc ? kcoll_sim_error(sim) : "ok");
                kcoll_sim_free(sim);
            }
    }
}

/* -- mutants -- */

/* rank 2 (node 0 of 2x2) reads from rank 1 (node 1) */
static void mut_cross_read(kcoll_sim_t *sim, int p, const int *node_of)
{
    (void)p;
    (void)node_of;
    kcoll_sched_read(kcoll_sim_sched(sim, 0), 2, KCOLL_BUF_SEND, 0, KCOLL_BUF_TMP, 0, 4);
}


/* node 1's leader broadcasts where the others allreduce */
static void mut_shape(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 1, 0));
    s->xc[0].coll = KCOLL_XC_BCAST;
}

/* every leader adds a second, shorter host Allreduce on the leaders' group
 * after the first; node 1's leader runs the two the other way round */
static void mut_swap(kcoll_sim_t *sim, int p, const int *node_of)
{
    for (int k = 0; k < 2; k++) {
        kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, k, 0));
        kcoll_xcoll_t x = s->xc[0];
        x.len = x.esize;
        kcoll_sched_xcoll(s, &x);
        if (k == 1) {
            kcoll_xcoll_t t = s->xc[0];
            s->xc[0] = s->xc[1];
            s->xc[1] = t;
        }
    }
}

/* node 0's second rank names lane 0, which node 0's first rank carries */
static void mut_not_member(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 0, 1));
    s->xc[0].group = KCOLL_CLUSTER_LANE(0);
}

/* node 0's second rank does not wait for the others' lanes before the
 * allgather */
static void mut_no_sync(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 0, 1));
    int k = 0;
    for (int i = 0; i < s->n; i++)
        if (!(s->steps[i].kind == KCOLL_STEP_WAIT && s->steps[i].flag == KCOLL_FLAG_AUX))
            s->steps[k++] = s->steps[i];
    s->n = k;
}

/* node 1's leader passes MPI_IN_PLACE to its host Allreduce where the
 * others do not, or the other way round */
static void mut_in_place(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_xcoll_t *x = &kcoll_sim_sched(sim, first_of_node(p, node_of, 1, 0))->xc[0];
    if (kcoll_xcoll_in_place(x))
        x->sbuf = x->rbuf == KCOLL_BUF_SEND ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
    else {
        x->sbuf = x->rbuf;
        x->soff = x->roff;
    }
}

/* node 0's second rank waits for its first split host collective only
 * at the end (after the node's ranks shared that piece) */
static void mut_late_end(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 0, 1));
    for (int i = 0; i < s->n; i++)
        if (s->steps[i].kind == KCOLL_STEP_EXTERN && s->steps[i].xpart == KCOLL_XPART_END) {
            const kcoll_step_t end = s->steps[i];
            memmove(&s->steps[i], &s->steps[i + 1], (size_t)(s->n - i - 1) * sizeof end);
            s->steps[s->n - 1] = end;
            return;
        }
}

/* count elements: 64 (256 bytes) go in 4 pieces of the tests' 64-byte
 * segment, 16 in one */
static void expect_caught_n(const layout_t *ly, const shape_t *sh, mutant_fn m, int in_place,
                            size_t count, const char *what, const char *finding)
{
    int node_of[64];
    char why[900] = "";
    const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
    for (unsigned seed = 0; seed < 4; seed++) {
        int rc = cluster_run(ly, p, node_of, 0, count, &isum, in_place, 4, seed, m, why,
                             sizeof why);
        CHECK(rc == -1 && strstr(why, finding), "%s (%s, %s, seed %u) must be caught as \"%s\": "
              "got %d %s", what, ly->name, sh->name, seed, finding, rc, why);
    }
}

static void expect_caught(const layout_t *ly, const shape_t *sh, mutant_fn m, int in_place,
                          const char *what, const char *finding)
{
    expect_caught_n(ly, sh, m, in_place, 64, what, finding);
}

static void test_mutants(void)
{
    const shape_t two = {"2x2", 2, {2, 2}, 0}, uneven = {"3+2+1", 3, {3, 2, 1}, 0};
    expect_caught(LEADERS, &two, mut_cross_read, 0, "a READ across nodes",
                  "only host collectives cross nodes");
    /* (whole: blocking host calls; split ones may start in any order) */
    expect_caught_n(LANES, &uneven, mut_lane_order, 0, 16, "lanes in another order", "deadlock");
    expect_caught(LANES, &two, mut_late_end, 0, "a piece shared before its lanes are in",
                  "race");
    expect_caught(LEADERS, &two, mut_shape, 0, "a leader's other host collective",
                  "does not match");
    expect_caught(LEADERS, &uneven, mut_swap, 0, "two host collectives swapped",
                  "does not match");
    expect_caught(LANES, &two, mut_not_member, 0, "a host collective on a foreign group",
                  "not a member");
    expect_caught(LEADERS, &two, mut_in_place, 0, "MPI_IN_PLACE on one leader only",
                  "every member's or none's");
    /* in place, where the reduce-scatter exposed RECV (as SEND) long
     * before: without the wait the allgather reads a peer's lane share
     * before the peer has put it there (its reduce-scatter's last copy,
     * then its lane's host Allreduce). Not in place, the first exposure of
     * RECV comes after the lanes and orders the reads by itself. */
    expect_caught(LANES, &two, mut_no_sync, 1, "an allgather before the lanes are in",
                  "race");
}

int main(void)
{
    static const int kinds[] = {KCOLL_XC_ALLREDUCE, KCOLL_XC_REDUCE, KCOLL_XC_BCAST,
                                KCOLL_XC_ALLGATHER, KCOLL_XC_REDUCE_SCATTER_BLOCK,
                                KCOLL_XC_GATHER, KCOLL_XC_SCATTER, KCOLL_XC_BARRIER};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int n = 1; n <= 5; n += 2)
            for (int ip = 0; ip < 2; ip++)
                if (!(ip && (kinds[k] == KCOLL_XC_BCAST)))
                    host_kind(kinds[k], n, 8, ip);
    test_layouts();
    test_reduce_scatter();
    test_barrier();
    test_mutants();
    return check_report("test_cluster_sim");
}
