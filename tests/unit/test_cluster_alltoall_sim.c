/* MPI_Alltoall and MPI_Alltoallv spanning nodes in the lanes layout
 * (src/cluster/alltoall_lanes.c), checked by the simulator with ranks on
 * nodes and host collectives (Alltoall, Alltoallv) between them.
 *
 * On the node shapes of cluster_fixture.h (even, uneven, round-robin,
 * 8 nodes of 1 to 16 ranks), in place and not, blocks of 0, 1, 13 and 64
 * bytes: every rank's block from every rank must arrive at its sender's
 * place byte for byte, every byte written, no rank's SEND written; no
 * deadlock, race, use after return or mismatch of host collectives under
 * interleavings drawn from seeds. MPI_Alltoallv likewise, with counts
 * that differ per pair of ranks (zero for some; symmetric in place, as MPI
 * requires there), each rank's blocks in its own shuffled order with gaps
 * between them: the gaps must stay as they were, never written.
 *
 * Last, mutants the simulator must catch: a rank that returns without
 * waiting for the others to have read its send buffer, and a rank whose
 * host Alltoallv names a run of another length than its receiver's. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster/cluster.h"
#include "op/op.h"
#include "sched/sim.h"
#include "cluster_fixture.h"

/* byte i of the block rank r sends to rank q */
static uint8_t pattern(int r, int q, size_t i)
{
    return (uint8_t)(r * 41u + q * 7u + i * 13u + 5u);
}

/* One simulated call: 0 good, 1 refused by the builder, -1 a finding. */
static int a2a_run(int p, const int *node_of, size_t b, int in_place, unsigned seed,
                   mutant_fn mutant, char *why, size_t whylen)
{
    const layout_t *ly = kcoll_cluster_find(KCOLL_COLL_ALLTOALL, 1);
    kcoll_sim_t *sim = kcoll_sim_new(p);
    rank_bufs_t *bf = calloc((size_t)p, sizeof *bf);
    int *peer_of = malloc((size_t)p * sizeof *peer_of);
    int result = 0, *rank_of = NULL;
    const size_t all = (size_t)p * b;
    if (!ly) {
        snprintf(why, whylen, "MPI_Alltoall has no lanes layout");
        result = -1;
        goto out;
    }
    kcoll_cluster_t cl;
    rank_of = cluster_sim_nodes(sim, p, node_of);
    for (int r = 0; r < p; r++) {
        kcoll_cluster_make(&cl, peer_of, p, node_of, r);
        cl.rank_of = rank_of;
        rank_bufs_t *B = &bf[r];
        kcoll_args_t a = {.coll = KCOLL_COLL_ALLTOALL, .p = p, .rank = r, .bytes = b,
                          .in_place = in_place};
        const size_t tl = ly->tmp(&a, &cl, 0, 0), slen = in_place ? 0 : all;
        B->send = malloc(slen + 1);
        B->recv = malloc(all + 1);
        B->tmp = malloc(tl + 1);
        memset(B->recv, 0xee, all + 1);
        uint8_t *from = in_place ? B->recv : B->send;
        for (int q = 0; q < p; q++)
            for (size_t i = 0; i < b; i++)
                from[(size_t)q * b + i] = pattern(r, q, i);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, B->send, slen);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, B->recv, all);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, B->tmp, tl);
        if ((result = cluster_build(ly, &a, &cl, 0, 0, sim, r, why, whylen)))
            goto out;
    }
    if ((result = cluster_sim(sim, mutant, p, node_of, seed, why, whylen)))
        goto out;
    for (int r = 0; r < p && !result; r++) {
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        long wat;
        for (int q = 0; q < p && !result; q++)
            for (size_t i = 0; i < b; i++) {
                const size_t at = (size_t)q * b + i;
                if (bf[r].recv[at] != pattern(q, r, i) || (!w[at] && !(in_place && q == r))) {
                    snprintf(why, whylen, "rank %d: byte %zu of rank %d's block %s", r, i, q,
                             bf[r].recv[at] != pattern(q, r, i) ? "differs" : "never written");
                    result = -1;
                    break;
                }
            }
        if (!result && (wat = written(sim, r, KCOLL_BUF_SEND, in_place ? 0 : all)) >= 0) {
            snprintf(why, whylen, "rank %d SEND byte %ld written", r, wat);
            result = -1;
        }
    }
out:
    rank_bufs_free(bf, p);
    free(rank_of);
    free(peer_of);
    kcoll_sim_free(sim);
    return result;
}

/* MPI_Alltoallv: the bytes rank r sends to rank q (unit b; symmetric) */
static size_t vcount(int r, int q, size_t b)
{
    return (size_t)((r + q + r * q) % 4) * b / 2;
}

/* Rank r's layout of blocks of lengths len[q] in the order of a shuffle
 * of its own, 3 bytes apart: displacements into dsp; returns the span. */
static size_t vplace(int r, int p, const size_t *len, size_t *dsp, int salt)
{
    size_t at = 0;
    for (int k = 0; k < p; k++) {
        const int q = (int)(((unsigned)k * 7u + (unsigned)(r + salt)) % (unsigned)p);
        dsp[q] = 0;
        if (!len[q])
            continue;
        dsp[q] = at;
        at += len[q] + 3;
    }
    return at;
}

/* One simulated MPI_Alltoallv (as a2a_run): 0 good, 1 refused, -1 a
 * finding. */
static int a2av_run(int p, const int *node_of, size_t b, int in_place, unsigned seed, char *why,
                    size_t whylen)
{
    const layout_t *ly = kcoll_cluster_find(KCOLL_COLL_ALLTOALLV, 1);
    kcoll_sim_t *sim = kcoll_sim_new(p);
    rank_bufs_t *bf = calloc((size_t)p, sizeof *bf);
    /* every rank's send and receive counts and displacements, [r][q] */
    size_t *sc = malloc(4 * (size_t)p * (size_t)p * sizeof *sc), *sd = sc + (size_t)p * p;
    size_t *rc = sd + (size_t)p * p, *rd = rc + (size_t)p * p, *slen = calloc(2 * (size_t)p, sizeof *slen);
    size_t *rlen = slen + p;
    kcoll_layout_t **lays = calloc((size_t)p, sizeof *lays);
    int result = 0, *rank_of = NULL, *peer_of = malloc((size_t)p * sizeof *peer_of);
    if (!ly) {
        snprintf(why, whylen, "MPI_Alltoallv has no lanes layout");
        result = -1;
        goto out;
    }
    for (int r = 0; r < p; r++) {
        for (int q = 0; q < p; q++) {
            rc[(size_t)r * p + q] = vcount(q, r, b);
            sc[(size_t)r * p + q] = vcount(r, q, b);
        }
        rlen[r] = vplace(r, p, rc + (size_t)r * p, rd + (size_t)r * p, 0);
        slen[r] = vplace(r, p, sc + (size_t)r * p, sd + (size_t)r * p, 5);
        if (in_place) { /* the send side is the receive side */
            memcpy(sd + (size_t)r * p, rd + (size_t)r * p, (size_t)p * sizeof *sd);
            slen[r] = 0;
        }
    }
    kcoll_cluster_t cl;
    rank_of = cluster_sim_nodes(sim, p, node_of);
    for (int r = 0; r < p; r++) {
        kcoll_cluster_make(&cl, peer_of, p, node_of, r);
        cl.rank_of = rank_of;
        /* the node's send layouts by local rank, and this rank's receive side */
        kcoll_layout_t *lay = lays[r] = calloc((size_t)cl.pn, sizeof *lay);
        for (int i = 0; i < cl.pn; i++) {
            const size_t row = (size_t)peer_of[i] * (size_t)p;
            lay[i].scount = sc + row;
            lay[i].sdispl = sd + row;
        }
        lay[cl.me].rcount = rc + (size_t)r * p;
        lay[cl.me].rdispl = rd + (size_t)r * p;
        rank_bufs_t *B = &bf[r];
        kcoll_args_t a = {.coll = KCOLL_COLL_ALLTOALLV, .p = p, .rank = r, .lay = lay,
                          .bytes = 3 * b / 2, .in_place = in_place};
        const size_t tl = ly->tmp(&a, &cl, 0, 0);
        B->send = malloc(slen[r] + 1);
        B->recv = malloc(rlen[r] + 1);
        B->tmp = malloc(tl + 1);
        memset(B->recv, 0xee, rlen[r] + 1);
        uint8_t *from = in_place ? B->recv : B->send;
        for (int q = 0; q < p; q++)
            for (size_t i = 0; i < sc[(size_t)r * p + q]; i++)
                from[sd[(size_t)r * p + q] + i] = pattern(r, q, i);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, B->send, slen[r]);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, B->recv, rlen[r]);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, B->tmp, tl);
        if ((result = cluster_build(ly, &a, &cl, 0, 0, sim, r, why, whylen)))
            goto out;
    }
    if ((result = cluster_sim(sim, NULL, p, node_of, seed, why, whylen)))
        goto out;
    for (int r = 0; r < p && !result; r++) {
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        uint8_t *mine = calloc(rlen[r] + 1, 1); /* the bytes of a block */
        for (int q = 0; q < p && !result; q++) {
            const size_t at0 = rd[(size_t)r * p + q], n = rc[(size_t)r * p + q];
            for (size_t i = 0; i < n; i++) {
                const size_t at = at0 + i;
                mine[at] = 1;
                if (bf[r].recv[at] != pattern(q, r, i) ||
                    (w && !w[at] && !(in_place && q == r))) {
                    snprintf(why, whylen, "rank %d: byte %zu of rank %d's block %s", r, i, q,
                             bf[r].recv[at] != pattern(q, r, i) ? "differs" : "never written");
                    result = -1;
                    break;
                }
            }
        }
        for (size_t at = 0; at < rlen[r] && !result; at++)
            if (!mine[at] && (bf[r].recv[at] != 0xee || (w && w[at]))) {
                snprintf(why, whylen, "rank %d: gap byte %zu of its receive buffer written", r,
                         at);
                result = -1;
            }
        free(mine);
        long wat;
        if (!result && !in_place && (wat = written(sim, r, KCOLL_BUF_SEND, slen[r])) >= 0) {
            snprintf(why, whylen, "rank %d SEND byte %ld written", r, wat);
            result = -1;
        }
    }
out:
    rank_bufs_free(bf, p);
    for (int r = 0; r < p; r++)
        free(lays[r]);
    free(lays);
    free(sc);
    free(slen);
    free(rank_of);
    free(peer_of);
    kcoll_sim_free(sim);
    return result;
}

static void test_shapes(void)
{
    static const size_t sizes[] = {0, 1, 13, 64};
    int node_of[128];
    char why[900];
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const shape_t *sh = &shapes[si];
        const int p = place(sh->sizes, sh->nodes, sh->rr, node_of);
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
            for (int ip = 0; ip < 2; ip++)
                for (unsigned seed = 0; seed < (p > 16 ? 1u : 3u); seed++) {
                    if (p > 16 && z == 3)
                        continue;
                    const unsigned sd = (unsigned)(si * 97 + z * 3 + (size_t)ip) + seed * 1009u;
                    int rc = a2a_run(p, node_of, sizes[z], ip, sd, NULL, why, sizeof why);
                    CHECK(rc == 0, "%s alltoall lanes block %zu in_place %d seed %u: %s",
                          sh->name, sizes[z], ip, seed, rc == 1 ? "refused" : why);
                    rc = a2av_run(p, node_of, sizes[z], ip, sd, why, sizeof why);
                    CHECK(rc == 0, "%s alltoallv lanes unit %zu in_place %d seed %u: %s",
                          sh->name, sizes[z], ip, seed, rc == 1 ? "refused" : why);
                }
    }
}

/* -- mutants -- */

/* The first rank of node 0 leaves without waiting for its node's DONE. */
static void mut_no_wait(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 0, 0));
    while (s->n > 0 && s->steps[s->n - 1].kind == KCOLL_STEP_WAIT)
        s->n--;
}

static void test_mutants(void)
{
    int node_of[128];
    char why[900];
    int p = place((const int[]){3, 3}, 2, 0, node_of), rc = 0;
    for (unsigned seed = 0; seed < 20 && !rc; seed++)
        rc = a2a_run(p, node_of, 64, 0, seed, mut_no_wait, why, sizeof why);
    CHECK(rc == -1, "a rank that does not wait for its node's reads: %s",
          rc ? why : "not caught");
    p = place((const int[]){3, 2, 1}, 3, 0, node_of);
    rc = a2a_run(p, node_of, 16, 0, 3, mut_first_len, why, sizeof why);
    CHECK(rc == -1 && strstr(why, "ALLTOALLV"), "an Alltoallv run of another length: %s",
          rc ? why : "not caught");
}

int main(void)
{
    test_shapes();
    test_mutants();
    return check_report("test_cluster_alltoall_sim");
}
