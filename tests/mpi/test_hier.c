/* Collectives on communicators that span several nodes (kcoll's
 * hierarchical path) and on communicators that lie on one node, through
 * kcoll against the host MPI's PMPI_* calls, byte for byte. Meant to run
 * under tests/mpi/run_fakenodes.sh, which makes several "nodes" on one
 * machine; on a single real node every communicator is node-local and the
 * program checks that side only.
 *
 * Communicators: MPI_COMM_WORLD, a duplicate, a reversed split (key
 * -rank), an odd/even split, the node-local split (MPI_Comm_split_type
 * MPI_COMM_TYPE_SHARED) and a split in a pseudo-random, reproducible rank
 * order. Each one is classified (with the host MPI's own PMPI_* calls):
 * whether it spans nodes (its MPI_COMM_TYPE_SHARED split is smaller than
 * it, agreed with an allreduce) and whether its ranks are "blocked" by node
 * (node k's ranks contiguous, nodes in increasing order, a node being
 * numbered by its lowest MPI_COMM_WORLD rank).
 *
 * Matrix: all 14 blocking collectives (MPI_Barrier, MPI_Bcast, MPI_Reduce,
 * MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v)), their
 * non-blocking forms (completed with MPI_Wait, compared with the host's
 * blocking call) and, where the MPI has them (MPI-4: MPICH), their
 * persistent forms (two starts, the second on the first's output, one in
 * place; then MPI_Request_free); MPI_Barrier,
 * MPI_Ibarrier and MPI_Barrier_init with a late rank; x communicator x
 * every root (rooted collectives; thinned
 * to roots 0 and p-1 where noted below) x MPI_IN_PLACE or not, wherever
 * MPI allows it x count 0, 1, 1003 and a larger one (about 300 KB per call:
 * per block 300 KB / p for the blocked collectives) x datatype: MPI_INT, a
 * contiguous derived type (3 x MPI_INT) and, for Bcast, Gather, Scatter and
 * Allgather, a non-contiguous vector (2 blocks of 1 MPI_INT, stride 2),
 * which kcoll may stage but must get right, and for Gather, Scatter and
 * Allgather(v), in every form, a darray (every second int of four) that
 * kcoll has no map for (on one node the host MPI's; across nodes kcoll
 * moves it packed by PMPI_Pack; an Alltoallv's agreement sends it to the
 * host MPI on every rank, counted mpi:multinode). Reductions use only exact
 * operations, whose result does not depend on the order the nodes are
 * combined in: MPI_INT SUM, MAX, MIN, MPI_LONG SUM and MIN, a commutative
 * user operation (bitwise and of ints, made with commute = 1: combined in
 * any order on every placement) and a non-commutative one (2x2 int32
 * matrix product mod 2^32 on a contiguous 4 x MPI_INT type, made with
 * commute = 0). The v-variants get
 * counts that differ per rank, some zero, at shuffled displacements with
 * gaps (mt_shuffle; Alltoallv's counts differ per pair of ranks, symmetric
 * in place). Each call runs with the family's algorithm on "auto"
 * and forced (KCOLL_<FAMILY>_ALGO, one or two on-node algorithms of every
 * family; set back to "auto" after), and with KCOLL_MIN_BYTES=0 so that
 * every call qualifies; a few small calls also run at the default
 * KCOLL_MIN_BYTES. Thinned (wanted()): every root only for MPI_INT, the
 * int32 SUM and the matrix product at counts 1 and 1003 with "auto" (not
 * on the duplicate), roots 0 and p-1 elsewhere; both in-place settings at
 * count 1003 for those and the contiguous type, one (alternating) for the
 * rest; the other types and operations at counts 1 (types) and 1003 only;
 * non-blocking and persistent calls with MPI_INT, the int32 SUM and the matrix product;
 * the large count on MPI_COMM_WORLD and the random split only, root p-1;
 * forced algorithms at counts 1003 and large only, not on the duplicate and
 * the odd/even split. MPI_Barrier: one rank enters 20 ms late, nobody may leave
 * before it entered (checked with the clock where every process reports the
 * same kernel boot id, i.e. runs on one machine, as fake nodes do).
 *
 * Both calls start from identical buffers (send and receive, with a 64-byte
 * canary after each, and the gaps of the v-layouts and of the vector type),
 * and every rank compares both whole allocations afterwards, with one
 * exception: a reduction's result (where this rank has one) is compared
 * with the exact result, computed here from every rank's input
 * (regenerated: inputs are a function of the case and the rank) with
 * MPI_Reduce_local in rank order, and so is the host's: a host result that
 * differs fails the case, unless it is a known host bug (host_bug_known:
 * MPICH 4.0.2's PMPI_Reduce on uneven nodes), which is counted and
 * reported instead. The part of an in-place Reduce_scatter's buffer after
 * its result, which MPI leaves undefined, is not compared. MPICH 4.0.2's
 * PMPI_Reduce also crashes in place at a non-zero root, so the host's
 * reductions get in-place input as a separate send buffer (the same
 * result), and under MPICH such calls with "auto" on a node-local
 * communicator (kcoll hands them to the host) are skipped.
 *
 * Statistics (kcoll_stats_get), per call, on its row (the non-blocking
 * form's row for MPI_I*, the persistent one's for MPI_*_init, counted per
 * start): a node-local communicator never counts on kcoll:leaders or kcoll:lanes, counts
 * the call on exactly one path (kcoll:* plus mpi:* grow by 1 per call),
 * and with a forced algorithm, more than one rank, a contiguous datatype
 * and KCOLL_MIN_BYTES=0 counts it on kcoll:<algo>. On a communicator that
 * spans nodes: Barrier, Bcast, Reduce, Allreduce, Reduce_scatter(_block),
 * Gather(v), Scatter(v), Allgather and Allgatherv, in every form (a
 * Gatherv's and Scatterv's agreement: the root's layout broadcast), count
 * +1 on kcoll:leaders or kcoll:lanes and nothing on mpi:* (the
 * non-contiguous vector too: kcoll moves it through its datatype map; a
 * Gatherv and Scatterv with the darray on mpi:multinode: the root cannot
 * lay it out, and its agreement gives the call to the host, a
 * non-blocking one's after the call returned, with copies of the root's
 * arrays, which the test scrambles meanwhile); Alltoall and Alltoallv
 * (every form) count +1 on mpi:multinode and nothing on kcoll:*, but with
 * KCOLL_HIER=lanes (they have no leaders' layout), where they count on
 * kcoll:lanes (an Alltoallv with
 * the darray on mpi:multinode: its agreement gives it to the host; a
 * non-blocking one's settles after the call returned);
 * reductions with the non-commutative operation are hierarchical only on a
 * blocked communicator and go to mpi:multinode where a node's ranks are
 * not contiguous (contiguous nodes in another order may take either path).
 * Below KCOLL_MIN_BYTES nothing counts on kcoll:leaders or kcoll:lanes.
 *
 * Then (streak_cases) the host streak of the calls that agree across
 * nodes, under KCOLL_HIER=auto; and (outstanding_cases) sixteen
 * non-blocking collectives on four
 * communicators outstanding at once (four reductions on two of them), with
 * KCOLL_HIER=on and =lanes, completed in reverse (MPI_Waitall)
 * and as MPI_Testany finds them; and (progress_cases) a broadcast across
 * nodes whose progress needs a node leader that blocks in MPI_Recv, or
 * (Open MPI) in a host collective, before it waits (docs/hierarchy.md,
 * "Progress").
 *
 * Options: --no-stats skips every statistics check (for a library without
 * the hierarchical path yet, where multi-node calls go to mpi:multinode);
 * -q thins the matrix further (for MPICH with more ranks than cores, where
 * each of its own collectives costs milliseconds: see wanted()): no
 * duplicate, the other splits at count 1003 with MPI_INT, the int32 SUM
 * and the matrix product only, roots 0 and p-1 (below 1003: p-1), one
 * in-place setting per point, each other operation on one reduction, the
 * large count and forced algorithms on MPI_COMM_WORLD (forced also on the
 * node-local split), one late rank per barrier; -v prints the time per
 * collective and communicator; --expect-nodes=0,0,1,1 fails unless world
 * rank i is on node i of the list (nodes numbered in order of first
 * appearance), checking a launcher's placement. A watchdog names a case
 * that hangs for 120 s (and aborts), crashes or meets an MPI error.
 *
 * A case is a job of job.h, shared with the tests of non-blocking and
 * persistent collectives: its description, the layout of its buffers and
 * the host's and kcoll's calls on them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"

#define BIG_BYTES (300u * 1024u)
/* the lanes' pipelined Allgather(v) past the host's eager size: ints a
 * block (375 KiB, 3 pieces of 128 KiB) */
#define PIECE_INTS 96000

/* The calls tested, each a row of colls[]: the blocking collectives (each
 * on job.h's collective of the same name) and six non-blocking forms. */
enum { ROW_BARRIER, ROW_BCAST, ROW_REDUCE, ROW_ALLREDUCE, ROW_RSB, ROW_RS, ROW_GATHER,
       ROW_GATHERV, ROW_SCATTER, ROW_SCATTERV, ROW_ALLGATHER, ROW_ALLGATHERV, ROW_ALLTOALL,
       ROW_ALLTOALLV, ROW_IBCAST, ROW_IREDUCE, ROW_IALLREDUCE, ROW_IRSB, ROW_IRS, ROW_IGATHER,
       ROW_IGATHERV, ROW_ISCATTER, ROW_ISCATTERV, ROW_IALLGATHER, ROW_IALLGATHERV, ROW_IALLTOALL,
       ROW_IALLTOALLV, ROW_PBCAST, ROW_PREDUCE, ROW_PALLREDUCE, ROW_PRSB, ROW_PRS, ROW_PGATHER,
       ROW_PGATHERV, ROW_PSCATTER, ROW_PSCATTERV, ROW_PALLGATHER, ROW_PALLGATHERV, ROW_PALLTOALL,
       ROW_PALLTOALLV, NROWS };

/* F_HIER: hierarchical on a multi-node communicator (of the v-variants
 * not Alltoallv); F_LANES:
 * only in the lanes layout (Alltoall: with KCOLL_HIER=on the host MPI's);
 * F_NB: the non-blocking form; F_PERS: the persistent form (MPI-4);
 * F_VEC: the vector datatype is tested */
enum {
    F_ROOTED = 1,
    F_RED = 2,
    F_V = 4,
    F_HIER = 8,
    F_NB = 16,
    F_VEC = 32,
    F_PERS = 64,
    F_LANES = 128
};

enum { FAM_BARRIER, FAM_BCAST, FAM_REDUCE, FAM_ALLREDUCE, FAM_RS, FAM_GATHER, FAM_SCATTER,
       FAM_ALLGATHER, FAM_ALLTOALL, NFAM };
static const char *const fam_param[NFAM] = {"BARRIER_ALGO", "BCAST_ALGO", "REDUCE_ALGO",
                                            "ALLREDUCE_ALGO", "REDUCE_SCATTER_ALGO", "GATHER_ALGO",
                                            "SCATTER_ALGO", "ALLGATHER_ALGO", "ALLTOALL_ALGO"};
/* "auto", then the forced on-node algorithms */
static const char *const fam_algos[NFAM][3] = {
    {"auto", "dissemination", "hier"},
    {"auto", "knomial:k=2", "hier:chunk=4"},
    {"auto", "serial", "partitioned:chunk=4"},
    {"auto", "reduce_bcast", "hier:chunk=4"},
    {"auto", "partitioned:chunk=4", NULL},
    {"auto", "sequential_read", "throttled_write:k=1"},
    {"auto", "sequential_write", "throttled_read:k=1"},
    {"auto", "bruck", "ring_source_write"},
    {"auto", "pairwise_write", NULL},
};

static const struct {
    const char *row; /* statistics row */
    int base;        /* job.h's blocking collective (the host's reference call) */
    int fam, flags;
} colls[NROWS] = {
    [ROW_BARRIER] = {"MPI_Barrier", BARRIER, FAM_BARRIER, F_HIER},
    [ROW_BCAST] = {"MPI_Bcast", BCAST, FAM_BCAST, F_ROOTED | F_HIER | F_VEC},
    [ROW_REDUCE] = {"MPI_Reduce", REDUCE, FAM_REDUCE, F_ROOTED | F_RED | F_HIER},
    [ROW_ALLREDUCE] = {"MPI_Allreduce", ALLREDUCE, FAM_ALLREDUCE, F_RED | F_HIER},
    [ROW_RSB] = {"MPI_Reduce_scatter_block", RSB, FAM_RS, F_RED | F_HIER},
    [ROW_RS] = {"MPI_Reduce_scatter", RS, FAM_RS, F_RED | F_HIER},
    [ROW_GATHER] = {"MPI_Gather", GATHER, FAM_GATHER, F_ROOTED | F_HIER | F_VEC},
    [ROW_GATHERV] = {"MPI_Gatherv", GATHERV, FAM_GATHER, F_ROOTED | F_V | F_HIER},
    [ROW_SCATTER] = {"MPI_Scatter", SCATTER, FAM_SCATTER, F_ROOTED | F_HIER | F_VEC},
    [ROW_SCATTERV] = {"MPI_Scatterv", SCATTERV, FAM_SCATTER, F_ROOTED | F_V | F_HIER},
    [ROW_ALLGATHER] = {"MPI_Allgather", ALLGATHER, FAM_ALLGATHER, F_HIER | F_VEC},
    [ROW_ALLGATHERV] = {"MPI_Allgatherv", ALLGATHERV, FAM_ALLGATHER, F_V | F_HIER},
    [ROW_ALLTOALL] = {"MPI_Alltoall", ALLTOALL, FAM_ALLTOALL, F_LANES},
    [ROW_ALLTOALLV] = {"MPI_Alltoallv", ALLTOALLV, FAM_ALLTOALL, F_V | F_LANES},
    [ROW_IBCAST] = {"MPI_Ibcast", BCAST, FAM_BCAST, F_ROOTED | F_NB | F_HIER},
    [ROW_IREDUCE] = {"MPI_Ireduce", REDUCE, FAM_REDUCE, F_ROOTED | F_RED | F_NB | F_HIER},
    [ROW_IALLREDUCE] = {"MPI_Iallreduce", ALLREDUCE, FAM_ALLREDUCE, F_RED | F_NB | F_HIER},
    [ROW_IRSB] = {"MPI_Ireduce_scatter_block", RSB, FAM_RS, F_RED | F_NB | F_HIER},
    [ROW_IRS] = {"MPI_Ireduce_scatter", RS, FAM_RS, F_RED | F_NB | F_HIER},
    [ROW_IGATHER] = {"MPI_Igather", GATHER, FAM_GATHER, F_ROOTED | F_NB | F_HIER},
    [ROW_IGATHERV] = {"MPI_Igatherv", GATHERV, FAM_GATHER, F_ROOTED | F_V | F_NB | F_HIER},
    [ROW_ISCATTER] = {"MPI_Iscatter", SCATTER, FAM_SCATTER, F_ROOTED | F_NB | F_HIER},
    [ROW_ISCATTERV] = {"MPI_Iscatterv", SCATTERV, FAM_SCATTER,
                       F_ROOTED | F_V | F_NB | F_HIER},
    [ROW_IALLGATHER] = {"MPI_Iallgather", ALLGATHER, FAM_ALLGATHER, F_NB | F_HIER},
    [ROW_IALLGATHERV] = {"MPI_Iallgatherv", ALLGATHERV, FAM_ALLGATHER, F_V | F_NB | F_HIER},
    [ROW_IALLTOALL] = {"MPI_Ialltoall", ALLTOALL, FAM_ALLTOALL, F_NB | F_LANES},
    [ROW_IALLTOALLV] = {"MPI_Ialltoallv", ALLTOALLV, FAM_ALLTOALL, F_V | F_NB | F_LANES},
    [ROW_PBCAST] = {"MPI_Bcast_init", BCAST, FAM_BCAST, F_ROOTED | F_PERS | F_HIER},
    [ROW_PREDUCE] = {"MPI_Reduce_init", REDUCE, FAM_REDUCE, F_ROOTED | F_RED | F_PERS | F_HIER},
    [ROW_PALLREDUCE] = {"MPI_Allreduce_init", ALLREDUCE, FAM_ALLREDUCE, F_RED | F_PERS | F_HIER},
    [ROW_PRSB] = {"MPI_Reduce_scatter_block_init", RSB, FAM_RS, F_RED | F_PERS | F_HIER},
    [ROW_PRS] = {"MPI_Reduce_scatter_init", RS, FAM_RS, F_RED | F_PERS | F_HIER},
    [ROW_PGATHER] = {"MPI_Gather_init", GATHER, FAM_GATHER, F_ROOTED | F_PERS | F_HIER},
    [ROW_PGATHERV] = {"MPI_Gatherv_init", GATHERV, FAM_GATHER,
                      F_ROOTED | F_V | F_PERS | F_HIER},
    [ROW_PSCATTER] = {"MPI_Scatter_init", SCATTER, FAM_SCATTER, F_ROOTED | F_PERS | F_HIER},
    [ROW_PSCATTERV] = {"MPI_Scatterv_init", SCATTERV, FAM_SCATTER,
                       F_ROOTED | F_V | F_PERS | F_HIER},
    [ROW_PALLGATHER] = {"MPI_Allgather_init", ALLGATHER, FAM_ALLGATHER, F_PERS | F_HIER},
    [ROW_PALLGATHERV] = {"MPI_Allgatherv_init", ALLGATHERV, FAM_ALLGATHER,
                         F_V | F_PERS | F_HIER},
    [ROW_PALLTOALL] = {"MPI_Alltoall_init", ALLTOALL, FAM_ALLTOALL, F_PERS | F_LANES},
    [ROW_PALLTOALLV] = {"MPI_Alltoallv_init", ALLTOALLV, FAM_ALLTOALL, F_V | F_PERS | F_LANES},
};

/* Data kinds: datatypes for data movement, (datatype, operation) pairs
 * for reductions. */
enum { K_INT, K_CONTIG, K_VECTOR, K_HOLES, R_INT_SUM, R_INT_MAX, R_INT_MIN, R_INT_BAND, R_LONG_SUM,
       R_LONG_MIN, R_MAT, NKINDS };
#define FIRST_RED R_INT_SUM
static const char *const kind_names[NKINDS] = {
    "MPI_INT", "contig(3 x int)", "vector(2,1,2 x int)", "darray (no map)", "MPI_INT SUM", "MPI_INT MAX",
    "MPI_INT MIN", "MPI_INT user and (commutative)", "MPI_LONG SUM", "MPI_LONG MIN", "matrix(4 x int) product"};
static MPI_Datatype kind_dt[NKINDS];
static MPI_Op kind_op[NKINDS];
static int kind_commutes(int k)
{
    return k != R_MAT;
}
/* the kinds that get the full matrix; the others are thinned */
static int main_kind(int k)
{
    return k == K_INT || k == R_INT_SUM || k == R_MAT;
}

enum { SH_WORLD, SH_DUP, SH_REVERSED, SH_ODDEVEN, SH_NODE, SH_RANDOM, NSHAPES };
static const char *const shape_names[NSHAPES] = {"world", "dup", "reversed split",
                                                 "odd/even split", "node-local split",
                                                 "random split"};
/* how a communicator's ranks lie on nodes */
enum { L_ONE_NODE, L_BLOCKED, L_CONTIG_UNORDERED, L_SCATTERED };
static const char *const layout_names[] = {"one node", "blocked by node",
                                           "nodes contiguous, not in order", "nodes interleaved"};

typedef struct {
    MPI_Comm comm;
    int p, rank, layout;
} shape_t;

static int quick, verbose, stats = 1, wsize;
/* the communicator of the case being run spans nodes */
static int cur_spans;
/* KCOLL_HIER=auto for the call: the model may hand a call across nodes to
 * the host MPI (else KCOLL_HIER=on: every collective with a layout runs in it) */
static int hier_auto;
/* KCOLL_HIER=lanes for the call: a call across nodes counts on kcoll:lanes */
static int hier_lanes;
static int world_node[MAXP]; /* node of each world rank: its lowest world rank */

/* ---------------------------------------------------------------------- */
/* Data */

/* len pseudo-random bytes from seed (any bit pattern is a valid int,
 * long or matrix element) */
static void fill(char *b, size_t len, uint64_t seed)
{
    uint64_t x = mt_mix(seed) | 1;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(b + i, &x, 8);
    }
    for (; i < len; i++)
        b[i] = (char)(x >> (8 * (i & 7)));
}

/* ---------------------------------------------------------------------- */
/* One call and its buffers */

/* A job's (job.h) buffers: the host's call (HOST) on ref_*, kcoll's (KB
 * and NB) on got_* */
static char *ref_s, *ref_r, *got_s, *got_r, *tmp_b;
static size_t buf_max;

/* The host's blocking call (kc = 0) or kcoll's (kc = 1: the MPI_I* form,
 * then MPI_Wait, for the non-blocking rows) of job j on row c. */
static int issue(job_t *j, int c, int kc)
{
    if (!kc)
        return job_issue(j, HOST, NULL);
    if (!(colls[c].flags & (F_NB | F_PERS)))
        return job_issue(j, KB, NULL);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = job_issue(j, colls[c].flags & F_PERS ? PINIT : NB, &req);
    if (rc != MPI_SUCCESS || !(colls[c].flags & F_PERS)) {
        /* a non-blocking Alltoallv kcoll takes across nodes (lanes), or
         * Gatherv or Scatterv, may settle, and give the host the call,
         * after it returned: with copies of its counts and
         * displacements, which the program may reuse then (MPI forbids
         * it, mpi4py does it, the hosts read them at the start): here they
         * read as garbage until the wait */
        const int rooted_v = (j->c == GATHERV || j->c == SCATTERV) && cur_spans && !hier_auto;
        const int reuse =
            rc == MPI_SUCCESS && ((hier_lanes && j->c == ALLTOALLV) || rooted_v);
        int saved[4][MAXP];
        int *const arr[4] = {j->sc, j->sd, j->rc, j->rd};
        for (int i = 0; reuse && i < 4; i++) {
            memcpy(saved[i], arr[i], sizeof saved[i]);
            memset(arr[i], i % 2 ? 0x7f : 0, sizeof saved[i]);
        }
        rc = rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
        for (int i = 0; reuse && i < 4; i++)
            memcpy(arr[i], saved[i], sizeof saved[i]);
        return rc;
    }
    /* persistent: two starts (the second on the first's output: the same
     * result, except in place, where the input changed: one start) */
    const int starts = j->ip ? 1 : 2;
    for (int i = 0; i < starts && rc == MPI_SUCCESS; i++) {
        rc = MPI_Start(&req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    int rc2 = MPI_Request_free(&req);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Calls one issue() counts on the statistics: a persistent request's
 * starts. */
static uint64_t calls_of(const job_t *j, int c)
{
    return (colls[c].flags & F_PERS) && !j->ip ? 2 : 1;
}

/* First differing byte of two buffers, or -1. */
static long first_diff(const char *a, const char *b, size_t len)
{
    if (!memcmp(a, b, len))
        return -1;
    size_t i = 0;
    while (a[i] == b[i])
        i++;
    return (long)i;
}

/* ---------------------------------------------------------------------- */
/* Statistics */

/* every mpi:<reason> row (job.h's reasons) is read, and named in a
 * failure's message */
typedef struct {
    uint64_t hier, multinode, kcoll_any, mpi_any, algo, lanes, reason[NREASONS];
} rows_t;

static rows_t rows_get(const char *row, const char *algo_path)
{
    rows_t r;
    /* across nodes: one schedule in a layout */
    r.lanes = mt_calls(row, "kcoll:lanes");
    r.hier = mt_calls(row, "kcoll:leaders") + r.lanes;
    r.multinode = mt_calls(row, "mpi:multinode");
    r.kcoll_any = mt_calls(row, "kcoll:*");
    r.mpi_any = mt_calls(row, "mpi:*");
    r.algo = algo_path ? mt_calls(row, algo_path) : 0;
    for (int i = 0; i < NREASONS; i++) {
        char path[64];
        snprintf(path, sizeof path, "mpi:%s", reasons[i]);
        r.reason[i] = mt_calls(row, path);
    }
    return r;
}

static rows_t rows_diff(rows_t a, rows_t b)
{
    rows_t d = {a.hier - b.hier, a.multinode - b.multinode, a.kcoll_any - b.kcoll_any,
                a.mpi_any - b.mpi_any, a.algo - b.algo, a.lanes - b.lanes, {0}};
    for (int i = 0; i < NREASONS; i++)
        d.reason[i] = a.reason[i] - b.reason[i];
    return d;
}

/* " (hier +1, ..., mpi:noncontig_datatype +1)": the rows a call changed */
static void rows_describe(char *out, size_t len, rows_t d, const char *algo_path)
{
    int k = snprintf(out, len, " (across nodes +%llu, kcoll:lanes +%llu, kcoll:* +%llu, mpi:* +%llu",
                     (unsigned long long)d.hier, (unsigned long long)d.lanes,
                     (unsigned long long)d.kcoll_any, (unsigned long long)d.mpi_any);
    if (algo_path && k > 0 && (size_t)k < len)
        k += snprintf(out + k, len - (size_t)k, ", %s +%llu", algo_path,
                      (unsigned long long)d.algo);
    for (int i = 0; i < NREASONS; i++)
        if (d.reason[i] && k > 0 && (size_t)k < len)
            k += snprintf(out + k, len - (size_t)k, ", mpi:%s +%llu", reasons[i],
                          (unsigned long long)d.reason[i]);
    if (k > 0 && (size_t)k < len)
        snprintf(out + k, len - (size_t)k, ")");
}

enum { E_LOCAL, E_HIER, E_HOST, E_EITHER };

/* The path a call must take on this communicator. */
static int expected(int c, int kind, int layout)
{
    if (layout == L_ONE_NODE)
        return E_LOCAL;
    /* an Alltoallv that kcoll cannot lay out (the darray, which it would
     * have the host pack): its agreement sends every rank to the host */
    if ((colls[c].base == ALLTOALLV || colls[c].base == GATHERV || colls[c].base == SCATTERV) &&
        kind == K_HOLES)
        return E_HOST;
    if (!(colls[c].flags & F_HIER))
        return hier_lanes && (colls[c].flags & F_LANES) ? E_HIER : E_HOST;
    if ((colls[c].flags & F_RED) && !kind_commutes(kind))
        return layout == L_BLOCKED ? E_HIER : layout == L_SCATTERED ? E_HOST : E_EITHER;
    return E_HIER;
}

/* What is wrong with the statistics of one call (d: after - before), or
 * NULL. forced: the forced algorithm's row was d.algo; small: below
 * KCOLL_MIN_BYTES. */
static const char *stats_verdict(int e, rows_t d, int forced, int p, int small, uint64_t n)
{
    int one_path = d.kcoll_any + d.mpi_any == n;
    int hier = d.hier == n && d.kcoll_any == n && d.mpi_any == 0;
    int host = d.multinode == n && d.mpi_any == n && d.kcoll_any == 0 && d.hier == 0;
    if (small)
        return d.hier ? "a call below KCOLL_MIN_BYTES counted on kcoll:leaders or kcoll:lanes"
               : !one_path ? "the call was not counted on exactly one path"
                           : NULL;
    switch (e) {
    case E_LOCAL:
        if (d.hier)
            return "a node-local communicator's call counted on kcoll:leaders or kcoll:lanes";
        if (!one_path)
            return "the call was not counted on exactly one path";
        if (forced && p > 1 && d.algo != n)
            return "statistics do not show the forced algorithm";
        return NULL;
    case E_HIER:
        return hier ? NULL : "not counted once on kcoll:leaders or kcoll:lanes (and nowhere else)";
    case E_HOST:
        return host ? NULL : "not counted once on mpi:multinode (and nowhere else)";
    default:
        return hier || host ? NULL
                            : "counted neither once on kcoll:leaders or kcoll:lanes nor once on mpi:multinode";
    }
}

/* ---------------------------------------------------------------------- */
/* Reductions: the exact result */

/* The commutative user operation: bitwise and of ints. */
static void uband(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] &= ((const int *)in)[i];
}

static char *want_b, *in_b;

/* This rank's res_len result bytes of reduction j into want_b, from every
 * rank's input regenerated here (the fill of its send buffer, or of its
 * receive buffer where it passed MPI_IN_PLACE), combined in rank order
 * r_0 op (r_1 op (... op r_{p-1})) with the host's MPI_Reduce_local. */
static void exact_result(const job_t *j, size_t res_len)
{
    size_t eoff = 0; /* where this rank's block starts in the vector */
    if (j->c == RSB)
        eoff = (size_t)j->rank * (size_t)j->n * j->es;
    for (int q = 0; j->c == RS && q < j->rank; q++)
        eoff += (size_t)j->rc[q] * j->es;
    /* whole 8-byte steps of fill, as in the original (longer) buffers */
    const size_t need = (eoff + res_len + 7) & ~(size_t)7;
    for (int q = j->p - 1; q >= 0; q--) {
        const int q_in_place = j->ip && (j->c != REDUCE || q == j->root);
        fill(in_b, need, (uint64_t)j->id * 1000u + (uint64_t)q * 2u + (q_in_place ? 1u : 0u));
        if (q == j->p - 1)
            memcpy(want_b, in_b + eoff, res_len);
        else
            PMPI_Reduce_local(in_b + eoff, want_b, (int)(res_len / j->es), j->dt, j->op);
    }
}

/* Host results that differ from the exact one in a known way are counted,
 * not failed (kcoll's result, unless kcoll handed the call to the host,
 * must still be exact). MPICH 4.0.2 (ch4:ucx) sums wrongly in PMPI_Reduce
 * (any root, from about 1000 MPI_INT on) on a communicator whose rank 0 is
 * alone on its node while another node holds several of its ranks (1+2 or
 * 1+3 ranks per node, or 3+1 in reversed order): one contribution is
 * replaced by stale data. Seen with plain MPICH programs, kcoll not loaded;
 * MPIR_CVAR_REDUCE_INTRA_ALGORITHM and the SMP switches do not change it. */
static long host_bugs;
static int host_bug_known(const job_t *j)
{
#ifdef KCOLL_HOST_OLD_MPICH
    return j->c == REDUCE;
#else
    (void)j;
    return 0;
#endif
}

/* ---------------------------------------------------------------------- */
/* One case */

static void run_case(const shape_t *sh, int shi, int c, int ai, int kind, int n, int root,
                     int ip, int small, uint64_t salt)
{
    job_t j;
    memset(&j, 0, sizeof j);
    j.c = colls[c].base;
    j.kind = kind;
    j.root = root;
    j.ip = ip;
    j.n = n;
    j.p = sh->p;
    j.rank = sh->rank;
    j.id = (long)salt;
    j.comm = sh->comm;
    j.dt = kind_dt[kind];
    j.op = kind_op[kind];
    MPI_Aint lb, ext;
    MPI_Type_get_extent(j.dt, &lb, &ext);
    j.es = (size_t)ext;
    j.b[HOST][0] = ref_s;
    j.b[HOST][1] = ref_r;
    j.b[KB][0] = j.b[NB][0] = got_s;
    j.b[KB][1] = j.b[NB][1] = got_r;
    j.tmp = tmp_b;
    job_layout(&j);
    cur_spans = sh->layout != L_ONE_NODE;
    const char *algo = fam_algos[colls[c].fam][ai];
    wd_note("%s on %s, %s, count %d, root %d%s, algo %s%s", colls[c].row, shape_names[shi],
            kind_names[kind], n, root, ip ? ", in place" : "", algo,
            small ? ", default KCOLL_MIN_BYTES" : "");
    wd_arm(120);
    if (j.slen + CANARY > buf_max || j.rlen + CANARY > buf_max) {
        mt_fail("test error: buffers too small for %.*s", (int)wd_desc_len - 1, wd_desc);
        return;
    }
    const uint64_t seed = salt * 1000u + (uint64_t)sh->rank * 2u;
    fill(ref_s, j.slen + CANARY, seed);
    fill(ref_r, j.rlen + CANARY, seed + 1);
    memcpy(got_s, ref_s, j.slen + CANARY);
    memcpy(got_r, ref_r, j.rlen + CANARY);

    char path[64];
    snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algo, ":"), algo);
    int rc1 = issue(&j, c, 0);
    rows_t before = rows_get(colls[c].row, ai ? path : NULL);
    int rc2 = issue(&j, c, 1);

    rows_t after = rows_get(colls[c].row, ai ? path : NULL);

    rows_t d = rows_diff(after, before);
    /* A reduction's result (at the start of the receive buffer, where this
     * rank has one) is compared with the exact result; every other byte of
     * both allocations with the host's. In place, a Reduce_scatter's
     * buffer after the result is left undefined by MPI. */
    const int red = (colls[c].flags & F_RED) != 0;
    size_t res_len = 0;
    if (red && (j.c != REDUCE || j.rank == j.root))
        res_len = (size_t)(j.c == RS ? j.rc[j.rank] : j.n) * j.es;
    /* A Reduce's receive buffer away from the root is not significant
     * (MPI): Intel MPI 2021.14 uses it as scratch on a node of one rank */
    const size_t other_end = j.c == REDUCE && j.rank != j.root        ? 0
                             : j.ip && (j.c == RSB || j.c == RS) ? res_len
                                                                 : j.rlen;
    const char *why = NULL;
    long off;
    char where[512] = "";
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
        why = "an MPI call returned an error";
    } else if ((off = first_diff(ref_s, got_s, j.slen + CANARY)) >= 0) {
        why = "the send buffer differs from the host MPI's";
        snprintf(where, sizeof where, " (byte %ld of %zu + %d canary)", off, j.slen, CANARY);
    } else if (((off = first_diff(ref_r + res_len, got_r + res_len, other_end - res_len)) >= 0 &&
                (off += (long)res_len) >= 0) ||
               ((off = first_diff(ref_r + j.rlen, got_r + j.rlen, CANARY)) >= 0 &&
                (off += (long)j.rlen) >= 0)) {
        why = res_len ? "the receive buffer after the result differs from the host MPI's"
                      : "the receive buffer differs from the host MPI's";
        snprintf(where, sizeof where, " (byte %ld of %zu + %d canary)", off, j.rlen, CANARY);
    } else if (red && res_len) {
        exact_result(&j, res_len);
        const int kc_ok = !memcmp(got_r, want_b, res_len), host_ok = !memcmp(ref_r, want_b, res_len);
        const int to_host = d.multinode == 1 || d.mpi_any == 1; /* kcoll handed it over */
        if (!host_ok && host_bug_known(&j) && (kc_ok || to_host)) {
            host_bugs++;
        } else if (!kc_ok) {
            why = "the result differs from the exact result";
            off = first_diff(got_r, want_b, res_len);
            snprintf(where, sizeof where, " (byte %ld of %zu; the host's %s)", off, res_len,
                     host_ok ? "is exact" : "differs too");
        } else if (!host_ok) {
            why = "the host MPI's result differs from the exact result (kcoll's is exact)";
        }
    }
    if (!why && stats) {
        int e = expected(c, kind, sh->layout);
        if (hier_auto && (e == E_HIER || (e == E_HOST && (colls[c].flags & F_LANES))))
            e = E_EITHER;
        why = stats_verdict(e, d, ai > 0, sh->p, small, calls_of(&j, c));
        /* lanes wherever the layout runs: any node sizes and placement */
        if (!why && hier_lanes && e == E_HIER && d.lanes != calls_of(&j, c))
            why = "KCOLL_HIER=lanes and not counted on kcoll:lanes";
        if (why)
            rows_describe(where, sizeof where, d, ai ? path : NULL);
    }
    if (why)
        mt_fail("%s%s: %s on %s (%s), %s, count %d, root %d%s, algo %s%s", why, where,
                colls[c].row, shape_names[shi], layout_names[sh->layout], kind_names[kind], n,
                root, ip ? ", in place" : "", algo, small ? ", default KCOLL_MIN_BYTES" : "");
    else
        mt_pass();
}

/* ---------------------------------------------------------------------- */
/* The matrix */

static int kind_fits(int c, int kind)
{
    if (colls[c].flags & F_RED)
        return kind >= FIRST_RED;
    if (kind >= FIRST_RED)
        return 0;
    /* a datatype kcoll has no map for: across nodes the blocked
     * collectives move it packed by the host (KCOLL_TYPE_HOSTPACK), in
     * every form */
    if (kind == K_HOLES)
        return colls[c].base == GATHER || colls[c].base == SCATTER ||
               colls[c].base == ALLGATHER || colls[c].base == ALLGATHERV ||
               colls[c].base == ALLTOALL || colls[c].base == GATHERV ||
               colls[c].base == SCATTERV ||
               /* (Open MPI 5.0's own in-place MPI_Ialltoallv with it differs
                * from its blocking one: the blocking form only) */
               (colls[c].base == ALLTOALLV && !(colls[c].flags & (F_NB | F_PERS)));
    if (kind == K_VECTOR)
        return (colls[c].flags & F_VEC) != 0;
    return kind == K_INT || !(colls[c].flags & (F_NB | F_PERS));
}

/* Elements per call (Bcast, Reduce, Allreduce) or per block for count
 * index si (3: the large one). */
static int count_of(int c, int kind, int si, int p)
{
    static const int small_counts[] = {0, 1, 1003};
    if (si < 3)
        return small_counts[si];
    int size;
    MPI_Type_size(kind_dt[kind], &size);
    int base = colls[c].base;
    int per_call = base == BCAST || base == REDUCE || base == ALLREDUCE;
    return (int)(BIG_BYTES / (size_t)size / (size_t)(per_call ? 1 : p));
}

/* Whether this point of the matrix runs (see the header for the rules). */
static int wanted(const shape_t *sh, int shi, int c, int ai, int kind, int si, int root, int ip)
{
    const int p = sh->p;
    const int nb = (colls[c].flags & (F_NB | F_PERS)) != 0;
    const int has_root = (colls[c].flags & F_ROOTED) != 0;
#ifndef KCOLL_HAVE_PERSISTENT
    if (colls[c].flags & F_PERS)
        return 0;
#endif
#ifdef KCOLL_HOST_OLD_MPICH
    /* MPICH 4.0.2's own blocking MPI_Allgatherv on a communicator of one
     * rank ignores the displacement (the block lands at offset 0; its
     * non-blocking and persistent forms are right), so the reference would
     * differ from those forms' right result */
    if (colls[c].base == ALLGATHERV && nb && p == 1)
        return 0;
#endif
    /* Open MPI's own in-place MPI_Ialltoallv between nodes: 4.1.4's, where
     * one rank's counts are all zero and another's only its own block,
     * leaves the next MPI_Ialltoallv on the communicator hanging; 5.0.11's
     * gives data other than its blocking MPI_Alltoallv in place (2 x 2
     * nodes, MPI_INT, count 19200; both with KCOLL_DISABLE=1 too). On
     * communicators that span nodes kcoll hands these calls to it. */
#ifdef KCOLL_HOST_OLD_OMPI
    const int ompi_ialltoallv_bad = 1;
#else
    const int ompi_ialltoallv_bad = sh->layout != L_ONE_NODE && mt_host_is_ompi();
#endif
    if (ompi_ialltoallv_bad && colls[c].base == ALLTOALLV && nb && ip)
        return 0;
#ifdef KCOLL_HOST_OLD_MPICH
    /* MPICH 4.0.2's PMPI_Reduce crashes in place at a non-zero root, and on
     * one node kcoll's "auto" hands such calls to it */
    if (colls[c].base == REDUCE && ip && root != 0 && sh->layout == L_ONE_NODE && ai == 0)
        return 0;
#endif
    const int end_root = root == 0 || root == p - 1, last_root = !has_root || root == p - 1;
    const int alt = (int)((unsigned)(c + ai + kind + si + root) % 2u); /* in place: one of two */
    if (quick && shi == SH_DUP)
        return 0;
    if (si == 3) { /* the large count */
        if (shi != SH_WORLD && (quick || shi != SH_RANDOM))
            return 0;
        if (!main_kind(kind) && kind != K_VECTOR)
            return 0;
        /* -q: no second forced algorithm, none for the matrix product and
         * the collectives that are not hierarchical; the vector in Bcast
         * only; no non-blocking call */
        if (quick && (ai > 1 || (ai && (kind == R_MAT || !(colls[c].flags & F_HIER))) || nb ||
                      (kind == K_VECTOR && colls[c].base != BCAST)))
            return 0;
        return last_root && ip == alt;
    }
    if (ai > 0) { /* forced algorithms */
        if (shi == SH_DUP || shi == SH_ODDEVEN || (quick && shi != SH_WORLD && shi != SH_NODE))
            return 0;
        return si == 2 && main_kind(kind) && end_root && ip == alt;
    }
    if (quick && shi == SH_ODDEVEN)
        return si == 2 && main_kind(kind) && last_root && ip == alt;
    if (quick && (shi == SH_REVERSED || shi == SH_RANDOM))
        return si == 2 && main_kind(kind) && (nb ? last_root : end_root) && ip == alt;
    if (nb)
        return (main_kind(kind) || kind == K_HOLES) && si >= (quick ? 2 : 1) && end_root &&
               ip == alt;
    if (!main_kind(kind)) { /* the contiguous and vector types, the other operations */
        if (quick) /* -q: each other operation on one of the four reductions */
            return si == 2 && last_root && ip == alt &&
                   (kind < FIRST_RED || kind % 4 == colls[c].base - REDUCE);
        return (si == 2 || (si == 1 && kind <= K_VECTOR)) && end_root &&
               (ip == alt || (si == 2 && kind == K_CONTIG));
    }
    /* the main kinds at counts 0, 1, 1003: every root (-q: roots 0 and p-1
     * at 1003, p-1 below); both in place at 1003 (-q: one) */
    if (quick)
        return (si == 2 ? end_root : last_root) && ip == alt;
    if ((shi == SH_DUP || si == 0) && !end_root)
        return 0;
    return si == 2 ? 1 : ip == alt;
}

/* MPI_Barrier: the late rank sleeps 20 ms, then enters; everybody's exit
 * must come after its entry (on one machine, by the clock). */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int one_machine;
static double t_start;

/* MPI_Barrier, or (form 1) MPI_Ibarrier and MPI_Wait, or (form 2, MPI-4)
 * MPI_Barrier_init, MPI_Start and MPI_Wait */
static int barrier_form(MPI_Comm comm, int form)
{
    MPI_Request req;
    int rc;
    if (form == 0)
        return MPI_Barrier(comm);
#ifdef KCOLL_HAVE_PERSISTENT
    if (form == 2) {
        if ((rc = MPI_Barrier_init(comm, MPI_INFO_NULL, &req)) != MPI_SUCCESS ||
            (rc = MPI_Start(&req)) != MPI_SUCCESS || (rc = MPI_Wait(&req, MPI_STATUS_IGNORE)))
            return rc;
        return MPI_Request_free(&req);
    }
#endif
    if ((rc = MPI_Ibarrier(comm, &req)) != MPI_SUCCESS)
        return rc;
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void barrier_cases(const shape_t *sh, int shi)
{
    static const char *const rows[] = {"MPI_Barrier", "MPI_Ibarrier", "MPI_Barrier_init"};
    const int forms = KCOLL_PERSISTENT_FORMS;
    for (int ai = 0; ai < 2; ai++) {
        kcoll_param_set(fam_param[FAM_BARRIER], fam_algos[FAM_BARRIER][ai]);
        for (int form = 0; form < forms; form++)
        for (int late = 0; late < sh->p; late += (sh->p > 1 ? sh->p - 1 : 1)) {
            /* -q: one late rank per algorithm; the other forms: one late rank */
            if ((quick || form) && late != (ai ? 0 : sh->p - 1))
                continue;
            const char *path = "kcoll:dissemination";
            wd_note("%s on %s, late rank %d, algo %s", rows[form], shape_names[shi], late,
                    fam_algos[FAM_BARRIER][ai]);
            wd_arm(120);
            PMPI_Barrier(sh->comm);
            double entered = 0;
            if (sh->rank == late) {
                struct timespec ts = {0, 20 * 1000000L};
                nanosleep(&ts, NULL);
                entered = now_s();
            }
            rows_t before = rows_get(rows[form], ai ? path : NULL);
            int rc = barrier_form(sh->comm, form);
            double left = now_s();
            rows_t after = rows_get(rows[form], ai ? path : NULL);
            PMPI_Allreduce(MPI_IN_PLACE, &entered, 1, MPI_DOUBLE, MPI_MAX, sh->comm);
            const char *why = NULL;
            char where[512] = "";
            rows_t d;
            if (rc != MPI_SUCCESS)
                why = "the barrier returned an error";
            else if (one_machine && left < entered)
                why = "a rank left the barrier before the late rank entered";
            else if (stats) {
                d = rows_diff(after, before);
                why = stats_verdict(expected(ROW_BARRIER, K_INT, sh->layout), d, ai > 0, sh->p, 0,
                                    1);
                if (why)
                    rows_describe(where, sizeof where, d, ai ? path : NULL);
            }
            if (why)
                mt_fail("%s%s: %s on %s (%s), late rank %d, algo %s", why, where, rows[form],
                        shape_names[shi], layout_names[sh->layout], late,
                        fam_algos[FAM_BARRIER][ai]);
            else
                mt_pass();
        }
    }
    kcoll_param_set(fam_param[FAM_BARRIER], "auto");
}

static void shape_cases(const shape_t *sh, int shi)
{
    const int p = sh->p;
    uint64_t salt = 1000000u * (uint64_t)(shi + 1);
    double tb = now_s();
    barrier_cases(sh, shi);
    if (verbose && wrank == 0)
        printf("  MPI_Barrier on %s (%d ranks): %.2f s\n", shape_names[shi], p, now_s() - tb);
    kcoll_param_set("MIN_BYTES", "0");
    for (int c = ROW_BCAST; c < NROWS; c++) {
        const int fam = colls[c].fam;
        double t0 = now_s();
        long cases = 0;
        for (int ai = 0; ai < 3 && fam_algos[fam][ai]; ai++) {
            if (ai > 0 && (colls[c].flags & (F_NB | F_PERS)))
                break;
            kcoll_param_set(fam_param[fam], fam_algos[fam][ai]);
            for (int kind = 0; kind < NKINDS; kind++) {
                if (!kind_fits(c, kind))
                    continue;
                for (int si = 0; si < 4; si++)
                    for (int root = 0; root < ((colls[c].flags & F_ROOTED) ? p : 1); root++)
                        for (int ip = 0; ip < (has_in_place(colls[c].base) ? 2 : 1); ip++) {
                            if (!wanted(sh, shi, c, ai, kind, si, root, ip))
                                continue;
                            run_case(sh, shi, c, ai, kind, count_of(c, kind, si, p), root, ip,
                                     0, salt++);
                            cases++;
                        }
            }
        }
        kcoll_param_set(fam_param[fam], "auto");
        if (verbose && wrank == 0)
            printf("  %s on %s (%d ranks): %ld cases, %.2f s\n", colls[c].row, shape_names[shi],
                   p, cases, now_s() - t0);
    }
    /* small calls at the default KCOLL_MIN_BYTES: never hierarchical */
    tb = now_s();
    kcoll_param_set("MIN_BYTES", "16384");
    run_case(sh, shi, ROW_BCAST, 0, K_INT, 1, p - 1, 0, 1, salt++);
    run_case(sh, shi, ROW_ALLREDUCE, 0, R_INT_SUM, 1, 0, 0, 1, salt++);
    run_case(sh, shi, ROW_GATHER, 0, K_INT, 3, 0, 0, 1, salt++);
    kcoll_param_set("MIN_BYTES", "0");
    if (verbose && wrank == 0)
        printf("  small calls on %s (%d ranks): %.2f s\n", shape_names[shi], p, now_s() - tb);
    /* KCOLL_HIER=lanes: Bcast, the reductions, Allgather(v) and
     * Alltoall(v) in the lanes layout (every rank of a node carries a share
     * of the vector, its own block, or its node's blocks for its lane,
     * between nodes),
     * every form, on MPI_COMM_WORLD, the reversed and the random split:
     * counts 0, 1, 1003 and the large one, roots 0 and p-1, in place or
     * not, the int32 sum and MPI_INT; the long minimum, the
     * non-commutative product, the darray (packed by the host) and, for
     * the Alltoallv, the 3-int type and the vector at count 1003
     * (blocking) */
    static const int lane_rows[] = {ROW_BCAST,      ROW_IBCAST,     ROW_PBCAST,
                                    ROW_REDUCE,     ROW_ALLREDUCE,  ROW_RSB,
                                    ROW_RS,         ROW_IREDUCE,    ROW_IALLREDUCE,
                                    ROW_IRSB,       ROW_IRS,        ROW_PREDUCE,
                                    ROW_PALLREDUCE, ROW_PRSB,       ROW_PRS,
                                    ROW_ALLGATHER,  ROW_ALLGATHERV, ROW_IALLGATHER,
                                    ROW_IALLGATHERV, ROW_PALLGATHER, ROW_PALLGATHERV,
                                    ROW_ALLTOALL,   ROW_IALLTOALL,  ROW_PALLTOALL,
                                    ROW_ALLTOALLV,  ROW_IALLTOALLV, ROW_PALLTOALLV};
    static const int lane_kinds[] = {R_INT_SUM, R_LONG_MIN, R_MAT, K_INT, K_HOLES, K_CONTIG,
                                     K_VECTOR};
    tb = now_s();
    kcoll_param_set("HIER", "lanes");
    hier_lanes = shi == SH_WORLD || shi == SH_RANDOM || shi == SH_REVERSED;
    for (size_t i = 0; hier_lanes && i < sizeof lane_rows / sizeof lane_rows[0]; i++) {
        const int c = lane_rows[i];
#ifndef KCOLL_HAVE_PERSISTENT
        if (colls[c].flags & F_PERS)
            continue;
#endif
        for (size_t k = 0; k < sizeof lane_kinds / sizeof lane_kinds[0]; k++) {
            const int first = lane_kinds[k] == R_INT_SUM || lane_kinds[k] == K_INT;
            /* the derived types (3 ints; a vector kcoll moves through its
             * map) for the Alltoallv, whose lanes read each block at its
             * own displacement */
            const int derived = lane_kinds[k] == K_CONTIG || lane_kinds[k] == K_VECTOR;
            /* the darray in every form of the Alltoallv: its agreement
             * hands the call to the host (a non-blocking one's after it
             * returned, on the communicator's duplicate) */
            const int holes_v = lane_kinds[k] == K_HOLES && colls[c].base == ALLTOALLV;
            if (derived ? c != ROW_ALLTOALLV : !kind_fits(c, lane_kinds[k]) && !holes_v)
                continue;
            for (int si = 0; si < 4; si++)
                for (int root = 0; root < ((colls[c].flags & F_ROOTED) ? p : 1);
                     root += (p > 1 ? p - 1 : 1))
                    for (int ip = 0; ip < 2; ip++) {
                        /* thinned: the other forms with the int32 sum, the
                         * other operations at count 1003; -q fewer */
                        if ((!first &&
                             (si != 2 || ((colls[c].flags & (F_NB | F_PERS)) && !holes_v))) ||
                            (quick && si == 0) || (ip && colls[c].base == BCAST) ||
                            /* (Open MPI's own in-place MPI_Ialltoallv: wanted()) */
                            (holes_v && ip && (colls[c].flags & (F_NB | F_PERS))))
                            continue;
                        run_case(sh, shi, c, 0, lane_kinds[k], count_of(c, lane_kinds[k], si, p),
                                 root, ip, 0, salt++);
                    }
        }
    }
    /* the lanes' Allgather(v), Allreduce, Reduce and Bcast pipelined:
     * blocks (vectors) cut into pieces of 1 KiB (1003 ints in 4, the large
     * blocks in tens), each piece's host collectives begun before the node
     * shares the piece before it (and, the reductions, reduces the next;
     * the Bcast, scatters the next on the root's node); the reductions
     * also with the non-commutative product, the rooted ones to roots 0
     * and p - 1 */
    static const int piece_rows[] = {ROW_ALLGATHER,   ROW_ALLGATHERV, ROW_IALLGATHER,
                                     ROW_IALLGATHERV, ROW_PALLGATHER, ROW_PALLGATHERV,
                                     ROW_ALLREDUCE,   ROW_IALLREDUCE, ROW_PALLREDUCE,
                                     ROW_REDUCE,      ROW_IREDUCE,    ROW_PREDUCE,
                                     ROW_BCAST,       ROW_IBCAST,     ROW_PBCAST};
    static const int piece_kinds[] = {K_INT, K_HOLES, R_INT_SUM, R_MAT};
    kcoll_param_set("HIER_SEGMENT", "1KiB");
    for (size_t i = 0; hier_lanes && i < sizeof piece_rows / sizeof piece_rows[0]; i++) {
        const int c = piece_rows[i];
#ifndef KCOLL_HAVE_PERSISTENT
        if (colls[c].flags & F_PERS)
            continue;
#endif
        const int red = colls[c].base == ALLREDUCE || colls[c].base == REDUCE ||
                        colls[c].base == BCAST;
        for (size_t k = 0; k < sizeof piece_kinds / sizeof piece_kinds[0]; k++) {
            const int first = piece_kinds[k] == K_INT || piece_kinds[k] == R_INT_SUM;
            for (int si = 2; si < (red ? 3 : 4); si++) /* (a large vector: below) */
                for (int root = 0; root < ((colls[c].flags & F_ROOTED) ? p : 1);
                     root += (p > 1 ? p - 1 : 1))
                    for (int ip = 0; ip < 2; ip++)
                        if (kind_fits(c, piece_kinds[k]) && (first || (si == 2 && !ip)) &&
                            !(ip && colls[c].base == BCAST))
                            run_case(sh, shi, c, 0, piece_kinds[k],
                                     count_of(c, piece_kinds[k], si, p), root, ip, 0, salt++);
        }
    }
    /* ...and in pieces of 128 KiB, blocks of 375 KiB and vectors of 300
     * KiB: every piece past the host's eager size, so a member's part of a
     * piece moves only while it is in the host's calls (as it waits for
     * its node, too) */
    static const int big_rows[] = {ROW_ALLGATHER,  ROW_IALLGATHER, ROW_ALLGATHERV, ROW_ALLREDUCE,
                                   ROW_IALLREDUCE, ROW_REDUCE,     ROW_BCAST};
    kcoll_param_set("HIER_SEGMENT", "128KiB");
    for (size_t i = 0; hier_lanes && shi == SH_WORLD && i < sizeof big_rows / sizeof big_rows[0];
         i++)
        for (int ip = 0; ip < (colls[big_rows[i]].base == BCAST ? 1 : 2); ip++) {
            const int c = big_rows[i], kind = (colls[c].flags & F_RED) ? R_INT_SUM : K_INT;
            const int blocks = colls[c].base == ALLGATHER || colls[c].base == ALLGATHERV;
            /* a vector of 300 KiB: 3 pieces */
            run_case(sh, shi, c, 0, kind, blocks ? PIECE_INTS : count_of(c, kind, 3, p), 0, ip, 0,
                     salt++);
        }
    kcoll_param_set("HIER_SEGMENT", "auto");
    hier_lanes = 0;
    kcoll_param_set("HIER", "on");
    if (verbose && wrank == 0)
        printf("  lanes on %s (%d ranks): %.2f s\n", shape_names[shi], p,
               now_s() - tb);
    /* KCOLL_HIER=auto (the default): in a layout or handed to the host MPI
     * whole as the model says, right either way */
    if (shi != SH_WORLD && shi != SH_RANDOM)
        return;
    /* (and the calls that agree: blocking, and non-blocking ones that
     * settle later, in a layout or, by size, on the host: an Ialltoallv's
     * or Igatherv's host outcome runs the host's own call) */
    static const int auto_rows[] = {ROW_BCAST,    ROW_ALLREDUCE, ROW_IALLREDUCE, ROW_GATHER,
                                    ROW_ALLGATHER, ROW_RSB,      ROW_SCATTER,    ROW_GATHERV,
                                    ROW_IGATHERV, ROW_SCATTERV,  ROW_ISCATTERV,  ROW_ALLTOALLV,
                                    ROW_IALLTOALLV};
    kcoll_param_set("HIER", "auto");
    hier_auto = 1;
    for (size_t i = 0; i < sizeof auto_rows / sizeof auto_rows[0]; i++) {
        const int c = auto_rows[i], kind = colls[c].flags & F_RED ? R_INT_SUM : K_INT;
        for (int si = 1; si < 4; si += 2)
            run_case(sh, shi, c, 0, kind, count_of(c, kind, si, p),
                     colls[c].flags & F_ROOTED ? p - 1 : 0, 0, 0, salt++);
    }
    hier_auto = 0;
    kcoll_param_set("HIER", "on");
}

/* ---------------------------------------------------------------------- */
/* The host streak across nodes (KCOLL_HIER=auto) */

/* Eleven blocking MPI_Gatherv (then MPI_Scatterv) calls of one int a rank
 * to root p - 1 on a communicator that spans nodes, under KCOLL_HIER=auto:
 * each agrees on the root's layout, or goes to the host MPI on the streak
 * an earlier agreement for the host started (1, 2, 4 calls: path
 * "host_streak"), or goes to the host at once where no size would run in
 * a layout. So the calls on the streak are none, or exactly calls 2, 4,
 * 5, 7, 8, 9 and 10; alike on every rank; a call to another root agrees
 * again (no streak); with KCOLL_HOST_STREAK=0 none is on it, nor with
 * KCOLL_HIER=on, where all run in the leaders' layout. Results checked
 * against the ranks' values (each block its sender's rank). */
static void streak_cases(const shape_t *world)
{
    static const char *const rows[2] = {"MPI_Gatherv", "MPI_Scatterv"};
    static const int want[11] = {0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0};
    const int p = world->p, me = world->rank;
    if (world->layout == L_ONE_NODE || !stats || p > MAXP)
        return;
    int cnt[MAXP], dsp[MAXP], all[MAXP];
    for (int q = 0; q < p; q++) {
        cnt[q] = 1;
        dsp[q] = p - 1 - q; /* reversed: the places are the root's own */
    }
    for (int g = 0; g < 2; g++)
        for (int setting = 0; setting < 3; setting++) {
            kcoll_param_set("HIER", setting == 2 ? "on" : "auto");
            kcoll_param_set("HOST_STREAK", setting == 1 ? "0" : "1024");
            int on[12], bad = 0;
            for (int i = 0; i < 12; i++) {
                const int root = i < 11 ? p - 1 : 0, v = 1000 * me + i;
                int got = -1;
                for (int q = 0; q < p; q++)
                    all[q] = -1;
                if (root == me && g == 1)
                    for (int q = 0; q < p; q++)
                        all[dsp[q]] = 1000 * q + i;
                const uint64_t s0 = mt_calls(rows[g], "host_streak");
                const uint64_t l0 = mt_calls(rows[g], "kcoll:leaders");
                const int rc = g == 0 ? MPI_Gatherv(&v, 1, MPI_INT, all, cnt, dsp, MPI_INT,
                                                    root, world->comm)
                                      : MPI_Scatterv(all, cnt, dsp, MPI_INT, &got, 1, MPI_INT,
                                                     root, world->comm);
                on[i] = (int)(mt_calls(rows[g], "host_streak") - s0);
                const int led = (int)(mt_calls(rows[g], "kcoll:leaders") - l0);
                bad |= rc != MPI_SUCCESS || (setting == 2 && !led) || (on[i] && led);
                for (int q = 0; g == 0 && root == me && q < p; q++)
                    bad |= all[dsp[q]] != 1000 * q + i;
                bad |= g == 1 && got != v;
            }
            int streak = 0;
            for (int i = 0; i < 11; i++)
                streak |= on[i];
            /* the pattern: none, or the doubling streak (auto, streaks on) */
            int fits = !on[11];
            for (int i = 0; i < 11; i++)
                fits &= on[i] == (streak && setting == 0 ? want[i] : 0);
            int mine[13], lo[13], hi[13];
            for (int i = 0; i < 12; i++)
                mine[i] = on[i];
            mine[12] = bad || !fits;
            PMPI_Allreduce(mine, lo, 13, MPI_INT, MPI_MIN, world->comm);
            PMPI_Allreduce(mine, hi, 13, MPI_INT, MPI_MAX, world->comm);
            int differ = 0;
            for (int i = 0; i < 12; i++)
                differ |= lo[i] != hi[i];
            if (verbose && me == 0) {
                printf("  host streak: %s, KCOLL_HIER=%s, KCOLL_HOST_STREAK=%s: on it ",
                       rows[g], setting == 2 ? "on" : "auto", setting == 1 ? "0" : "1024");
                for (int i = 0; i < 12; i++)
                    putchar(on[i] ? '1' : '0');
                putchar('\n');
            }
            if (hi[12] || differ)
                mt_fail("host streak across nodes: %s to root %d, KCOLL_HIER=%s, "
                        "KCOLL_HOST_STREAK=%s: %s", rows[g], p - 1, setting == 2 ? "on" : "auto",
                        setting == 1 ? "0" : "1024",
                        differ ? "the ranks' paths differ"
                        : bad  ? "a wrong result, or a call off its layout"
                               : "the calls on the streak are not the doubling streak's");
            else
                mt_pass();
        }
    kcoll_param_set("HOST_STREAK", "1024");
    kcoll_param_set("HIER", "on");
}

/* ---------------------------------------------------------------------- */
/* MPI_Allgatherv with negative displacements */

/* Blocks before the receive buffer's address (MPI allows negative
 * displacements), in reverse rank order with a gap, from 1 to 3 elements
 * each (one rank's none), blocking, non-blocking and in place, on a
 * communicator that spans nodes in the leaders' layout and in lanes:
 * byte for byte what the host MPI gives (sentinels around and between the
 * blocks too), counted on kcoll's path (across nodes kcoll addresses the
 * blocks from the lowest one; on one node such a call goes to the host
 * after its agreement). The receive datatype is MPI_INT, a derived type
 * kcoll maps (two ints of three, resized: holes in every element) and one
 * it does not (a darray: the host packs it), blocking and non-blocking
 * for those two. */
static void negative_displacements(const shape_t *sh)
{
    static const char *const layouts[2] = {"on", "lanes"};
    static const char *const tnames[3] = {"MPI_INT", "a mapped derived type",
                                          "a derived type the host packs"};
    const int p = sh->p, me = sh->rank;
    int *cnt = malloc((size_t)p * sizeof *cnt), *dsp = malloc((size_t)p * sizeof *dsp);
    int total = 0;
    for (int q = 0; q < p; q++) {
        cnt[q] = q == 1 ? 0 : 1 + q % 3;
        total += cnt[q] + 1; /* a gap of one element after each */
    }
    int at = -total; /* rank p-1's block first: every displacement negative */
    for (int q = p - 1; q >= 0; q--) {
        dsp[q] = at;
        at += cnt[q] + 1;
    }
    /* the receive types: ints per element, extent in ints */
    MPI_Datatype types[3], vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 3 * (MPI_Aint)sizeof(int), &types[1]);
    MPI_Type_free(&vec);
    MPI_Type_commit(&types[1]);
    types[0] = MPI_INT;
    types[2] = mt_unmapped_type();
    const int per[3] = {1, 2, 2}, ext[3] = {1, 3, 4};
    for (int t = 0; t < 3; t++) {
        const size_t room = ((size_t)total + 4) * (size_t)ext[t];
        int *mem[2] = {malloc(room * sizeof(int)), malloc(room * sizeof(int))};
        int send[6];
        for (int i = 0; i < 6; i++)
            send[i] = me * 100 + 1 + i;
        for (int ly = 0; ly < 2 && sh->layout != L_ONE_NODE; ly++)
            for (int form = 0; form < (t ? 2 : 3); form++) { /* blocking, non-blocking, in place */
                const int ip = form == 2;
                for (int k = 0; k < 2; k++) {
                    for (size_t i = 0; i < room; i++)
                        mem[k][i] = -7 - (int)i;
                    /* the blocks lie in elements 2 .. total + 2 of mem[k] */
                    int *rbuf = mem[k] + ((size_t)total + 2) * (size_t)ext[t];
                    if (ip)
                        memcpy(rbuf + dsp[me], send, (size_t)cnt[me] * sizeof(int));
                    const void *sb = ip ? MPI_IN_PLACE : (const void *)send;
                    const int scount = cnt[me] * per[t];
                    if (k == 0) {
                        PMPI_Allgatherv(sb, scount, MPI_INT, rbuf, cnt, dsp, types[t], sh->comm);
                        continue;
                    }
                    kcoll_param_set("HIER", layouts[ly]);
                    const char *row = form == 1 ? "MPI_Iallgatherv" : "MPI_Allgatherv";
                    const uint64_t before = mt_calls(row, "kcoll:*");
                    int rc;
                    if (form == 1) {
                        MPI_Request q;
                        rc = MPI_Iallgatherv(sb, scount, MPI_INT, rbuf, cnt, dsp, types[t],
                                             sh->comm, &q);
                        if (rc == MPI_SUCCESS)
                            rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
                    } else {
                        rc = MPI_Allgatherv(sb, scount, MPI_INT, rbuf, cnt, dsp, types[t],
                                            sh->comm);
                    }
                    const int counted = mt_calls(row, "kcoll:*") == before + 1;
                    kcoll_param_set("HIER", "on");
                    if (rc != MPI_SUCCESS || memcmp(mem[0], mem[1], room * sizeof(int)) ||
                        (stats && !counted))
                        mt_fail("%s with negative displacements on %s (%s, %s%s): %s", row,
                                layout_names[sh->layout], layouts[ly], tnames[t],
                                ip ? ", in place" : "",
                                rc != MPI_SUCCESS ? "an error"
                                : !counted        ? "not counted on a kcoll path"
                                                  : "differs from the host MPI's");
                    else
                        mt_pass();
                }
            }
        free(mem[0]);
        free(mem[1]);
    }
    MPI_Type_free(&types[1]);
    MPI_Type_free(&types[2]);
    free(cnt);
    free(dsp);
}

/* ---------------------------------------------------------------------- */
/* Several outstanding at once, and progress while a rank blocks elsewhere */

/* A job of its own, with buffers of its own, for the calls below. */
typedef struct {
    job_t j;
    char *mem[5];
} own_job_t;

static void own_job(own_job_t *o, const shape_t *sh, int base, int kind, int n, int root,
                    long id)
{
    job_t *j = &o->j;
    memset(o, 0, sizeof *o);
    j->c = base;
    j->kind = kind;
    j->root = root;
    j->n = n;
    j->p = sh->p;
    j->rank = sh->rank;
    j->id = id;
    j->comm = sh->comm;
    j->dt = kind_dt[kind];
    j->op = kind_op[kind];
    MPI_Aint lb, ext;
    MPI_Type_get_extent(j->dt, &lb, &ext);
    j->es = (size_t)ext;
    for (int i = 0; i < 5; i++)
        o->mem[i] = malloc(buf_max);
    j->b[HOST][0] = o->mem[0];
    j->b[HOST][1] = o->mem[1];
    j->b[NB][0] = j->b[KB][0] = o->mem[2];
    j->b[NB][1] = j->b[KB][1] = o->mem[3];
    j->tmp = o->mem[4];
    job_layout(j);
    const uint64_t seed = (uint64_t)id * 1000u + (uint64_t)sh->rank * 2u;
    fill(j->b[HOST][0], j->slen + CANARY, seed);
    fill(j->b[HOST][1], j->rlen + CANARY, seed + 1);
    memcpy(j->b[NB][0], j->b[HOST][0], j->slen + CANARY);
    memcpy(j->b[NB][1], j->b[HOST][1], j->rlen + CANARY);
}

/* kcoll's buffers equal the host's (the reductions here are exact:
 * MPI_INT sums, so every order gives the host's bytes)? */
static int own_same(const own_job_t *o)
{
    const job_t *j = &o->j;
    return !memcmp(j->b[HOST][0], j->b[NB][0], j->slen + CANARY) &&
           !memcmp(j->b[HOST][1], j->b[NB][1], j->rlen + CANARY);
}

static void own_free(own_job_t *o)
{
    for (int i = 0; i < 5; i++)
        free(o->mem[i]);
}

/* Ten non-blocking collectives on four communicators (across nodes on
 * those that span nodes, flat ones on the node-local split, one the host
 * runs) started in one order and completed in the reverse order
 * (MPI_Waitall over the reversed array), then again completed one by one
 * as MPI_Testany finds them; each against the host's blocking call. */
static void outstanding_cases(const shape_t sh[NSHAPES])
{
    static const struct {
        int shi, base, kind, big, root_last;
    } plan[] = {
        {SH_WORLD, BCAST, K_INT, 1, 1},        {SH_REVERSED, ALLREDUCE, R_INT_SUM, 0, 0},
        {SH_WORLD, GATHER, K_INT, 0, 0},       {SH_RANDOM, RSB, R_INT_SUM, 0, 0},
        {SH_NODE, ALLREDUCE, R_INT_SUM, 0, 0}, {SH_WORLD, BARRIER, K_INT, 0, 0},
        {SH_REVERSED, SCATTER, K_INT, 1, 1},   {SH_WORLD, ALLGATHERV, K_INT, 0, 0},
        {SH_WORLD, ALLTOALL, K_INT, 0, 0},     {SH_RANDOM, BCAST, K_INT, 1, 0},
        /* several reductions on one communicator, a large one first: each
         * starts its host collectives only after the ones before it */
        {SH_WORLD, ALLREDUCE, R_INT_SUM, 1, 0}, {SH_WORLD, REDUCE, R_LONG_SUM, 0, 1},
        {SH_WORLD, ALLREDUCE, R_LONG_MIN, 0, 0}, {SH_RANDOM, REDUCE, R_INT_SUM, 1, 1},
        /* two Alltoallvs, whose agreements settle while the others run */
        {SH_WORLD, ALLTOALLV, K_INT, 0, 0},     {SH_RANDOM, ALLTOALLV, K_INT, 1, 0},
    };
    enum { N = sizeof plan / sizeof plan[0] };
    own_job_t jobs[N];
    MPI_Request req[N];
    /* rounds 0 and 1 with KCOLL_HIER=on (the reductions across nodes in
     * the leaders layout), 2 and 3 with lanes */
    for (int round = 0; round < 4; round++) {
        kcoll_param_set("HIER", round < 2 ? "on" : "lanes");
        wd_note("%d non-blocking collectives outstanding (KCOLL_HIER=%s), completed %s", N,
                round < 2 ? "on" : "lanes",
                round % 2 ? "as MPI_Testany finds them" : "in reverse by MPI_Waitall");
        wd_arm(120);
        for (int i = 0; i < N; i++) {
            const shape_t *t = &sh[plan[i].shi];
            const int big = (int)(BIG_BYTES / 4 / (plan[i].base == BCAST ? 1u : (unsigned)t->p));
            own_job(&jobs[i], t, plan[i].base, plan[i].kind, plan[i].big ? big : 1003,
                    plan[i].root_last ? t->p - 1 : 0, 7000000L + round * 100 + i);
            job_issue(&jobs[i].j, HOST, NULL);
        }
        int rc = MPI_SUCCESS;
        for (int i = 0; i < N && rc == MPI_SUCCESS; i++)
            rc = job_issue(&jobs[i].j, NB, &req[i]);
        if (rc == MPI_SUCCESS && round % 2 == 0) {
            MPI_Request rev[N];
            MPI_Status st[N];
            for (int i = 0; i < N; i++)
                rev[i] = req[N - 1 - i];
            rc = MPI_Waitall(N, rev, st);
        } else {
            for (int left = N; rc == MPI_SUCCESS && left > 0;) {
                int idx, flag = 0;
                rc = MPI_Testany(N, req, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED)
                    left--;
            }
        }
        int bad = -1;
        for (int i = 0; i < N; i++) {
            if (bad < 0 && !own_same(&jobs[i]))
                bad = i;
            own_free(&jobs[i]);
        }
        if (rc != MPI_SUCCESS)
            mt_fail("%s: a completion call returned an error", wd_desc);
        else if (bad >= 0)
            mt_fail("outstanding collectives, round %d: call %d (collective %d on %s) differs "
                    "from the host MPI's", round, bad, plan[bad].base,
                    shape_names[plan[bad].shi]);
        else
            mt_pass();
    }
    kcoll_param_set("HIER", "on");
}

/* Progress: a broadcast across nodes (MPI_COMM_WORLD, root 0) while the
 * leader of a node with two or more ranks is blocked elsewhere, and the
 * node's last rank waits for the broadcast before it lets the leader go:
 * the leader must start its node's part from inside the blocking call.
 * (a) the leader blocks in MPI_Recv for the last rank's message; (b)
 * (Open MPI) the leader enters a host collective (MPI_Alltoall, which
 * kcoll hands to the host MPI on communicators that span nodes with
 * KCOLL_HIER=on: it has no leaders' layout) before it waits, the others
 * after they waited. */
static void progress_cases(const shape_t *world)
{
    const int p = world->p, me = world->rank;
    int last = p - 1, leader = world_node[p - 1];
    if (leader == last) { /* the last rank is alone on its node: the root's node */
        last = -1;
        for (int r = p - 1; r > 0 && last < 0; r--)
            if (world_node[r] == world_node[0])
                last = r;
        leader = world_node[0];
    }
    if (last < 0 || world->layout == L_ONE_NODE)
        return; /* no node has two ranks */
    /* (b) needs the host's progress engine: not with MPICH (docs/hierarchy.md, "Progress") */
    const int cases = mt_host_is_ompi() ? 2 : 1;
    for (int k = 0; k < cases; k++) {
        own_job_t o;
        MPI_Request req;
        wd_note("progress: MPI_Ibcast across nodes while world rank %d %s", leader,
                k ? "is in a host MPI_Alltoall" : "blocks in MPI_Recv");
        wd_arm(120);
        own_job(&o, world, BCAST, K_INT, (int)(BIG_BYTES / 4), 0, 8000000L + k);
        job_issue(&o.j, HOST, NULL);
        int rc = job_issue(&o.j, NB, &req), token = 1, all[MAXP];
        if (k == 0) {
            if (me == leader && rc == MPI_SUCCESS)
                rc = MPI_Recv(&token, 1, MPI_INT, last, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (me == last && rc == MPI_SUCCESS)
                rc = MPI_Send(&token, 1, MPI_INT, leader, 99, MPI_COMM_WORLD);
        } else {
            int mine[MAXP];
            for (int r = 0; r < p; r++)
                mine[r] = me * 1000 + r;
            if (me == leader && rc == MPI_SUCCESS)
                rc = MPI_Alltoall(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (me != leader && rc == MPI_SUCCESS)
                rc = MPI_Alltoall(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
            for (int r = 0; r < p && rc == MPI_SUCCESS; r++)
                if (all[r] != r * 1000 + me)
                    rc = MPI_ERR_OTHER;
        }
        if (rc != MPI_SUCCESS)
            mt_fail("%s: an MPI call failed", wd_desc);
        else if (!own_same(&o))
            mt_fail("%s: the broadcast's data differs from the host MPI's", wd_desc);
        else
            mt_pass();
        own_free(&o);
    }
}

/* ---------------------------------------------------------------------- */
/* Communicators */

/* The node of every world rank (its lowest world rank), and whether all
 * processes share one kernel (boot id). */
static void find_nodes(void)
{
    MPI_Comm node;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int leader = wrank;
    PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
    PMPI_Allgather(&leader, 1, MPI_INT, world_node, 1, MPI_INT, MPI_COMM_WORLD);

    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = 0;
        fclose(f);
    }
    uint64_t h = 1469598103934665603ull;
    for (const char *s = boot; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    unsigned long long mm[2] = {h, ~h};
    PMPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    one_machine = boot[0] && mm[0] == h && mm[1] == ~h;
}

/* Classify comm by its node split and the node of each of its ranks. */
static void classify(shape_t *sh)
{
    MPI_Comm node;
    int np, multi, wr;
    PMPI_Comm_size(sh->comm, &sh->p);
    PMPI_Comm_rank(sh->comm, &sh->rank);
    PMPI_Comm_split_type(sh->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &np);
    PMPI_Comm_free(&node);
    multi = np < sh->p;
    PMPI_Allreduce(MPI_IN_PLACE, &multi, 1, MPI_INT, MPI_MAX, sh->comm);
    if (!multi) {
        sh->layout = L_ONE_NODE;
        return;
    }
    int nodes[MAXP];
    PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
    PMPI_Allgather(&world_node[wr], 1, MPI_INT, nodes, 1, MPI_INT, sh->comm);
    int contiguous = 1, increasing = 1;
    for (int i = 1; i < sh->p; i++) {
        if (nodes[i] == nodes[i - 1])
            continue;
        if (nodes[i] < nodes[i - 1])
            increasing = 0;
        for (int k = 0; k < i; k++)
            if (nodes[k] == nodes[i])
                contiguous = 0;
    }
    sh->layout = !contiguous ? L_SCATTERED : increasing ? L_BLOCKED : L_CONTIG_UNORDERED;
}

static void make_shapes(shape_t sh[NSHAPES])
{
    sh[SH_WORLD].comm = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &sh[SH_DUP].comm);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &sh[SH_REVERSED].comm);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &sh[SH_ODDEVEN].comm);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                        &sh[SH_NODE].comm);
    /* a reproducible permutation of the world ranks */
    int perm[MAXP];
    for (int i = 0; i < wsize; i++)
        perm[i] = i;
    mt_seed(4242);
    for (int i = wsize - 1; i > 0; i--) {
        int k = (int)(mt_rnd() % (unsigned)(i + 1)), t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, perm[wrank], &sh[SH_RANDOM].comm);
    if (verbose && wrank == 0)
        printf("  communicators made: %.2f s\n", now_s() - t_start);
    for (int i = 0; i < NSHAPES; i++)
        classify(&sh[i]);
}

/* --expect-nodes=a,b,...: world rank i on node list[i], nodes numbered in
 * order of first appearance; the same numbering of the actual placement. */
static void check_placement(const char *list)
{
    int want[MAXP], got[MAXP], n = 0;
    for (const char *s = list; *s && n < MAXP; n++) {
        want[n] = atoi(s);
        s += strcspn(s, ",");
        if (*s == ',')
            s++;
    }
    int next = 0;
    for (int i = 0; i < wsize; i++) {
        got[i] = -1;
        for (int k = 0; k < i; k++)
            if (world_node[k] == world_node[i])
                got[i] = got[k];
        if (got[i] < 0)
            got[i] = next++;
    }
    char line[4 * MAXP + 1] = "";
    for (int i = 0; i < wsize; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d", i ? "," : "", got[i]);
    int ok = n == wsize;
    for (int i = 0; ok && i < wsize; i++)
        ok = want[i] == got[i];
    if (!ok)
        mt_fail("placement: world ranks on nodes %s, expected %s", line, list);
    else
        mt_pass();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wd_init("test_hier");
    kcoll_param_set("HIER", "on"); /* the layouts' statistics are checked */
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *expect_nodes = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q"))
            quick = 1;
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--no-stats"))
            stats = 0;
        else if (!strncmp(argv[i], "--expect-nodes=", 15))
            expect_nodes = argv[i] + 15;
        else {
            if (wrank == 0)
                fprintf(stderr, "usage: test_hier [-q] [-v] [--no-stats] [--expect-nodes=0,0,1,...]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (wsize > MAXP) {
        if (wrank == 0)
            fprintf(stderr, "test_hier: at most %d ranks\n", MAXP);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    kind_dt[K_INT] = MPI_INT;
    kind_dt[K_HOLES] = mt_unmapped_type(); /* MPICH 5.0's own Gather fails on MPI_SHORT_INT */
    MPI_Type_contiguous(3, MPI_INT, &kind_dt[K_CONTIG]);
    MPI_Type_commit(&kind_dt[K_CONTIG]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &kind_dt[K_VECTOR]);
    MPI_Type_commit(&kind_dt[K_VECTOR]);
    MPI_Datatype mat_t;
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    MPI_Op matmul_op, uband_op;
    MPI_Op_create(matmul, 0, &matmul_op);
    MPI_Op_create(uband, 1, &uband_op);
    for (int k = 0; k < NKINDS; k++)
        kind_op[k] = MPI_OP_NULL;
    kind_dt[R_INT_SUM] = kind_dt[R_INT_MAX] = kind_dt[R_INT_MIN] = kind_dt[R_INT_BAND] = MPI_INT;
    kind_dt[R_LONG_SUM] = kind_dt[R_LONG_MIN] = MPI_LONG;
    kind_dt[R_MAT] = mat_t;
    kind_op[R_INT_SUM] = kind_op[R_LONG_SUM] = MPI_SUM;
    kind_op[R_INT_MAX] = MPI_MAX;
    kind_op[R_INT_MIN] = kind_op[R_LONG_MIN] = MPI_MIN;
    kind_op[R_INT_BAND] = uband_op;
    kind_op[R_MAT] = matmul_op;

    /* the largest layout: the vector type's 300 KB Bcast (extent 1.5 x
     * size), or p blocks of 300 KB / p plus the v-layouts' gaps, or the
     * pipelined lanes' p blocks of PIECE_INTS (an Allgatherv's up to
     * twice as long) */
    buf_max = BIG_BYTES * 2 + (size_t)MAXP * 64 + CANARY;
    if ((size_t)PIECE_INTS * 4 * 2 * (size_t)wsize + (size_t)MAXP * 64 + CANARY > buf_max)
        buf_max = (size_t)PIECE_INTS * 4 * 2 * (size_t)wsize + (size_t)MAXP * 64 + CANARY;
    ref_s = malloc(buf_max);
    ref_r = malloc(buf_max);
    got_s = malloc(buf_max);
    got_r = malloc(buf_max);
    tmp_b = malloc(buf_max);
    want_b = malloc(buf_max);
    in_b = malloc(buf_max);

    t_start = now_s();
    find_nodes();
    if (expect_nodes)
        check_placement(expect_nodes);
    if (verbose && wrank == 0)
        printf("  nodes found: %.2f s\n", now_s() - t_start);
    shape_t sh[NSHAPES];
    make_shapes(sh);
    if (wrank == 0) {
        int nn = 0;
        for (int i = 0; i < wsize; i++)
            nn += world_node[i] == i;
        printf("test_hier: %d ranks on %d node(s)%s; world is %s, random split is %s%s%s\n",
               wsize, nn, one_machine ? " of one machine" : "", layout_names[sh[SH_WORLD].layout],
               layout_names[sh[SH_RANDOM].layout], stats ? "" : "; statistics not checked",
               quick ? "; -q" : "");
        fflush(stdout);
    }
    if (verbose && wrank == 0)
        printf("  set-up: %.2f s\n", now_s() - t_start);
    for (int shi = 0; shi < NSHAPES; shi++)
        shape_cases(&sh[shi], shi);
    negative_displacements(&sh[SH_WORLD]);
    negative_displacements(&sh[SH_REVERSED]);
    outstanding_cases(sh);
    progress_cases(&sh[SH_WORLD]);
    streak_cases(&sh[SH_WORLD]);
    wd_arm(0);
    if (verbose && wrank == 0)
        printf("  all: %.2f s\n", now_s() - t_start);

    for (int i = 1; i < NSHAPES; i++)
        MPI_Comm_free(&sh[i].comm);
    free(ref_s);
    free(ref_r);
    free(got_s);
    free(got_r);
    free(tmp_b);
    free(want_b);
    free(in_b);
    long bugs = host_bugs;
    PMPI_Allreduce(MPI_IN_PLACE, &bugs, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0 && bugs)
        printf("test_hier: %ld host result(s) differed from the exact reduction in a known host "
               "bug (MPICH's PMPI_Reduce on uneven nodes; kcoll checked against the exact "
               "result)\n", bugs);
    MPI_Op_free(&matmul_op);
    MPI_Op_free(&uband_op);
    MPI_Type_free(&mat_t);
    MPI_Type_free(&kind_dt[K_CONTIG]);
    MPI_Type_free(&kind_dt[K_VECTOR]);
    MPI_Type_free(&kind_dt[K_HOLES]);
    int rc = mt_finish("test_hier");
    MPI_Finalize();
    return rc;
}
