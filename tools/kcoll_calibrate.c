/* kcoll-calibrate: measure the cost model's parameters on this machine
 * (model/machine.h) and write them as a tuning file (model/tuning.h).
 *
 *     mpirun -np <cores> kcoll-calibrate [-o machine.json] [--quick] [-p LIST]
 *
 * The file goes to stdout without -o; progress goes to stderr. Run it
 * with libkcoll preloaded: the raw mechanisms and the host MPI's own
 * collectives are timed through PMPI_* (which kcoll does not intercept),
 * kcoll's own calls through MPI_* (6. below; without kcoll loaded that
 * phase keeps the defaults). All ranks must run on one node, one rank per
 * core: with more ranks than CPUs the timings measure the scheduler, so
 * the tool then measures the contention curve at c = 1 only and says so.
 *
 * What it measures, and how (docs/model.md, "Calibration", for users):
 *
 * 1. The CMA terms of paper 003 (section III, Table III),
 *    T = alpha + n beta + l gamma_c ceil(n / s), between rank 0, whose
 *    memory is read, and rank 1, the reader. Rank 0's region is larger
 *    than twice the last-level cache, faulted in beforehand and kept on
 *    4 KiB pages (MADV_NOHUGEPAGE: a transparent huge page would lock as
 *    one); every call takes the next slot of the region, so data starts
 *    off-cache as it does in a collective. The kinds of call below take
 *    turns, one timing of each per round, and each value is the median
 *    over the rounds (of batches where one call is too short to time).
 *    - T1: a 0-byte process_vm_readv (no iovecs): the system call alone.
 *    - T(N): lock and pin N remote pages (N = 1, 16, 64, 256). Table III
 *      does this with an empty local iovec, but Linux returns from a call
 *      whose local iovecs hold no bytes before it even looks the process
 *      up (the tool times that form too and prints it next to T1), so the
 *      local iovec here holds one byte: the kernel pins the whole remote
 *      iovec (up to 1024 pages at once), copies one byte and unpins.
 *      T(1) is Table III's T2, the access check.
 *    - l = the least-squares slope of T(N) over N; alpha = T(1) - l, the
 *      call with its permission check, so that the model reproduces the
 *      one-page call exactly (the paper takes alpha = T2, the same but for
 *      one page's lock). alpha is not T1: the 0-byte call skips the
 *      process lookup and the permission check that every real copy pays.
 *    - beta = (T4 - T(256)) / (256 s), T4 the full copy of 256 pages into
 *      a rotating off-cache local buffer; the 16-page copy is printed as a
 *      check. s = sysconf(_SC_PAGESIZE).
 * 2. gamma_c, the contention factor: c = 1 .. p-1 readers lock and pin
 *    256 pages each of rank 0's memory at once (distinct pages, as in
 *    paper 003 Fig. 2(c): the lock is per process, not per page), started
 *    together by a barrier of the readers, four calls in a row so that
 *    they overlap despite the barrier's skew. l_c = (median call - alpha)
 *    / 256 averaged over the readers, gamma_c = l_c / l_1. The values are
 *    gamma.intra.measured; the polynomial g0 + g1 c + g2 c^2 is their
 *    least-squares fit, with as many terms as there are points up to
 *    three (one point: g0 alone, which is 1; two: g0 + g1 c), the others
 *    0. On a machine with several packages the readers of the intra curve
 *    are the ranks on rank 0's package, and the inter curve is measured
 *    the same way with readers on the other packages (relative to the
 *    intra l_1). With one package, or no rank bound outside rank 0's,
 *    gamma.inter keeps the built-in defaults. Oversubscribed: c = 1 only.
 * 3. Memory, on rank 0 alone: copy_alpha, the time of a 1-byte memmove
 *    called through a pointer (the fixed cost of a COPY step); copy_beta,
 *    4 MiB memmoves between rotating regions of twice the last-level cache
 *    each (off-cache). package_bw: when the ranks on rank 0's package
 *    occupy all of its cores, they all copy at once and the sum of their
 *    rates is what the package's memory delivers; otherwise (a partial
 *    load says nothing about the package's limit) the default stays.
 * 4. Reduction rates through kcoll's own kernel, kcoll_op_apply
 *    (op/op.c, compiled as the library compiles it): SUM on int32 (int
 *    class), float, double, and a user operation whose function is called
 *    through a pointer with MPI's user-function signature, as kcoll's
 *    PMPI layer calls it, doing a double sum (user class). Chunks of
 *    128 KiB, in cache: kcoll reduces a chunk it has just read into
 *    scratch, while both operands are in L2 (docs/reductions.md). The
 *    kernels' speed depends on where the linker puts their loops (on AMD
 *    Zen 4 a loop that straddles a 64-byte boundary runs at 0.6x), so this
 *    binary's copy can run at another speed than libkcoll.so's until op.c
 *    is compiled with -falign-loops=64. stream_beta: the same double sum
 *    with `in` taken from a rotation of twice the last-level cache (off
 *    cache) minus the in-cache time, per byte: what an operand that is
 *    not in cache (the rank's own send buffer) adds.
 * 5. Synchronization. flag: a ping-pong of two flags in shared memory
 *    between ranks 0 and 1 (shm_open of /kcoll-cal-<pid>, unlinked as
 *    soon as both have mapped it); flag = half the round trip. step:
 *    kcoll's executor (sched/exec.c) running a schedule of synchronization
 *    steps (EXPOSE, SIGNAL, a WAIT already satisfied) on a private
 *    one-rank control segment: what the executor spends per step besides
 *    moving data, which the other terms price.
 * 6. kcoll's fixed cost per call: kcoll's own calls between ranks 0 and
 *    1 (a Barrier, and at 1 and 4 KiB the simplest algorithm of Bcast,
 *    Scatter, Gather, Allgather, Alltoall, forced with kcoll_param_set),
 *    timed as the host's are (7.), minus the model's price of their
 *    schedules on the machine measured so far: call is the Barrier's
 *    difference, call_data the median of the others' minus call.
 *    Then the two-copy engine (docs/engines.md): the Bcast direct_read
 *    at 4 KiB-1 MiB on a communicator made with KCOLL_ENGINE=shm, minus
 *    the price of its schedule without the engine's terms, is
 *    shm_alpha + (n + min(n, cell)) shm_beta: a weighted line gives both.
 * 7. The host MPI: MPI_Bcast, Scatter, Gather, Allgather, Alltoall,
 *    Barrier, Reduce, Allreduce and Reduce_scatter_block (double sum),
 *    called as PMPI_*, at the process counts of -p (default: the running
 *    one; a count q below it uses ranks 0..q-1), sizes 1 KiB .. 4 MiB by
 *    factors of 4, in bytes as kcoll's selector sizes a call (per block
 *    for Scatter, Gather, Allgather, Alltoall and Reduce_scatter_block,
 *    per vector for Reduce and Allreduce, the whole message for Bcast;
 *    Barrier one point at 0 bytes). As kcoll-bench does it: buffers taken
 *    in turn from a region of at least twice the last-level cache (off
 *    cache), a barrier before each call, the time of a call the maximum
 *    over ranks, the median over repetitions. The v-variants (and
 *    Reduce_scatter) are timed themselves, with uniform counts: an MPI
 *    may run them quite differently from the fixed-count forms.
 *    host_alpha and host_beta are the fit t / ceil(log2 q) = a + b n
 *    over the Bcast points at the smallest q (the binomial tree the model's fallback formula assumes;
 *    at q = 2 the plain t), weighted by 1 / t^2: a fit of relative errors,
 *    since an unweighted one over four decades of sizes ignores the small
 *    ones that decide alpha.
 *
 * 8. Did the machine's speed hold? The CMA probes of 1. again: where the
 *    rate at the end differs from the start by more than 15%, the
 *    machine changed speed during the calibration (this VM drifts by up
 *    to 1.5x within minutes), so kcoll and the host MPI were measured at
 *    different speeds: everything is measured again, up to 3 attempts,
 *    and a warning says so if none held.
 *
 * Ranks that take no part in a phase wait in a non-blocking barrier,
 * asleep between tests, so that they take neither a core nor a hyperthread
 * sibling's cycles from the ranks that measure. The default run takes
 * 12-14 s at 2 processes, --quick about 2 s (the host MPI's points take
 * most of it: 0.25 s each by default, at most 2000 calls), again as much
 * per attempt that 8. repeats.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <hwloc.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "base/status.h"
#include "coll/coll.h"
#include "model/cost.h"
#include "model/machine.h"
#include "model/select.h"
#include "model/tuning.h"
#include "op/op.h"
#include "sched/ctl.h"
#include "sched/exec.h"
#include "sched/sched.h"
#include "topo/topo.h"
#include "xfer/cma.h"
#include "xfer/engine.h"

#define CAL_NPHASES 12
#define CAL_ATTEMPTS 3   /* calibrations until one starts and ends at one speed */
#define CAL_DRIFT 1.15   /* the most the CMA rate may differ between start and end */
#define CAL_DEFAULT_LLC ((size_t)32 << 20) /* when hwloc knows no cache */
#define CAL_LOCK_PAGES 256                 /* pages a contention reader locks per call */
#define CAL_LOCK_BATCH 4                   /* calls in a row per contention round */
#define CAL_COPY_CHUNK ((size_t)4 << 20)   /* bytes of one off-cache memmove */
#define CAL_RED_CHUNK ((size_t)128 << 10)  /* kcoll's default reduction chunk */
#define CAL_STEP_TRIPLES 4000              /* EXPOSE, SIGNAL, WAIT triples per schedule */

/* N of the lock-and-pin measurements, in pages; the last is also the copy's. */
static const int cal_lock_pages[] = {1, 16, 64, 256};
#define CAL_NLOCK ((int)(sizeof cal_lock_pages / sizeof cal_lock_pages[0]))

static const size_t cal_host_sizes[] = {(size_t)1 << 10,  (size_t)4 << 10,  (size_t)16 << 10,
                                        (size_t)64 << 10, (size_t)256 << 10, (size_t)1 << 20,
                                        (size_t)4 << 20};
#define CAL_NSIZES ((int)(sizeof cal_host_sizes / sizeof cal_host_sizes[0]))
#define CAL_MAX_Q (KCOLL_HOST_POINTS / CAL_NSIZES) /* process counts a file can hold */

/* How much work each measurement gets: the default, and --quick (also
 * used when oversubscribed, where more repetitions buy nothing). */
typedef struct {
    int cma_reps;        /* rounds of the CMA probes (one timing of each per round) */
    int gamma_reps;      /* contention rounds per c */
    int copy_reps;       /* batches (copy_alpha) and chunks (copy_beta) */
    int bw_reps;         /* rounds of the package bandwidth */
    int red_reps;        /* batches per reduction class */
    int flag_batches;    /* ping-pong batches */
    int flag_rt;         /* round trips per batch */
    int step_reps;       /* executor runs */
    double host_target;  /* seconds per host point */
    int host_min, host_max;
} cal_effort_t;

static const cal_effort_t cal_effort_default = {
    .cma_reps = 2000, .gamma_reps = 400, .copy_reps = 300, .bw_reps = 40, .red_reps = 300,
    .flag_batches = 30, .flag_rt = 2000, .step_reps = 30,
    .host_target = 0.25, .host_min = 20, .host_max = 2000};
static const cal_effort_t cal_effort_quick = {
    .cma_reps = 200, .gamma_reps = 60, .copy_reps = 40, .bw_reps = 8, .red_reps = 40,
    .flag_batches = 8, .flag_rt = 500, .step_reps = 8,
    .host_target = 0.02, .host_min = 5, .host_max = 200};

typedef struct {
    MPI_Comm world;
    int rank, size;
    int quick, oversub;
    int ncpus;            /* CPUs the job's ranks may use on this node */
    size_t page, llc;
    int npkg;             /* packages hwloc sees (at least 1) */
    int pkg_cores0;       /* cores of rank 0's package (0: unknown) */
    int *pkg_of;          /* package of every rank, -1 where unknown or spanning */
    pid_t *pids;
    const cal_effort_t *e;
    double t0;            /* start, for the progress lines */
    int phase;
} cal_t;

/* The shared-memory name rank 0 created and has not unlinked yet, so that
 * an abort in that window still removes it. */
static char cal_shm_name[64];

/* ---------------------------------------------------------------------- */
/* Small helpers                                                           */

static double cal_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cal_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static double cal_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cal_dcmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void cal_vsay(const cal_t *c, const char *fmt, va_list ap)
{
    if (c->rank)
        return;
    fputs("kcoll-calibrate: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* A line on stderr from rank 0. */
static void cal_say(const cal_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cal_vsay(c, fmt, ap);
    va_end(ap);
}

/* The heading line of the next phase: "[3/8] what ... (t = 2.1 s)". */
static void cal_phase(cal_t *c, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    c->phase++;
    cal_say(c, "[%d/%d] %s ... (t = %.1f s)", c->phase, CAL_NPHASES, what, cal_now() - c->t0);
}

/* A failure on one rank that the others cannot wait out: abort the job. */
static _Noreturn void cal_die(const cal_t *c, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kcoll-calibrate: rank %d: ", c->rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (cal_shm_name[0])
        shm_unlink(cal_shm_name);
    PMPI_Abort(c->world, 1);
    exit(1);
}

/* A condition every rank sees alike (arguments, placement): rank 0 says
 * why, everybody leaves cleanly. */
static _Noreturn void cal_quit(const cal_t *c, int status, const char *fmt, ...)
{
    va_list ap;
    if (fmt) {
        va_start(ap, fmt);
        cal_vsay(c, fmt, ap);
        va_end(ap);
    }
    MPI_Finalize(); /* a preloaded libkcoll cleans up */
    exit(status);
}

/* A barrier of all ranks in which a rank sleeps between tests: the end of
 * a phase that only some ranks work in; the idle ones must not spin on
 * cores (or hyperthread siblings) the measuring ranks use. */
static void cal_sync(const cal_t *c)
{
    MPI_Request rq;
    int done = 0;
    const struct timespec nap = {0, 200000};
    PMPI_Ibarrier(c->world, &rq);
    for (;;) {
        PMPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

static size_t cal_round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* len bytes of private anonymous memory, every page faulted in (written,
 * so no fault is timed later); nohuge keeps it on small pages. */
static char *cal_map(const cal_t *c, size_t len, int nohuge)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        cal_die(c, "mmap of %zu MiB: %s", len >> 20, strerror(errno));
    if (nohuge)
        madvise(p, len, MADV_NOHUGEPAGE); /* advice only: failure changes nothing we rely on */
    memset(p, 0, len);
    return p;
}

/* Least squares y = a + b x with weights w (NULL: 1). Returns -1 if the
 * points do not determine a line. */
static int cal_fit_line(const double *x, const double *y, const double *w, int n, double *a,
                        double *b)
{
    double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        s += wi;
        sx += wi * x[i];
        sy += wi * y[i];
        sxx += wi * x[i] * x[i];
        sxy += wi * x[i] * y[i];
    }
    double d = s * sxx - sx * sx;
    if (n < 2 || !(fabs(d) > 0))
        return -1;
    *b = (s * sxy - sx * sy) / d;
    *a = (sy - *b * sx) / s;
    return 0;
}

/* Least squares g0 + g1 c + g2 c^2 over c = 1..n (v[c-1]) with min(n, 3)
 * terms, the others 0: the normal equations, solved by Gaussian
 * elimination with partial pivoting (at most 3 x 3). */
static void cal_fit_poly(const double *v, int n, double poly[3])
{
    int k = n < 3 ? n : 3;
    double A[3][4] = {{0}};
    poly[0] = poly[1] = poly[2] = 0;
    if (k <= 0)
        return;
    for (int i = 0; i < n; i++) {
        double c = i + 1, pw[5] = {1, c, c * c, c * c * c, c * c * c * c};
        for (int r = 0; r < k; r++) {
            for (int q = 0; q < k; q++)
                A[r][q] += pw[r + q];
            A[r][3] += pw[r] * v[i];
        }
    }
    for (int col = 0; col < k; col++) {
        int piv = col;
        for (int r = col + 1; r < k; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col]))
                piv = r;
        for (int q = 0; q < 4; q++) {
            double t = A[col][q];
            A[col][q] = A[piv][q];
            A[piv][q] = t;
        }
        if (!(fabs(A[col][col]) > 0))
            return;
        for (int r = 0; r < k; r++) {
            if (r == col)
                continue;
            double f = A[r][col] / A[col][col];
            for (int q = col; q < 4; q++)
                A[r][q] -= f * A[col][q];
        }
    }
    for (int r = 0; r < k; r++)
        poly[r] = A[r][3] / A[r][r];
}

/* Store a measured value unless it is not a positive number, in which case
 * the default stays and rank 0 says so: a broken measurement must not
 * turn into a tuning file that prices everything as free. */
static void cal_store(const cal_t *c, const char *name, double *dst, double v)
{
    if (v > 0 && isfinite(v)) {
        *dst = v;
        return;
    }
    cal_say(c, "warning: %s measured as %g: keeping the default %g", name, v, *dst);
}

/* ---------------------------------------------------------------------- */
/* Setup: placement, oversubscription, topology                            */

static void cal_setup(cal_t *c)
{
    MPI_Comm node;
    int nnode, all_local;
    PMPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &nnode);
    all_local = nnode == c->size;
    PMPI_Allreduce(MPI_IN_PLACE, &all_local, 1, MPI_INT, MPI_LAND, c->world);
    if (!all_local)
        cal_quit(c, 2, "error: the ranks span several nodes; kcoll works within one node, "
                       "so run all ranks on one");

    /* Oversubscription: more ranks than the CPUs they may run on, counted
     * as the online CPUs and as the union of the ranks' affinity masks
     * (two ranks bound to one core count one CPU). */
    enum { W = (int)(8 * sizeof(unsigned long)), NW = CPU_SETSIZE / W };
    unsigned long words[NW];
    cpu_set_t set;
    memset(words, 0, sizeof words);
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                words[i / W] |= 1ul << (i % W);
    } else {
        memset(words, 0xff, sizeof words); /* unknown: only the online count limits */
    }
    PMPI_Allreduce(MPI_IN_PLACE, words, NW, MPI_UNSIGNED_LONG, MPI_BOR, node);
    int inmask = 0;
    for (int i = 0; i < NW; i++)
        inmask += __builtin_popcountl(words[i]);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    c->ncpus = online > 0 && online < inmask ? (int)online : inmask;
    c->oversub = nnode > c->ncpus;
    PMPI_Comm_free(&node);

    /* Packages, and which one each rank is bound to, from hwloc directly
     * (src/topo answers for KCOLL_HIER_LEVELS; here the machine is asked). */
    hwloc_topology_t topo;
    int mypkg = -1, mycores = 0;
    c->npkg = 1;
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
        int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        hwloc_bitmap_t bind = hwloc_bitmap_alloc();
        int bound = bind && hwloc_get_cpubind(topo, bind, HWLOC_CPUBIND_PROCESS) == 0 &&
                    !hwloc_bitmap_iszero(bind);
        c->npkg = n > 1 ? n : 1;
        if (n <= 1) {
            mypkg = 0;
            mycores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        }
        for (int i = 0; n > 1 && bound && i < n; i++) {
            hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)i);
            if (pkg && hwloc_bitmap_isincluded(bind, pkg->cpuset)) {
                mypkg = i;
                mycores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, pkg->cpuset,
                                                                 HWLOC_OBJ_CORE);
            }
        }
        hwloc_bitmap_free(bind);
        hwloc_topology_destroy(topo);
    }
    c->pkg_of = malloc((size_t)c->size * sizeof *c->pkg_of);
    c->pids = malloc((size_t)c->size * sizeof *c->pids);
    if (!c->pkg_of || !c->pids)
        cal_die(c, "out of memory");
    PMPI_Allgather(&mypkg, 1, MPI_INT, c->pkg_of, 1, MPI_INT, c->world);
    c->pkg_cores0 = mycores;
    PMPI_Bcast(&c->pkg_cores0, 1, MPI_INT, 0, c->world);
    int pid = (int)getpid();
    int *pids = malloc((size_t)c->size * sizeof *pids);
    if (!pids)
        cal_die(c, "out of memory");
    PMPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, c->world);
    for (int r = 0; r < c->size; r++)
        c->pids[r] = (pid_t)pids[r];
    free(pids);

    long pg = sysconf(_SC_PAGESIZE);
    c->page = pg > 0 ? (size_t)pg : 4096;
    c->llc = kcoll_topo_llc_bytes();
    if (c->llc == 0)
        c->llc = CAL_DEFAULT_LLC;

    /* Under Yama ptrace_scope 1 a process must allow its peers to read it. */
    char why[256];
    if (kcoll_cma_allow_peers(why, sizeof why) != 0)
        cal_say(c, "warning: %s", why);
}

/* ---------------------------------------------------------------------- */
/* 1. CMA terms (rank 1 reads rank 0)                                      */

/* Rank 0's region that readers lock and copy from: its address (on every
 * rank) and length. */
typedef struct {
    char *mem; /* rank 0 only */
    uint64_t addr;
    size_t len;
} cal_target_t;

static void cal_target_open(const cal_t *c, cal_target_t *t)
{
    int readers = c->size - 1 < KCOLL_GAMMA_MAX ? c->size - 1 : KCOLL_GAMMA_MAX;
    size_t lock_bytes = (size_t)CAL_LOCK_PAGES * c->page;
    size_t need = (size_t)(readers + 1) * lock_bytes;
    t->len = cal_round_up(need > 2 * c->llc ? need : 2 * c->llc, lock_bytes);
    t->mem = NULL;
    t->addr = 0;
    if (c->rank == 0) {
        t->mem = cal_map(c, t->len, 1);
        t->addr = (uint64_t)(uintptr_t)t->mem;
    }
    PMPI_Bcast(&t->addr, 1, MPI_UINT64_T, 0, c->world);
}

static void cal_target_close(cal_target_t *t)
{
    if (t->mem)
        munmap(t->mem, t->len);
    t->mem = NULL;
}

/* One process_vm_readv (write 0) or process_vm_writev (write 1) that must
 * move `want` bytes. */
static void cal_cma_call(const cal_t *c, int write, pid_t pid, const struct iovec *l, int nl,
                         const struct iovec *r, int nr, size_t want)
{
    const char *what = write ? "process_vm_writev to" : "process_vm_readv from";
    ssize_t got = (write ? process_vm_writev : process_vm_readv)(pid, l, (unsigned long)nl, r,
                                                                (unsigned long)nr, 0);
    if (got < 0)
        cal_die(c, "%s pid %d: %s%s", what, (int)pid, strerror(errno),
                errno == EPERM ? " (cross-memory attach is not permitted: kcoll-info says why)"
                               : "");
    if ((size_t)got != want)
        cal_die(c, "%s pid %d moved %zd bytes of %zu", what, (int)pid, got, want);
}

/* What rank 1 measures, in seconds. */
enum {
    CAL_T1,       /* 0-byte call */
    CAL_T0LOCAL,  /* empty local iovec, 256 remote pages (Table III's literal form) */
    CAL_TLOCK,    /* CAL_NLOCK values: T(N) */
    CAL_TCOPY16 = CAL_TLOCK + CAL_NLOCK,
    CAL_TCOPY256,
    CAL_NRAW
};

/* One kind of call of the CMA measurement. */
typedef struct {
    enum { CAL_P_SYSCALL, CAL_P_EMPTY, CAL_P_LOCK, CAL_P_COPY } kind;
    int pages;     /* remote pages */
    int batch;     /* calls per timing (one call is too short to time below ~16 pages) */
    size_t next;   /* the next slot of the rotation */
} cal_probe_t;

/* One call of probe p: lock and copy calls take the next slot of the
 * target region (and of the local region), so every call starts
 * off-cache. */
static void cal_probe_call(const cal_t *c, const cal_target_t *t, char *local, size_t llen,
                           cal_probe_t *p)
{
    if (p->kind == CAL_P_SYSCALL) {
        cal_cma_call(c, 0, c->pids[0], NULL, 0, NULL, 0, 0);
        return;
    }
    const size_t bytes = (size_t)p->pages * c->page;
    const size_t i = p->next++;
    char one[64];
    struct iovec l = {one, 1};
    struct iovec rv = {(void *)(uintptr_t)(t->addr + (i % (t->len / bytes)) * bytes), bytes};
    switch (p->kind) {
    case CAL_P_SYSCALL:
        break;
    case CAL_P_EMPTY:
        l.iov_len = 0;
        cal_cma_call(c, 0, c->pids[0], &l, 1, &rv, 1, 0);
        break;
    case CAL_P_LOCK:
        cal_cma_call(c, 0, c->pids[0], &l, 1, &rv, 1, 1);
        break;
    case CAL_P_COPY:
        l.iov_base = local + (i % (llen / bytes)) * bytes;
        l.iov_len = bytes;
        cal_cma_call(c, 0, c->pids[0], &l, 1, &rv, 1, bytes);
        break;
    }
}

/* The raw times of the CMA probes (seconds, on every rank). */
static void cal_cma_raw(const cal_t *c, const cal_target_t *t, double raw[CAL_NRAW])
{
    memset(raw, 0, CAL_NRAW * sizeof *raw);
    if (c->rank == 1) {
        /* The probes take turns, one timing each per round (as kcoll-bench
         * alternates its variants): a drift of the machine's speed during
         * the phase (this VM's drifts) shifts every N alike instead of
         * bending the line the fit draws through them. */
        cal_probe_t pr[CAL_NRAW];
        pr[CAL_T1] = (cal_probe_t){CAL_P_SYSCALL, 0, 16, 0};
        pr[CAL_T0LOCAL] = (cal_probe_t){CAL_P_EMPTY, CAL_LOCK_PAGES, 16, 0};
        for (int k = 0; k < CAL_NLOCK; k++)
            pr[CAL_TLOCK + k] = (cal_probe_t){CAL_P_LOCK, cal_lock_pages[k],
                                              cal_lock_pages[k] < 16 ? 16 : 1, 0};
        pr[CAL_TCOPY16] = (cal_probe_t){CAL_P_COPY, 16, 1, 0};
        pr[CAL_TCOPY256] = (cal_probe_t){CAL_P_COPY, CAL_LOCK_PAGES, 1, 0};
        const int reps = c->e->cma_reps;
        double *ts = malloc((size_t)reps * CAL_NRAW * sizeof *ts);
        size_t llen = cal_round_up(2 * c->llc, (size_t)CAL_LOCK_PAGES * c->page);
        char *local = cal_map(c, llen, 0);
        if (!ts)
            cal_die(c, "out of memory");
        for (int r = -reps / 10 - 1; r < reps; r++) { /* negative rounds warm up */
            for (int k = 0; k < CAL_NRAW; k++) {
                double s = cal_now();
                for (int b = 0; b < pr[k].batch; b++)
                    cal_probe_call(c, t, local, llen, &pr[k]);
                if (r >= 0)
                    ts[(size_t)k * reps + r] = (cal_now() - s) / pr[k].batch;
            }
        }
        for (int k = 0; k < CAL_NRAW; k++)
            raw[k] = cal_median(ts + (size_t)k * reps, reps);
        munmap(local, llen);
        free(ts);
    }
    cal_sync(c);
    PMPI_Bcast(raw, CAL_NRAW, MPI_DOUBLE, 1, c->world);
}

/* beta from the raw times: the 256-page copy minus its lock and pin. */
static double cal_cma_beta(const cal_t *c, const double raw[CAL_NRAW])
{
    return (raw[CAL_TCOPY256] - raw[CAL_TLOCK + CAL_NLOCK - 1]) /
           (CAL_LOCK_PAGES * (double)c->page);
}

static void cal_cma(cal_t *c, const cal_target_t *t, kcoll_machine_t *m)
{
    double raw[CAL_NRAW];
    cal_phase(c, "CMA terms alpha, l, beta (paper 003 Table III), rank 1 reading rank 0");
    cal_cma_raw(c, t, raw);

    double x[CAL_NLOCK], a, l = 0;
    for (int k = 0; k < CAL_NLOCK; k++)
        x[k] = cal_lock_pages[k];
    if (cal_fit_line(x, raw + CAL_TLOCK, NULL, CAL_NLOCK, &a, &l) != 0)
        l = 0;
    const double s = (double)c->page;
    const double beta256 = cal_cma_beta(c, raw);
    const double beta16 = (raw[CAL_TCOPY16] - raw[CAL_TLOCK + 1]) / (16 * s);
    const double lock_span = raw[CAL_TLOCK + CAL_NLOCK - 1] - raw[CAL_TLOCK];
    cal_say(c, "  T1 0-byte call %.3f us; empty local iovec, 256 pages: %.3f us%s",
            raw[CAL_T1] * 1e6, raw[CAL_T0LOCAL] * 1e6,
            raw[CAL_T0LOCAL] < raw[CAL_T1] + 0.25 * lock_span
                ? " (no pages pinned: the kernel returns early)"
                : "");
    for (int k = 0; k < CAL_NLOCK; k++)
        cal_say(c, "  T(%d page%s) lock+pin, 1 byte copied: %.3f us", cal_lock_pages[k],
                cal_lock_pages[k] > 1 ? "s" : "", raw[CAL_TLOCK + k] * 1e6);
    cal_say(c, "  T4 copy of 16 pages %.3f us (%.2f GB/s), of 256 pages %.3f us (%.2f GB/s)",
            raw[CAL_TCOPY16] * 1e6, 1e-9 / beta16, raw[CAL_TCOPY256] * 1e6, 1e-9 / beta256);
    cal_store(c, "l", &m->l, l);
    cal_store(c, "alpha", &m->alpha, raw[CAL_TLOCK] - m->l);
    cal_store(c, "beta", &m->beta, beta256);
    m->page = s;
    cal_say(c, "  alpha %.3f us, l %.4f us/page, beta^-1 %.2f GB/s, s %.0f bytes",
            m->alpha * 1e6, m->l * 1e6, 1e-9 / m->beta, m->page);
}

/* ---------------------------------------------------------------------- */
/* 1b. Reading against writing, with both ranks copying                    */

/* beta_write: ranks 0 and 1 exchange 256 pages at once, in one round both
 * with process_vm_readv (each pulls the other's block), in the next both
 * with process_vm_writev (each pushes its block), as kcoll's read- and
 * write-based schedules do; the rounds alternate, every call takes fresh
 * off-cache slots. beta_write = beta + (T_write - T_read) / (256 s): the
 * difference per byte, since both calls pay the same alpha and locks.
 * One call at a time shows no difference on a 2-core Zen 4 guest; this
 * exchange does (docs/model-validation.md). */
static void cal_exchange(cal_t *c, kcoll_machine_t *m)
{
    cal_phase(c, "CMA read against write, ranks 0 and 1 exchanging 256 pages at once");
    const size_t bytes = (size_t)CAL_LOCK_PAGES * c->page;
    const int reps = c->e->cma_reps / 4 > 20 ? c->e->cma_reps / 4 : 20;
    double med[2] = {0, 0}; /* read, write: the mean of the two ranks' medians */
    MPI_Comm pair;
    PMPI_Comm_split(c->world, c->rank < 2 ? 0 : MPI_UNDEFINED, c->rank, &pair);
    if (pair != MPI_COMM_NULL) {
        const int peer = 1 - c->rank;
        size_t len = cal_round_up(2 * c->llc, bytes);
        char *send = cal_map(c, len, 1), *recv = cal_map(c, len, 1);
        uint64_t mine[2] = {(uint64_t)(uintptr_t)send, (uint64_t)(uintptr_t)recv}, theirs[2];
        PMPI_Sendrecv(mine, 2, MPI_UINT64_T, peer, 0, theirs, 2, MPI_UINT64_T, peer, 0, pair,
                      MPI_STATUS_IGNORE);
        double *ts = malloc(2 * (size_t)reps * sizeof *ts);
        if (!ts)
            cal_die(c, "out of memory");
        const size_t slots = len / bytes;
        for (int r = -reps / 10 - 1; r < reps; r++) { /* negative rounds warm up */
            for (int k = 0; k < 2; k++) {
                /* reads take the even slots, writes the odd ones */
                const size_t off = ((2 * (size_t)(r + reps) + (size_t)k) % slots) * bytes;
                struct iovec l = {(k ? send : recv) + off, bytes};
                struct iovec rv = {(void *)(uintptr_t)(theirs[k ? 1 : 0] + off), bytes};
                PMPI_Barrier(pair);
                double t = cal_now();
                cal_cma_call(c, k, c->pids[peer], &l, 1, &rv, 1, bytes);
                t = cal_now() - t;
                if (r >= 0)
                    ts[(size_t)k * reps + r] = t;
            }
        }
        double mk[2] = {cal_median(ts, reps), cal_median(ts + reps, reps)};
        PMPI_Allreduce(mk, med, 2, MPI_DOUBLE, MPI_SUM, pair);
        free(ts);
        munmap(send, len);
        munmap(recv, len);
        PMPI_Comm_free(&pair);
    }
    cal_sync(c);
    PMPI_Bcast(med, 2, MPI_DOUBLE, 0, c->world);
    med[0] /= 2;
    med[1] /= 2;
    double bw = m->beta + (med[1] - med[0]) / (double)bytes;
    if (bw < m->beta / 4) /* a write cannot be that much cheaper: keep the model sane */
        bw = m->beta / 4;
    cal_say(c, "  exchange of 256 pages: both reading %.3f us, both writing %.3f us (%.2fx)",
            med[0] * 1e6, med[1] * 1e6, med[0] / med[1]);
    cal_store(c, "beta_write", &m->beta_write, bw);
    cal_say(c, "  beta_write^-1 %.2f GB/s (beta^-1 %.2f GB/s)", 1e-9 / m->beta_write,
            1e-9 / m->beta);
}

/* ---------------------------------------------------------------------- */
/* 2. Contention                                                           */

/* l_c: the per-page lock time while readers[0..nc) lock rank 0's pages at
 * once (rank 0 only; the other ranks return 0). */
static double cal_contention(const cal_t *c, const cal_target_t *t, const int *readers, int nc,
                             double alpha)
{
    int me = -1;
    for (int k = 0; k < nc; k++)
        if (readers[k] == c->rank)
            me = k;
    MPI_Comm sub;
    PMPI_Comm_split(c->world, me >= 0 ? 0 : MPI_UNDEFINED, c->rank, &sub);
    double med = -1;
    if (me >= 0) {
        const int reps = c->e->gamma_reps;
        const size_t bytes = (size_t)CAL_LOCK_PAGES * c->page, nslots = t->len / bytes;
        double *ts = malloc((size_t)reps * sizeof *ts);
        char one[64];
        if (!ts)
            cal_die(c, "out of memory");
        size_t call = 0;
        for (int r = -3; r < reps; r++) {
            PMPI_Barrier(sub);
            double s = cal_now();
            for (int b = 0; b < CAL_LOCK_BATCH; b++, call++) {
                /* reader k's slot differs from every other reader's in this round */
                size_t slot = (call * (size_t)nc + (size_t)me) % nslots;
                struct iovec l = {one, 1};
                struct iovec rv = {(void *)(uintptr_t)(t->addr + slot * bytes), bytes};
                cal_cma_call(c, 0, c->pids[0], &l, 1, &rv, 1, 1);
            }
            if (r >= 0)
                ts[r] = (cal_now() - s) / CAL_LOCK_BATCH;
        }
        med = cal_median(ts, reps);
        free(ts);
        PMPI_Comm_free(&sub);
    }
    cal_sync(c);
    double *all = c->rank == 0 ? malloc((size_t)c->size * sizeof *all) : NULL;
    if (c->rank == 0 && !all)
        cal_die(c, "out of memory");
    PMPI_Gather(&med, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, c->world);
    double sum = 0;
    int n = 0;
    for (int r = 0; c->rank == 0 && r < c->size; r++)
        if (all[r] >= 0) {
            sum += all[r];
            n++;
        }
    free(all);
    return n ? (sum / n - alpha) / CAL_LOCK_PAGES : 0;
}

/* One curve: c = 1 .. nreaders (at most KCOLL_GAMMA_MAX) readers taken
 * from the front of readers[]; gamma_c = l_c / l_ref, l_ref = l_1 of this
 * curve if *l_ref is 0 (then set). */
static void cal_curve(cal_t *c, const cal_target_t *t, const int *readers, int nreaders,
                      double alpha, double *l_ref, kcoll_gamma_t *g, const char *what)
{
    int cmax = nreaders < KCOLL_GAMMA_MAX ? nreaders : KCOLL_GAMMA_MAX;
    if (c->oversub && cmax > 1) {
        cal_say(c, "  oversubscribed (%d ranks, %d CPUs): contention measured at c = 1 only",
                c->size, c->ncpus);
        cmax = 1;
    }
    kcoll_gamma_t out;
    memset(&out, 0, sizeof out);
    for (int nc = 1; nc <= cmax; nc++) {
        double lc = cal_contention(c, t, readers, nc, alpha);
        if (c->rank != 0)
            continue;
        if (*l_ref <= 0)
            *l_ref = lc;
        out.measured[nc - 1] = *l_ref > 0 ? lc / *l_ref : 0;
        out.nmeasured = nc;
        cal_say(c, "  %s c = %d: %.4f us per page, gamma %.3f", what, nc, lc * 1e6,
                out.measured[nc - 1]);
    }
    if (c->rank != 0)
        return;
    if (out.nmeasured == 0) {
        cal_say(c, "  %s: no readers: keeping the default curve", what);
        return;
    }
    for (int i = 0; i < out.nmeasured; i++)
        if (!(out.measured[i] > 0) || !isfinite(out.measured[i])) {
            cal_say(c, "warning: %s curve not measurable: keeping the default", what);
            return;
        }
    cal_fit_poly(out.measured, out.nmeasured, out.poly);
    *g = out;
    cal_say(c, "  %s fit (%d point%s): gamma(c) = %.4f + %.4f c + %.4f c^2", what,
            out.nmeasured, out.nmeasured > 1 ? "s" : "", out.poly[0], out.poly[1], out.poly[2]);
}

static void cal_gamma(cal_t *c, const cal_target_t *t, kcoll_machine_t *m)
{
    int *intra = malloc((size_t)c->size * sizeof *intra);
    int *inter = malloc((size_t)c->size * sizeof *inter);
    int nintra = 0, ninter = 0;
    const int pkg0 = c->pkg_of[0];
    if (!intra || !inter)
        cal_die(c, "out of memory");
    for (int r = 1; r < c->size; r++) {
        if (c->npkg == 1 || pkg0 < 0 || c->pkg_of[r] == pkg0)
            intra[nintra++] = r;
        else if (c->pkg_of[r] >= 0)
            inter[ninter++] = r;
    }
    if (c->npkg > 1 && pkg0 < 0)
        cal_say(c, "warning: rank 0 is not bound within one package: the intra curve may mix "
                   "packages (bind the ranks, e.g. --bind-to core)");
    cal_phase(c, "contention gamma_c, c = 1..%d, readers on rank 0's package",
              c->oversub ? 1 : nintra);
    double l1 = 0;
    cal_curve(c, t, intra, nintra, m->alpha, &l1, &m->gamma_intra, "intra");

    if (c->npkg == 1) {
        cal_phase(c, "contention across packages: one package here, gamma.inter keeps the "
                     "built-in defaults");
    } else if (ninter == 0) {
        cal_phase(c, "contention across packages: no rank bound to another package than rank "
                     "0's, gamma.inter keeps the built-in defaults");
    } else {
        cal_phase(c, "contention across packages gamma_c, c = 1..%d", c->oversub ? 1 : ninter);
        cal_curve(c, t, inter, ninter, m->alpha, &l1, &m->gamma_inter, "inter");
    }
    free(intra);
    free(inter);
}

/* ---------------------------------------------------------------------- */
/* 3. Memory                                                               */

/* Called through a volatile pointer so that the compiler cannot inline
 * or drop the copies: the COPY step calls memmove with a run-time length. */
static void *(*volatile cal_memmove)(void *, const void *, size_t) = memmove;

static void cal_memory(cal_t *c, kcoll_machine_t *m)
{
    cal_phase(c, "memory: copy_alpha, copy_beta (off-cache), package bandwidth");
    if (c->rank == 0) {
        const int reps = c->e->copy_reps, batch = 1000;
        double *ts = malloc((size_t)reps * sizeof *ts);
        static char a[64], b[64];
        if (!ts)
            cal_die(c, "out of memory");
        for (int r = -5; r < reps; r++) {
            double s = cal_now();
            for (int i = 0; i < batch; i++)
                cal_memmove(a + (i & 7), b, 1);
            if (r >= 0)
                ts[r] = (cal_now() - s) / batch;
        }
        double alpha = cal_median(ts, reps);
        const size_t len = cal_round_up(2 * c->llc, CAL_COPY_CHUNK);
        const size_t nslots = len / CAL_COPY_CHUNK;
        char *src = cal_map(c, len, 0), *dst = cal_map(c, len, 0);
        for (int r = -2; r < reps; r++) {
            size_t i = (size_t)(r + 2) % nslots;
            /* the destination lags one slot behind: source and target of a
             * copy never share cache history */
            size_t j = (size_t)(r + 2 + (int)nslots - 1) % nslots;
            double s = cal_now();
            cal_memmove(dst + j * CAL_COPY_CHUNK, src + i * CAL_COPY_CHUNK, CAL_COPY_CHUNK);
            if (r >= 0)
                ts[r] = cal_now() - s;
        }
        double t = cal_median(ts, reps);
        munmap(src, len);
        munmap(dst, len);
        free(ts);
        cal_store(c, "copy_alpha", &m->copy_alpha, alpha);
        cal_store(c, "copy_beta", &m->copy_beta, (t - m->copy_alpha) / CAL_COPY_CHUNK);
        cal_say(c, "  copy_alpha %.4f us, copy_beta^-1 %.2f GB/s (4 MiB memmoves off-cache)",
                m->copy_alpha * 1e6, 1e-9 / m->copy_beta);
    }
    cal_sync(c);

    /* package_bw: all ranks of rank 0's package copy at once, if they fill it */
    int members = 0, mine = c->pkg_of[0] >= 0 && c->pkg_of[c->rank] == c->pkg_of[0];
    for (int r = 0; r < c->size; r++)
        members += c->pkg_of[0] >= 0 && c->pkg_of[r] == c->pkg_of[0];
    if (c->oversub || c->pkg_of[0] < 0 || c->pkg_cores0 <= 0 || members < c->pkg_cores0) {
        cal_say(c, "  package_bw: %s; keeping the default (%g)",
                c->oversub ? "oversubscribed"
                           : "the ranks do not occupy every core of rank 0's package",
                m->package_bw);
        return;
    }
    MPI_Comm sub;
    PMPI_Comm_split(c->world, mine ? 0 : MPI_UNDEFINED, c->rank, &sub);
    double bw = 0;
    if (mine) {
        const int reps = c->e->bw_reps, per = 4;
        const size_t len = cal_round_up(2 * c->llc, CAL_COPY_CHUNK);
        const size_t nslots = len / CAL_COPY_CHUNK;
        char *src = cal_map(c, len, 0), *dst = cal_map(c, len, 0);
        double *ts = malloc((size_t)reps * sizeof *ts), *tmax = malloc((size_t)reps * sizeof *ts);
        if (!ts || !tmax)
            cal_die(c, "out of memory");
        size_t k = 0;
        for (int r = -2; r < reps; r++) {
            PMPI_Barrier(sub);
            double s = cal_now();
            for (int i = 0; i < per; i++, k++)
                cal_memmove(dst + ((k + nslots - 1) % nslots) * CAL_COPY_CHUNK,
                            src + (k % nslots) * CAL_COPY_CHUNK, CAL_COPY_CHUNK);
            if (r >= 0)
                ts[r] = cal_now() - s;
        }
        /* the package delivered everybody's bytes by the time the last finished */
        PMPI_Reduce(ts, tmax, reps, MPI_DOUBLE, MPI_MAX, 0, sub);
        if (c->rank == 0)
            bw = (double)members * per * (double)CAL_COPY_CHUNK / cal_median(tmax, reps);
        munmap(src, len);
        munmap(dst, len);
        free(ts);
        free(tmax);
        PMPI_Comm_free(&sub);
    }
    cal_sync(c);
    if (c->rank == 0) {
        cal_store(c, "package_bw", &m->package_bw, bw);
        cal_say(c, "  package_bw %.2f GB/s (%d ranks copying at once, %.2f GB/s each)",
                m->package_bw * 1e-9, members, m->package_bw * 1e-9 / members);
    }
}

/* ---------------------------------------------------------------------- */
/* 4. Reductions                                                           */

/* A user's reduction function as MPI_Op_create receives it: a plain loop
 * compiled with the tool's flags, not kcoll's -O3 kernels. */
static void cal_user_dsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

/* What kcoll's PMPI layer puts between a REDUCE step and the user's
 * function (mpi/op.c): the function and datatype from the operation's
 * context, one call per chunk. */
typedef struct {
    MPI_User_function *fn;
    MPI_Datatype dt;
} cal_user_ctx_t;

static void cal_user_call(const void *in, void *inout, size_t n, const kcoll_op_t *op)
{
    cal_user_ctx_t u;
    memcpy(&u, op->ctx, sizeof u);
    int len = (int)n;
    u.fn((void *)(uintptr_t)in, inout, &len, &u.dt);
}

static void cal_reductions(cal_t *c, kcoll_machine_t *m)
{
    static const char *const names[KCOLL_NRCLASS] = {"int (int32 sum)", "float (sum)",
                                                     "double (sum)", "user (double sum)"};
    cal_phase(c, "reduction rates through kcoll_op_apply, 128 KiB chunks in cache");
    if (c->rank == 0) {
        const int reps = c->e->red_reps, batch = 16;
        double *ts = malloc((size_t)reps * sizeof *ts);
        char *in = aligned_alloc(64, CAL_RED_CHUNK), *acc = aligned_alloc(64, CAL_RED_CHUNK);
        if (!ts || !in || !acc)
            cal_die(c, "out of memory");
        for (int k = 0; k < KCOLL_NRCLASS; k++) {
            kcoll_op_t op;
            memset(&op, 0, sizeof op);
            op.kind = KCOLL_OP_SUM;
            /* small operands: sums stay finite and integral over every round */
            switch (k) {
            case KCOLL_RCLASS_INT:
                op.type = KCOLL_T_INT32;
                for (size_t i = 0; i < CAL_RED_CHUNK / 4; i++)
                    ((int32_t *)in)[i] = 1;
                break;
            case KCOLL_RCLASS_FLOAT:
                op.type = KCOLL_T_FLOAT;
                for (size_t i = 0; i < CAL_RED_CHUNK / 4; i++)
                    ((float *)in)[i] = 0.5f;
                break;
            default:
                op.type = KCOLL_T_DOUBLE;
                for (size_t i = 0; i < CAL_RED_CHUNK / 8; i++)
                    ((double *)in)[i] = 0.5;
                break;
            }
            op.esize = kcoll_type_size(op.type);
            if (k == KCOLL_RCLASS_USER) {
                cal_user_ctx_t u = {cal_user_dsum, MPI_DOUBLE};
                _Static_assert(sizeof u <= sizeof op.ctx, "the context fits");
                op.kind = KCOLL_OP_USER;
                op.type = KCOLL_T_OPAQUE;
                op.esize = sizeof(double);
                op.user = cal_user_call;
                memcpy(op.ctx, &u, sizeof u);
            }
            memset(acc, 0, CAL_RED_CHUNK);
            for (int r = -5; r < reps; r++) {
                double s = cal_now();
                for (int b = 0; b < batch; b++)
                    kcoll_op_apply(&op, in, acc, CAL_RED_CHUNK);
                if (r >= 0)
                    ts[r] = (cal_now() - s) / batch;
            }
            cal_store(c, names[k], &m->reduce_beta[k], cal_median(ts, reps) / CAL_RED_CHUNK);
            cal_say(c, "  %-18s %.2f GB/s", names[k], 1e-9 / m->reduce_beta[k]);
        }
        /* A chunk just read into scratch is in cache, the rank's own
         * contribution (its send buffer) is not: double sums of 128 KiB
         * whose `in` is the next slot of a region twice the last-level
         * cache (off-cache), `acc` in cache. stream_beta is what such an
         * operand costs per byte beyond the in-cache rate. */
        kcoll_op_t op = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_DOUBLE, .esize = sizeof(double)};
        const size_t len = cal_round_up(2 * c->llc, CAL_RED_CHUNK), slots = len / CAL_RED_CHUNK;
        char *region = cal_map(c, len, 0);
        memset(acc, 0, CAL_RED_CHUNK);
        for (size_t i = 0; i < len / sizeof(double); i++)
            ((double *)region)[i] = 0.5;
        size_t slot = 0;
        for (int r = -5; r < reps; r++) {
            double s = cal_now();
            for (int b = 0; b < batch; b++)
                kcoll_op_apply(&op, region + (slot++ % slots) * CAL_RED_CHUNK, acc, CAL_RED_CHUNK);
            if (r >= 0)
                ts[r] = (cal_now() - s) / batch;
        }
        const double cold = cal_median(ts, reps) / CAL_RED_CHUNK;
        cal_store(c, "stream_beta", &m->stream_beta, cold - m->reduce_beta[KCOLL_RCLASS_DOUBLE]);
        cal_say(c, "  double, one operand off-cache %.2f GB/s: %.2f GB/s for the operand's stream",
                1e-9 / cold, 1e-9 / m->stream_beta);
        munmap(region, len);
        free(in);
        free(acc);
        free(ts);
    }
    cal_sync(c);
}

/* ---------------------------------------------------------------------- */
/* 5. Flag latency and executor step                                       */

/* Shared memory `name` of len bytes, mapped: created (exclusively, and
 * remembered in cal_shm_name for the clean-up) or opened. NULL with *err
 * = errno on failure. */
static void *cal_shm_map(const char *name, int create, size_t len, int *err)
{
    void *p = NULL;
    int fd = shm_open(name, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
    if (fd >= 0 && create)
        snprintf(cal_shm_name, sizeof cal_shm_name, "%s", name);
    if (fd < 0 || (create && ftruncate(fd, (off_t)len) != 0) ||
        (p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        *err = errno;
        p = NULL;
    }
    if (fd >= 0)
        close(fd);
    return p;
}

typedef struct {
    _Alignas(KCOLL_CACHELINE) _Atomic uint64_t ping; /* written by rank 0 */
    _Alignas(KCOLL_CACHELINE) _Atomic uint64_t pong; /* written by rank 1 */
} cal_pingpong_t;

static double cal_flag(cal_t *c)
{
    /* MAP_SHARED | MAP_ANONYMOUS memory is not shared between MPI ranks
     * (they are not forked from one another): a named segment, unlinked
     * as soon as both have it mapped, so nothing stays in /dev/shm. */
    const size_t len = 4096;
    char name[64];
    int ok = 1, err = 0;
    cal_pingpong_t *pp = NULL;
    snprintf(name, sizeof name, "/kcoll-cal-%d", (int)c->pids[0]);
    if (c->rank == 0) {
        pp = cal_shm_map(name, 1, len, &err);
        ok = pp != NULL;
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 0, c->world);
    if (!ok) {
        if (c->rank == 0) {
            if (cal_shm_name[0])
                shm_unlink(cal_shm_name);
            cal_shm_name[0] = '\0';
            cal_say(c, "warning: shared memory %s: %s; flag keeps the default", name,
                    strerror(err));
        }
        return 0;
    }
    if (c->rank == 1) {
        pp = cal_shm_map(name, 0, len, &err);
        ok = pp != NULL;
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 1, c->world);
    PMPI_Bcast(&err, 1, MPI_INT, 1, c->world);
    if (c->rank == 0) {
        shm_unlink(name);
        cal_shm_name[0] = '\0';
    }
    if (!ok) {
        if (pp)
            munmap(pp, len);
        cal_say(c, "warning: rank 1 cannot map %s: %s; flag keeps the default", name,
                strerror(err));
        return 0;
    }

    /* Oversubscribed, the partner may share our CPU: yield while waiting,
     * and do few round trips (the number means little then anyway). */
    const int yield = c->oversub;
    const int batches = yield ? 2 : c->e->flag_batches, rt = yield ? 100 : c->e->flag_rt;
    double half = 0;
    if (c->rank == 0) {
        double *ts = malloc((size_t)batches * sizeof *ts);
        uint64_t v = 0;
        if (!ts)
            cal_die(c, "out of memory");
        for (int b = -1; b < batches; b++) {
            double s = cal_now();
            for (int i = 0; i < rt; i++) {
                /* release/acquire as kcoll's SIGNAL and WAIT steps */
                atomic_store_explicit(&pp->ping, ++v, memory_order_release);
                while (atomic_load_explicit(&pp->pong, memory_order_acquire) != v)
                    if (yield)
                        sched_yield();
            }
            if (b >= 0)
                ts[b] = (cal_now() - s) / (2.0 * rt);
        }
        half = cal_median(ts, batches);
        free(ts);
    } else if (c->rank == 1) {
        const uint64_t total = (uint64_t)(batches + 1) * (uint64_t)rt;
        for (uint64_t v = 1; v <= total; v++) {
            while (atomic_load_explicit(&pp->ping, memory_order_acquire) != v)
                if (yield)
                    sched_yield();
            atomic_store_explicit(&pp->pong, v, memory_order_release);
        }
    }
    if (pp)
        munmap(pp, len);
    cal_sync(c);
    return half;
}

/* kcoll's executor over synchronization steps on a private one-rank team:
 * seconds per step. */
static double cal_step(const cal_t *c)
{
    const size_t len = kcoll_ctl_seg_len(1), alen = cal_round_up(len, KCOLL_CACHELINE);
    void *seg = aligned_alloc(KCOLL_CACHELINE, alen);
    const int reps = c->e->step_reps;
    double *ts = malloc((size_t)reps * sizeof *ts);
    if (!seg || !ts)
        cal_die(c, "out of memory");
    memset(seg, 0, alen);
    kcoll_ctl_seg_init(seg, 1);
    kcoll_ctl_t ctl;
    if (kcoll_ctl_attach(&ctl, seg, len, 1, 0) != KCOLL_OK || kcoll_ctl_load_pids(&ctl) != KCOLL_OK)
        cal_die(c, "cannot attach a private control segment");
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    for (uint32_t v = 1; v <= CAL_STEP_TRIPLES; v++) {
        kcoll_sched_expose(&s, KCOLL_BUF_RECV);
        kcoll_sched_signal(&s, KCOLL_FLAG_DATA, v);
        kcoll_sched_wait(&s, 0, KCOLL_FLAG_DATA, v);
    }
    if (s.err != KCOLL_OK)
        cal_die(c, "building the step schedule: %s", kcoll_status_str(s.err));
    static char buf[64];
    void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
    size_t lens[KCOLL_NBUF] = {0, sizeof buf, 0};
    uint64_t seq = 0;
    for (int r = -2; r < reps; r++) {
        kcoll_exec_t x;
        kcoll_exec_start(&x, &ctl, &kcoll_engine_cma, &s, bufs, lens, ++seq);
        double t = cal_now();
        /* every WAIT is already satisfied: one progress call runs it all */
        kcoll_status_t st = kcoll_exec_progress(&x);
        t = cal_now() - t;
        if (st != KCOLL_OK)
            cal_die(c, "executor: %s: %s", kcoll_status_str(st), x.errmsg);
        if (r >= 0)
            ts[r] = t / s.n;
    }
    double step = cal_median(ts, reps);
    kcoll_sched_free(&s);
    kcoll_ctl_fini(&ctl);
    free(seg);
    free(ts);
    return step;
}

static void cal_sync_terms(cal_t *c, kcoll_machine_t *m)
{
    cal_phase(c, "flag latency (shared-memory ping-pong, ranks 0 and 1) and executor step");
    double flag = cal_flag(c);
    double step = 0;
    if (c->rank == 0)
        step = cal_step(c);
    cal_sync(c);
    if (c->rank == 0) {
        if (flag > 0)
            cal_store(c, "flag", &m->flag, flag);
        cal_store(c, "step", &m->step, step);
        cal_say(c, "  flag %.4f us (half round trip)%s, step %.4f us (executor, sync steps)",
                m->flag * 1e6, c->oversub ? " [oversubscribed: unreliable]" : "",
                m->step * 1e6);
    }
}

/* ---------------------------------------------------------------------- */
/* 7. The host MPI                                                         */

enum {
    H_BCAST,
    H_SCATTER,
    H_GATHER,
    H_ALLGATHER,
    H_ALLTOALL,
    H_BARRIER,
    H_REDUCE,
    H_ALLREDUCE,
    H_RSB,
    H_SCATTERV, /* the v-variants with uniform counts: not every MPI runs */
    H_GATHERV,  /* them like their fixed-count forms (MPICH's Allgatherv */
    H_ALLGATHERV, /* is ~1.4x slower than its Allgather at 2 ranks) */
    H_ALLTOALLV,
    H_RS,
    H_N
};

static const struct {
    const char *name;
    int coll; /* kcoll_coll_t */
} cal_hcolls[H_N] = {
    {"MPI_Bcast", KCOLL_COLL_BCAST},
    {"MPI_Scatter", KCOLL_COLL_SCATTER},
    {"MPI_Gather", KCOLL_COLL_GATHER},
    {"MPI_Allgather", KCOLL_COLL_ALLGATHER},
    {"MPI_Alltoall", KCOLL_COLL_ALLTOALL},
    {"MPI_Barrier", KCOLL_COLL_BARRIER},
    {"MPI_Reduce", KCOLL_COLL_REDUCE},
    {"MPI_Allreduce", KCOLL_COLL_ALLREDUCE},
    {"MPI_Reduce_scatter_block", KCOLL_COLL_REDUCE_SCATTER_BLOCK},
    {"MPI_Scatterv", KCOLL_COLL_SCATTERV},
    {"MPI_Gatherv", KCOLL_COLL_GATHERV},
    {"MPI_Allgatherv", KCOLL_COLL_ALLGATHERV},
    {"MPI_Alltoallv", KCOLL_COLL_ALLTOALLV},
    {"MPI_Reduce_scatter", KCOLL_COLL_REDUCE_SCATTER},
};

/* Send and receive bytes one rank needs for a call of n bytes at q
 * processes (every rank gets the root's, for simplicity). */
static size_t cal_host_need(int h, size_t n, int q)
{
    const size_t qn = (size_t)q * n;
    switch (h) {
    case H_BCAST:
        return n;
    case H_SCATTER:
    case H_GATHER:
    case H_ALLGATHER:
    case H_RSB:
    case H_SCATTERV:
    case H_GATHERV:
    case H_ALLGATHERV:
    case H_RS:
        return qn + n;
    case H_ALLTOALL:
    case H_ALLTOALLV:
        return 2 * qn;
    case H_BARRIER:
        return 0;
    default: /* Reduce, Allreduce: one vector in, one out */
        return 2 * n;
    }
}

/* One call of h, through kcoll (MPI_*, k != 0: the preloaded libkcoll's)
 * or the host MPI (PMPI_*); cs and ds are q uniform counts and
 * displacements of the v-variants' elements (bytes, doubles for
 * Reduce_scatter), filled by cal_time before it times the size. */
#define CAL_F(f) (k ? MPI_##f : PMPI_##f)
static void cal_call(int h, int k, char *buf, size_t n, int q, const int *cs, const int *ds,
                     MPI_Comm comm)
{
    const int cnt = (int)n, dcnt = (int)(n / sizeof(double));
    char *big = buf, *small = buf + (size_t)q * n; /* the blocked side, the single block */
    switch (h) {
    case H_SCATTERV:
        CAL_F(Scatterv)(big, cs, ds, MPI_BYTE, small, cnt, MPI_BYTE, 0, comm);
        break;
    case H_GATHERV:
        CAL_F(Gatherv)(small, cnt, MPI_BYTE, big, cs, ds, MPI_BYTE, 0, comm);
        break;
    case H_ALLGATHERV:
        CAL_F(Allgatherv)(small, cnt, MPI_BYTE, big, cs, ds, MPI_BYTE, comm);
        break;
    case H_ALLTOALLV:
        CAL_F(Alltoallv)(buf, cs, ds, MPI_BYTE, buf + (size_t)q * n, cs, ds, MPI_BYTE, comm);
        break;
    case H_RS:
        CAL_F(Reduce_scatter)(big, small, cs, MPI_DOUBLE, MPI_SUM, comm);
        break;
    case H_BCAST:
        CAL_F(Bcast)(buf, cnt, MPI_BYTE, 0, comm);
        break;
    case H_SCATTER:
        CAL_F(Scatter)(big, cnt, MPI_BYTE, small, cnt, MPI_BYTE, 0, comm);
        break;
    case H_GATHER:
        CAL_F(Gather)(small, cnt, MPI_BYTE, big, cnt, MPI_BYTE, 0, comm);
        break;
    case H_ALLGATHER:
        CAL_F(Allgather)(small, cnt, MPI_BYTE, big, cnt, MPI_BYTE, comm);
        break;
    case H_ALLTOALL:
        CAL_F(Alltoall)(buf, cnt, MPI_BYTE, buf + (size_t)q * n, cnt, MPI_BYTE, comm);
        break;
    case H_BARRIER:
        CAL_F(Barrier)(comm);
        break;
    case H_REDUCE:
        CAL_F(Reduce)(buf, buf + n, dcnt, MPI_DOUBLE, MPI_SUM, 0, comm);
        break;
    case H_ALLREDUCE:
        CAL_F(Allreduce)(buf, buf + n, dcnt, MPI_DOUBLE, MPI_SUM, comm);
        break;
    default:
        CAL_F(Reduce_scatter_block)(big, small, dcnt, MPI_DOUBLE, MPI_SUM, comm);
        break;
    }
}
#undef CAL_F

static void cal_host_add(kcoll_machine_t *m, int coll, int q, double bytes, double t)
{
    if (coll < 0 || m->nhost[coll] >= KCOLL_HOST_POINTS)
        return;
    m->host[coll][m->nhost[coll]++] = (kcoll_hostpt_t){q, bytes, t};
}

/* What timed collective calls take their data from, and their times. */
typedef struct {
    char *region; /* the rotation: buffers taken in turn, off-cache */
    size_t len, cursor;
    double *ts, *tmax;
    int *cs, *ds; /* the v-variants' uniform counts and displacements */
} cal_calls_t;

/* The rotation region: twice the LLC, or two of the largest host call,
 * within a memory budget per rank. A call larger than half the region
 * reuses offset 0, still off-cache when it exceeds the LLC. */
static void cal_calls_open(const cal_t *c, int q, cal_calls_t *k)
{
    size_t need = 0;
    for (int h = 0; h < H_N; h++)
        for (int si = 0; si < CAL_NSIZES; si++) {
            size_t b = cal_host_need(h, cal_host_sizes[si], q);
            need = b > need ? b : need;
        }
    long pages = sysconf(_SC_PHYS_PAGES);
    size_t phys = pages > 0 ? (size_t)pages * c->page : (size_t)8 << 30;
    size_t budget = phys / (4 * (size_t)c->size);
    budget = budget > ((size_t)2 << 30) ? (size_t)2 << 30 : budget;
    size_t len = 2 * need > 2 * c->llc ? 2 * need : 2 * c->llc;
    len = len > budget ? (budget > 2 * c->llc ? budget : 2 * c->llc) : len;
    k->len = cal_round_up(len, c->page);
    k->region = cal_map(c, k->len, 0);
    k->cursor = 0;
    k->ts = malloc((size_t)c->e->host_max * sizeof *k->ts);
    k->tmax = malloc((size_t)c->e->host_max * sizeof *k->tmax);
    k->cs = malloc(2 * (size_t)q * sizeof *k->cs);
    if (!k->ts || !k->tmax || !k->cs)
        cal_die(c, "out of memory");
    k->ds = k->cs + q;
}

static void cal_calls_close(cal_calls_t *k)
{
    munmap(k->region, k->len);
    free(k->ts);
    free(k->tmax);
    free(k->cs);
}

/* The next b bytes of the rotation region, from its start again when
 * they do not fit before its end. */
static char *cal_next_buf(cal_calls_t *k, size_t b)
{
    if (k->cursor + b > k->len)
        k->cursor = 0;
    k->cursor += b;
    return k->region + k->cursor - b;
}

/* The time of a call of h with n bytes on comm (q ranks), through kcoll
 * (via_kcoll) or the host MPI, as kcoll-bench times it: the next buffer
 * of the rotation each time, a barrier before each call, the maximum over
 * the ranks, the median over repetitions (as many as take about
 * host_target seconds). Rank 0 gets the time, the others 0; every rank
 * gets -1 when the call needs more memory than the region holds. */
static double cal_time(const cal_t *c, int h, size_t n, int q, int via_kcoll, cal_calls_t *k,
                       MPI_Comm comm)
{
    const size_t b = cal_round_up(cal_host_need(h, n, q), 4096);
    if (b > k->len)
        return -1;
    const int vc = (int)(h == H_RS ? n / sizeof(double) : n);
    for (int i = 0; i < q; i++) { /* the v-variants' uniform blocks */
        k->cs[i] = vc;
        k->ds[i] = i * vc;
    }
    for (int w = 0; w < 2; w++) /* warm-up: connections, eager buffers */
        cal_call(h, via_kcoll, cal_next_buf(k, b), n, q, k->cs, k->ds, comm);
    /* rank 0 sizes the repetitions from three timed calls */
    const cal_effort_t *e = c->e;
    int reps = 0;
    double est = cal_now();
    for (int w = 0; w < 3; w++) {
        PMPI_Barrier(comm);
        cal_call(h, via_kcoll, cal_next_buf(k, b), n, q, k->cs, k->ds, comm);
    }
    est = (cal_now() - est) / 3;
    if (c->rank == 0) {
        double want = e->host_target / (est > 1e-7 ? est : 1e-7);
        reps = want < e->host_min ? e->host_min : want > e->host_max ? e->host_max : (int)want;
    }
    PMPI_Bcast(&reps, 1, MPI_INT, 0, comm);
    for (int i = 0; i < reps; i++) {
        char *p = cal_next_buf(k, b);
        PMPI_Barrier(comm);
        /* the monotonic clock: MPI_Wtime's resolution is the
         * implementation's choice */
        double s = cal_now();
        cal_call(h, via_kcoll, p, n, q, k->cs, k->ds, comm);
        k->ts[i] = cal_now() - s;
    }
    /* a collective is done when its last rank is */
    PMPI_Reduce(k->ts, k->tmax, reps, MPI_DOUBLE, MPI_MAX, 0, comm);
    return c->rank == 0 ? cal_median(k->tmax, reps) : 0;
}

static void cal_host(cal_t *c, int q, kcoll_machine_t *m)
{
    MPI_Comm comm;
    const int member = c->rank < q;
    PMPI_Comm_split(c->world, member ? 0 : MPI_UNDEFINED, c->rank, &comm);
    if (member) {
        cal_calls_t k;
        cal_calls_open(c, q, &k);
        for (int h = 0; h < H_N; h++) {
            char line[512];
            int o = snprintf(line, sizeof line, "  p = %d %-25s", q, cal_hcolls[h].name);
            for (int si = 0; si < (h == H_BARRIER ? 1 : CAL_NSIZES); si++) {
                const size_t n = h == H_BARRIER ? 0 : cal_host_sizes[si];
                const double t = cal_time(c, h, n, q, 0, &k, comm);
                if (t < 0) {
                    cal_say(c, "  p = %d %s %zu bytes: needs %zu MiB per rank, skipped", q,
                            cal_hcolls[h].name, n, cal_host_need(h, n, q) >> 20);
                    continue;
                }
                if (c->rank == 0) {
                    cal_host_add(m, cal_hcolls[h].coll, q, (double)n, t);
                    if (o > 0 && (size_t)o < sizeof line)
                        o += snprintf(line + o, sizeof line - (size_t)o, " %.1f", t * 1e6);
                }
            }
            cal_say(c, "%s us", line);
        }
        cal_calls_close(&k);
        PMPI_Comm_free(&comm);
    }
    cal_sync(c);
}

/* ---------------------------------------------------------------------- */
/* 6. kcoll's own fixed cost per call (libkcoll preloaded)                */

/* The calls timed: a Barrier, and calls that move data with the simplest
 * algorithm of their collective (one copy per rank at 2 ranks). */
static const struct {
    int h;
    const char *param, *algo;
} cal_krefs[] = {
    {H_BARRIER, "KCOLL_BARRIER_ALGO", "dissemination"},
    {H_BCAST, "KCOLL_BCAST_ALGO", "direct_read"},
    {H_SCATTER, "KCOLL_SCATTER_ALGO", "parallel_read"},
    {H_GATHER, "KCOLL_GATHER_ALGO", "parallel_write"},
    {H_ALLGATHER, "KCOLL_ALLGATHER_ALGO", "ring_neighbor"},
    {H_ALLTOALL, "KCOLL_ALLTOALL_ALGO", "pairwise"},
};
#define CAL_NKREFS ((int)(sizeof cal_krefs / sizeof cal_krefs[0]))
static const size_t cal_ksizes[] = {(size_t)1 << 10, (size_t)4 << 10};
#define CAL_NKSIZES ((int)(sizeof cal_ksizes / sizeof cal_ksizes[0]))

/* The model's price of reference call i at n bytes, 2 ranks, with the
 * tuning in force (cal_kcoll sets it); -1 when the algorithm is unknown. */
static double cal_kcoll_price(int i, size_t n)
{
    const kcoll_pcall_t pc = {.coll = (kcoll_coll_t)cal_hcolls[cal_krefs[i].h].coll, .p = 2,
                              .bytes = n};
    kcoll_choice_t ch;
    double t;
    return kcoll_model_predict(&pc, cal_krefs[i].algo, 0, &ch, &t) ? -1 : t;
}

/* libkcoll's public functions the phases below use (it is preloaded, so
 * its MPI_* functions are kcoll's): 0, or -1 when it is not loaded. */
typedef struct {
    int (*pset)(const char *, const char *);
    const char *(*pget)(const char *);
    int (*sget)(const char *, const char *, uint64_t *, uint64_t *);
} cal_api_t;
static int cal_api(cal_api_t *a)
{
    *(void **)&a->pset = dlsym(RTLD_DEFAULT, "kcoll_param_set");
    *(void **)&a->pget = dlsym(RTLD_DEFAULT, "kcoll_param_get");
    *(void **)&a->sget = dlsym(RTLD_DEFAULT, "kcoll_stats_get");
    return a->pset && a->pget && a->sget ? 0 : -1;
}

/* A phase timing kcoll's own calls between ranks 0 and 1, on a
 * communicator of their own (MPI_Comm_split, not PMPI_: kcoll gives the
 * pair a team, on the engine KCOLL_ENGINE names when engine is not NULL),
 * with KCOLL_STATS on and KCOLL_MIN_BYTES 0 (a size from the environment
 * would send small calls to the host); the user's settings are put back
 * at the close (KCOLL_STATS=1 prints its table at MPI_Finalize). */
typedef struct {
    cal_api_t api;
    MPI_Comm comm;
    int member;
    char stats[32], minb[32];
} cal_pair_t;

/* 0 with the pair open, or -1 (libkcoll not preloaded: says absent). */
static int cal_pair_open(cal_t *c, cal_pair_t *pr, const char *engine, const char *absent,
                         const char *what)
{
    if (cal_api(&pr->api)) {
        cal_phase(c, "%s", absent);
        return -1;
    }
    cal_phase(c, "%s", what);
    if (c->oversub)
        cal_say(c, "  oversubscribed: these times are the scheduler's");
    const char *v;
    char saved[32];
    snprintf(pr->stats, sizeof pr->stats, "%s", (v = pr->api.pget("KCOLL_STATS")) ? v : "0");
    snprintf(pr->minb, sizeof pr->minb, "%s", (v = pr->api.pget("KCOLL_MIN_BYTES")) ? v : "auto");
    snprintf(saved, sizeof saved, "%s", (v = pr->api.pget("KCOLL_ENGINE")) ? v : "auto");
    pr->member = c->rank < 2;
    if (engine)
        pr->api.pset("KCOLL_ENGINE", engine); /* read when the pair's team is set up */
    MPI_Comm_split(c->world, pr->member ? 0 : MPI_UNDEFINED, c->rank, &pr->comm);
    if (engine)
        pr->api.pset("KCOLL_ENGINE", saved);
    if (pr->member) {
        pr->api.pset("KCOLL_STATS", "1");
        pr->api.pset("KCOLL_MIN_BYTES", "0");
    }
    return 0;
}

static void cal_pair_close(cal_pair_t *pr)
{
    if (!pr->member)
        return;
    pr->api.pset("KCOLL_STATS", pr->stats);
    pr->api.pset("KCOLL_MIN_BYTES", pr->minb);
    MPI_Comm_free(&pr->comm);
}

/* call and call_data: the time of kcoll's own calls between ranks 0 and
 * 1, timed as the host MPI's are (cal_time), minus the model's price of
 * their schedules on the machine measured so far. call is the Barrier's
 * difference; call_data what calls that move data (1 and 4 KiB) add to
 * it, the median over them. The difference is what the steps do not
 * show: the first touches of kcoll's state and of the buffers, out of
 * cache after the barrier and the rotation. Needs libkcoll preloaded
 * (its MPI_* functions are then kcoll's); otherwise the defaults stay. */
static void cal_kcoll(cal_t *c, kcoll_machine_t *m)
{
    cal_pair_t pr;
    if (cal_pair_open(c, &pr, NULL,
                      "kcoll's fixed cost per call: libkcoll is not preloaded (LD_PRELOAD), "
                      "call_us and call_data_us keep the defaults",
                      "kcoll's fixed cost per call: its own calls at 2 ranks against the "
                      "model's price of their schedules"))
        return;
    const cal_api_t api = pr.api;
    MPI_Comm comm = pr.comm;
    const int member = pr.member;
    /* the model this tool carries prices with what was measured so far,
     * without the terms this phase measures */
    static kcoll_tuning_t priced;
    priced.m = *m;
    priced.m.call = priced.m.call_data = 0;
    kcoll_tuning_set(&priced);
    double resid[CAL_NKREFS * CAL_NKSIZES], barrier = 0;
    int nres = 0, have_barrier = 0;
    if (member) {
        cal_calls_t k;
        cal_calls_open(c, 2, &k);
        for (int i = 0; i < CAL_NKREFS; i++) {
            const int h = cal_krefs[i].h;
            const char *name = cal_hcolls[h].name;
            char path[64];
            snprintf(path, sizeof path, "kcoll:%s", cal_krefs[i].algo);
            if (api.pset(cal_krefs[i].param, cal_krefs[i].algo) != 0) {
                cal_say(c, "  %s: kcoll does not know %s=%s, skipped", name, cal_krefs[i].param,
                        cal_krefs[i].algo);
                continue;
            }
            for (int si = 0; si < (h == H_BARRIER ? 1 : CAL_NKSIZES); si++) {
                const size_t n = h == H_BARRIER ? 0 : cal_ksizes[si];
                uint64_t before = 0, after = 0, bytes;
                api.sget(name, path, &before, &bytes);
                const double t = cal_time(c, h, n, 2, 1, &k, comm);
                if (c->rank != 0 || t < 0)
                    continue;
                const double price = cal_kcoll_price(i, n);
                if (api.sget(name, path, &after, &bytes) != 0 || after == before || price < 0) {
                    cal_say(c, "  %s %zu bytes: kcoll did not run it as %s (KCOLL_STATS), "
                               "skipped", name, n, path);
                    continue;
                }
                cal_say(c, "  %-14s %-15s %5zu bytes: %.2f us, the model %.2f us", name,
                        cal_krefs[i].algo, n, t * 1e6, price * 1e6);
                if (h == H_BARRIER) {
                    barrier = t - price;
                    have_barrier = 1;
                } else {
                    resid[nres++] = t - price;
                }
            }
            api.pset(cal_krefs[i].param, "auto");
        }
        cal_calls_close(&k);
    }
    cal_pair_close(&pr);
    cal_sync(c);
    if (c->rank != 0)
        return;
    if (!have_barrier && nres == 0) {
        cal_say(c, "  warning: no call measured; call_us and call_data_us keep the defaults");
        return;
    }
    /* a difference below 0 is the model's error, not a negative cost */
    if (have_barrier)
        m->call = barrier > 0 ? barrier : 0;
    if (nres > 0) {
        const double d = cal_median(resid, nres) - m->call;
        m->call_data = d > 0 ? d : 0;
    }
    cal_say(c, "  call %.3f us per call, call_data %.3f us more per call that moves data",
            m->call * 1e6, m->call_data * 1e6);
}

/* ---------------------------------------------------------------------- */
/* 6b. The two-copy engine (libkcoll preloaded)                            */

static const size_t cal_shm_sizes[] = {(size_t)4 << 10, (size_t)64 << 10, (size_t)256 << 10,
                                       (size_t)1 << 20};
#define CAL_NSHM ((int)(sizeof cal_shm_sizes / sizeof cal_shm_sizes[0]))

/* shm_alpha and shm_beta: kcoll's Bcast direct_read between ranks 0 and 1
 * on a communicator made with KCOLL_ENGINE=shm (one transfer from an idle
 * owner), timed as the host's calls are, minus the model's price of its
 * schedule with the engine's own terms set to 0. What is left is
 * shm_alpha + (n + min(n, cell)) shm_beta (model/cost.c: the owner idle
 * shows the pipeline's fill); the line through the sizes, weighted by
 * 1 / t^2 (relative errors), gives both. Without them a calibrated file
 * would price cma as measured and shm as built in, and the per-call
 * choice between them (docs/engines.md) would compare the two. Needs
 * libkcoll preloaded; otherwise the defaults stay. */
static void cal_shm(cal_t *c, kcoll_machine_t *m)
{
    cal_pair_t pr;
    if (cal_pair_open(c, &pr, "shm",
                      "the two-copy engine: libkcoll is not preloaded, shm_alpha_us and "
                      "shm_GBps keep the defaults",
                      "the two-copy engine: kcoll's Bcast direct_read at 2 ranks on it against "
                      "the model's price without its terms"))
        return;
    const cal_api_t api = pr.api;
    const char *v = api.pget("KCOLL_BCAST_ALGO");
    char algo[64];
    snprintf(algo, sizeof algo, "%s", v ? v : "auto");
    static kcoll_tuning_t priced;
    priced.m = *m;
    priced.m.shm_alpha = priced.m.shm_beta = 0;
    kcoll_tuning_set(&priced);
    double x[CAL_NSHM], y[CAL_NSHM], w[CAL_NSHM];
    int n = 0;
    if (pr.member) {
        cal_calls_t k;
        cal_calls_open(c, 2, &k);
        api.pset("KCOLL_BCAST_ALGO", "direct_read");
        for (int i = 0; i < CAL_NSHM; i++) {
            const size_t b = cal_shm_sizes[i];
            uint64_t before = 0, after = 0, bytes;
            /* the root counts the call (its reader, the bytes on shm) */
            api.sget("MPI_Bcast", "kcoll:direct_read", &before, &bytes);
            const double t = cal_time(c, H_BCAST, b, 2, 1, &k, pr.comm);
            if (c->rank != 0 || t <= 0)
                continue;
            const kcoll_pcall_t pc = {.coll = KCOLL_COLL_BCAST, .p = 2, .bytes = b,
                                      .engine = KCOLL_ENGINE_SHM};
            kcoll_choice_t ch;
            double base;
            if (api.sget("MPI_Bcast", "kcoll:direct_read", &after, &bytes) != 0 ||
                after == before || kcoll_model_predict(&pc, "direct_read", 0, &ch, &base)) {
                cal_say(c, "  %zu bytes: kcoll did not run it as direct_read (KCOLL_STATS), "
                           "skipped",
                        b);
                continue;
            }
            x[n] = (double)b + ((double)b < m->shm_cell ? (double)b : m->shm_cell);
            y[n] = t - base;
            w[n] = 1 / (t * t);
            cal_say(c, "  %7zu bytes: %.2f us, the model without the engine's terms %.2f us", b,
                    t * 1e6, base * 1e6);
            n++;
        }
        api.pset("KCOLL_BCAST_ALGO", algo);
        cal_calls_close(&k);
    }
    cal_pair_close(&pr);
    cal_sync(c);
    if (c->rank != 0)
        return;
    double a, b;
    if (cal_fit_line(x, y, w, n, &a, &b)) {
        cal_say(c, "  warning: too few points; shm_alpha_us and shm_GBps keep the defaults");
        return;
    }
    cal_store(c, "shm_alpha", &m->shm_alpha, a);
    cal_store(c, "shm_beta", &m->shm_beta, b);
    cal_say(c, "  shm_alpha %.2f us, shm %.2f GB/s", m->shm_alpha * 1e6, 1e-9 / m->shm_beta);
}

/* ---------------------------------------------------------------------- */
/* 8. Did the machine's speed hold?                                        */

/* The CMA probes of 1. again, after everything else: this VM's copy rate
 * drifts by up to 1.5x within minutes, and a calibration that caught a
 * slow state for some phases and not for others prices kcoll and the host
 * MPI at different speeds. Returns 1 (on every rank) when the rate at the
 * end differs from the rate at the start by more than CAL_DRIFT. */
static int cal_recheck(cal_t *c, const cal_target_t *t, const kcoll_machine_t *m)
{
    cal_phase(c, "CMA rate again: did the machine's speed hold?");
    double raw[CAL_NRAW];
    cal_cma_raw(c, t, raw);
    const double beta = cal_cma_beta(c, raw), r = beta / m->beta;
    const int drift = !(r <= CAL_DRIFT && r >= 1 / CAL_DRIFT);
    cal_say(c, "  beta^-1 %.2f GB/s at the end, %.2f GB/s at the start%s", 1e-9 / beta,
            1e-9 / m->beta, drift ? ": they differ" : "");
    return drift;
}

/* host_alpha, host_beta from the Bcast points at the smallest q. */
static void cal_host_fit(const cal_t *c, int q, kcoll_machine_t *m)
{
    double x[KCOLL_HOST_POINTS], y[KCOLL_HOST_POINTS], w[KCOLL_HOST_POINTS], a, b;
    int n = 0;
    const double lg = ceil(log2((double)q));
    for (int i = 0; i < m->nhost[KCOLL_COLL_BCAST]; i++) {
        const kcoll_hostpt_t *pt = &m->host[KCOLL_COLL_BCAST][i];
        if (pt->p != q || !(pt->t > 0))
            continue;
        x[n] = pt->bytes;
        y[n] = pt->t / lg;
        w[n] = 1.0 / (y[n] * y[n]);
        n++;
    }
    if (cal_fit_line(x, y, w, n, &a, &b) != 0) {
        cal_say(c, "warning: too few Bcast points to fit host_alpha and host_beta");
        return;
    }
    cal_store(c, "host_alpha", &m->host_alpha, a);
    cal_store(c, "host_beta", &m->host_beta, b);
    cal_say(c, "  host fit from MPI_Bcast at p = %d: host_alpha %.3f us, host_beta^-1 %.2f GB/s",
            q, m->host_alpha * 1e6, 1e-9 / m->host_beta);
}

/* ---------------------------------------------------------------------- */
/* Arguments, the source line, main                                        */

static void cal_usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np <cores> kcoll-calibrate [-o FILE] [--quick] [-p LIST]\n"
            "Measure this machine's cost-model parameters (CMA terms, contention, memory,\n"
            "reduction rates, synchronization, the host MPI's collectives) and write a\n"
            "tuning file for KCOLL_TUNING. Run one rank per core, without kcoll preloaded.\n"
            "  -o FILE      write the tuning file to FILE (default: stdout)\n"
            "  --quick      fewer repetitions (about a quarter of the time)\n"
            "  -p LIST      process counts to time the host MPI at, comma-separated,\n"
            "               each 2..<ranks running> (default: the running count)\n"
            "  -h, --help   print this help\n");
}

static int cal_icmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* -p LIST: sorted, distinct, each in 2..size. Returns the count or -1. */
static int cal_parse_plist(const char *s, int size, int *out, char *err, size_t errlen)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || (*end && *end != ',')) {
            snprintf(err, errlen, "-p %s: not a comma-separated list of numbers", s);
            return -1;
        }
        if (v < 2 || v > size) {
            snprintf(err, errlen, "-p: %ld: process counts must be 2..%d (the running "
                                  "count; start more ranks to measure more)", v, size);
            return -1;
        }
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= out[i] == (int)v;
        if (!dup) {
            if (n == CAL_MAX_Q) {
                snprintf(err, errlen, "-p: at most %d process counts (%d points each)",
                         CAL_MAX_Q, CAL_NSIZES);
                return -1;
            }
            out[n++] = (int)v;
        }
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        snprintf(err, errlen, "-p: empty list");
        return -1;
    }
    qsort(out, (size_t)n, sizeof *out, cal_icmp);
    return n;
}

/* "<date> on <host>, <p> processes, <cpu>, <MPI>": where the values came from. */
static void cal_source(const cal_t *c, char *out, size_t outlen)
{
    char date[32] = "?", host[64] = "?", cpu[96] = "unknown CPU", mpi[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M", &tm);
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        /* x86 "model name", POWER "cpu", Arm has neither in every kernel */
        if (strncmp(line, "model name", 10) && strncmp(line, "cpu\t", 4))
            continue;
        char *v = strchr(line, ':');
        if (!v)
            continue;
        v += 1 + strspn(v + 1, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(cpu, sizeof cpu, "%s", v);
        break;
    }
    if (f)
        fclose(f);
    /* the host MPI's name up to the first comma or line end: its points
     * are that library's */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(lib, &len) == MPI_SUCCESS && len > 0) {
        size_t o = 0;
        int blank = 0;
        for (int i = 0; i < len && lib[i] && lib[i] != '\n' && lib[i] != ','; i++) {
            if (lib[i] == ' ' || lib[i] == '\t') {
                blank = 1;
                continue;
            }
            if (blank && o && o + 1 < sizeof mpi - 1)
                mpi[o++] = ' ';
            blank = 0;
            if (o + 1 < sizeof mpi)
                mpi[o++] = lib[i];
        }
        mpi[o] = '\0';
    }
    snprintf(out, outlen, "kcoll-calibrate %s on %s, %d processes, %s%s%s", date, host, c->size,
             cpu, mpi[0] ? ", " : "", mpi);
}

int main(int argc, char **argv)
{
    cal_t c;
    memset(&c, 0, sizeof c);
    /* MPI_Init, not PMPI_: a preloaded libkcoll sets itself up (6. above
     * times its calls); every measurement of the host calls PMPI_* */
    MPI_Init(&argc, &argv);
    c.world = MPI_COMM_WORLD;
    PMPI_Comm_rank(c.world, &c.rank);
    PMPI_Comm_size(c.world, &c.size);
    c.t0 = cal_now();

    static const struct option longopts[] = {{"quick", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *out = NULL, *plist = NULL;
    int opt;
    opterr = c.rank == 0;
    while ((opt = getopt_long(argc, argv, "o:p:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            out = optarg;
            break;
        case 'p':
            plist = optarg;
            break;
        case 'q':
            c.quick = 1;
            break;
        case 'h':
            if (c.rank == 0)
                cal_usage(stdout);
            cal_quit(&c, 0, NULL);
        default:
            if (c.rank == 0)
                cal_usage(stderr);
            cal_quit(&c, 2, NULL);
        }
    }
    if (optind < argc)
        cal_quit(&c, 2, "unexpected argument '%s' (see --help)", argv[optind]);
    if (c.size < 2)
        cal_quit(&c, 2, "error: needs at least 2 processes (mpirun -np <cores>)");
    int qs[CAL_MAX_Q] = {c.size}, nq = 1;
    if (plist) {
        char err[160];
        nq = cal_parse_plist(plist, c.size, qs, err, sizeof err);
        if (nq < 0)
            cal_quit(&c, 2, "error: %s", err);
    }
    /* Fail before a minute of measuring, not after: can the file be written? */
    int write_err = 0;
    if (c.rank == 0 && out) {
        FILE *f = fopen(out, "a"); /* creates it if absent, truncates nothing */
        write_err = f ? 0 : errno;
        if (f)
            fclose(f);
    }
    PMPI_Bcast(&write_err, 1, MPI_INT, 0, c.world);
    if (write_err)
        cal_quit(&c, 1, "error: cannot write %s: %s", out, strerror(write_err));

    cal_setup(&c);
    c.e = c.quick || c.oversub ? &cal_effort_quick : &cal_effort_default;
    cal_say(&c, "%d processes on %d CPUs, %d package%s, page %zu bytes, last-level cache %zu MiB%s",
            c.size, c.ncpus, c.npkg, c.npkg > 1 ? "s" : "", c.page, c.llc >> 20,
            c.quick ? ", --quick" : "");
    if (c.oversub)
        cal_say(&c, "warning: oversubscribed: %d ranks on %d CPUs. Timings measure the "
                    "scheduler; contention is measured at c = 1 only and every value is "
                    "unreliable. Run one rank per core.", c.size, c.ncpus);

    kcoll_tuning_t *tun = calloc(1, sizeof *tun); /* large: host points */
    if (!tun)
        cal_die(&c, "out of memory");
    kcoll_machine_t *m = &tun->m;
    char qtext[64] = "";
    for (int i = 0, o = 0; i < nq && o < (int)sizeof qtext; i++)
        o += snprintf(qtext + o, sizeof qtext - (size_t)o, "%s%d", i ? "," : "", qs[i]);
    cal_target_t target;
    cal_target_open(&c, &target);
    for (int attempt = 1;; attempt++) {
        kcoll_machine_defaults(m);
        m->pkg_cores = c.npkg > 1 ? c.pkg_cores0 : 0;
        c.phase = 0;
        cal_cma(&c, &target, m);
        cal_exchange(&c, m);
        cal_gamma(&c, &target, m);
        cal_memory(&c, m);
        cal_reductions(&c, m);
        cal_sync_terms(&c, m);
        cal_kcoll(&c, m);
        cal_shm(&c, m);
        cal_phase(&c, "host MPI collectives (PMPI_*) at p = %s, 1 KiB..4 MiB, us per call", qtext);
        if (c.oversub)
            cal_say(&c, "  oversubscribed: these times are the scheduler's");
        for (int i = 0; i < nq; i++)
            cal_host(&c, qs[i], m);
        if (c.rank == 0)
            cal_host_fit(&c, qs[0], m);
        if (!cal_recheck(&c, &target, m))
            break;
        if (attempt == CAL_ATTEMPTS) {
            cal_say(&c, "warning: the machine's speed changed during each of %d attempts: the "
                        "file mixes speeds (kcoll against the host MPI may be mispriced); "
                        "calibrate again on a quieter machine",
                    CAL_ATTEMPTS);
            break;
        }
        cal_say(&c, "the machine's speed changed during the calibration: measuring again "
                    "(attempt %d of %d)",
                attempt + 1, CAL_ATTEMPTS);
    }
    cal_target_close(&target);

    cal_phase(&c, "writing %s", out ? out : "the tuning file to stdout");
    int rc = 0;
    if (c.rank == 0) {
        cal_source(&c, m->source, sizeof m->source);
        errno = 0;
        FILE *f = out ? fopen(out, "w") : stdout;
        if (!f || kcoll_tuning_write(f, tun) != 0 || (out ? fclose(f) : fflush(f)) != 0) {
            fprintf(stderr, "kcoll-calibrate: error: writing %s failed%s%s\n",
                    out ? out : "stdout", errno ? ": " : "", errno ? strerror(errno) : "");
            rc = 1;
        } else {
            cal_say(&c, "done in %.1f s: %s", cal_now() - c.t0, m->source);
        }
    }
    PMPI_Bcast(&rc, 1, MPI_INT, 0, c.world);
    free(tun);
    free(c.pkg_of);
    free(c.pids);
    MPI_Finalize();
    return rc;
}
