/* The quick calibration at MPI_Init (model/quick.h; docs/tuning.md,
 * "Quick calibration"): where no tuning file is given, the node of rank 0
 * of MPI_COMM_WORLD measures the host MPI's time for its small calls and
 * the cost of one cross-memory-attach call, once per machine: the result
 * is kept as a tuning file in a per-user cache, named by a hash of the
 * machine's identity (CPU model, online CPUs, kernel release, the MPI
 * library, the processes on the node, kcoll's version and built-in
 * defaults), and read again by every later job with the same identity.
 *
 * Every rank of the world calls it at once; it returns the tuning rank 0
 * will share (the caller broadcasts it, as a tuning file's). A crowded
 * node (more ranks than the CPUs they may run on together: their
 * affinities' union, not the machine's count, so two ranks bound to one
 * CPU count as crowded) or a node of one rank measures nothing: what it
 * would time is the scheduler, or nothing at all. A measurement during
 * which a rank waited for its CPU (other work on it: the kernel's run
 * delay, over KCOLL_QUICK_BUSY percent of the time; quiet here 0-3%, a busy
 * loop beside each rank 25-50%) is neither used nor kept: a kept
 * file is read by every later job, and one disturbed start must not
 * price them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/params.h"
#include "model/quick.h"
#include "model/tuning.h"
#include "mpi/host.h"
#include "topo/topo.h"

#define QUICK_ITERS 7 /* timed calls per collective and size */
/* untimed calls per collective and size before them: a host's first calls
 * of a size can be many times slower than its later ones, and what
 * decides is the steady time a program's loop sees. MPICH 4.0.2 at 2
 * ranks, lined up, in blocks of 16 calls: the 1 and 4 KiB Bcast 6-25 us
 * for its first 64 calls, 0.6-0.8 us from then on; the 1 and 4 KiB
 * Gather 5-20 us for 32-48, then 1.9-2.7 us; the 4 KiB Reduce 6-83 us
 * for 64, then 5 us. After 48 the 7 timed calls fell among the slow ones
 * (1 KiB Bcast priced at 2.5-3.8 us, Gather 4.0-4.7 us), and the model
 * then chose kcoll where the host is faster, until the run-time check
 * turned it round some 200 calls into each pattern. 128, as the check's
 * own warm-up of the host (call/adapt.h); half of it at 16 KiB, whose
 * calls take 6-20 us and had warmed by then (MPICH 4.0.2's Gather, the
 * slowest to, after 64), which keeps the measurement near 30 ms. */
#define QUICK_WARM 128
#define QUICK_WARM_LARGE 64
#define QUICK_LARGE 16384 /* bytes from which a size warms QUICK_WARM_LARGE calls */
#define QUICK_CMA 31  /* timed cross-memory-attach calls */
#define QUICK_ROUNDS 2 /* measurements at most, where a rank waited */
#define QUICK_CPU_WORDS 16 /* 1024 CPUs */

/* What the last start-up did, for the statistics report. */
static char kcoll_quick_said[512];

const char *kcoll_quick_report(void)
{
    return kcoll_quick_said;
}

/* The MPI library's own name and version (its first line). */
static const char *library_version(char *lib, size_t len)
{
    int n = 0;
    if (len < MPI_MAX_LIBRARY_VERSION_STRING || PMPI_Get_library_version(lib, &n) != MPI_SUCCESS)
        return "";
    lib[strcspn(lib, "\n")] = '\0';
    return lib;
}

/* ", waited for a CPU x% of it" where the kernel said (into out). */
static const char *busy_said(double busy, char *out, size_t len)
{
    if (busy < 0)
        return "";
    snprintf(out, len, ", waited for a CPU %.1f%% of it", 100 * busy);
    return out;
}

/* kcoll_cache_write's writer of a tuning. */
static int write_tuning(FILE *f, void *t)
{
    return kcoll_tuning_write(f, t);
}

/* One host call of kcoll_quick_colls[i] with blocks of n bytes on node. */
static void host_call(int i, int n, char *s, char *r, MPI_Comm node)
{
    const int d = n / 8 > 0 ? n / 8 : 1; /* doubles of a reduction */
    switch (kcoll_quick_colls[i]) {
    case KCOLL_COLL_BCAST: PMPI_Bcast(s, n, MPI_BYTE, 0, node); break;
    case KCOLL_COLL_SCATTER: PMPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, 0, node); break;
    case KCOLL_COLL_GATHER: PMPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, 0, node); break;
    case KCOLL_COLL_ALLGATHER: PMPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, node); break;
    case KCOLL_COLL_ALLTOALL: PMPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, node); break;
    case KCOLL_COLL_BARRIER: PMPI_Barrier(node); break;
    case KCOLL_COLL_REDUCE: PMPI_Reduce(s, r, d, MPI_DOUBLE, MPI_SUM, 0, node); break;
    case KCOLL_COLL_ALLREDUCE: PMPI_Allreduce(s, r, d, MPI_DOUBLE, MPI_SUM, node); break;
    default: PMPI_Reduce_scatter_block(s, r, d, MPI_DOUBLE, MPI_SUM, node); break;
    }
}

/* The measurement, collective over node (p ranks): *q on node rank 0. */
static void measure(MPI_Comm node, int p, int me, kcoll_quick_t *q)
{
    const size_t most = (size_t)kcoll_quick_bytes[KCOLL_QUICK_SIZES - 1] * (size_t)p;
    char *s = calloc(most, 1), *r = calloc(most, 1);
    /* t[N]: the CMA call; t[N + 1]: the share of the time waited for a CPU */
    enum { N = KCOLL_QUICK_COLLS * KCOLL_QUICK_SIZES * QUICK_ITERS };
    double *t = calloc(N + 2, sizeof *t), *worst = calloc(N + 2, sizeof *worst);
    int ok = s && r && t && worst, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    if (!all_ok)
        goto out;
    const double delay0 = kcoll_run_delay();
    const int64_t wall0 = kcoll_now_ns();
    /* the host's completion times: the ranks lined up, each call timed on
     * every rank, the slowest rank's time (as kcoll-bench measures) */
    for (int i = 0; i < KCOLL_QUICK_COLLS; i++)
        for (int k = 0; k < KCOLL_QUICK_SIZES; k++) {
            if (kcoll_quick_colls[i] == KCOLL_COLL_BARRIER && k > 0)
                continue;
            const int warm = kcoll_quick_bytes[k] >= QUICK_LARGE ? QUICK_WARM_LARGE : QUICK_WARM;
            for (int it = 0; it < warm; it++)
                host_call(i, (int)kcoll_quick_bytes[k], s, r, node);
            for (int it = 0; it < QUICK_ITERS; it++) {
                PMPI_Barrier(node);
                const double t0 = PMPI_Wtime();
                host_call(i, (int)kcoll_quick_bytes[k], s, r, node);
                t[(i * KCOLL_QUICK_SIZES + k) * QUICK_ITERS + it] = PMPI_Wtime() - t0;
            }
        }
    /* one cross-memory-attach read of the right neighbour's word: the
     * system call and its permission check (-1: not permitted) */
    static volatile uint64_t word = 0x6b636f6c6cull;
    uint64_t mine[2] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)&word}, *peers = malloc(2 * sizeof(uint64_t) * (size_t)p);
    double cma[QUICK_CMA];
    t[N] = -1;
    if (peers && PMPI_Allgather(mine, 2, MPI_UINT64_T, peers, 2, MPI_UINT64_T, node) == MPI_SUCCESS) {
        const int right = (me + 1) % p;
        uint64_t got = 0;
        struct iovec l = {&got, sizeof got};
        struct iovec rv = {(void *)(uintptr_t)peers[2 * right + 1], sizeof got};
        int good = 1;
        for (int it = 0; it <= QUICK_CMA && good; it++) {
            const int64_t t0 = kcoll_now_ns();
            good = process_vm_readv((pid_t)peers[2 * right], &l, 1, &rv, 1, 0) == (ssize_t)sizeof got;
            if (it > 0)
                cma[it - 1] = (double)(kcoll_now_ns() - t0) * 1e-9;
        }
        if (good)
            t[N] = kcoll_median(cma, QUICK_CMA);
    }
    free(peers);
    PMPI_Barrier(node); /* nobody's word is read any more */
    const double delay1 = kcoll_run_delay(), wall = (double)(kcoll_now_ns() - wall0) * 1e-9;
    t[N + 1] = delay0 >= 0 && delay1 >= 0 && wall > 0 ? (delay1 - delay0) / wall : -1;
    PMPI_Reduce(t, worst, N + 2, MPI_DOUBLE, MPI_MAX, 0, node);
    /* where one rank could not read, the maximum is still -1 only if all
     * failed: take the minimum's sign too */
    double least = 0;
    PMPI_Reduce(&t[N], &least, 1, MPI_DOUBLE, MPI_MIN, 0, node);
    if (me == 0) {
        memset(q, 0, sizeof *q);
        q->p = p;
        q->alpha = least > 0 ? worst[N] : 0;
        q->busy = worst[N + 1];
        for (int i = 0; i < KCOLL_QUICK_COLLS; i++)
            for (int k = 0; k < KCOLL_QUICK_SIZES; k++)
                if (kcoll_quick_colls[i] != KCOLL_COLL_BARRIER || k == 0)
                    q->host[i][k] = kcoll_median(
                        worst + (i * KCOLL_QUICK_SIZES + k) * QUICK_ITERS, QUICK_ITERS);
    }
out:
    free(s);
    free(r);
    free(t);
    free(worst);
}

void kcoll_quick_startup(kcoll_tuning_t *t)
{
    kcoll_quick_said[0] = '\0';
    MPI_Comm node;
    int me, p, at0 = 0, here0;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, kcoll_world_rank,
                             MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    PMPI_Comm_rank(node, &me);
    PMPI_Comm_size(node, &p);
    here0 = kcoll_world_rank == 0;
    PMPI_Allreduce(&here0, &at0, 1, MPI_INT, MPI_MAX, node);
    if (!at0) { /* another node's rank 0 measures; this node gets its tuning */
        PMPI_Comm_free(&node);
        return;
    }
    /* the CPUs the node's ranks may run on, together */
    const int64_t start = kcoll_now_ns();
    uint64_t mask[QUICK_CPU_WORDS], all[QUICK_CPU_WORDS];
    kcoll_cpu_affinity(mask, QUICK_CPU_WORDS);
    PMPI_Allreduce(mask, all, QUICK_CPU_WORDS, MPI_UINT64_T, MPI_BOR, node);
    long cpus = kcoll_cpu_count(all, QUICK_CPU_WORDS);
    if (cpus == 0) /* no rank could read its affinity */
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* rank 0 (node rank 0: the key is the world rank) looks for the file */
    char path[600] = "", ident[600] = "", err[512], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int action = 0; /* 0: nothing, 1: read from the cache, 2: measure */
    if (me == 0) {
        if (p < 2 || (cpus > 0 && p > cpus))
            snprintf(kcoll_quick_said, sizeof kcoll_quick_said,
                     "quick calibration: none (%d ranks on %ld CPU%s: %s); built-in defaults", p,
                     cpus, cpus == 1 ? "" : "s",
                     p < 2 ? "nothing to time" : "a crowded node times its scheduler");
        else if (kcoll_quick_path(p, library_version(lib, sizeof lib), path, sizeof path, ident,
                                  sizeof ident) != 0)
            snprintf(kcoll_quick_said, sizeof kcoll_quick_said,
                     "quick calibration: none (no cache folder: set KCOLL_CACHE_DIR or HOME)");
        else if (access(path, R_OK) == 0 && kcoll_tuning_load(path, t, err, sizeof err) == 0)
            action = 1;
        else
            action = 2;
    }
    PMPI_Bcast(&action, 1, MPI_INT, 0, node);
    if (action == 2) {
        kcoll_quick_t q = {0};
        /* the topology's load (a thread of this process, a few ms on a
         * machine seen the first time) ends first: it would run on the
         * CPUs being timed */
        kcoll_topo_settle();
        /* once more where a rank waited: ranks the launcher did not bind
         * start on one CPU until the kernel spreads them, within the
         * first milliseconds */
        const double most = (double)kcoll_param_int(KCOLL_P_QUICK_BUSY) / 100;
        int again = 0; /* rank 0's word (its wait is the node's largest, its
                        * parameter decides): every rank measures alike */
        for (int round = 0; round < QUICK_ROUNDS; round++) {
            measure(node, p, me, &q);
            again = me == 0 && q.busy > most;
            PMPI_Bcast(&again, 1, MPI_INT, 0, node);
            if (!again)
                break;
        }
        if (me == 0 && again) {
            /* t keeps the built-in defaults it came with */
            snprintf(kcoll_quick_said, sizeof kcoll_quick_said,
                     "quick calibration: measured at MPI_Init in %.1f ms (%d ranks), neither "
                     "used nor kept: a rank waited for its CPU %.1f%% of the time, %d times "
                     "(other work on this node's CPUs); built-in defaults, the next job "
                     "measures again",
                     (double)(kcoll_now_ns() - start) * 1e-6, p, 100 * q.busy, QUICK_ROUNDS);
        } else if (me == 0) {
            const double ms = (double)(kcoll_now_ns() - start) * 1e-6;
            char waited[64];
            kcoll_tuning_defaults(t);
            kcoll_quick_apply(&t->m, &q);
            time_t now = time(NULL);
            char day[32];
            strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
            snprintf(t->m.source, sizeof t->m.source,
                     "quick calibration %s (%d ranks, host times to 16 KiB%s) over the "
                     "built-in defaults",
                     day, p, q.alpha > 0 ? ", CMA alpha" : "");
            snprintf(t->file, sizeof t->file, "%s", path);
            /* written whole under another name, then renamed: a job that
             * starts meanwhile reads the old file or the new one, never half */
            const int saved = kcoll_cache_write(path, write_tuning, t) == 0;
            if (!saved) {
                kcoll_warn("quick calibration not kept in %s: %s (kcoll measures again next "
                           "time; KCOLL_CACHE_DIR chooses another folder)",
                           path, strerror(errno));
            }
            snprintf(kcoll_quick_said, sizeof kcoll_quick_said,
                     "quick calibration: measured at MPI_Init in %.1f ms (%d ranks%s%s), %s %s",
                     ms, p, q.alpha > 0 ? "" : ", cross-memory attach not permitted",
                     busy_said(q.busy, waited, sizeof waited), saved ? "kept in" : "not kept in",
                     path);
        }
    } else if (action == 1 && me == 0) {
        snprintf(kcoll_quick_said, sizeof kcoll_quick_said,
                 "quick calibration: read in %.1f ms from %s",
                 (double)(kcoll_now_ns() - start) * 1e-6, path);
    }
    PMPI_Comm_free(&node);
}
