/* What the tests of non-blocking and persistent collectives share, on top
 * of job.h (one collective call: its description, buffer layout and issue
 * through the host or kcoll; the matrix product; the watchdog): the
 * statistics rows and algorithms of every collective, the data kinds and
 * their contents, a job's own copies of identical buffers for each form of
 * the call (the host's blocking PMPI_* reference, kcoll's blocking,
 * non-blocking and persistent forms, with canaries after them) and their
 * comparison, what kcoll should do with the call, its statistics and the
 * completion functions. */
#ifndef KCOLL_NBJOB_H
#define KCOLL_NBJOB_H

#include <sched.h>

#include "job.h"

/* Everything here is static; each program uses a part. */
#define NBJ JOB_SHARED

#define SMALL 16384

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
    {"auto", "partitioned", "partitioned:chunk=4", "serial", "staggered:chunk=4"},
    {"auto", "partitioned", "reduce_bcast", "staggered"},
    {"auto", "partitioned", "partitioned:chunk=4", "staggered:chunk=4"},
};

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

NBJ MPI_Datatype mat_t; /* 4 x MPI_INT, committed by the program */
NBJ MPI_Op matmul_op;   /* matmul, not commutative, created by the program */

/* ---------------------------------------------------------------------- */
/* Data */

/* len bytes of a pattern that depends on salt; then, for typed data, the
 * first len / size elements replaced by values of that kind */
NBJ void fill(char *b, size_t len, int kind, uint64_t salt)
{
    const uint64_t h = mt_mix(salt + 1);
    for (size_t i = 0; i < len; i++)
        b[i] = (char)((h >> (8 * (i & 7))) + i * 31 + (i >> 8));
    for (size_t i = 0; kind == K_INT && i + 4 <= len; i += 4) {
        int32_t v = (int32_t)(mt_mix(salt * 1000003u + i) % 2000001u) - 1000000;
        memcpy(b + i, &v, sizeof v);
    }
    for (size_t i = 0; kind == K_DOUBLE && i + 8 <= len; i += 8) {
        uint64_t g = mt_mix(salt * 1000003u + i);
        double v = ((double)(g % 2000001u) - 1000000.0) * (g & 1 ? 1e-7 : 1e3);
        memcpy(b + i, &v, sizeof v);
    }
    for (size_t i = 0; kind == K_MAT && i + 4 <= len; i += 4) {
        int32_t v = (int32_t)(mt_mix(salt * 1000003u + i) % 7u) - 3;
        memcpy(b + i, &v, sizeof v);
    }
}

/* ---------------------------------------------------------------------- */
/* Jobs (job.h) with their own buffers */

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

/* Do the buffers of call x equal those of call y? In place, a
 * Reduce_scatter's result is only the first block of the receive buffer:
 * what the rest holds afterwards MPI does not say. A Reduce's receive
 * buffer is the root's alone ("significant only at root"): a host may use
 * another rank's as scratch (Intel MPI 2021.14's own MPI_Reduce across
 * nodes on an Intel CPU does), so there only the send buffer counts; that
 * kcoll never writes it the simulator checks (tests/unit). */
NBJ int job_same(const job_t *j, int x, int y)
{
    if (memcmp(j->b[x][0], j->b[y][0], j->slen + CANARY))
        return 0;
    if (j->c == REDUCE && j->rank != j->root)
        return 1;
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
    case REDUCE: /* KCOLL_MIN_BYTES set: kcoll from it, whatever the model prices */
        (void)forced;
        /* fall through */
    case ALLREDUCE:
        return block >= min_bytes;
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
 * differing between ranks), so there only the cancelled flag is compared;
 * so too under every MPI but Open MPI. */
#ifdef OPEN_MPI
#define HOST_STATUS_DEFINED 1
#else /* MPICH, Intel MPI, any MPI through the MPI-5 ABI */
#define HOST_STATUS_DEFINED 0
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
