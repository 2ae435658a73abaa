/* What test_hier and the tests of non-blocking and persistent collectives
 * (nbjob.h) share: one call of any blocking collective described by a job
 * (collective, communicator, count, datatype, operation, root, in place),
 * the layout of its buffers (the v-variants' and Reduce_scatter's counts
 * per rank, uneven and some zero, at shuffled displacements with gaps),
 * the call itself on one of three sets of buffers, through the host's
 * blocking PMPI_* or kcoll's blocking, non-blocking or persistent form, the
 * 2x2 matrix product that serves their reductions as a non-commutative
 * operation, the host MPI's reasons in kcoll's statistics, and a watchdog
 * that names a case that hangs, crashes or meets an MPI error. */
#ifndef KCOLL_JOB_H
#define KCOLL_JOB_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

/* Everything here is static; each program uses a part. */
#define JOB_SHARED static __attribute__((unused))

#define MAXP 64
#define CANARY 64

/* the blocking collectives */
enum { BCAST, SCATTER, SCATTERV, GATHER, GATHERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV,
       BARRIER, REDUCE, ALLREDUCE, RSB, RS, NCOLL };

/* every reason the host MPI can be counted for (statistics paths mpi:<reason>) */
JOB_SHARED const char *const reasons[] = {"disabled",     "invalid_args",    "intercomm",
                                          "one_rank",     "below_min_bytes", "noncontig_datatype",
                                          "multinode",    "no_cma",          "team_failed",
                                          "bad_algo",     "unsupported_op",  "no_team"};
#define NREASONS (int)(sizeof reasons / sizeof reasons[0])

/* ---------------------------------------------------------------------- */
/* Watchdog: a hang fails with the case's name instead of blocking; a crash
 * or an MPI error (MPI_COMM_WORLD's error handler, which the communicators
 * made from it inherit) names its case too. */

JOB_SHARED int wrank; /* this process's rank in MPI_COMM_WORLD (wd_init sets it) */
JOB_SHARED char wd_prog[32], wd_hang[128], wd_crash[128], wd_desc[400];
JOB_SHARED volatile sig_atomic_t wd_hang_len, wd_crash_len, wd_desc_len;

JOB_SHARED void wd_fire(int sig)
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

JOB_SHARED void wd_mpi_error(MPI_Comm *comm, int *code, ...)
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
JOB_SHARED void wd_init(const char *prog)
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
JOB_SHARED void wd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
JOB_SHARED void wd_note(const char *fmt, ...)
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

JOB_SHARED void wd_arm(unsigned seconds)
{
    alarm(seconds);
}

/* ---------------------------------------------------------------------- */
/* MPI user function for the reductions' non-commutative operation: 2x2
 * int32 matrices, inout = in x inout (mod 2^32) */
JOB_SHARED void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
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
 * (HOST), kcoll's blocking call (KB) and kcoll's non-blocking call (NB)
 * each get a set of buffers (nbjob.h: its own copy of identical ones;
 * test_hier: one set for the host, one for kcoll's KB and NB). The host's
 * own non-blocking call (HNB: only for its status) uses KB's, a persistent
 * request (PINIT, MPI-4) NB's. */

enum { HOST, KB, NB, HNB, PINIT };

typedef struct {
    int c, root, ip, n, kind, p, rank; /* kind: the program's data kind */
    long id;                           /* the case: seeds the layout (and the data) */
    MPI_Comm comm;
    MPI_Datatype dt;
    MPI_Op op;
    size_t es; /* bytes per element (the datatype's extent) */
    int rc[MAXP], rd[MAXP], sc[MAXP], sd[MAXP]; /* counts and displacements, elements */
    size_t slen, rlen;                          /* bytes, canaries excluded */
    char *b[3][2];                              /* [HOST, KB, NB][send, recv] */
    char *tmp;                                  /* the host's copy of in-place input */
    int owned;                                  /* b and tmp were allocated (job_alloc) */
    unsigned gen;                               /* varies the contents, not the layout */
} job_t;

JOB_SHARED int is_red(int c)
{
    return c >= REDUCE;
}

JOB_SHARED int rooted(int c)
{
    return c == BCAST || (c >= SCATTER && c <= GATHERV) || c == REDUCE;
}

/* MPI allows MPI_IN_PLACE for this collective */
JOB_SHARED int has_in_place(int c)
{
    return c != BCAST && c != BARRIER;
}

/* A block count for rank i (to j): n, less, or zero. Symmetric when sym
 * (MPI_Alltoallv in place needs i's count to j to equal j's to i). */
JOB_SHARED int vcount(long id, int i, int j, int n, int sym)
{
    if (sym && i > j) {
        int t = i;
        i = j;
        j = t;
    }
    uint64_t h =
        mt_mix((uint64_t)id * 1000003u + (uint64_t)i * 7919u + (uint64_t)j * 104729u + 17);
    if (h % 4 == 0)
        return 0;
    return n - (int)((h >> 8) % (unsigned)(n < 2 ? n + 1 : 3));
}

/* Counts, displacements and buffer lengths for job j. */
JOB_SHARED void job_layout(job_t *j)
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

/* The in-place argument is this rank's (MPI_IN_PLACE goes where). */
JOB_SHARED int own_in_place(const job_t *j)
{
    if (!j->ip)
        return 0;
    if (j->c == SCATTER || j->c == SCATTERV || j->c == GATHER || j->c == GATHERV ||
        j->c == REDUCE)
        return j->rank == j->root;
    return 1;
}

#ifdef KCOLL_HAVE_PERSISTENT
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
JOB_SHARED int job_issue(job_t *j, int how, MPI_Request *req)
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

#endif
