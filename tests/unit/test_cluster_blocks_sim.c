/* The blocked collectives spanning nodes (src/cluster/gather_leaders.c:
 * MPI_Gather(v), MPI_Scatter(v), MPI_Allgather, MPI_Allgatherv in the
 * leaders' layout; allgather_lanes.c: MPI_Allgather(v) in the lanes layout, whole
 * and pipelined in pieces of 5 bytes), checked by the simulator with ranks
 * on nodes and host collectives between them.
 *
 * On the node shapes of cluster_fixture.h (even, uneven, round-robin,
 * 8 nodes of 1 to 16 ranks), with the root on every node as its first and
 * its last local rank, in place and not, blocks of 0, 1, 13 and 64 bytes:
 * every block must arrive at its rank's place byte for byte (the v forms:
 * per-rank counts with zeros among them, gaps between the blocks and
 * blocks in reverse order (an Allgatherv: each rank's own displacements,
 * reversed on some ranks; a Gatherv's and Scatterv's: the root's, on
 * every rank), the gaps never written), no rank's SEND is written, a Gather's non-roots and
 * a Scatter's root receive nothing; no deadlock, race, use after return or
 * mismatch of host collectives under interleavings drawn from seeds.
 *
 * Last, mutants the simulator must catch: a leader that leaves out its
 * host collective (the other leaders wait in theirs), a leader whose
 * host Allgatherv names other run lengths than the rest, and in the
 * pipelined lanes a rank that raises DATA for a piece before its host
 * collective of the piece is done (its node's ranks read a TMP the host
 * may still be writing), or copies a piece out of its TMP before then. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster/cluster.h"
#include "op/op.h"
#include "sched/sim.h"
#include "cluster_fixture.h"

static uint8_t pattern(int q, size_t i)
{
    return (uint8_t)(q * 41u + i * 13u + 5u);
}

/* Allgatherv: rank q's count (zeros among them) */
static size_t vcount(int q, size_t b)
{
    return b ? ((size_t)q * 7 + 3) % (b + 1) : 0;
}

/* Rank r's displacements of an Allgatherv: gaps of r % 3 bytes between
 * the blocks, and on odd ranks the blocks in reverse order. Returns the
 * span. */
static size_t vdispls(int r, int p, const size_t *cnt, size_t *dsp)
{
    size_t at = 0;
    const size_t gap = (size_t)(r % 3);
    for (int j = 0; j < p; j++) {
        const int q = r % 2 ? p - 1 - j : j;
        dsp[q] = at;
        at += cnt[q] + gap;
    }
    return at;
}

/* The lanes' pieces (cl->segment) of the runs that follow; 0: whole. */
static size_t segment;

typedef struct {
    uint8_t *send, *recv, *tmp;
    size_t *dsp;
    kcoll_layout_t lay;
} bufs_t;

/* One simulated call of collective coll (GATHER, SCATTER, ALLGATHER,
 * ALLGATHERV): 0 good, 1 refused by the builder, -1 a finding (why). */
static int blocks_run(kcoll_coll_t coll, int lanes, int p, const int *node_of, int root,
                      size_t b, int in_place, unsigned seed, mutant_fn mutant, char *why,
                      size_t whylen)
{
    const layout_t *ly = kcoll_cluster_find(coll, lanes);
    const int gather = coll == KCOLL_COLL_GATHER || coll == KCOLL_COLL_GATHERV;
    const int scatter = coll == KCOLL_COLL_SCATTER || coll == KCOLL_COLL_SCATTERV;
    /* a Gatherv's or Scatterv's layout is the root's on every rank (its
     * agreement, span/run.c) */
    const int rv = coll == KCOLL_COLL_GATHERV || coll == KCOLL_COLL_SCATTERV;
    const int v = coll == KCOLL_COLL_ALLGATHERV || rv, all = !gather && !scatter;
    kcoll_sim_t *sim = kcoll_sim_new(p);
    bufs_t *bf = calloc((size_t)p, sizeof *bf);
    size_t *cnt = calloc((size_t)p, sizeof *cnt);
    int *peer_of = malloc((size_t)p * sizeof *peer_of);
    int result = 0, rnode = 0, rlocal = 0;
    if (!ly) {
        snprintf(why, whylen, "%s has no %s layout", kcoll_coll_name(coll),
                 lanes ? "lanes" : "leaders'");
        result = -1;
        goto out0;
    }
    for (int q = 0; q < p; q++)
        cnt[q] = v ? vcount(q, b) : b;
    kcoll_cluster_t cl;
    int *rank_of = cluster_sim_nodes(sim, p, node_of);
    if (!all)
        kcoll_cluster_locate(p, node_of, root, &rnode, &rlocal);
    for (int r = 0; r < p; r++) {
        kcoll_cluster_make(&cl, peer_of, p, node_of, r);
        cl.rank_of = rank_of;
        cl.segment = segment;
        const int is_root = !all && r == root, ip = in_place && (all || is_root);
        bufs_t *B = &bf[r];
        /* the full buffer: every rank's of an Allgather(v), the root's otherwise */
        const int full = all || is_root;
        B->dsp = calloc((size_t)p, sizeof *B->dsp);
        size_t span = (size_t)p * b;
        if (v) {
            span = vdispls(rv ? root : r, p, cnt, B->dsp);
            B->lay = (kcoll_layout_t){.rcount = cnt, .rdispl = B->dsp};
        }
        kcoll_args_t a = {.coll = coll, .p = p, .rank = r, .root = root, .bytes = b,
                          .in_place = ip, .lay = v ? &B->lay : NULL};
        const size_t tl = ly->tmp ? ly->tmp(&a, &cl, rnode, rlocal) : 0;
        const size_t own = cnt[r];
        /* sides as the call layer gives them (call/fam_*.c) */
        size_t slen = 0, rlen = 0;
        if (gather || all) {
            slen = ip ? 0 : own;
            rlen = full ? span : 0;
        } else { /* scatter */
            slen = is_root ? span : 0;
            rlen = ip ? 0 : own;
        }
        B->send = malloc(slen + 1);
        B->recv = malloc(rlen + 1);
        B->tmp = malloc(tl + 1);
        memset(B->recv, 0xee, rlen + 1);
        memset(B->send, 0xdd, slen + 1);
        const size_t at = v ? B->dsp[r] : (size_t)r * b;
        if (scatter && is_root)
            for (int q = 0; q < p; q++)
                for (size_t i = 0; i < cnt[q]; i++)
                    B->send[(v ? B->dsp[q] : (size_t)q * b) + i] = pattern(q, i);
        else if (!scatter && ip)
            for (size_t i = 0; i < own; i++)
                B->recv[at + i] = pattern(r, i);
        else if (!scatter)
            for (size_t i = 0; i < own; i++)
                B->send[i] = pattern(r, i);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, B->send, slen);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, B->recv, rlen);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, B->tmp, tl);
        if ((result = cluster_build(ly, &a, &cl, rnode, rlocal, sim, r, why, whylen)))
            goto out;
    }
    if ((result = cluster_sim(sim, mutant, p, node_of, seed, why, whylen)))
        goto out;
    for (int r = 0; r < p && !result; r++) {
        const bufs_t *B = &bf[r];
        const int is_root = !all && r == root, ip = in_place && (all || is_root);
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        long wat;
        if (scatter) {
            for (size_t i = 0; !ip && i < cnt[r] && !result; i++)
                if (B->recv[i] != pattern(r, i)) {
                    snprintf(why, whylen, "rank %d byte %zu of its block differs", r, i);
                    result = -1;
                }
        } else if (all || is_root) {
            size_t span = v ? 0 : (size_t)p * b;
            for (int q = 0; q < p && !result; q++) {
                const size_t at = v ? B->dsp[q] : (size_t)q * b;
                if (v && at + cnt[q] > span)
                    span = at + cnt[q];
                for (size_t i = 0; i < cnt[q]; i++)
                    if (B->recv[at + i] != pattern(q, i) || (!w[at + i] && !(ip && q == r))) {
                        snprintf(why, whylen, "rank %d: byte %zu of rank %d's block %s", r, i, q,
                                 B->recv[at + i] != pattern(q, i) ? "differs" : "never written");
                        result = -1;
                        break;
                    }
            }
            /* the gaps between an Allgatherv's blocks stay as they were */
            for (size_t i = 0; v && i < span && !result; i++) {
                int inside = 0;
                for (int q = 0; q < p && !inside; q++)
                    inside = i >= B->dsp[q] && i < B->dsp[q] + cnt[q];
                if (!inside && w[i]) {
                    snprintf(why, whylen, "rank %d: gap byte %zu written", r, i);
                    result = -1;
                }
            }
        }
        size_t sspan = 0;
        for (int q = 0; scatter && is_root && q < p; q++) {
            const size_t end = v ? B->dsp[q] + cnt[q] : (size_t)(q + 1) * b;
            sspan = end > sspan ? end : sspan;
        }
        const size_t slen = scatter ? (is_root ? sspan : 0) : ip ? 0 : cnt[r];
        if (!result && (wat = written(sim, r, KCOLL_BUF_SEND, slen)) >= 0) {
            snprintf(why, whylen, "rank %d SEND byte %ld written", r, wat);
            result = -1;
        }
    }
out:
    for (int r = 0; r < p; r++) {
        free(bf[r].send);
        free(bf[r].recv);
        free(bf[r].tmp);
        free(bf[r].dsp);
    }
    free(rank_of);
out0:
    free(bf);
    free(cnt);
    free(peer_of);
    kcoll_sim_free(sim);
    return result;
}

static const kcoll_coll_t colls[] = {KCOLL_COLL_GATHER,    KCOLL_COLL_SCATTER,
                                     KCOLL_COLL_GATHERV,   KCOLL_COLL_SCATTERV,
                                     KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLGATHERV};

static void test_layouts(void)
{
    static const size_t sizes[] = {0, 1, 13, 64};
    int node_of[128], roots[128];
    char why[900];
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const shape_t *sh = &shapes[si];
        const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
        const int nr = roots_of(p, node_of, sh->nodes, roots);
        for (size_t k = 0; k < sizeof colls / sizeof *colls; k++) {
            const int all = colls[k] == KCOLL_COLL_ALLGATHER || colls[k] == KCOLL_COLL_ALLGATHERV;
            /* lanes: whole, then pipelined */
            for (int lanes = 0; lanes < 1 + 2 * all; lanes++)
                for (int ri = 0; ri < (all ? 1 : nr); ri++)
                    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
                        for (int ip = 0; ip < 2; ip++) {
                            if (p > 16 && z == 1)
                                continue;
                            const unsigned seed = (unsigned)(si * 97 + k * 31 + (size_t)ri * 7 +
                                                             z * 3 + (size_t)ip + (size_t)lanes);
                            segment = lanes == 2 ? 5 : 0;
                            int rc = blocks_run(colls[k], lanes > 0, p, node_of,
                                                all ? 0 : roots[ri], sizes[z], ip, seed, NULL, why,
                                                sizeof why);
                            CHECK(rc == 0, "%s %s %s root %d block %zu in_place %d: %s", sh->name,
                                  kcoll_coll_name(colls[k]),
                                  lanes == 2 ? "lanes in pieces of 5" : lanes ? "lanes" : "leaders",
                                  all ? -1 : roots[ri], sizes[z], ip, rc == 1 ? "refused" : why);
                        }
            segment = 0;
        }
    }
}

/* -- mutants -- */

/* The leader of node 1 leaves out its host collective. */
static void mut_no_host(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 1, 0));
    for (int i = 0; i < s->n; i++)
        if (s->steps[i].kind == KCOLL_STEP_EXTERN) {
            memmove(&s->steps[i], &s->steps[i + 1], (size_t)(s->n - i - 1) * sizeof *s->steps);
            s->n--;
            break;
        }
}

/* Rank 0 (node 0's first) moves the step `later` after the first END
 * of a split host collective to just before that END. */
static void mut_before_end(kcoll_sim_t *sim, int kind)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, 0);
    for (int i = 0; i < s->n; i++) {
        const kcoll_step_t *st = &s->steps[i];
        if (st->kind != KCOLL_STEP_EXTERN || st->xpart != KCOLL_XPART_END)
            continue;
        int j = i + 1;
        while (j < s->n && s->steps[j].kind != kind)
            j++;
        if (j == s->n)
            return;
        const kcoll_step_t moved = s->steps[j];
        memmove(&s->steps[i + 1], &s->steps[i], (size_t)(j - i) * sizeof *s->steps);
        s->steps[i] = moved;
        return;
    }
}

static void mut_data_early(kcoll_sim_t *sim, int p, const int *node_of)
{
    (void)p;
    (void)node_of;
    mut_before_end(sim, KCOLL_STEP_SIGNAL);
}

static void mut_copy_early(kcoll_sim_t *sim, int p, const int *node_of)
{
    (void)p;
    (void)node_of;
    mut_before_end(sim, KCOLL_STEP_COPY);
}

static void test_mutants(void)
{
    int node_of[128];
    char why[900];
    const int p = place((const int[]){3, 2, 1}, 3, 0, node_of);
    int rc = blocks_run(KCOLL_COLL_ALLGATHER, 0, p, node_of, 0, 16, 0, 3, mut_no_host, why,
                        sizeof why);
    CHECK(rc == -1 && strstr(why, "deadlock"), "a leader without its host Allgather: %s",
          rc ? why : "not caught");
    rc = blocks_run(KCOLL_COLL_GATHER, 0, p, node_of, 5, 16, 0, 3, mut_no_host, why, sizeof why);
    CHECK(rc == -1 && strstr(why, "deadlock"), "a leader without its host Gather: %s",
          rc ? why : "not caught");
    rc = blocks_run(KCOLL_COLL_ALLGATHERV, 0, p, node_of, 0, 16, 0, 3, mut_first_len, why,
                    sizeof why);
    CHECK(rc == -1 && strstr(why, "does not match"), "an Allgatherv with other run lengths: %s",
          rc ? why : "not caught");
    /* the pipelined lanes: 2 x 3 ranks, 40-byte blocks in pieces of 8 */
    const int q = place((const int[]){3, 3}, 2, 0, node_of);
    segment = 8;
    rc = blocks_run(KCOLL_COLL_ALLGATHER, 1, q, node_of, 0, 40, 0, 3, NULL, why, sizeof why);
    CHECK(rc == 0, "the pipelined lanes unmutated: %s", rc ? why : "ok");
    for (unsigned seed = 1; seed <= 3; seed++) {
        rc = blocks_run(KCOLL_COLL_ALLGATHER, 1, q, node_of, 0, 40, 0, seed, mut_data_early, why,
                        sizeof why);
        CHECK(rc == -1 && strstr(why, "race"), "DATA raised before the piece is in (seed %u): %s",
              seed, rc ? why : "not caught");
        rc = blocks_run(KCOLL_COLL_ALLGATHER, 1, q, node_of, 0, 40, 1, seed, mut_copy_early, why,
                        sizeof why);
        CHECK(rc == -1 && strstr(why, "begun, not ended"),
              "a piece copied out of TMP before it is in (seed %u): %s", seed,
              rc ? why : "not caught");
    }
    segment = 0;
}

int main(void)
{
    test_layouts();
    test_mutants();
    return check_report("test_cluster_blocks_sim");
}
