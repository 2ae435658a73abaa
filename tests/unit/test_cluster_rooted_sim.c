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
 * a leader starting another kind of host collective, a rank alone on
 * its node starting its lanes in another order, and in Bcast's lanes a
 * rank of the root's node reading a carrier's shares before the carrier
 * has them, and in Reduce's lanes cut in pieces (the segment is 64 bytes
 * here, so the larger vectors run in pieces throughout) a root that
 * gathers a piece's shares before their carriers' lanes are done. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster/cluster.h"
#include "op/op.h"
#include "sched/sim.h"
#include "cluster_fixture.h"

/* The layouts as the request engine finds them */
static const layout_t *layout_at(int i)
{
    return kcoll_cluster_find(i >= 2 ? KCOLL_COLL_REDUCE : KCOLL_COLL_BCAST, i & 1);
}
#define NLAYOUTS 4

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
            const layout_t *ly = layout_at((int)li);
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
                                int rc = cluster_run(ly, p, node_of, roots[ri], counts[ci], op, ip,
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
/* rank r's schedule without its WAITs on flag */
static void drop_waits(kcoll_sim_t *sim, int r, kcoll_flag_t flag)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, r);
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (s->steps[i].kind != KCOLL_STEP_WAIT || s->steps[i].flag != flag)
            s->steps[n++] = s->steps[i];
    s->n = n;
}

/* on the root's node (node 0), local rank 1 reads its next carrier's
 * shares without waiting for the carrier to have them: its waits for a
 * carrier's DATA dropped (Bcast lanes) */
static void mut_no_carrier_wait(kcoll_sim_t *sim, int p, const int *node_of)
{
    drop_waits(sim, first_of_node(p, node_of, 0, 1), KCOLL_FLAG_DATA);
}

/* the root (node 0's first rank) of a Reduce in pieces gathers each
 * piece's shares without waiting for its carriers' lanes of the piece:
 * its waits for AUX dropped (the carriers' TMP is exposed from the piece
 * before) */
static void mut_no_piece_sync(kcoll_sim_t *sim, int p, const int *node_of)
{
    drop_waits(sim, first_of_node(p, node_of, 0, 0), KCOLL_FLAG_AUX);
}

static void expect_caught(const layout_t *ly, const shape_t *sh, int root, mutant_fn m,
                          const char *what, const char *finding)
{
    int node_of[64];
    char why[900] = "";
    const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
    for (unsigned seed = 0; seed < 4; seed++) {
        int rc = cluster_run(ly, p, node_of, root, 64, &isum, 0, 4, seed, m, why, sizeof why);
        CHECK(rc == -1 && strstr(why, finding), "%s (%s, %s, seed %u) must be caught as \"%s\": "
              "got %d %s", what, ly->name, sh->name, seed, finding, rc, why);
    }
}

static void test_mutants(void)
{
    const shape_t two = {"2x2", 2, {2, 2}, 0}, uneven = {"3+2+1", 3, {3, 2, 1}, 0};
    /* root: rank 3, node 1's second rank */
    expect_caught(layout_at(0), &two, 3, mut_wrong_root, "a host Bcast with another root",
                  "does not match");
    expect_caught(layout_at(2), &two, 3, mut_shape, "a leader's other host collective",
                  "does not match");
    expect_caught(layout_at(3), &two, 3, mut_wrong_root, "a lane's host Reduce with another root",
                  "does not match");
    /* root: rank 4, node 1's second rank */
    expect_caught(layout_at(1), &uneven, 4, mut_lane_order, "lanes in another order", "deadlock");
    /* root: rank 0, node 0's first rank */
    expect_caught(layout_at(1), &uneven, 0, mut_no_carrier_wait,
                  "a reader on the root's node that does not wait for its carrier", "race");
    /* 64 ints in 4 pieces of the tests' 64-byte segment */
    expect_caught(layout_at(3), &two, 0, mut_no_piece_sync,
                  "a Reduce's root that gathers a piece before its carriers' lanes", "race");
}

int main(void)
{
    test_layouts();
    test_mutants();
    return check_report("test_cluster_rooted_sim");
}
