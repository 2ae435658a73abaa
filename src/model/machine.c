/* The model's machine parameters: built-in defaults, paper 003's Table IV
 * machines, the contention curve, and the process-wide tuning.
 *
 * The built-in defaults are kcoll-calibrate's measurements of one machine,
 * a 2-core AMD EPYC (Zen 4) KVM guest, Linux 6.18 (docs/model.md,
 * "Measured on this machine": the middle of eight runs for each term):
 * a current x86 server core. Two ranks cannot show contention, so the
 * curve keeps the shape of paper 003's Broadwell fit (Table IV); the host
 * MPI by its own measured times at 2 ranks (per MPI kcoll is built for;
 * scaled to other process counts by the textbook formulas of model/cost.c,
 * with the measured latency and rate of its broadcasts). A tuning file (KCOLL_TUNING,
 * docs/tuning.md), best one written by kcoll-calibrate on the machine the
 * job runs on, replaces them.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/params.h"
#include "model/machine.h"
#include "op/op.h"

#define US 1e-6
/* Contention across packages, where nothing was measured: this many times
 * the intra-package curve (see kcoll_machine_preset). */
#define KCOLL_INTER_FACTOR 3.0
#define GBPS(x) (1.0 / ((x) * 1e9)) /* seconds per byte at x GB/s */

/* The host MPI's own times at 2 ranks on that machine, per MPI this
 * library is built for (KCOLL_MPI_FLAVOR): the median of the 14
 * kcoll-calibrate runs of the last validation run (docs/model-validation.md),
 * us per call at 1, 4, 16, 64, 256 KiB, 1 and 4 MiB (Barrier: one call).
 * Without them the host is priced by textbook formulas, which miss how an
 * MPI really runs a collective (Open MPI's Reduce_scatter_block, a reduce
 * to a root and a scatter, is 4.7x slower at 1 MiB than the formula's
 * ring, so the model would hand it the calls kcoll runs 4.7x faster). */
typedef struct {
    kcoll_coll_t coll;
    double us[2][7]; /* Open MPI 4.1, MPICH 4.0 */
} kcoll_hostrow_t;
static const kcoll_hostrow_t kcoll_host_times[] = {
    {KCOLL_COLL_BCAST,
     {{1.385, 3.655, 5.989, 14.59, 46.22, 174.8, 701.3},
      {0.942, 2.434, 6.339, 14.83, 46.54, 176.4, 708.8}}},
    {KCOLL_COLL_SCATTER,
     {{1.728, 4.362, 8.293, 18.85, 60.28, 227.6, 910.1},
      {1.082, 2.654, 8.508, 18.94, 62.65, 256.5, 991.9}}},
    {KCOLL_COLL_SCATTERV,
     {{1.742, 4.271, 8.297, 18.85, 61.65, 229.2, 927},
      {1.352, 3.355, 8.743, 19.68, 62.86, 257.4, 1014}}},
    {KCOLL_COLL_GATHER,
     {{1.492, 4.337, 8.054, 19.26, 63.97, 245, 976.6},
      {1.648, 3.39, 7.742, 19.53, 64.78, 260.2, 1008}}},
    {KCOLL_COLL_GATHERV,
     {{1.482, 4.377, 7.997, 19.26, 65.18, 244.3, 973.6},
      {1.652, 3.4, 7.922, 19.47, 65.45, 258.3, 1028}}},
    {KCOLL_COLL_ALLGATHER,
     {{1.622, 5.293, 9.765, 23.8, 87.04, 305.8, 1191},
      {1.868, 3.876, 9.614, 22.58, 80.2, 298.9, 1162}}},
    {KCOLL_COLL_ALLGATHERV,
     {{1.678, 5.118, 10.4, 25.31, 85.2, 311.1, 1266},
      {2.113, 4.392, 18.13, 53.73, 105.8, 422.9, 1662}}},
    {KCOLL_COLL_ALLTOALL,
     {{1.807, 5.038, 9.013, 23, 81.04, 300.3, 1149},
      {2.144, 4.216, 12.76, 22.71, 82.01, 309.7, 1192}}},
    {KCOLL_COLL_ALLTOALLV,
     {{1.848, 5.188, 9.269, 23.39, 82.94, 309.6, 1218},
      {2.138, 4.261, 12.82, 29.45, 101.5, 413.2, 1504}}},
    {KCOLL_COLL_BARRIER,
     {{0.7315},
      {1.457}}},
    {KCOLL_COLL_REDUCE,
     {{1.472, 3.58, 6.637, 18.3, 64.08, 240.1, 958.4},
      {1.698, 4.176, 8.673, 62.22, 389.7, 1405, 4868}}},
    {KCOLL_COLL_ALLREDUCE,
     {{1.618, 4.086, 13.96, 35.11, 119.7, 392, 1563},
      {2.529, 4.322, 11.28, 38.14, 128.6, 486.1, 1721}}},
    {KCOLL_COLL_REDUCE_SCATTER_BLOCK,
     {{1.747, 7.667, 17.14, 53.64, 241.6, 917.3, 7145},
      {2.188, 4.622, 18.06, 57.91, 94.81, 376.3, 1479}}},
    {KCOLL_COLL_REDUCE_SCATTER,
     {{1.873, 7.727, 16.99, 53.52, 172.3, 677.4, 2570},
      {2.276, 4.654, 18.27, 57.79, 94.84, 362.7, 1457}}},
};

static void kcoll_machine_host_defaults(kcoll_machine_t *m)
{
#ifdef KCOLL_MPI_FLAVOR
    int f; /* the column of kcoll_host_times */
    if (!strcmp(KCOLL_MPI_FLAVOR, "openmpi"))
        f = 0;
    else if (!strcmp(KCOLL_MPI_FLAVOR, "mpich"))
        f = 1;
    else
        return;
    snprintf(m->source, sizeof m->source,
             "built-in defaults (kcoll-calibrate on a 2-core AMD EPYC Zen 4 guest; host "
             "times: %s at 2 ranks)",
             f ? "MPICH 4.0" : "Open MPI 4.1");
    for (size_t i = 0; i < sizeof kcoll_host_times / sizeof kcoll_host_times[0]; i++) {
        const kcoll_hostrow_t *t = &kcoll_host_times[i];
        const int one = t->coll == KCOLL_COLL_BARRIER;
        for (int k = 0; k < (one ? 1 : 7); k++)
            m->host[t->coll][m->nhost[t->coll]++] =
                (kcoll_hostpt_t){2, one ? 0 : (double)((size_t)1024 << (2 * k)), t->us[f][k] * US};
    }
#else
    (void)m;
#endif
}

void kcoll_machine_defaults(kcoll_machine_t *m)
{
    memset(m, 0, sizeof *m);
    strcpy(m->source, "built-in defaults (kcoll-calibrate on a 2-core AMD EPYC Zen 4 guest)");
    m->alpha = 1.6 * US;
    m->beta = GBPS(11.0);
    /* two ranks exchanging 256 pages at once: both writing took
     * 1.13-1.20x less time than both reading (kcoll-calibrate) */
    m->beta_write = GBPS(15.0);
    m->l = 0.16 * US;
    m->page = 4096;
    m->pkg_cores = 0;
    /* the shape of Table IV's Broadwell fit; across packages
     * KCOLL_INTER_FACTOR times that */
    m->gamma_intra.poly[0] = 0.0;
    m->gamma_intra.poly[1] = 0.83;
    m->gamma_intra.poly[2] = 0.18;
    m->gamma_inter = m->gamma_intra;
    for (int i = 0; i < 3; i++)
        m->gamma_inter.poly[i] *= KCOLL_INTER_FACTOR;
    m->copy_alpha = 0.003 * US;
    m->copy_beta = GBPS(12.0);
    m->package_bw = 0; /* measured 15-22 GB/s with both cores copying; 0: no limit */
    m->link_bw = 0;    /* one package here: nothing crosses; 0: no limit */
    m->reduce_beta[KCOLL_RCLASS_INT] = GBPS(40.0);
    m->reduce_beta[KCOLL_RCLASS_FLOAT] = GBPS(40.0);
    m->reduce_beta[KCOLL_RCLASS_DOUBLE] = GBPS(47.0);
    m->reduce_beta[KCOLL_RCLASS_USER] = GBPS(26.0);
    /* a double sum with one operand off-cache: 14-16 GB/s, against 47 in
     * cache (kcoll-calibrate) */
    m->stream_beta = GBPS(22.0);
    /* the two-copy engine, fitted to kcoll-bench at 2 ranks off-cache
     * (docs/engines.md, "One engine per call"): a transfer from an idle
     * owner (Bcast direct_read) 0.69-0.70x of cma's time at 1 MiB and
     * 1.15-1.3x at 2-32 KiB, two ranks exchanging (the partitioned
     * Allreduce, pairwise Alltoall) about 2 n shm_beta, 0.92-1.08x of
     * cma's; the latency as cma's. vmsplice 1.1-1.3x of cma's time */
    m->shm_alpha = 1.6 * US;
    m->shm_beta = GBPS(10.5);
    m->shm_cell = 65536;
    m->vms_alpha = 2.0 * US;
    m->vms_beta = GBPS(6.5);
    m->flag = 0.10 * US;
    m->step = 0.0023 * US;
    /* kcoll-bench at 4 and 8 ranks on the 2 cores (docs/benchmarks.md,
     * "Crowded nodes"): with 15 us a hand-over the model's Bcast picks
     * (direct_read, split_rw) are the measured fastest at 64 KiB-1 MiB; with
     * 5 it chose k-nomial trees at 8 ranks that measured 1.1-1.2x slower */
    m->handover = 15.0 * US;
    /* kcoll-bench's times minus the model's at 1-4 KiB, over both MPIs'
     * validation runs (docs/model-validation.md): Barrier 0.18-0.27 us,
     * calls that move data 0.4-1.4 us more than priced */
    m->call = 0.2 * US;
    m->call_data = 0.6 * US;
    m->host_alpha = 0.7 * US;
    m->host_beta = GBPS(5.6);
    /* not measurable on one machine: a described network, a 100 Gb/s
     * link (12.5 GB/s) with an MPI latency of 1.5 us (InfiniBand EDR or
     * RoCE class) */
    m->net_alpha = 1.5 * US;
    m->net_beta = GBPS(12.5);
    kcoll_machine_host_defaults(m);
}

/* Paper 003 Table IV. The table gives one contention curve per machine;
 * Fig. 5(b) shows contention rising further once readers span the two
 * sockets (beyond 14 on Broadwell, beyond 10 on Power8) without a fitted
 * curve, so the presets take KCOLL_INTER_FACTOR (3) times the intra-socket
 * curve across sockets: an assumption, stated in docs/model.md. With 2 the
 * model keeps all 19 Power8 readers in one round; with 3 it lands on the
 * paper's finding (a throttle factor about 10, "avoiding inter-socket lock
 * contention"). Memory, reduction and synchronization terms are not
 * in the paper: the built-in defaults stand for them. */
int kcoll_machine_preset(kcoll_machine_t *m, const char *name)
{
    static const struct {
        const char *name;
        double alpha_us, gbps, l_us, page, g1, g2;
        int pkg_cores;
    } t[] = {
        {"knl", 1.43, 3.29, 0.25, 4096, 1.6, 0.11, 0},
        {"broadwell", 0.98, 13.2, 0.11, 4096, 0.83, 0.18, 14},
        {"power8", 0.75, 3.17, 0.53, 65536, 1.95, 0.04, 10},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcmp(name, t[i].name))
            continue;
        kcoll_machine_defaults(m);
        snprintf(m->source, sizeof m->source, "paper 003 Table IV: %s", t[i].name);
        m->alpha = t[i].alpha_us * US;
        m->beta = GBPS(t[i].gbps);
        m->beta_write = m->beta; /* the paper times reads only */
        m->l = t[i].l_us * US;
        m->page = t[i].page;
        m->pkg_cores = t[i].pkg_cores;
        memset(m->nhost, 0, sizeof m->nhost); /* this machine's host times are not theirs */
        memset(&m->gamma_intra, 0, sizeof m->gamma_intra);
        m->gamma_intra.poly[1] = t[i].g1;
        m->gamma_intra.poly[2] = t[i].g2;
        m->gamma_inter = m->gamma_intra;
        m->gamma_inter.poly[1] *= KCOLL_INTER_FACTOR;
        m->gamma_inter.poly[2] *= KCOLL_INTER_FACTOR;
        return 0;
    }
    return -1;
}

double kcoll_gamma(const kcoll_gamma_t *g, double c)
{
    double v;
    if (c < 1)
        c = 1;
    if (g->nmeasured > 0 && c <= g->nmeasured) {
        int i = (int)floor(c) - 1;
        double f = c - floor(c);
        v = g->measured[i];
        if (f > 0 && i + 1 < g->nmeasured)
            v += f * (g->measured[i + 1] - g->measured[i]);
    } else {
        v = g->poly[0] + g->poly[1] * c + g->poly[2] * c * c;
    }
    return v < 1 ? 1 : v;
}

kcoll_rclass_t kcoll_rclass_of(const struct kcoll_op *op)
{
    if (!op)
        return KCOLL_RCLASS_DOUBLE;
    if (op->kind == KCOLL_OP_USER)
        return KCOLL_RCLASS_USER;
    switch (op->type) {
    case KCOLL_T_FLOAT:
    case KCOLL_T_CFLOAT:
    case KCOLL_T_2FLOAT:
        return KCOLL_RCLASS_FLOAT;
    case KCOLL_T_DOUBLE:
    case KCOLL_T_LDOUBLE:
    case KCOLL_T_CDOUBLE:
    case KCOLL_T_CLDOUBLE:
    case KCOLL_T_FLOAT_INT:
    case KCOLL_T_2DOUBLE:
        return KCOLL_RCLASS_DOUBLE;
    default:
        return KCOLL_RCLASS_INT;
    }
}

/* Rules of the built-in tuning, per MPI this library is built for: where
 * kcoll-bench measured kcoll's pick slower than the host MPI at 2 ranks in
 * one cache state, in every run (docs/benchmarks.md, "On-cache and
 * off-cache"), while the model, whose prices are off-cache ones, does not
 * see it; and where another engine measured faster in every run. Sizes as
 * the selector reads them (size classes). */
typedef struct {
    const char *mpi; /* NULL: under every MPI */
    kcoll_coll_t coll;
    double bmin, bmax;
    kcoll_cache_t cache;
    const char *spec; /* NULL: the host MPI */
} kcoll_builtin_rule_t;
static const kcoll_builtin_rule_t kcoll_builtin_rules[] = {
    /* Open MPI's Reduce on hot buffers: 1.51 / 2.48 / 4.06 us at 16 / 32 /
     * 64 KiB against kcoll's 1.65 / 3.04 / 4.62 (0.81-0.92x); cold,
     * 5.4 us against 5.9 at 16 KiB (0.89-0.91x) */
    {"openmpi", KCOLL_COLL_REDUCE, 16384, 131072, KCOLL_CACHE_HOT, NULL},
    {"openmpi", KCOLL_COLL_REDUCE, 16384, 32768, KCOLL_CACHE_COLD, NULL},
    /* MPICH's Allreduce off-cache at 16 KiB: 6.8-6.9 us against kcoll's
     * 7.5-7.6 (0.90-0.92x); its built-in host time there, 11.3 us, is the
     * calibration runs' median, above what these runs measured. In either
     * state: repeated calls of one size on small buffers are estimated
     * on-cache even where the program rotates its buffers (kcoll-bench
     * --cache cold), and on-cache kcoll only ties there (0.99-1.0x) */
    {"mpich", KCOLL_COLL_ALLREDUCE, 16384, 32768, KCOLL_CACHE_ANY, NULL},
    /* One engine per call (docs/engines.md): kcoll's Allreduce on the
     * two-copy engine against the same algorithm on cma, both ranks
     * reading each other's halves at once, in three off-cache and two
     * on-cache runs: 1.03-1.08x at 8 KiB, 1.02-1.09x at 64-128 KiB in both
     * states (16-32 KiB and 256 KiB-1 MiB lose on-cache). The model's
     * error at these sizes is larger than these gains, so a rule pins
     * them; it applies only to teams that may run calls on shm */
    {NULL, KCOLL_COLL_ALLREDUCE, 8192, 16384, KCOLL_CACHE_ANY, "partitioned:chunk=256@shm"},
    {NULL, KCOLL_COLL_ALLREDUCE, 65536, 262144, KCOLL_CACHE_ANY, "partitioned:chunk=256@shm"},
};

void kcoll_tuning_defaults(kcoll_tuning_t *t)
{
    memset(t, 0, sizeof *t);
    kcoll_machine_defaults(&t->m);
#ifdef KCOLL_MPI_FLAVOR
    for (size_t i = 0; i < sizeof kcoll_builtin_rules / sizeof kcoll_builtin_rules[0]; i++) {
        const kcoll_builtin_rule_t *b = &kcoll_builtin_rules[i];
        if ((b->mpi && strcmp(b->mpi, KCOLL_MPI_FLAVOR)) || t->nrules == KCOLL_TUNING_RULES)
            continue;
        kcoll_trule_t *r = &t->rules[t->nrules++];
        r->coll = (int)b->coll;
        r->pmin = r->pmax = 2;
        r->bmin = b->bmin;
        r->bmax = b->bmax;
        r->cache = (int)b->cache;
        snprintf(r->spec, sizeof r->spec, "%s", b->spec ? b->spec : "host");
    }
#endif
}

/* The process-wide tuning: set at MPI_Init (every rank the same bytes),
 * read by every selection. */
static kcoll_tuning_t kcoll_tuning_cur;
static atomic_int kcoll_tuning_ready;
static pthread_mutex_t kcoll_tuning_lock = PTHREAD_MUTEX_INITIALIZER;

const kcoll_tuning_t *kcoll_tuning(void)
{
    /* acquire: a reader that sees ready sees the whole struct written
     * before it (pairs with the release below) */
    if (!atomic_load_explicit(&kcoll_tuning_ready, memory_order_acquire)) {
        pthread_mutex_lock(&kcoll_tuning_lock);
        if (!atomic_load_explicit(&kcoll_tuning_ready, memory_order_relaxed)) {
            kcoll_tuning_defaults(&kcoll_tuning_cur);
            /* release: the defaults above are complete before ready */
            atomic_store_explicit(&kcoll_tuning_ready, 1, memory_order_release);
        }
        pthread_mutex_unlock(&kcoll_tuning_lock);
    }
    return &kcoll_tuning_cur;
}

void kcoll_tuning_set(const kcoll_tuning_t *t)
{
    pthread_mutex_lock(&kcoll_tuning_lock);
    kcoll_tuning_cur = *t;
    /* release: the new tuning is complete before ready (readers' acquire) */
    atomic_store_explicit(&kcoll_tuning_ready, 1, memory_order_release);
    pthread_mutex_unlock(&kcoll_tuning_lock);
    kcoll_params_touch(); /* every cached decision was made with the old one */
}
