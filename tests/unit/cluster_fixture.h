/* What the cross-node simulator tests share: the operations (int32 SUM
 * and a non-commutative user function, the composition of affine maps
 * modulo 2^32), every rank's input and the rank-order reference, the node
 * shapes and the placement of ranks on them, and one simulated call of a
 * layout with its checks (cluster_run). */
#ifndef KCOLL_TEST_CLUSTER_FIXTURE_H
#define KCOLL_TEST_CLUSTER_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affine_op.h"
#include "cluster/cluster.h"
#include "op/op.h"
#include "sched/sim.h"

static const kcoll_op_t isum = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_INT32, .esize = 4};

/* the same sum as a user function made commutative (MPI_Op_create with
 * commute = 1): the layouts may combine it in any order, on any placement */
static inline void add_u32(const void *in_, void *inout_, size_t n, const kcoll_op_t *op)
{
    const uint32_t *in = in_;
    uint32_t *io = inout_;
    (void)op;
    for (size_t i = 0; i < n; i++)
        io[i] += in[i];
}
static const kcoll_op_t usum = {.kind = KCOLL_OP_USER, .type = KCOLL_T_OPAQUE, .esize = 4,
                                .user = add_u32, .commute = 1};

/* rank r's element i, esize bytes */
static inline void input(const kcoll_op_t *op, int r, size_t i, uint8_t *dst)
{
    uint32_t h = (uint32_t)(r * 2654435761u) ^ (uint32_t)(i * 40503u + 17u);
    if (op == &affine_op) {
        affine_t v = affine_input(r, i);
        memcpy(dst, &v, sizeof v);
    } else {
        memcpy(dst, &h, 4);
    }
}

/* the reduction over ranks 0..p-1 of element i in rank order */
static inline void reference(const kcoll_op_t *op, int p, size_t i, uint8_t *out)
{
    uint8_t v[8];
    input(op, p - 1, i, out);
    for (int r = p - 2; r >= 0; r--) {
        input(op, r, i, v);
        kcoll_op_apply(op, v, out, op->esize);
    }
}

/* node_of for nodes of the given sizes, in blocks or round-robin
 * (rank r goes to the next node, in turn, that still has room) */
static inline int place(const int *sizes, int nodes, int rr, int *node_of)
{
    int p = 0, left[16];
    for (int k = 0; k < nodes; k++)
        p += left[k] = sizes[k];
    if (!rr) {
        for (int k = 0, r = 0; k < nodes; k++)
            for (int i = 0; i < sizes[k]; i++)
                node_of[r++] = k;
        return p;
    }
    for (int r = 0, k = 0; r < p; k = (k + 1) % nodes)
        if (left[k]) {
            left[k]--;
            node_of[r++] = 10 + 3 * k; /* any ids */
        }
    return p;
}

typedef struct {
    const char *name;
    int nodes, sizes[8], rr;
} shape_t;

static const shape_t shapes[] = {
    {"2x2", 2, {2, 2}, 0},
    {"2x3", 2, {3, 3}, 0},
    {"3x2", 3, {2, 2, 2}, 0},
    {"4x1", 4, {1, 1, 1, 1}, 0},
    {"3+2+1", 3, {3, 2, 1}, 0},
    {"1+3+2", 3, {1, 3, 2}, 0},
    {"3+2+1 round-robin", 3, {3, 2, 1}, 1},
    {"2x3 round-robin", 2, {3, 3}, 1},
    {"8 uneven", 8, {16, 1, 5, 2, 9, 16, 3, 7}, 0},
    {"8 uneven round-robin", 8, {4, 16, 2, 1, 11, 6, 16, 3}, 1},
};

static inline int first_of_node(int p, const int *node_of, int k, int nth)
{
    for (int r = 0; r < p; r++)
        if (node_of[r] == k && nth-- == 0)
            return r;
    return -1;
}

/* The roots tried on a shape of `nodes` nodes: every node's first and
 * last local rank (on the 8-node shapes, those of nodes 0, 3 and 7 only). */
static inline int roots_of(int p, const int *node_of, int nodes, int *roots)
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

/* -- the layouts and one simulated call -- */

/* A layout under test: src/cluster/registry.c's entries, or a builder the
 * registry does not run yet (coll: BCAST, REDUCE, ALLREDUCE or
 * REDUCE_SCATTER_BLOCK for cluster_run). */
typedef kcoll_cluster_algo_t layout_t;


/* Rank r's schedule of layout ly into sim: 0, 1 refused by the builder
 * (KCOLL_ERR_UNSUPPORTED), -1 failed (why). */
static inline int cluster_build(const layout_t *ly, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                int rnode, int rlocal, kcoll_sim_t *sim, int r, char *why,
                                size_t whylen)
{
    kcoll_status_t rc = ly->build(a, cl, rnode, rlocal, kcoll_sim_sched(sim, r));
    if (rc == KCOLL_ERR_UNSUPPORTED)
        return 1;
    if (rc) {
        snprintf(why, whylen, "rank %d: building failed: %s", r, kcoll_status_str(rc));
        return -1;
    }
    return 0;
}

typedef void (*mutant_fn)(kcoll_sim_t *sim, int p, const int *node_of);

/* Apply the mutant (NULL: none) and run sim from seed: 0, or -1 with the
 * simulator's finding in why. */
static inline int cluster_sim(kcoll_sim_t *sim, mutant_fn mutant, int p, const int *node_of,
                              unsigned seed, char *why, size_t whylen)
{
    if (mutant)
        mutant(sim, p, node_of);
    if (kcoll_sim_run(sim, seed) != KCOLL_OK) {
        snprintf(why, whylen, "%s", kcoll_sim_error(sim));
        return -1;
    }
    return 0;
}

typedef struct {
    uint8_t *send, *recv, *tmp;
} rank_bufs_t;

/* Free p ranks' buffers (send may be recv: in place) and the array. */
static inline void rank_bufs_free(rank_bufs_t *b, int p)
{
    for (int r = 0; b && r < p; r++) {
        if (b[r].send != b[r].recv)
            free(b[r].send);
        free(b[r].recv);
        free(b[r].tmp);
    }
    free(b);
}

/* A mutant: the first rank of node 1 names its first v length one byte
 * longer in its first host v collective than its group agreed. */
static inline void mut_first_len(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 1, 0));
    if (s->nxv > 0)
        s->xv[0]++;
}

/* The first byte of RECV or SEND written where it must not be, or -1. */
static inline long written(kcoll_sim_t *sim, int r, kcoll_buf_t buf, size_t n)
{
    const uint16_t *w = kcoll_sim_writes(sim, r, buf);
    for (size_t i = 0; w && i < n; i++)
        if (w[i])
            return (long)i;
    return -1;
}

/* The simulator's nodes and groups (the leaders and every lane) for p
 * ranks on nodes node_of: returns rank_of as kcoll_cluster_t.rank_of
 * takes it, for the caller to free. */
static inline int *cluster_sim_nodes(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_cluster_t cl;
    int *peer_of = malloc((size_t)p * sizeof *peer_of), *members = malloc((size_t)p * sizeof *members);
    kcoll_sim_set_nodes(sim, node_of);
    kcoll_cluster_make(&cl, peer_of, p, node_of, 0);
    int *rank_of = malloc((size_t)(cl.nodes * cl.lanes) * sizeof *rank_of);
    kcoll_cluster_ranks(p, node_of, cl.lanes, rank_of);
    for (int g = 0; g <= cl.lanes; g++) { /* the leaders and every lane */
        int m = kcoll_cluster_group(p, node_of, g, members);
        kcoll_sim_set_group(sim, g, m, members);
    }
    free(peer_of);
    free(members);
    return rank_of;
}

/* One simulated call with root `root` (a communicator rank; an Allreduce's
 * every rank is one): 0 all good, 1 refused by the builder, -1 a finding
 * (its text in why). Bcast moves count bytes, Reduce and Allreduce count
 * elements of op, Reduce_scatter_block a vector of p blocks of count
 * elements (rank r's result: block r). */
static inline int cluster_run(const layout_t *ly, int p, const int *node_of, int root, size_t count,
                               const kcoll_op_t *op, int in_place, int chunk, unsigned seed,
                               mutant_fn mutant, char *why, size_t whylen)
{
    const int bc = ly->coll == KCOLL_COLL_BCAST, rs = ly->coll == KCOLL_COLL_REDUCE_SCATTER;
    const int rsb = ly->coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK || rs;
    const int all = ly->coll == KCOLL_COLL_ALLREDUCE || rsb;
    const size_t es = bc ? 1 : op->esize;
    /* Reduce_scatter: rank q's block has counts[q] elements, 0 to count
     * (zeros among them), first[q] the elements before it */
    size_t *counts = calloc((size_t)p, sizeof *counts), *first = calloc((size_t)p + 1, sizeof *first);
    for (int q = 0; q < p; q++) {
        counts[q] = !rs ? count : count ? ((size_t)q * 7 + 3) % (count + 1) : 0;
        first[q + 1] = first[q] + (rsb ? counts[q] : 0);
    }
    const size_t n = count * es; /* a block (a Reduce_scatter's most), or the vector */
    const size_t vn = rsb ? first[p] * es : n, vcount = rsb ? first[p] : count;
    kcoll_sim_t *sim = kcoll_sim_new(p);
    rank_bufs_t *b = calloc((size_t)p, sizeof *b);
    int *peer_of = malloc((size_t)p * sizeof *peer_of);
    int result = 0, rnode, rlocal;
    uint8_t *want = malloc(n + 8);
    if (!bc)
        kcoll_sim_set_op(sim, op);
    kcoll_cluster_t cl;
    int *rank_of = cluster_sim_nodes(sim, p, node_of);
    kcoll_cluster_locate(p, node_of, root, &rnode, &rlocal);
    for (int r = 0; r < p; r++) {
        kcoll_cluster_make(&cl, peer_of, p, node_of, r);
        cl.rank_of = rank_of;
        cl.segment = (size_t)chunk * 16; /* several segments for a Bcast of 1200 bytes */
        const int ip = in_place && (all || r == root) && !bc;
        kcoll_args_t a = {.coll = ly->coll, .p = p, .rank = r, .root = root,
                          .count = rs ? 0 : count, .esize = es, .op = bc ? NULL : op,
                          .in_place = ip, .counts = rs ? counts : NULL};
        a.prm.chunk = chunk;
        const size_t tl = ly->tmp ? ly->tmp(&a, &cl, rnode, rlocal) : 0;
        const size_t rn = rsb && !ip ? counts[r] * es : vn; /* in place: the vector in RECV */
        b[r].recv = malloc(rn + 1);
        b[r].send = bc || ip ? b[r].recv : malloc(vn + 1);
        b[r].tmp = malloc(tl + 1);
        memset(b[r].recv, 0xee, rn + 1);
        for (size_t i = 0; i < vcount && (!bc || r == root); i++) {
            if (bc)
                b[r].send[i] = (uint8_t)(r * 31u + i * 7u + 1u);
            else
                input(op, r, i, b[r].send + i * es);
        }
        /* a Bcast's only buffer is RECV; a Reduce's RECV only the root's */
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, b[r].send, vn);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, b[r].recv, bc || all || r == root ? rn : 0);
        if (bc || ip)
            kcoll_sim_alias(sim, r, KCOLL_BUF_SEND, KCOLL_BUF_RECV);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, b[r].tmp, tl);
        if ((result = cluster_build(ly, &a, &cl, rnode, rlocal, sim, r, why, whylen)))
            goto out;
    }
    if (bc)
        memcpy(want, b[root].recv, n);
    if ((result = cluster_sim(sim, mutant, p, node_of, seed, why, whylen)))
        goto out;
    for (int r = 0; r < p && !result; r++) {
        long at;
        if (bc || all || r == root) {
            for (size_t i = 0; i < (rsb ? counts[r] : count) && !result; i++) {
                if (!bc)
                    reference(op, p, rsb ? first[r] + i : i, want + i * es);
                if (memcmp(b[r].recv + i * es, want + i * es, es)) {
                    snprintf(why, whylen, "rank %d element %zu differs from the reference", r, i);
                    result = -1;
                }
            }
        }
        if (result)
            break;
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        const int must = bc ? r != root : all || r == root; /* RECV bytes all written */
        for (size_t i = 0; must && i < (rsb ? counts[r] * es : n); i++)
            if (!w[i]) {
                snprintf(why, whylen, "rank %d RECV byte %zu never written", r, i);
                result = -1;
                break;
            }
        if (bc && r == root && (at = written(sim, r, KCOLL_BUF_RECV, n)) >= 0) {
            snprintf(why, whylen, "the root's RECV byte %ld written", at);
            result = -1;
        }
        if (!bc && !(in_place && (all || r == root)) &&
            (at = written(sim, r, KCOLL_BUF_SEND, vn)) >= 0) {
            snprintf(why, whylen, "rank %d SEND byte %ld written", r, at);
            result = -1;
        }
    }
out:
    rank_bufs_free(b, p);
    free(counts);
    free(first);
    free(rank_of);
    free(peer_of);
    free(want);
    kcoll_sim_free(sim);
    return result;
}

/* A mutant: the first rank of node 2 starts its host collectives in
 * reverse order (on 3+2+1 the rank alone on its node, carrying every
 * lane): the simulator must find the groups' orders broken. */
static inline void mut_lane_order(kcoll_sim_t *sim, int p, const int *node_of)
{
    kcoll_sched_t *s = kcoll_sim_sched(sim, first_of_node(p, node_of, 2, 0));
    int at[16], m = 0;
    for (int i = 0; i < s->n && m < 16; i++)
        if (s->steps[i].kind == KCOLL_STEP_EXTERN)
            at[m++] = i;
    for (int i = 0; i < m / 2; i++) {
        kcoll_step_t t = s->steps[at[i]];
        s->steps[at[i]] = s->steps[at[m - 1 - i]];
        s->steps[at[m - 1 - i]] = t;
    }
}

#endif
