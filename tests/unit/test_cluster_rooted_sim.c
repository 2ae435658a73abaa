/* Rooted calls spanning nodes (src/cluster/: MPI_Bcast and MPI_Reduce,
 * leaders and lanes layouts), checked by the simulator with ranks on
 * nodes and host collectives between them.
 *
 * On the node shapes of test_cluster_sim.c (2x2, 2x3, 3x2, 4x1, uneven,
 * round-robin, 8 nodes of 1 to 16 ranks), with the root on every node, as
 * its first and its last local rank: Bcast must leave the root's vector in
 * every rank's RECV byte for byte, never writing the root's; Reduce must
 * leave the rank-order reduction in the root's RECV (in place and not),
 * never touching a non-root's RECV nor anyone's SEND; no deadlock, race,
 * use after return or mismatch of host collectives; sizes 0, 1, odd and
 * several chunks; interleavings drawn from seeds. Reduce runs int32 SUM
 * and the non-commutative affine user function, combined in rank order
 * where the nodes' ranks are consecutive and refused where not.
 *
 * Last, mutants the simulator must catch: a leader naming another root in
 * its host Bcast, a lane's member naming another root in its host Reduce,
 * a leader starting another kind of host collective, and a rank alone on
 * its node starting its lanes in another order. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster/cluster.h"
#include "op/op.h"
#include "sched/sim.h"
#include "cluster_fixture.h"

typedef kcoll_status_t (*rooted_fn)(const kcoll_args_t *, const kcoll_cluster_t *, int, int,
                                    kcoll_sched_t *);
typedef size_t (*rooted_tmp_fn)(const kcoll_args_t *, const kcoll_cluster_t *, int, int);

typedef struct {
    const char *name;
    kcoll_coll_t coll; /* KCOLL_COLL_BCAST or KCOLL_COLL_REDUCE */
    rooted_fn build;
    rooted_tmp_fn tmp; /* NULL: no scratch */
} layout_t;

static const layout_t layouts[] = {
    {"bcast leaders", KCOLL_COLL_BCAST, kcoll_cluster_bcast_leaders, NULL},
    {"bcast lanes", KCOLL_COLL_BCAST, kcoll_cluster_bcast_lanes, NULL},
    {"reduce leaders", KCOLL_COLL_REDUCE, kcoll_cluster_reduce_leaders,
     kcoll_cluster_reduce_leaders_tmp},
    {"reduce lanes", KCOLL_COLL_REDUCE, kcoll_cluster_reduce_lanes, kcoll_cluster_reduce_lanes_tmp},
};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)

typedef void (*mutant_fn)(kcoll_sim_t *sim, int p, const int *node_of);

typedef struct {
    uint8_t *send, *recv, *tmp;
} rank_bufs_t;

/* The first byte of RECV or SEND written where it must not be, or -1. */
static long written(kcoll_sim_t *sim, int r, kcoll_buf_t buf, size_t n)
{
    const uint16_t *w = kcoll_sim_writes(sim, r, buf);
    for (size_t i = 0; w && i < n; i++)
        if (w[i])
            return (long)i;
    return -1;
}

/* One simulated call with root `root` (a communicator rank): 0 all good,
 * 1 refused by the builder, -1 a finding (its text in why). Bcast moves
 * count bytes, Reduce count elements of op. */
static int run_rooted(const layout_t *ly, int p, const int *node_of, int root, size_t count,
                      const kcoll_op_t *op, int in_place, int chunk, unsigned seed,
                      mutant_fn mutant, char *why, size_t whylen)
{
    const int bc = ly->coll == KCOLL_COLL_BCAST;
    const size_t es = bc ? 1 : op->esize, n = count * es;
    kcoll_sim_t *sim = kcoll_sim_new(p);
    rank_bufs_t *b = calloc((size_t)p, sizeof *b);
    int *peer_of = malloc((size_t)p * sizeof *peer_of), *members = malloc((size_t)p * sizeof *members);
    int result = 0, rnode, rlocal;
    uint8_t *want = malloc(n + 8);
    kcoll_sim_set_nodes(sim, node_of);
    if (!bc)
        kcoll_sim_set_op(sim, op);
    kcoll_cluster_t cl;
    kcoll_cluster_make(&cl, peer_of, p, node_of, 0);
    kcoll_cluster_locate(p, node_of, root, &rnode, &rlocal);
    for (int g = 0; g <= cl.lanes; g++) { /* the leaders and every lane */
        int m = kcoll_cluster_group(p, node_of, g, members);
        kcoll_sim_set_group(sim, g, m, members);
    }
    for (int r = 0; r < p; r++) {
        kcoll_cluster_make(&cl, peer_of, p, node_of, r);
        const int ip = in_place && r == root && !bc;
        kcoll_args_t a = {.coll = ly->coll, .p = p, .rank = r, .root = root, .count = count,
                          .esize = es, .op = bc ? NULL : op, .in_place = ip};
        a.prm.chunk = chunk;
        const size_t tl = ly->tmp ? ly->tmp(&a, &cl, rnode, rlocal) : 0;
        b[r].recv = malloc(n + 1);
        b[r].send = bc || ip ? b[r].recv : malloc(n + 1);
        b[r].tmp = malloc(tl + 1);
        memset(b[r].recv, 0xee, n + 1);
        for (size_t i = 0; i < count && (!bc || r == root); i++) {
            if (bc)
                b[r].send[i] = (uint8_t)(r * 31u + i * 7u + 1u);
            else
                input(op, r, i, b[r].send + i * es);
        }
        /* a Bcast's only buffer is RECV; a Reduce's RECV only the root's */
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, b[r].send, n);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, b[r].recv, bc || r == root ? n : 0);
        if (bc || ip)
            kcoll_sim_alias(sim, r, KCOLL_BUF_SEND, KCOLL_BUF_RECV);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, b[r].tmp, tl);
        kcoll_status_t rc = ly->build(&a, &cl, rnode, rlocal, kcoll_sim_sched(sim, r));
        if (rc == KCOLL_ERR_UNSUPPORTED) {
            result = 1;
            goto out;
        }
        if (rc) {
            snprintf(why, whylen, "rank %d: building failed: %s", r, kcoll_status_str(rc));
            result = -1;
            goto out;
        }
    }
    if (bc)
        memcpy(want, b[root].recv, n);
    if (mutant)
        mutant(sim, p, node_of);
    if (kcoll_sim_run(sim, seed) != KCOLL_OK) {
        snprintf(why, whylen, "%s", kcoll_sim_error(sim));
        result = -1;
        goto out;
    }
    for (int r = 0; r < p && !result; r++) {
        long at;
        if (bc || r == root) {
            for (size_t i = 0; i < count && !result; i++) {
                if (!bc)
                    reference(op, p, i, want + i * es);
                if (memcmp(b[r].recv + i * es, want + i * es, es)) {
                    snprintf(why, whylen, "rank %d element %zu differs from the reference", r, i);
                    result = -1;
                }
            }
        }
        if (result)
            break;
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        const int must = bc ? r != root : r == root; /* RECV bytes must all be written */
        for (size_t i = 0; must && i < n; i++)
            if (!w[i]) {
                snprintf(why, whylen, "rank %d RECV byte %zu never written", r, i);
                result = -1;
                break;
            }
        if (bc && r == root && (at = written(sim, r, KCOLL_BUF_RECV, n)) >= 0) {
            snprintf(why, whylen, "the root's RECV byte %ld written", at);
            result = -1;
        }
        if (!bc && !(in_place && r == root) && (at = written(sim, r, KCOLL_BUF_SEND, n)) >= 0) {
            snprintf(why, whylen, "rank %d SEND byte %ld written", r, at);
            result = -1;
        }
    }
out:
    for (int r = 0; r < p; r++) {
        if (b[r].send != b[r].recv)
            free(b[r].send);
        free(b[r].recv);
        free(b[r].tmp);
    }
    free(b);
    free(peer_of);
    free(members);
    free(want);
    kcoll_sim_free(sim);
    return result;
}

/* The roots tried on a shape: every node's first and last local rank (on
 * the 8-node shapes, those of nodes 0, 3 and 7 only). */
static int roots_of(int p, const int *node_of, int nodes, int *roots)
{
    int m = 0, node, local, nnode, nlocal;
    for (int r = 0; r < p; r++) {
        kcoll_cluster_locate(p, node_of, r, &node, &local);
        if (nodes > 4 && node != 0 && node != 3 && node != 7)
            continue;
        int last = 1;
        for (int q = r + 1; q < p && last; q++) {
            kcoll_cluster_locate(p, node_of, q, &nnode, &nlocal);
            last = nnode != node;
        }
        if (local == 0 || last)
            roots[m++] = r;
    }
    return m;
}

static void test_layouts(void)
{
    static const size_t counts[] = {0, 1, 5, 37, 1200};
    int node_of[64], roots[64];
    char why[900];
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const shape_t *sh = &shapes[si];
        const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
        const int big = p > 16, nr = roots_of(p, node_of, sh->nodes, roots);
        kcoll_cluster_t cl;
        int peer_of[64];
        kcoll_cluster_make(&cl, peer_of, p, node_of, 0);
        for (size_t li = 0; li < NLAYOUTS; li++) {
            const layout_t *ly = &layouts[li];
            const int bc = ly->coll == KCOLL_COLL_BCAST;
            for (int ri = 0; ri < nr; ri++)
                for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                    if (big && (ci == 1 || ci == 3))
                        continue;
                    for (int ip = 0; ip < (bc ? 1 : 2); ip++)
                        for (int o = 0; o < (bc ? 1 : 2); o++) {
                            const kcoll_op_t *op = o ? &affine_op : &isum;
                            unsigned seeds[] = {1 + (unsigned)ri, 5 + (unsigned)ci, 77};
                            for (int k = 0; k < (big ? 1 : 2 + bc); k++) {
                                /* 4 KiB chunks (the smallest): 1200 elements take several */
                                int rc = run_rooted(ly, p, node_of, roots[ri], counts[ci], op, ip,
                                                    4, seeds[k], NULL, why, sizeof why);
                                if (!bc && o && !cl.ordered) {
                                    CHECK(rc == 1, "%s %s: a non-commutative op across "
                                          "non-consecutive nodes must be refused (got %d)",
                                          sh->name, ly->name, rc);
                                    break;
                                }
                                CHECK(rc == 0, "%s %s root %d count %zu in_place %d op %s seed "
                                      "%u: %s", sh->name, ly->name, roots[ri], counts[ci], ip,
                                      o ? "affine" : "isum", seeds[k], rc == 1 ? "refused" : why);
                            }
                        }
                }
        }
    }
}

/* -- mutants -- */

/* node 0's leader names node 0 as the root of its host collective */
static void mut_wrong_root(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 0, 0));
    s->xc[0].root = 0;
}

/* node 1's leader broadcasts where the others reduce */
static void mut_shape(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 1, 0));
    s->xc[0].coll = KCOLL_XC_BCAST;
}

/* the rank alone on its node (node 2 of 3+2+1) starts its lanes' host
 * collectives in reverse order */
static void mut_lane_order(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 2, 0));
    int at[16], m = 0;
    for (int i = 0; i < s->n; i++)
        if (s->steps[i].kind == KCOLL_STEP_EXTERN)
            at[m++] = i;
    for (int i = 0; i < m / 2; i++) {
        kcoll_step_t t = s->steps[at[i]];
        s->steps[at[i]] = s->steps[at[m - 1 - i]];
        s->steps[at[m - 1 - i]] = t;
    }
}

static void expect_caught(const layout_t *ly, const shape_t *sh, int root, mutant_fn m,
                          const char *what, const char *finding)
{
    int node_of[64];
    char why[900] = "";
    const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
    for (unsigned seed = 0; seed < 4; seed++) {
        int rc = run_rooted(ly, p, node_of, root, 64, &isum, 0, 4, seed, m, why, sizeof why);
        CHECK(rc == -1 && strstr(why, finding), "%s (%s, %s, seed %u) must be caught as \"%s\": "
              "got %d %s", what, ly->name, sh->name, seed, finding, rc, why);
    }
}

static void test_mutants(void)
{
    const shape_t two = {"2x2", 2, {2, 2}, 0}, uneven = {"3+2+1", 3, {3, 2, 1}, 0};
    /* root: rank 3, node 1's second rank */
    expect_caught(&layouts[0], &two, 3, mut_wrong_root, "a host Bcast with another root",
                  "does not match");
    expect_caught(&layouts[2], &two, 3, mut_shape, "a leader's other host collective",
                  "does not match");
    expect_caught(&layouts[3], &two, 3, mut_wrong_root, "a lane's host Reduce with another root",
                  "does not match");
    /* root: rank 4, node 1's second rank */
    expect_caught(&layouts[1], &uneven, 4, mut_lane_order, "lanes in another order", "deadlock");
}

int main(void)
{
    test_layouts();
    test_mutants();
    return check_report("test_cluster_rooted_sim");
}
