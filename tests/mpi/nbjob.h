/* What the tests of non-blocking and persistent collectives share: one
 * collective call of any kind with its buffers (the host's blocking
 * PMPI_* reference, kcoll's blocking, non-blocking and persistent forms,
 * each on its own copy of identical buffers with canaries after them),
 * what kcoll should do with it, its statistics rows, the completion
 * functions and a watchdog that names a case that hangs or crashes. */
#ifndef KCOLL_NBJOB_H
#define KCOLL_NBJOB_H

#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

/* Everything here is static; each program uses a part. */
#define NBJ static __attribute__((unused))

#define MAXP 64
#define CANARY 64
#define SMALL 16384

enum { BCAST, SCATTER, SCATTERV, GATHER, GATHERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV,
       BARRIER, REDUCE, ALLREDUCE, RSB, RS, NCOLL };
enum { F_BCAST, F_SCATTER, F_GATHER, F_ALLGATHER, F_ALLTOALL, F_BARRIER, F_REDUCE, F_ALLREDUCE,
       F_RS, NFAM };
/* Statistics rows: the non-blocking form's ("MPI_Ibcast") and the
 * blocking one's ("MPI_Bcast"; the persistent row adds "_init"). */
NBJ const struct {
    const char *row, *name;
    int fam;
} colls[NCOLL] = {
    {"MPI_Ibcast", "MPI_Bcast", F_BCAST},
    {"MPI_Iscatter", "MPI_Scatter", F_SCATTER},
    {"MPI_Iscatterv", "MPI_Scatterv", F_SCATTER},
    {"MPI_Igather", "MPI_Gather", F_GATHER},
    {"MPI_Igatherv", "MPI_Gatherv", F_GATHER},
    {"MPI_Iallgather", "MPI_Allgather", F_ALLGATHER},
    {"MPI_Iallgatherv", "MPI_Allgatherv", F_ALLGATHER},
    {"MPI_Ialltoall", "MPI_Alltoall", F_ALLTOALL},
    {"MPI_Ialltoallv", "MPI_Alltoallv", F_ALLTOALL},
    {"MPI_Ibarrier", "MPI_Barrier", F_BARRIER},
    {"MPI_Ireduce", "MPI_Reduce", F_REDUCE},
    {"MPI_Iallreduce", "MPI_Allreduce", F_ALLREDUCE},
    {"MPI_Ireduce_scatter_block", "MPI_Reduce_scatter_block", F_RS},
    {"MPI_Ireduce_scatter", "MPI_Reduce_scatter", F_RS},
};
NBJ const char *const fam_param[NFAM] = {
    "BCAST_ALGO",  "SCATTER_ALGO",   "GATHER_ALGO",         "ALLGATHER_ALGO", "ALLTOALL_ALGO",
    "BARRIER_ALGO", "REDUCE_ALGO",   "ALLREDUCE_ALGO",      "REDUCE_SCATTER_ALGO"};
/* auto, then every algorithm of the family (one with a parameter set) */
NBJ const char *const fam_algos[NFAM][8] = {
    {"auto", "direct_read", "direct_write", "knomial:k=3", "scatter_allgather", "split_rw"},
    {"auto", "parallel_read", "sequential_write", "throttled_read:k=2"},
    {"auto", "parallel_write", "sequential_read", "throttled_write:k=2"},
    {"auto", "gather_bcast", "ring_neighbor", "ring_source_read", "ring_source_write",
     "recursive_doubling", "bruck"},
    {"auto", "pairwise", "bruck", "pairwise_write"},
    {"auto", "dissemination"},
    {"auto", "partitioned", "partitioned:chunk=4", "serial"},
    {"auto", "partitioned", "reduce_bcast"},
    {"auto", "partitioned", "partitioned:chunk=4"},
};
/* every reason the host MPI can be counted for (statistics paths mpi:<reason>) */
NBJ const char *const reasons[] = {"disabled",        "invalid_args",       "intercomm",
                                   "one_rank",        "below_min_bytes",    "noncontig_datatype",
                                   "multinode",       "no_cma",             "team_failed",
                                   "bad_algo",        "unsupported_op",     "no_team"};
#define NREASONS (int)(sizeof reasons / sizeof reasons[0])

/* data kinds: bytes (data movement), and for reductions int32 (SUM or
 * MAX), double (SUM) and 2x2 int32 matrices (a non-commutative product) */
enum { K_BYTE, K_INT, K_DOUBLE, K_MAT };
NBJ const char *const kind_names[] = {"MPI_BYTE", "MPI_INT", "MPI_DOUBLE", "matrix"};
NBJ const int kind_size[] = {1, 4, 8, 16};

NBJ const char *const cmode_names[] = {
    "MPI_Wait",         "MPI_Test loop",     "MPI_Waitall",   "MPI_Testall loop",
    "MPI_Waitany",      "MPI_Testany loop",  "MPI_Waitsome",  "MPI_Testsome loop",
    "MPI_Request_get_status loop + MPI_Request_free"};
#define NCMODES 9

NBJ int wrank;
NBJ MPI_Datatype mat_t; /* 4 x MPI_INT, committed by the program */
NBJ MPI_Op matmul_op;   /* matmul, not commutative, created by the program */

/* ---------------------------------------------------------------------- */
/* Watchdog: a hang fails with the case's name instead of blocking; a crash
 * or an MPI error (MPI_COMM_WORLD's error handler, which the communicators
 * made from it inherit) names its case too. */

NBJ char wd_prog[32], wd_hang[128], wd_crash[128], wd_desc[400];
NBJ volatile sig_atomic_t wd_hang_len, wd_crash_len, wd_desc_len;

NBJ void wd_fire(int sig)
{
    ssize_t w;
    if (sig == SIGALRM)
        w = write(2, wd_hang, (size_t)wd_hang_len);
    else
        w = write(2, wd_crash, (size_t)wd_crash_len);
    w = write(2, wd_desc, (size_t)wd_desc_len);
    (void)w;
    if (sig == SIGALRM)
        abort();
    signal(sig, SIG_DFL);
    raise(sig);
}

NBJ void wd_mpi_error(MPI_Comm *comm, int *code, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    (void)comm;
    MPI_Error_string(*code, msg, &len);
    fprintf(stderr, "%s: world rank %d: MPI error (%s) in %.*s", wd_prog, wrank, msg,
            (int)wd_desc_len, wd_desc);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Set wrank, catch SIGALRM, SIGSEGV, SIGBUS and MPI errors. */
NBJ void wd_init(const char *prog)
{
    MPI_Errhandler eh;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    snprintf(wd_prog, sizeof wd_prog, "%s", prog);
    MPI_Comm_create_errhandler(wd_mpi_error, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Errhandler_free(&eh);
    wd_hang_len = snprintf(wd_hang, sizeof wd_hang, "%s: world rank %d: watchdog: no progress in ",
                           prog, wrank);
    wd_crash_len = snprintf(wd_crash, sizeof wd_crash, "%s: world rank %d: crashed in ", prog,
                            wrank);
    signal(SIGALRM, wd_fire);
    signal(SIGSEGV, wd_fire);
    signal(SIGBUS, wd_fire);
}

/* Describe what runs now (cheap: once per case). */
NBJ void wd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
NBJ void wd_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(wd_desc, sizeof wd_desc - 1, fmt, ap);
    va_end(ap);
    if (k > (int)sizeof wd_desc - 2)
        k = (int)sizeof wd_desc - 2;
    wd_desc[k++] = '\n';
    wd_desc_len = k;
}

NBJ void wd_arm(unsigned seconds)
{
    alarm(seconds);
}
/* ---------------------------------------------------------------------- */
/* Data */

NBJ uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* len bytes of a pattern that depends on salt; then, for typed data, the
 * first len / size elements replaced by values of that kind */
NBJ void fill(char *b, size_t len, int kind, uint64_t salt)
{
    const uint64_t h = mix(salt + 1);
    for (size_t i = 0; i < len; i++)
        b[i] = (char)((h >> (8 * (i & 7))) + i * 31 + (i >> 8));
    for (size_t i = 0; kind == K_INT && i + 4 <= len; i += 4) {
        int32_t v = (int32_t)(mix(salt * 1000003u + i) % 2000001u) - 1000000;
        memcpy(b + i, &v, sizeof v);
    }
    for (size_t i = 0; kind == K_DOUBLE && i + 8 <= len; i += 8) {
        uint64_t g = mix(salt * 1000003u + i);
        double v = ((double)(g % 2000001u) - 1000000.0) * (g & 1 ? 1e-7 : 1e3);
        memcpy(b + i, &v, sizeof v);
    }
    for (size_t i = 0; kind == K_MAT && i + 4 <= len; i += 4) {
        int32_t v = (int32_t)(mix(salt * 1000003u + i) % 7u) - 3;
        memcpy(b + i, &v, sizeof v);
    }
}

/* MPI user function: 2x2 int32 matrices, inout = in x inout (not commutative) */
NBJ void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++) {
        int32_t a[4], b[4], r[4];
        memcpy(a, (char *)in + 16 * k, sizeof a);
        memcpy(b, (char *)inout + 16 * k, sizeof b);
        r[0] = (int32_t)((uint32_t)a[0] * (uint32_t)b[0] + (uint32_t)a[1] * (uint32_t)b[2]);
        r[1] = (int32_t)((uint32_t)a[0] * (uint32_t)b[1] + (uint32_t)a[1] * (uint32_t)b[3]);
        r[2] = (int32_t)((uint32_t)a[2] * (uint32_t)b[0] + (uint32_t)a[3] * (uint32_t)b[2]);
        r[3] = (int32_t)((uint32_t)a[2] * (uint32_t)b[1] + (uint32_t)a[3] * (uint32_t)b[3]);
        memcpy((char *)inout + 16 * k, r, sizeof r);
    }
}

/* ---------------------------------------------------------------------- */
/* One collective call with its buffers: the host's blocking reference
 * (HOST), kcoll's blocking call (KB, for reductions) and kcoll's
 * non-blocking call (NB) each get their own copy of identical buffers. The
 * host's own non-blocking call (HNB: only for its status) reuses KB's, a
 * persistent request (PINIT, MPI-4) NB's. */

enum { HOST, KB, NB, HNB, PINIT };

typedef struct {
    int c, root, ip, n, kind, p, rank;
    long id;
    MPI_Comm comm;
    MPI_Datatype dt;
    MPI_Op op;
    size_t es;
    int rc[MAXP], rd[MAXP], sc[MAXP], sd[MAXP]; /* counts and displacements, elements */
    size_t slen, rlen;                          /* bytes, canaries excluded */
    char *b[3][2];                              /* [HOST, KB, NB][send, recv] */
    char *tmp;                                  /* the host's copy of in-place input */
    int owned;                                  /* b and tmp were allocated for the job */
    unsigned gen;                               /* varies the contents, not the layout */
} job_t;

NBJ int is_red(int c)
{
    return c >= REDUCE;
}

NBJ int rooted(int c)
{
    return c == BCAST || (c >= SCATTER && c <= GATHERV) || c == REDUCE;
}

/* MPI allows MPI_IN_PLACE for this collective */
NBJ int has_in_place(int c)
{
    return c != BCAST && c != BARRIER;
}

/* A block count for rank i (to j): n, less, or zero. Symmetric when sym
 * (MPI_Alltoallv in place needs i's count to j to equal j's to i). */
NBJ int vcount(long id, int i, int j, int n, int sym)
{
    if (sym && i > j) {
        int t = i;
        i = j;
        j = t;
    }
    uint64_t h = mix((uint64_t)id * 1000003u + (uint64_t)i * 7919u + (uint64_t)j * 104729u + 17);
    if (h % 4 == 0)
        return 0;
    return n - (int)((h >> 8) % (unsigned)(n < 2 ? n + 1 : 3));
}

/* Counts, displacements and buffer lengths for job j. */
NBJ void job_layout(job_t *j)
{
    const int p = j->p, n = j->n, me = j->rank;
    const size_t es = j->es;
    int order[MAXP], end;
    switch (j->c) {
    case BCAST:
        j->slen = 0;
        j->rlen = (size_t)n * es;
        break;
    case SCATTER:
    case GATHER:
    case ALLGATHER:
        j->slen = (size_t)(j->c == SCATTER ? p : 1) * (size_t)n * es;
        j->rlen = (size_t)(j->c == SCATTER ? 1 : p) * (size_t)n * es;
        break;
    case SCATTERV:
    case GATHERV:
    case ALLGATHERV:
        /* counts alike on all ranks; displacements: the root's (Allgatherv:
         * every rank its own) */
        for (int q = 0; q < p; q++)
            j->rc[q] = vcount(j->id, q, 0, n, 0);
        mt_seed((unsigned)j->id * 131u + (j->c == ALLGATHERV ? (unsigned)me * 7u : 0u) + 5u);
        end = mt_shuffle(p, j->rc, j->rd, order);
        j->slen = (size_t)(j->c == SCATTERV ? end : n) * es;
        j->rlen = (size_t)(j->c == SCATTERV ? n : end) * es;
        break;
    case ALLTOALL:
        j->slen = j->rlen = (size_t)p * (size_t)n * es;
        break;
    case ALLTOALLV:
        for (int q = 0; q < p; q++) {
            j->sc[q] = vcount(j->id, me, q, n, j->ip);
            j->rc[q] = vcount(j->id, q, me, n, j->ip);
        }
        mt_seed((unsigned)j->id * 131u + (unsigned)me * 7u + 9u);
        j->slen = (size_t)mt_shuffle(p, j->sc, j->sd, order) * es;
        j->rlen = (size_t)mt_shuffle(p, j->rc, j->rd, order) * es;
        break;
    case BARRIER:
        j->slen = j->rlen = 0;
        break;
    case REDUCE:
    case ALLREDUCE:
        j->slen = j->rlen = (size_t)n * es;
        break;
    case RSB:
        j->slen = (size_t)p * (size_t)n * es;
        j->rlen = j->ip ? j->slen : (size_t)n * es;
        break;
    case RS: {
        size_t total = 0;
        for (int q = 0; q < p; q++)
            total += (size_t)(j->rc[q] = vcount(j->id, q, 1, n, 0));
        j->slen = total * es;
        j->rlen = j->ip ? j->slen : (size_t)j->rc[me] * es;
        break;
    }
    }
}

/* Describe a job: collective c on comm, n elements (per block, message or
 * vector), data kind, root, in place; its layout follows. */
NBJ void job_init(job_t *j, int c, MPI_Comm comm, int n, int kind, int root, int ip, long id)
{
    memset(j, 0, sizeof *j);
    j->c = c;
    j->comm = comm;
    j->n = n;
    j->kind = kind;
    j->root = root;
    j->ip = ip;
    j->id = id;
    MPI_Comm_size(comm, &j->p);
    MPI_Comm_rank(comm, &j->rank);
    j->es = (size_t)kind_size[kind];
    j->dt = kind == K_BYTE ? MPI_BYTE : kind == K_INT ? MPI_INT : kind == K_DOUBLE ? MPI_DOUBLE
                                                                                 : mat_t;
    j->op = kind == K_MAT ? matmul_op : kind == K_INT && id % 2 ? MPI_MAX : MPI_SUM;
    job_layout(j);
}

NBJ void job_alloc(job_t *j)
{
    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 2; s++)
            j->b[h][s] = malloc((s ? j->rlen : j->slen) + CANARY);
    j->tmp = malloc(j->slen + j->rlen + CANARY);
    j->owned = 1;
}

NBJ void job_free(job_t *j)
{
    if (!j->owned)
        return;
    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 2; s++)
            free(j->b[h][s]);
    free(j->tmp);
}

/* Identical starting buffers for the three calls. The receive buffer holds
 * data too: the own contribution of an in-place call lives there. */
NBJ void job_fill(job_t *j)
{
    const int kind = is_red(j->c) ? j->kind : K_BYTE;
    const uint64_t salt = (uint64_t)j->id * 1000u + (uint64_t)j->rank * 2u + j->gen * 7919u;
    fill(j->b[HOST][0], j->slen + CANARY, kind, salt);
    fill(j->b[HOST][1], j->rlen + CANARY, kind, salt + 1);
    if (kind != K_BYTE) { /* canaries: the byte pattern, not values */
        fill(j->b[HOST][0] + j->slen, CANARY, K_BYTE, salt + 7);
        fill(j->b[HOST][1] + j->rlen, CANARY, K_BYTE, salt + 9);
    }
    for (int h = KB; h <= NB; h++) {
        memcpy(j->b[h][0], j->b[HOST][0], j->slen + CANARY);
        memcpy(j->b[h][1], j->b[HOST][1], j->rlen + CANARY);
    }
}

/* The in-place argument is this rank's (MPI_IN_PLACE goes where). */
NBJ int own_in_place(const job_t *j)
{
    if (!j->ip)
        return 0;
    if (j->c == SCATTER || j->c == SCATTERV || j->c == GATHER || j->c == GATHERV ||
        j->c == REDUCE)
        return j->rank == j->root;
    return 1;
}

#if MPI_VERSION >= 4
#define CALL_INIT(B, ...) how == PINIT ? MPI_##B##_init(__VA_ARGS__, MPI_INFO_NULL, req):
#else
#define CALL_INIT(B, ...)
#endif
#define CALL3(B, I, ...)                                                                   \
    (CALL_INIT(B, __VA_ARGS__) how == NB ? MPI_##I(__VA_ARGS__, req)                       \
     : how == HNB ? PMPI_##I(__VA_ARGS__, req)                                             \
     : how == HOST ? PMPI_##B(__VA_ARGS__) : MPI_##B(__VA_ARGS__))

/* Issue j's call: the host's blocking PMPI_* (HOST), kcoll's blocking
 * MPI_* (KB), its non-blocking MPI_I* (NB, *req set), the host's PMPI_I*
 * (HNB, *req set) or kcoll's MPI_*_init (PINIT, *req set). The host's
 * reductions get the in-place input as a separate send buffer (the same
 * result; MPICH 4.0.2 crashes in PMPI_Reduce in place at a non-zero root). */
NBJ int job_issue(job_t *j, int how, MPI_Request *req)
{
    const int set = how == HNB ? KB : how == PINIT ? NB : how;
    char *s = j->b[set][0], *r = j->b[set][1];
    const int ip = own_in_place(j), n = j->n, root = j->root, me = j->rank;
    const void *sb = s;
    void *rb = r;
    const MPI_Datatype t = j->dt;
    const MPI_Comm comm = j->comm;
    const MPI_Op op = j->op;
    if (ip && is_red(j->c) && (how == HOST || how == HNB)) {
        memcpy(j->tmp, r, j->rlen);
        sb = j->tmp;
    } else if (ip && (j->c == SCATTER || j->c == SCATTERV)) {
        rb = MPI_IN_PLACE;
    } else if (ip) {
        sb = MPI_IN_PLACE;
    }
    switch (j->c) {
    case BCAST:
        return CALL3(Bcast, Ibcast, r, n, t, root, comm);
    case SCATTER:
        return CALL3(Scatter, Iscatter, sb, n, t, rb, n, t, root, comm);
    case SCATTERV:
        return CALL3(Scatterv, Iscatterv, sb, j->rc, j->rd, t, rb, j->rc[me], t, root, comm);
    case GATHER:
        return CALL3(Gather, Igather, sb, n, t, rb, n, t, root, comm);
    case GATHERV:
        return CALL3(Gatherv, Igatherv, sb, j->rc[me], t, rb, j->rc, j->rd, t, root, comm);
    case ALLGATHER:
        return CALL3(Allgather, Iallgather, sb, n, t, rb, n, t, comm);
    case ALLGATHERV:
        return CALL3(Allgatherv, Iallgatherv, sb, j->rc[me], t, rb, j->rc, j->rd, t, comm);
    case ALLTOALL:
        return CALL3(Alltoall, Ialltoall, sb, n, t, rb, n, t, comm);
    case ALLTOALLV:
        return CALL3(Alltoallv, Ialltoallv, sb, j->sc, j->sd, t, rb, j->rc, j->rd, t, comm);
    case BARRIER:
        return CALL3(Barrier, Ibarrier, comm);
    case REDUCE:
        return CALL3(Reduce, Ireduce, sb, rb, n, t, op, root, comm);
    case ALLREDUCE:
        return CALL3(Allreduce, Iallreduce, sb, rb, n, t, op, comm);
    case RSB:
        return CALL3(Reduce_scatter_block, Ireduce_scatter_block, sb, rb, n, t, op, comm);
    default:
        return CALL3(Reduce_scatter, Ireduce_scatter, sb, rb, j->rc, t, op, comm);
    }
}

/* Do the buffers of call x equal those of call y? In place, a
 * Reduce_scatter's result is only the first block of the receive buffer:
 * what the rest holds afterwards MPI does not say. */
NBJ int job_same(const job_t *j, int x, int y)
{
    if (memcmp(j->b[x][0], j->b[y][0], j->slen + CANARY))
        return 0;
    if (j->ip && (j->c == RSB || j->c == RS)) {
        size_t mine = (size_t)(j->c == RSB ? j->n : j->rc[j->rank]) * j->es;
        return !memcmp(j->b[x][1], j->b[y][1], mine) &&
               !memcmp(j->b[x][1] + j->rlen, j->b[y][1] + j->rlen, CANARY);
    }
    return !memcmp(j->b[x][1], j->b[y][1], j->rlen + CANARY);
}

/* Whether kcoll should run j's non-blocking call: only what every rank
 * knows at the start decides (call/call.c, the families' shared views). */
NBJ int expect_kcoll(const job_t *j, int forced, size_t min_bytes)
{
    const size_t es = j->es, block = (size_t)j->n * es;
    size_t largest = 0, total = 0;
    if (j->p < 2)
        return 0;
    switch (j->c) {
    case BARRIER:
    case SCATTERV:
    case GATHERV:
    case ALLTOALLV: /* sizes only the agreement tells: kcoll always */
        return 1;
    case ALLGATHERV:
        for (int q = 0; q < j->p; q++)
            if ((size_t)j->rc[q] * es > largest)
                largest = (size_t)j->rc[q] * es;
        return largest >= min_bytes;
    case REDUCE: /* the default rule leaves smaller vectors to the host */
        return block >= min_bytes && (forced || block >= 262144);
    case ALLREDUCE:
        return block >= min_bytes && (forced || block >= 32768);
    case RS:
        for (int q = 0; q < j->p; q++)
            total += (size_t)j->rc[q];
        return total / (size_t)j->p * es >= min_bytes;
    default:
        return block >= min_bytes;
    }
}

/* ---------------------------------------------------------------------- */
/* Statistics */

/* Calls of row on any kcoll algorithm of family fam. */
NBJ uint64_t kcoll_runs(const char *row, int fam)
{
    uint64_t sum = 0;
    for (int a = 1; a < 8 && fam_algos[fam][a]; a++) {
        const char *name = fam_algos[fam][a];
        const size_t len = strcspn(name, ":");
        int seen = 0;
        for (int b = 1; b < a; b++)
            seen |= strcspn(fam_algos[fam][b], ":") == len &&
                    !strncmp(fam_algos[fam][b], name, len);
        if (seen)
            continue;
        char path[64];
        snprintf(path, sizeof path, "kcoll:%.*s", (int)len, name);
        sum += mt_calls(row, path);
    }
    return sum;
}

/* Calls of row on any mpi: reason. */
NBJ uint64_t host_runs(const char *row)
{
    uint64_t sum = 0;
    for (int i = 0; i < NREASONS; i++) {
        char path[64];
        snprintf(path, sizeof path, "mpi:%s", reasons[i]);
        sum += mt_calls(row, path);
    }
    return sum;
}

/* All non-blocking rows: kcoll's calls and the host's. */
NBJ void all_runs(uint64_t *kc, uint64_t *host)
{
    *kc = *host = 0;
    for (int c = 0; c < NCOLL; c++) {
        *kc += kcoll_runs(colls[c].row, colls[c].fam);
        *host += host_runs(colls[c].row);
    }
}

/* ---------------------------------------------------------------------- */
/* Completion */

NBJ MPI_Status host_status; /* the host's own non-blocking collective's */
/* MPI leaves MPI_SOURCE and MPI_TAG of a completed collective undefined.
 * Open MPI 4.1 gives source 0, tag 0, count 0 (or its empty status where
 * nothing was sent), and kcoll's requests must give the same. MPICH 4.0.2
 * leaves in the status whatever an earlier message on the recycled request
 * object had (with kcoll loaded, for example source 1, tag 14, count 4,
 * differing between ranks), so there only the cancelled flag is compared. */
#ifdef MPICH_VERSION
#define HOST_STATUS_DEFINED 0
#else
#define HOST_STATUS_DEFINED 1
#endif

/* Does status st equal ref (source, tag, element count, cancelled)? */
NBJ const char *status_check(MPI_Status *st, MPI_Status *ref)
{
    int c1 = -1, c2 = -1, x1 = -1, x2 = -1;
    MPI_Get_count(ref, MPI_BYTE, &c1);
    MPI_Get_count(st, MPI_BYTE, &c2);
    MPI_Test_cancelled(ref, &x1);
    MPI_Test_cancelled(st, &x2);
    if (HOST_STATUS_DEFINED && st->MPI_SOURCE != ref->MPI_SOURCE)
        return "status: MPI_SOURCE differs from the host's non-blocking collective";
    if (HOST_STATUS_DEFINED && st->MPI_TAG != ref->MPI_TAG)
        return "status: MPI_TAG differs from the host's non-blocking collective";
    if (HOST_STATUS_DEFINED && c1 != c2)
        return "status: MPI_Get_count differs from the host's non-blocking collective";
    if (x1 != x2)
        return "status: MPI_Test_cancelled differs from the host's non-blocking collective";
    return NULL;
}

/* The status of the host's own non-blocking form of j's call (Open MPI
 * 4.1 gives an empty one, source MPI_ANY_SOURCE, where nothing had to be
 * sent, and source 0, tag 0 otherwise). Overwrites KB's buffers. */
NBJ MPI_Status host_nb_status(job_t *j)
{
    MPI_Request q;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    if (job_issue(j, HNB, &q) == MPI_SUCCESS)
        PMPI_Wait(&q, &st);
    return st;
}

/* Complete one request with completion function `mode` (arrays hold it
 * between two MPI_REQUEST_NULL). *st gets its status. Tests loop with a
 * yield: with more ranks than cores a spinning rank would otherwise hold
 * its core for a whole time slice. Mode 8 polls MPI_Request_get_status,
 * then frees a non-blocking request and waits for a persistent one. MPI
 * forbids freeing a non-blocking collective's request (MPICH refuses):
 * only kcoll's are freed, the host's are waited for instead. A completed
 * non-blocking request must be MPI_REQUEST_NULL; a persistent one must
 * stay the same, now inactive, handle. */
NBJ const char *complete_as(MPI_Request *req, int mode, MPI_Status *st, int kcolls,
                            int persistent)
{
    const MPI_Request handle = *req;
    if (mode == 8 && !kcolls && !persistent)
        mode = 0;
    MPI_Request a[3] = {MPI_REQUEST_NULL, *req, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    int rc = MPI_SUCCESS, flag = 0, idx = -1, out = 0, ids[3] = {-1, -1, -1};
    switch (mode) {
    case 0:
        rc = MPI_Wait(req, st);
        break;
    case 1:
        while ((rc = MPI_Test(req, &flag, st)) == MPI_SUCCESS && !flag)
            sched_yield();
        break;
    case 2:
        rc = MPI_Waitall(3, a, sts);
        break;
    case 3:
        while ((rc = MPI_Testall(3, a, &flag, sts)) == MPI_SUCCESS && !flag)
            sched_yield();
        break;
    case 4:
        rc = MPI_Waitany(3, a, &idx, st);
        break;
    case 5:
        while ((rc = MPI_Testany(3, a, &idx, &flag, st)) == MPI_SUCCESS && !flag)
            sched_yield();
        break;
    case 6:
        rc = MPI_Waitsome(3, a, &out, ids, sts);
        break;
    case 7:
        while ((rc = MPI_Testsome(3, a, &out, ids, sts)) == MPI_SUCCESS && out == 0)
            sched_yield();
        break;
    default:
        while ((rc = MPI_Request_get_status(*req, &flag, st)) == MPI_SUCCESS && !flag)
            sched_yield();
        if (rc == MPI_SUCCESS)
            rc = persistent ? MPI_Wait(req, st) : MPI_Request_free(req);
        break;
    }
    if (rc != MPI_SUCCESS)
        return "the completion function returned an error";
    if (mode == 2 || mode == 3)
        *st = sts[1];
    if ((mode == 4 || mode == 5) && idx != 1)
        return "MPI_Waitany/MPI_Testany returned the wrong index";
    if ((mode == 6 || mode == 7) && (out != 1 || ids[0] != 1))
        return "MPI_Waitsome/MPI_Testsome returned the wrong indices";
    if (mode == 6 || mode == 7)
        *st = sts[0];
    if (mode >= 2 && mode <= 7)
        *req = a[1];
    if (persistent && *req != handle)
        return "the persistent request did not stay valid after its completion";
    if (!persistent && *req != MPI_REQUEST_NULL)
        return "the completed request was not set to MPI_REQUEST_NULL";
    return NULL;
}

NBJ const char *complete(MPI_Request *req, int mode, MPI_Status *st, int kcolls)
{
    return complete_as(req, mode, st, kcolls, 0);
}

#endif
