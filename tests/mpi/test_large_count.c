/* The MPI-4 large-count collectives (MPI_Bcast_c ... MPI_Reduce_scatter_c,
 * MPI_Ibcast_c ..., MPI_Bcast_init_c ...) through kcoll, against the host
 * MPI's own PMPI_..._c, byte for byte.
 *
 *  1. Every _c collective kcoll intercepts, in its blocking, non-blocking
 *     and persistent (two starts) forms, at counts 0, 1, 5 and 1000
 *     MPI_INT (v-variants: per-rank counts around that, one of them 0, the
 *     blocks in reverse order with gaps, MPI_Count counts and MPI_Aint
 *     displacements), every root, with and without MPI_IN_PLACE where MPI
 *     allows it, KCOLL_MIN_BYTES=0. The host's blocking PMPI_..._c and
 *     kcoll's call start from identical buffers (pattern-filled, so gaps
 *     and unused tails are compared too). Every call with data must be
 *     counted on a kcoll path of its statistics row (MPI_Bcast,
 *     MPI_Ibcast, MPI_Bcast_init: one per start).
 *  2. MPI_Scatterv_c and MPI_Igatherv_c of MPI_BYTE blocks whose MPI_Aint
 *     displacements in the root's buffer all lie beyond 2^31 (more than an
 *     int displaces; only the blocks' pages are ever touched): every byte
 *     of every block checked against its pattern, both calls counted on a
 *     kcoll path.
 *  3. At 2 ranks, one MPI_Bcast_c of 2^31 + 5 MPI_BYTE elements, more than
 *     an int counts: a position-dependent pattern from the root, every
 *     byte checked on the receiver, the call counted on kcoll's path with
 *     all its bytes.
 *
 * Across nodes (fake nodes, tests/mpi/run_fakenodes.sh) the matrix runs
 * in the leaders' layout and again in lanes (KCOLL_HIER=on, lanes): the
 * collectives with a layout across nodes must be counted on a kcoll path
 * (Gatherv and Scatterv after their root's layout is agreed on, the
 * non-blocking ones' after the call returned), Alltoallv on
 * mpi:multinode (the host does it whole), Alltoall and Alltoallv too but
 * in lanes (they have no leaders'
 * layout; an Alltoallv's agreement settles after a non-blocking call
 * returned, and a persistent one's is made at its initialization), and so
 * must the Bcast_c of more than INT_MAX bytes: the
 * host collectives between nodes count in ints.
 *
 * MPIs that do not declare the large-count forms (Open MPI 4.1) have
 * nothing to test: the program says so and passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#ifdef KCOLL_HAVE_LARGE_COUNT

enum { BCAST, SCATTER, SCATTERV, GATHER, GATHERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV,
       REDUCE, ALLREDUCE, RSB, RS, NCOLL };
/* the statistics row's name of the blocking and the non-blocking form */
static const char *const names[NCOLL][2] = {
    {"Bcast", "Ibcast"},         {"Scatter", "Iscatter"},
    {"Scatterv", "Iscatterv"},   {"Gather", "Igather"},
    {"Gatherv", "Igatherv"},     {"Allgather", "Iallgather"},
    {"Allgatherv", "Iallgatherv"}, {"Alltoall", "Ialltoall"},
    {"Alltoallv", "Ialltoallv"}, {"Reduce", "Ireduce"},
    {"Allreduce", "Iallreduce"}, {"Reduce_scatter_block", "Ireduce_scatter_block"},
    {"Reduce_scatter", "Ireduce_scatter"}};
/* may MPI_IN_PLACE be passed (at the root for the rooted ones)? */
static const int in_place_ok[NCOLL] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const int rooted[NCOLL] = {1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0};
/* does it run across nodes in kcoll's layouts (src/cluster/registry.c)?
 * 2: in lanes only */
static const int layout_of[NCOLL] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1};
/* the communicator spans nodes; the layout asked for is lanes */
static int spans, lanes;

enum { M_HOST, M_BLK, M_NB, M_INIT, NMODES };

static int has_layout(int c)
{
    return layout_of[c] == 1 || (layout_of[c] == 2 && lanes);
}

/* The statistics path a call of collective c with data must be counted
 * on: kcoll's, or across nodes without a layout (or with too much data
 * for the host's int counts between nodes) the host MPI's. */
static const char *lc_path(int c, int too_large)
{
    return spans && (!has_layout(c) || too_large) ? "mpi:multinode" : "kcoll:*";
}
static const char *const mode_names[NMODES] = {"host", "blocking", "non-blocking", "persistent"};

static const MPI_Count counts[] = {0, 1, 5, 1000};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* One case: the collective, its arguments and its buffers (ints). */
typedef struct {
    int c, p, rank, root, ip;
    MPI_Count n;
    MPI_Count *scnt, *rcnt, *vcnt;
    MPI_Aint *sdsp, *rdsp, *vdsp;
    size_t len; /* ints in each buffer */
    int *sbuf, *rbuf;
    int *tmp; /* the host's reference Reduce: the in-place root's contribution */
} lc_case_t;

/* The elements rank r sends rank q in the v-variants (symmetric, so that
 * MPI_IN_PLACE Alltoallv is allowed); one rank's share is empty. */
static MPI_Count amount(MPI_Count n, int r, int q)
{
    if (n == 0 || (r + q) % 4 == 1)
        return 0;
    return n + (r + q) % 3;
}

/* Blocks of cnt[q] elements in reverse rank order, a gap of one before
 * each. Returns the end. */
static MPI_Aint reverse_layout(int p, const MPI_Count *cnt, MPI_Aint *dsp)
{
    MPI_Aint at = 0;
    for (int q = p - 1; q >= 0; q--) {
        dsp[q] = at + 1;
        at += 1 + cnt[q];
    }
    return at;
}

static void lc_layout(lc_case_t *k)
{
    const int p = k->p, me = k->rank;
    for (int q = 0; q < p; q++) {
        k->scnt[q] = amount(k->n, me, q); /* what I send to q */
        k->rcnt[q] = amount(k->n, q, me); /* what I receive from q */
        k->vcnt[q] = amount(k->n, q, q);  /* q's block of a rooted or all v-call */
    }
    reverse_layout(p, k->scnt, k->sdsp);
    reverse_layout(p, k->rcnt, k->rdsp);
    reverse_layout(p, k->vcnt, k->vdsp);
}

/* The same contents before every run of a case: distinct per rank, per
 * buffer and per position. */
static void lc_fill(lc_case_t *k, unsigned salt)
{
    for (size_t i = 0; i < k->len; i++) {
        k->sbuf[i] = (int)(mt_mix(((uint64_t)salt << 40) ^ ((uint64_t)k->rank << 32) ^ i) >> 40);
        k->rbuf[i] = (int)(mt_mix(((uint64_t)salt << 40) ^ ((uint64_t)k->rank << 32) ^ i ^
                                  (1ull << 62)) >> 40);
    }
}

/* HOST_REDUCE_IN_PLACE: MPICH 4.0.2's PMPI_Reduce (and _c) crashes with
 * MPI_IN_PLACE at a non-zero root (MPI_INT SUM, 1000 elements, 3 ranks),
 * so the reference for an in-place Reduce passes the root's contribution
 * from a copy instead: the same result by MPI's definition. */
#define ISSUE(B, I, ...)                                                                  \
    (mode == M_HOST  ? PMPI_##B##_c(__VA_ARGS__)                                          \
     : mode == M_BLK ? MPI_##B##_c(__VA_ARGS__)                                           \
     : mode == M_NB  ? MPI_##I##_c(__VA_ARGS__, req)                                      \
                     : MPI_##B##_init_c(__VA_ARGS__, MPI_INFO_NULL, req))

/* Call (host, blocking) or start (the others, into *req) a case's
 * collective. */
static int lc_issue(lc_case_t *k, int mode, MPI_Comm comm, MPI_Request *req)
{
    const int root = k->root, me = k->rank, is_root = me == root;
    const MPI_Count n = k->n;
    const void *s = k->sbuf;
    void *r = k->rbuf;
    switch (k->c) {
    case BCAST:
        return ISSUE(Bcast, Ibcast, is_root ? k->sbuf : k->rbuf, n, MPI_INT, root, comm);
    case SCATTER:
        return ISSUE(Scatter, Iscatter, s, n, MPI_INT, k->ip && is_root ? MPI_IN_PLACE : r, n,
                     MPI_INT, root, comm);
    case SCATTERV:
        return ISSUE(Scatterv, Iscatterv, s, k->vcnt, k->vdsp, MPI_INT,
                     k->ip && is_root ? MPI_IN_PLACE : r, k->vcnt[me], MPI_INT, root, comm);
    case GATHER:
        return ISSUE(Gather, Igather, k->ip && is_root ? MPI_IN_PLACE : s, n, MPI_INT, r, n,
                     MPI_INT, root, comm);
    case GATHERV:
        return ISSUE(Gatherv, Igatherv, k->ip && is_root ? MPI_IN_PLACE : s, k->vcnt[me],
                     MPI_INT, r, k->vcnt, k->vdsp, MPI_INT, root, comm);
    case ALLGATHER:
        return ISSUE(Allgather, Iallgather, k->ip ? MPI_IN_PLACE : s, n, MPI_INT, r, n, MPI_INT,
                     comm);
    case ALLGATHERV:
        return ISSUE(Allgatherv, Iallgatherv, k->ip ? MPI_IN_PLACE : s, k->vcnt[me], MPI_INT, r,
                     k->vcnt, k->vdsp, MPI_INT, comm);
    case ALLTOALL:
        return ISSUE(Alltoall, Ialltoall, k->ip ? MPI_IN_PLACE : s, n, MPI_INT, r, n, MPI_INT,
                     comm);
    case ALLTOALLV:
        return ISSUE(Alltoallv, Ialltoallv, k->ip ? MPI_IN_PLACE : s, k->scnt, k->sdsp, MPI_INT,
                     r, k->rcnt, k->rdsp, MPI_INT, comm);
    case REDUCE:
        if (mode == M_HOST && k->ip && is_root) { /* see HOST_REDUCE_IN_PLACE */
            memcpy(k->tmp, r, (size_t)n * sizeof(int));
            return PMPI_Reduce_c(k->tmp, r, n, MPI_INT, MPI_SUM, root, comm);
        }
        return ISSUE(Reduce, Ireduce, k->ip && is_root ? MPI_IN_PLACE : s, r, n, MPI_INT,
                     MPI_SUM, root, comm);
    case ALLREDUCE:
        return ISSUE(Allreduce, Iallreduce, k->ip ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM,
                     comm);
    case RSB:
        return ISSUE(Reduce_scatter_block, Ireduce_scatter_block, k->ip ? MPI_IN_PLACE : s, r,
                     n, MPI_INT, MPI_SUM, comm);
    default:
        return ISSUE(Reduce_scatter, Ireduce_scatter, k->ip ? MPI_IN_PLACE : s, r, k->vcnt,
                     MPI_INT, MPI_SUM, comm);
    }
}

/* Does a call with this case's data move anything? */
static int lc_moves(const lc_case_t *k)
{
    return k->n > 0;
}

static void lc_row(const lc_case_t *k, int mode, char *row, size_t len)
{
    snprintf(row, len, "MPI_%s%s", names[k->c][mode == M_NB], mode == M_INIT ? "_init" : "");
}

/* Run one case in one of kcoll's modes against the host's result. */
static void lc_check(lc_case_t *k, int mode, MPI_Comm comm, int *ref)
{
    const size_t bytes = k->len * sizeof(int);
    char row[64];
    lc_row(k, mode, row, sizeof row);
    lc_fill(k, 1);
    int rc1 = lc_issue(k, M_HOST, comm, NULL);
    memcpy(ref, k->rbuf, bytes);

    const uint64_t before = mt_calls(row, lc_path(k->c, 0));
    MPI_Request req = MPI_REQUEST_NULL;
    const int starts = mode == M_INIT ? 2 : 1;
    lc_fill(k, 1);
    int rc2 = lc_issue(k, mode, comm, &req);
    const char *why = NULL;
    for (int s = 0; s < starts && rc2 == MPI_SUCCESS && !why; s++) {
        if (s > 0) /* the same inputs again, the outputs reset */
            lc_fill(k, 1);
        if (mode == M_INIT)
            rc2 = MPI_Start(&req);
        if (rc2 == MPI_SUCCESS && mode != M_BLK)
            rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS)
            why = "an MPI call returned an error";
        /* a Reduce's receive buffer away from the root is not significant
         * (MPI): Intel MPI uses it as scratch on a node of one rank */
        else if (!(k->c == REDUCE && k->rank != k->root) && memcmp(ref, k->rbuf, bytes))
            why = "result differs from the host MPI";
    }
    if (mode == M_INIT && req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    const uint64_t ran = mt_calls(row, lc_path(k->c, 0)) - before;
    if (!why && lc_moves(k) && ran != (uint64_t)starts)
        why = spans && !has_layout(k->c) ? "not counted on mpi:multinode"
                                          : "not counted on a kcoll path";
    if (why)
        mt_fail("%s_c (%s), count %lld, root %d%s: %s", row, mode_names[mode], (long long)k->n,
                k->root, k->ip ? ", in place" : "", why);
    else
        mt_pass();
}

/* The byte at position i of rank q's block in lc_far. */
static unsigned char far_byte(int q, size_t i)
{
    return (unsigned char)(mt_mix((uint64_t)q << 32 | i) >> 7);
}

/* Scatterv_c and Igatherv_c with every block displaced beyond 2^31 bytes
 * in the root's buffer (root 0), blocks in reverse rank order. */
static void lc_far(MPI_Comm comm, int p, int rank)
{
    const MPI_Aint far = ((MPI_Aint)1 << 31) + 3;
    MPI_Count *cnt = malloc((size_t)p * sizeof *cnt);
    MPI_Aint *dsp = malloc((size_t)p * sizeof *dsp);
    MPI_Aint end = far;
    for (int q = p - 1; q >= 0; q--) {
        cnt[q] = 4099 + 7 * q;
        dsp[q] = end + 5;
        end = dsp[q] + cnt[q];
    }
    /* the root's buffer: only the blocks' pages are ever touched */
    unsigned char *big = rank == 0 ? malloc((size_t)end) : NULL;
    unsigned char *mine = malloc((size_t)cnt[rank]);
    int ok = (rank != 0 || big) && mine, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    for (int g = 0; g < 2 && all_ok; g++) {
        const char *row = g ? "MPI_Igatherv" : "MPI_Scatterv";
        if (rank == 0)
            for (int q = 0; q < p; q++)
                for (MPI_Count i = 0; i < cnt[q]; i++)
                    big[dsp[q] + i] = g ? 0 : far_byte(q, (size_t)i);
        for (MPI_Count i = 0; i < cnt[rank]; i++)
            mine[i] = g ? far_byte(rank, (size_t)i) : 0;
        const uint64_t before = mt_calls(row, lc_path(g ? GATHERV : SCATTERV, 0));
        MPI_Request req;
        int rc = g ? MPI_Igatherv_c(mine, cnt[rank], MPI_BYTE, big, cnt, dsp, MPI_BYTE, 0, comm,
                                    &req)
                   : MPI_Scatterv_c(big, cnt, dsp, MPI_BYTE, mine, cnt[rank], MPI_BYTE, 0, comm);
        if (rc == MPI_SUCCESS && g)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (int q = 0; q < p; q++)
            for (MPI_Count i = 0; i < cnt[q]; i++) {
                if (!g && q == rank)
                    bad += mine[i] != far_byte(q, (size_t)i);
                if (g && rank == 0)
                    bad += big[dsp[q] + i] != far_byte(q, (size_t)i);
            }
        if (rc != MPI_SUCCESS)
            mt_fail("%s_c beyond 2^31 bytes returned an error", row);
        else if (bad)
            mt_fail("%s_c beyond 2^31 bytes: %zu bytes wrong", row, bad);
        else if (mt_calls(row, lc_path(g ? GATHERV : SCATTERV, 0)) != before + 1)
            mt_fail("%s_c beyond 2^31 bytes: not counted on %s", row,
                    lc_path(g ? GATHERV : SCATTERV, 0));
        else
            mt_pass();
    }
    if (!all_ok)
        mt_fail("MPI_Scatterv_c beyond 2^31 bytes: out of memory");
    free(big);
    free(mine);
    free(cnt);
    free(dsp);
}

/* One MPI_Bcast_c of more than INT_MAX bytes from rank 0 to rank 1. */
static void lc_huge(MPI_Comm comm, int rank)
{
    const MPI_Count n = ((MPI_Count)1 << 31) + 5;
    unsigned char *buf = malloc((size_t)n);
    int ok = buf != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) {
        mt_fail("MPI_Bcast_c of %lld bytes: out of memory", (long long)n);
        free(buf);
        return;
    }
    /* position-dependent: a different byte every position within any
     * 2^32 window, so that a block landing at a wrong offset shows */
    for (size_t i = 0; i < (size_t)n; i++)
        buf[i] = rank == 0 ? (unsigned char)((i * 2654435761u) >> 13 ^ i >> 24) : 0;
    uint64_t calls0 = 0, bytes0 = 0, calls1 = 0, bytes1 = 0;
    kcoll_stats_get("MPI_Bcast", lc_path(BCAST, 1), &calls0, &bytes0);
    int rc = MPI_Bcast_c(buf, n, MPI_BYTE, 0, comm);
    kcoll_stats_get("MPI_Bcast", lc_path(BCAST, 1), &calls1, &bytes1);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < (size_t)n; i++)
        if (buf[i] != (unsigned char)((i * 2654435761u) >> 13 ^ i >> 24) && !bad++)
            first = i;
    if (rc != MPI_SUCCESS)
        mt_fail("MPI_Bcast_c of %lld bytes returned an error", (long long)n);
    else if (bad)
        mt_fail("MPI_Bcast_c of %lld bytes: %zu bytes wrong, the first at %zu", (long long)n,
                bad, first);
    else if (calls1 != calls0 + 1 || bytes1 - bytes0 != (uint64_t)n)
        mt_fail("MPI_Bcast_c of %lld bytes not counted on %s with its bytes "
                "(%llu calls, %llu bytes)",
                (long long)n, lc_path(BCAST, 1), (unsigned long long)(calls1 - calls0),
                (unsigned long long)(bytes1 - bytes0));
    else
        mt_pass();
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, rank;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    kcoll_param_set("MIN_BYTES", "0");

    lc_case_t k = {.p = p, .rank = rank};
    const size_t len = (size_t)p * (counts[NCOUNTS - 1] + 4) + 8;
    MPI_Count *cnt = malloc(3 * (size_t)p * sizeof *cnt);
    MPI_Aint *dsp = malloc(3 * (size_t)p * sizeof *dsp);
    k.scnt = cnt, k.rcnt = cnt + p, k.vcnt = cnt + 2 * p;
    k.sdsp = dsp, k.rdsp = dsp + p, k.vdsp = dsp + 2 * p;
    k.len = len;
    k.sbuf = malloc(len * sizeof(int));
    k.rbuf = malloc(len * sizeof(int));
    k.tmp = malloc(len * sizeof(int));
    int *ref = malloc(len * sizeof(int));

    MPI_Comm node;
    int np = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &np);
    MPI_Comm_free(&node);
    MPI_Allreduce(MPI_IN_PLACE, &np, 1, MPI_INT, MPI_MIN, comm);
    spans = np < p;
    static const char *const layouts[2] = {"on", "lanes"};
    for (int ly = 0; ly < (spans ? 2 : 1); ly++) {
        if (spans)
            kcoll_param_set("HIER", layouts[ly]);
        lanes = ly == 1;
        for (int c = 0; c < NCOLL; c++)
            for (int ni = 0; ni < NCOUNTS; ni++)
                for (int root = 0; root < (rooted[c] ? p : 1); root++)
                    for (int ip = 0; ip <= in_place_ok[c]; ip++)
                        for (int mode = M_BLK; mode < NMODES; mode++) {
                            k.c = c;
                            k.n = counts[ni];
                            k.root = root;
                            k.ip = ip;
                            lc_layout(&k);
                            lc_check(&k, mode, comm, ref);
                        }
    }
    if (spans)
        kcoll_param_set("HIER", "on");
    lanes = 0;

    lc_far(comm, p, rank);
    if (p == 2)
        lc_huge(comm, rank);

    free(k.sbuf);
    free(k.rbuf);
    free(k.tmp);
    free(ref);
    free(cnt);
    free(dsp);
    int rc = mt_finish("test_large_count");
    MPI_Finalize();
    return rc;
}

#else /* the MPI declares no large-count collectives */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("test_large_count: this MPI declares no large-count (_c) collectives: "
               "nothing to test\n");
    MPI_Finalize();
    return 0;
}

#endif
