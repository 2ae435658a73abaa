/* kcoll-bench: the host MPI and kcoll on the same collective, in the same run.
 *
 * How it measures (DESIGN.md section 11):
 *
 * 1. Both implementations in one process. When libkcoll.so is preloaded,
 *    MPI_Bcast is kcoll's and PMPI_Bcast is always the host MPI's own. The
 *    program calls PMPI_* for the "host" column and MPI_* for each kcoll
 *    column, so both run in the same job, with the same process placement
 *    and machine state, and the result is a ratio rather than two numbers
 *    from two runs. The program does not link against kcoll: it finds
 *    kcoll's optional API (kcoll_param_set, ...) with dlsym. Without kcoll
 *    every column is the host MPI, and the ratios show the noise level.
 * 2. Alternation. The variants (host, kcoll with algorithm 1, kcoll with
 *    algorithm 2, ...) take turns of --block timed iterations each
 *    (BENCH_BLOCK), and the order is rotated by one every turn, so that no
 *    variant always follows the same other one and a slow stretch of the
 *    machine falls on all of them. Turns of one call would time each
 *    library as the other left the machine, not as a program that calls
 *    one of them finds it: MPICH 5.0's 8 KiB MPI_Allreduce on-cache took
 *    3.0 us between kcoll's calls, 5.5 us between its own (as without
 *    kcoll), with 3 untimed calls of its own before each timed one; in
 *    turns of 10 it reads 5.5. kcoll's algorithm is
 *    set with kcoll_param_set before a kcoll call whose column names
 *    another one than the one set, outside the timing: with one kcoll
 *    column once. (Setting it, even unchanged, looks the parameter up
 *    among a hundred names, and the lines that takes are lines the timed
 *    call then misses off-cache: an 8 B-2 KiB MPI_Allreduce under Open MPI
 *    4.1 read 0.95x set before every call, 0.98x set once.) Where several
 *    kcoll columns switch it before every call, the host's call follows the
 *    same lookup (kcoll_param_get).
 * 3. Off-cache by default (--cache cold). Data handed to a collective is
 *    usually not in cache. Each call uses the next buffer of a rotation
 *    whose total size is at least twice the last-level cache (and at least
 *    two buffers), like IMB's off_cache option. Every variant cycles
 *    through all the buffers, so that none is tied to pages that happen to
 *    be faster, and all buffers are written once before timing so that no
 *    page fault is timed. --cache hot uses one buffer for every call
 *    instead, as the OSU micro-benchmarks do: a call finds its data where
 *    the previous call left it (the labels say which state was measured):
 *    a turn's first timed call follows BENCH_HOT_WARM untimed calls of the
 *    same variant, so the data is where that implementation's own calls
 *    left it, as in OSU's loop over one implementation, not where the
 *    variant before it in the rotation did. --cache swept is off-cache and more:
 *    before every call (outside its timing) each rank sweeps a region of
 *    its own twice the last-level cache, as a program's work between two
 *    calls does (a solver's pass over its matrix before the dot product's
 *    8-byte Allreduce), so that the call also finds the libraries' own
 *    code, data and page-table entries out of the caches and the TLB:
 *    what an MPI library, and a wrapper under it, costs from cold. At
 *    least BENCH_SWEPT_MIN_ITERS iterations (a sweep takes milliseconds,
 *    the automatic count would give few).
 * 4. Barrier-equalized start. Each timed call starts right after a
 *    PMPI_Barrier and is timed on every rank with MPI_Wtime, from a place
 *    of the stack that moves by a cache line every timed call, through a
 *    page (BENCH_STACK_STEPS): a sub-microsecond call's time depends on
 *    where its frames lie (the kcoll column's run one frame deeper, and
 *    where the kernel starts the stack changes from run to run). With the
 *    stack fixed, MPICH 5.0's 8-128 B on-cache MPI_Bcast, which kcoll
 *    hands to MPICH, read host/kcoll 0.72x in one run and 1.15x in the
 *    next (both columns PMPI_Bcast); moving, 0.98-1.00x in four runs of
 *    five.
 * 5. Time = maximum over ranks. A collective is finished when its last rank
 *    is. Per-iteration times stay in local arrays during the loop and are
 *    reduced with PMPI_Reduce(MAX) after it, so nothing but the barrier
 *    communicates between timed calls.
 * 6. Median. The reported time is the median over iterations, which ignores
 *    the occasional descheduled iteration; min and p90 go to the CSV file.
 *    Warm-up iterations before each size are not counted (with an 'auto'
 *    column they go on until kcoll closed the check of its decision for
 *    the size, warm_up_check: the table shows what kcoll settled on, not
 *    its exploration); unless -i is
 *    given, rank 0 times some of them to pick an iteration count that takes
 *    about 0.2 s per size and variant, and broadcasts it.
 * 7. Validation outside the timing. After timing a size, one more call per
 *    variant moves a known pattern (different for every variant) into
 *    poisoned buffers, and every rank checks its result byte for byte. A
 *    mismatch is reported on stderr and the program exits non-zero.
 * 8. Non-blocking collectives (-c iNAME, or -c NAME --nonblocking), with
 *    OSU's overlap measurement (osu_ibcast and its kin). A call is the
 *    start and its wait: host = PMPI_I<coll> + PMPI_Wait, kcoll =
 *    MPI_I<coll> + MPI_Wait. Each size is timed in two passes, each with
 *    everything above (alternation, rotation, buffers, barrier, max over
 *    ranks, medians). The first times start + wait alone: the pure time,
 *    the columns and speedup of a blocking table. The second puts a
 *    compute loop between the start and the wait that runs for about that
 *    variant's pure median (the same target on every rank; with
 *    --test-calls N, it stops N times to call MPI_Test, PMPI_Test for the
 *    host); it reports the total time and the time spent in the compute
 *    loop itself, without the MPI_Test calls (OSU counts them as compute;
 *    here, work a test call does for the collective is not overlap).
 *    overlap % = max(0, 100 * (1 - (total - compute) / pure)): 100 when
 *    the wait finds the collective done, 0 when the collective took as
 *    long after the loop as it does alone. The compute loop touches no
 *    memory, so it neither evicts the collective's data nor takes its
 *    memory bandwidth. Validation checks one call of each pass.
 *
 * The collectives are rows of tables (bench/coll_*.c, types in bench.h):
 * adding one means writing its setup, host call, kcoll call, host and
 * kcoll non-blocking starts, prepare and validate functions.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT, getopt_long */
#endif

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "bench.h"
#include "kcoll.h"
#include "tune.h"
#include "topo/topo.h"

#define BENCH_WARMUP_ITERS 5      /* untimed iterations before each size */
#define BENCH_ESTIMATE_ITERS 3    /* the last warm-up iterations rank 0 times */
#define BENCH_MIN_ITERS 10
#define BENCH_MAX_ITERS 1000
#define BENCH_TARGET_SECONDS 0.2  /* per size and variant, when -i is not given */
#define BENCH_DEFAULT_LLC ((size_t)32 << 20)
#define BENCH_STRIDE_ALIGN ((size_t)64)    /* distance between rotated buffers */
#define BENCH_REGION_ALIGN ((size_t)4096)
#define BENCH_DEFAULT_MIN ((size_t)8) /* one double: what iterative solvers reduce */
#define BENCH_DEFAULT_MAX ((size_t)16 << 20)
#define BENCH_COMPUTE_CHUNK 32   /* multiply-adds between clock reads in the compute loop */
#define BENCH_MAX_TEST_CALLS 100000
/* --cache hot: untimed calls of a variant before each timed one. One left
 * the variant that follows the host MPI in the rotation up to 1.1x slower
 * than the same variant elsewhere in it (Alltoallv, 512 KiB); from three
 * on, the columns of one algorithm agree within 1-4%. */
#define BENCH_HOT_WARM 3
/* Default --block: timed iterations of one variant in a row before the
 * next variant's turn (2. above). 10 reads MPICH 5.0's Allreduce as a run
 * without kcoll does; at the fewest iterations a size gets (10) the two
 * sides are then one turn each. */
#define BENCH_BLOCK 10
/* The stack's places for timed calls (4. above): BENCH_STACK_STEPS cache
 * lines, a page */
#define BENCH_STACK_STEP 64
#define BENCH_STACK_STEPS 64
/* --cache swept: the fewest timed iterations, -i aside (a call from cold
 * varies by a microsecond or two: medians of fewer move by tenths) */
#define BENCH_SWEPT_MIN_ITERS 200

/* ---------------------------------------------------------------------- */
/* kcoll's optional API, found at run time                                 */

typedef const char *(*kcoll_version_fn)(void);
typedef int (*kcoll_param_set_fn)(const char *name, const char *value);
typedef const char *(*kcoll_param_get_fn)(const char *name);
typedef int (*kcoll_stats_get_fn)(const char *coll, const char *path, uint64_t *calls,
                                  uint64_t *bytes);
typedef int (*kcoll_predict_fn)(const char *coll, const char *algo, int nranks, uint64_t bytes,
                                const char *rclass, double *seconds, char *chosen,
                                size_t chosen_len);
typedef int (*kcoll_algorithms_fn)(const char *coll, int nranks, char *out, size_t outlen);

/* The pointer types above must stay those of kcoll.h (checked without
 * referencing the symbols, so the program still does not link kcoll). */
_Static_assert(_Generic(&kcoll_version, kcoll_version_fn: 1, default: 0), "kcoll_version");
_Static_assert(_Generic(&kcoll_param_set, kcoll_param_set_fn: 1, default: 0), "kcoll_param_set");
_Static_assert(_Generic(&kcoll_param_get, kcoll_param_get_fn: 1, default: 0), "kcoll_param_get");
_Static_assert(_Generic(&kcoll_stats_get, kcoll_stats_get_fn: 1, default: 0), "kcoll_stats_get");
_Static_assert(_Generic(&kcoll_predict, kcoll_predict_fn: 1, default: 0), "kcoll_predict");
_Static_assert(_Generic(&kcoll_algorithms, kcoll_algorithms_fn: 1, default: 0),
               "kcoll_algorithms");

typedef struct {
    kcoll_version_fn version;
    kcoll_param_set_fn param_set; /* NULL: kcoll is not loaded */
    kcoll_param_get_fn param_get;
    kcoll_stats_get_fn stats_get;
    kcoll_predict_fn predict;       /* the cost model's prediction of a call */
    kcoll_algorithms_fn algorithms; /* the algorithms of a collective */
} kcoll_api_t;

static void *find_symbol(const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    (void)dlerror();
    return sym;
}

static void kcoll_api_find(kcoll_api_t *api)
{
    /* memcpy, because ISO C has no cast between object and function pointers */
    void *sym;
    sym = find_symbol("kcoll_version");
    memcpy(&api->version, &sym, sizeof sym);
    sym = find_symbol("kcoll_param_set");
    memcpy(&api->param_set, &sym, sizeof sym);
    sym = find_symbol("kcoll_param_get");
    memcpy(&api->param_get, &sym, sizeof sym);
    sym = find_symbol("kcoll_stats_get");
    memcpy(&api->stats_get, &sym, sizeof sym);
    sym = find_symbol("kcoll_predict");
    memcpy(&api->predict, &sym, sizeof sym);
    sym = find_symbol("kcoll_algorithms");
    memcpy(&api->algorithms, &sym, sizeof sym);
}

/* ---------------------------------------------------------------------- */
/* Collectives                                                             */

/* A byte pattern that depends on seed and position: 64-bit words of a
 * splitmix64 sequence. inverted writes its complement, which differs from
 * the pattern in every byte, to poison buffers that must be overwritten. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void pattern_fill(void *buf, size_t n, uint64_t seed, int inverted)
{
    unsigned char *p = buf;
    const uint64_t flip = inverted ? ~(uint64_t)0 : 0;
    for (size_t off = 0, word = 0; off < n; off += 8, word++) {
        uint64_t v = mix64(seed + word) ^ flip;
        memcpy(p + off, &v, n - off < 8 ? n - off : 8);
    }
}

void pattern_check(const void *buf, size_t n, uint64_t seed, bench_check_t *check)
{
    const unsigned char *p = buf;
    memset(check, 0, sizeof *check);
    for (size_t off = 0, word = 0; off < n; off += 8, word++) {
        uint64_t v = mix64(seed + word);
        size_t len = n - off < 8 ? n - off : 8;
        if (memcmp(p + off, &v, len) == 0)
            continue;
        const unsigned char *want = (const unsigned char *)&v;
        for (size_t i = 0; i < len; i++) {
            if (p[off + i] == want[i])
                continue;
            if (check->bad++ == 0) {
                check->first = off + i;
                check->expected = want[i];
                check->got = p[off + i];
            }
        }
    }
}

/* Every collective of every table, in order. */
static const bench_coll_t *const bench_tables[] = {bench_colls_bcast, bench_colls_rooted,
                                                   bench_colls_all, bench_colls_reduce};

/* The i-th collective over all tables, or NULL past the last. */
static const bench_coll_t *bench_coll_at(size_t i)
{
    for (size_t t = 0; t < sizeof bench_tables / sizeof bench_tables[0]; t++)
        for (const bench_coll_t *c = bench_tables[t]; c->name; c++)
            if (i-- == 0)
                return c;
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */

typedef struct {
    const bench_coll_t *coll;
    int nonblocking;    /* -c iNAME or --nonblocking: the MPI_I* form */
    int test_calls;     /* --test-calls: MPI_Test calls in the compute loop */
    /* What is timed, for headings, statistics rows and the CSV file:
     * "bcast" and "MPI_Bcast", or "ibcast" and "MPI_Ibcast". */
    char name[64];
    char mpi_name[64];
    int root;
    size_t min_bytes, max_bytes;
    int iters;     /* 0: chosen per size */
    int block;     /* --block: timed iterations of one variant in a row */
    char **algos;  /* kcoll algorithm specs, one per kcoll variant */
    int nalgos;
    int hot_cache; /* --cache hot: one buffer (OSU); cold (default): rotating buffers */
    int swept;     /* --cache swept: cold, and caches and TLB swept before every call */
    int no_model;  /* --no-model: no prediction columns */
    const char *csv_path;
    const char *tune_path; /* --tune FILE */
    int alloc_mem; /* --alloc-mem: buffers from MPI_Alloc_mem */
} bench_opts_t;

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [options]\n"
            "Times an MPI collective with the host MPI (PMPI_*) and with kcoll (MPI_*, when\n"
            "libkcoll.so is preloaded) in the same run, alternating; prints the median time\n"
            "over iterations of the slowest rank, and the speedup host / kcoll.\n"
            "\n"
            "  -c, --collective NAME  collective to time:",
            prog);
    for (size_t i = 0; bench_coll_at(i); i++)
        fprintf(out, " %s", bench_coll_at(i)->name);
    fprintf(out,
            " (default bcast)\n"
            "                         iNAME (ibcast, iscatterv, ..., ireduce_scatter): the\n"
            "                         non-blocking form, as NAME --nonblocking\n"
            "  -n, --nonblocking      time MPI_I<NAME> + MPI_Wait against PMPI_I<NAME> +\n"
            "                         PMPI_Wait, and their overlap with computation (below)\n"
            "  -t, --test-calls N     non-blocking: call MPI_Test N times, evenly spread, in\n"
            "                         the compute loop (default 0: none)\n"
            "  -r, --root ROOT        root rank (default 0)\n"
            "  -m, --sizes MIN:MAX    message sizes in bytes, MIN doubled up to MAX; suffixes\n"
            "                         K, M, G (powers of 1024); a single SIZE is allowed\n"
            "                         (default 8:16M)\n"
            "  -i, --iterations N     timed iterations per size (default: about %.1f s per size\n"
            "                         and variant, at least %d, at most %d)\n"
            "  -b, --block N          the variants take turns every N timed iterations\n"
            "                         (default %d): with N > 1 a library's calls follow\n"
            "                         its own, as in a program that calls one of them\n"
            "  -a, --algos LIST       comma-separated kcoll algorithm specs, one column each,\n"
            "                         e.g. auto,knomial:k=4,direct_read (default auto); 'all'\n"
            "                         stands for every algorithm of the collective that can run\n"
            "                         at this process count, with its default parameters; a\n"
            "                         spec may end in @ENGINE (auto@shm, split_rw@cma): that\n"
            "                         column runs on a duplicate of MPI_COMM_WORLD made with\n"
            "                         KCOLL_ENGINE=ENGINE (cma, shm, vmsplice, direct, auto)\n"
            "      --alloc-mem        take the buffers from MPI_Alloc_mem (kcoll's shared\n"
            "                         memory when preloaded, which the direct engine needs)\n"
            "      --cache hot|cold|swept\n"
            "                         cold (default): off-cache, each call on a buffer drawn\n"
            "                         at random from buffers that total at least twice the\n"
            "                         last-level cache; hot: on-cache, one buffer for every call,\n"
            "                         as the OSU micro-benchmarks measure; swept: cold, and\n"
            "                         before every call each rank sweeps twice the last-level\n"
            "                         cache of its own memory (a program's work between calls:\n"
            "                         the libraries' code, data and TLB entries out of cache too)\n"
            "      --csv FILE         append one row per size and variant to FILE (rank 0):\n"
            "                         mpi,collective,np,bytes,variant,median_us,min_us,p90_us,\n"
            "                         iterations,predicted_us,model_choice and for a non-blocking\n"
            "                         collective also total_us,compute_us,overlap_pct (a file\n"
            "                         with other columns is refused)\n"
            "      --no-model         no 'model' columns (by default, with kcoll loaded, each\n"
            "                         time is followed by the cost model's prediction of it,\n"
            "                         and 'pick' names the model's choice for 'auto')\n"
            "      --tune FILE        with kcoll loaded: time the host MPI, 'auto' and every\n"
            "                         algorithm (-a defaults to auto,all), and where the fastest\n"
            "                         beats auto by more than 5%% write a rule for it into the\n"
            "                         tuning file FILE (created from the tuning in force if it\n"
            "                         does not exist; this collective's rules for this process\n"
            "                         count are replaced)\n"
            "  -h, --help             this text\n"
            "\n"
            "Non-blocking collectives are timed as OSU's osu_i* benchmarks do, in two passes\n"
            "per size. The first times start + wait alone (*_us, the pure time). The second\n"
            "runs a compute loop of about that variant's pure time between the start and the\n"
            "wait: *_total is the whole call, *_comp the time in the compute loop (without\n"
            "MPI_Test calls), and *_ovl%% = max(0, 100 * (1 - (total - comp) / pure)), the\n"
            "share of the collective hidden behind the computation.\n"
            "\n"
            "Run with: LD_PRELOAD=/path/libkcoll.so mpirun -np N %s ...\n",
            BENCH_TARGET_SECONDS, BENCH_MIN_ITERS, BENCH_MAX_ITERS, BENCH_BLOCK, prog);
}

/* "16384", "16K", "16k", "16KiB", "1M", "1G"; returns 0 on success. */
static int parse_size(const char *text, size_t *out)
{
    if (!isdigit((unsigned char)text[0]))
        return -1;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned long long mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1ull << 10; end++; break;
    case 'M': mult = 1ull << 20; end++; break;
    case 'G': mult = 1ull << 30; end++; break;
    default: break;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v > ULLONG_MAX / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

static int parse_int(const char *text, int min, int max, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* An integer option's value into *out, or -1 with "bad WHAT 'ARG'" told
 * through err (rank 0's stderr, NULL elsewhere). */
static int parse_int_opt(const char *arg, int min, int max, int *out, const char *what, FILE *err)
{
    if (parse_int(arg, min, max, out) == 0)
        return 0;
    if (err)
        fprintf(err, "kcoll-bench: bad %s '%s'\n", what, arg);
    return -1;
}

/* Splits a comma list into opts->algos (owned by opts). */
static int parse_algos(const char *list, bench_opts_t *opts)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    char **algos = calloc((size_t)n, sizeof *algos);
    char *copy = strdup(list);
    if (!algos || !copy) {
        free(algos);
        free(copy);
        return -1;
    }
    int count = 0;
    char *rest = copy;
    for (;;) {
        char *comma = strchr(rest, ',');
        if (comma)
            *comma = '\0';
        algos[count++] = rest;
        if (!comma)
            break;
        rest = comma + 1;
    }
    for (int i = 0; i < count; i++) {
        if (algos[i][0] == '\0') {
            free(algos);
            free(copy);
            return -1;
        }
    }
    if (opts->algos) {
        free(opts->algos[0]);
        free(opts->algos);
    }
    opts->algos = algos; /* algos[0] is the start of copy */
    opts->nalgos = count;
    return 0;
}

static void opts_free(bench_opts_t *opts)
{
    if (opts->algos) {
        free(opts->algos[0]);
        free(opts->algos);
    }
    opts->algos = NULL;
}

enum { OPT_CACHE = 256, OPT_CSV, OPT_NO_MODEL, OPT_TUNE, OPT_ALLOC_MEM };

/* Returns 0 to run, 1 after -h, 2 for bad options (told on rank 0). Every
 * rank parses the same arguments and so reaches the same result. */
static int parse_args(int argc, char **argv, int rank, bench_opts_t *opts)
{
    static const struct option long_opts[] = {
        {"collective", required_argument, NULL, 'c'},
        {"nonblocking", no_argument, NULL, 'n'},
        {"test-calls", required_argument, NULL, 't'},
        {"root", required_argument, NULL, 'r'},
        {"sizes", required_argument, NULL, 'm'},
        {"iterations", required_argument, NULL, 'i'},
        {"block", required_argument, NULL, 'b'},
        {"algos", required_argument, NULL, 'a'},
        {"cache", required_argument, NULL, OPT_CACHE},
        {"csv", required_argument, NULL, OPT_CSV},
        {"no-model", no_argument, NULL, OPT_NO_MODEL},
        {"tune", required_argument, NULL, OPT_TUNE},
        {"alloc-mem", no_argument, NULL, OPT_ALLOC_MEM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *prog = argc > 0 ? argv[0] : "kcoll-bench";
    FILE *err = rank == 0 ? stderr : NULL;

    opts->coll = bench_coll_at(0);
    int named_nonblocking = 0, flag_nonblocking = 0; /* -c iNAME; --nonblocking */
    opts->test_calls = 0;
    opts->root = 0;
    opts->min_bytes = BENCH_DEFAULT_MIN;
    opts->max_bytes = BENCH_DEFAULT_MAX;
    opts->iters = 0;
    opts->block = BENCH_BLOCK;
    opts->hot_cache = 0;
    opts->swept = 0;
    opts->csv_path = NULL;
    opts->tune_path = NULL;
    opts->no_model = 0;
    int named_algos = 0;
    if (parse_algos("auto", opts) != 0) {
        if (err)
            fprintf(err, "kcoll-bench: out of memory\n");
        return 2;
    }

    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":c:nt:r:m:i:b:a:h", long_opts, NULL)) != -1) {
        switch (c) {
        case 'c': {
            opts->coll = NULL;
            named_nonblocking = 0;
            for (size_t i = 0; bench_coll_at(i); i++) {
                const char *name = bench_coll_at(i)->name;
                if (strcmp(optarg, name) == 0) {
                    opts->coll = bench_coll_at(i);
                } else if (optarg[0] == 'i' && strcmp(optarg + 1, name) == 0) {
                    opts->coll = bench_coll_at(i);
                    named_nonblocking = 1;
                }
            }
            if (!opts->coll) {
                if (err)
                    fprintf(err, "kcoll-bench: unknown collective '%s' (try -h)\n", optarg);
                return 2;
            }
            break;
        }
        case 'n':
            flag_nonblocking = 1;
            break;
        case 't':
            if (parse_int_opt(optarg, 0, BENCH_MAX_TEST_CALLS, &opts->test_calls,
                              "number of test calls", err) != 0)
                return 2;
            break;
        case 'r':
            if (parse_int_opt(optarg, 0, 1 << 30, &opts->root, "root", err) != 0)
                return 2;
            break;
        case 'm': {
            const char *colon = strchr(optarg, ':');
            int ok;
            if (colon) {
                char *min_text = strndup(optarg, (size_t)(colon - optarg));
                ok = min_text && parse_size(min_text, &opts->min_bytes) == 0 &&
                     parse_size(colon + 1, &opts->max_bytes) == 0;
                free(min_text);
            } else {
                ok = parse_size(optarg, &opts->min_bytes) == 0;
                opts->max_bytes = opts->min_bytes;
            }
            if (!ok || opts->min_bytes > opts->max_bytes || opts->max_bytes > INT32_MAX) {
                if (err)
                    fprintf(err,
                            "kcoll-bench: bad sizes '%s' (want MIN:MAX with MIN <= MAX < 2 GiB, "
                            "e.g. 16K:16M)\n",
                            optarg);
                return 2;
            }
            break;
        }
        case 'i':
            if (parse_int_opt(optarg, 1, 1000000, &opts->iters, "iteration count", err) != 0)
                return 2;
            break;
        case 'b':
            if (parse_int_opt(optarg, 1, 1000000, &opts->block, "block length", err) != 0)
                return 2;
            break;
        case 'a':
            named_algos = 1;
            if (parse_algos(optarg, opts) != 0) {
                if (err)
                    fprintf(err, "kcoll-bench: bad algorithm list '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_CACHE:
            if (!strcmp(optarg, "hot") || !strcmp(optarg, "cold") || !strcmp(optarg, "swept")) {
                opts->hot_cache = optarg[0] == 'h';
                opts->swept = optarg[0] == 's';
                break;
            }
            if (err)
                fprintf(err, "kcoll-bench: bad cache state '%s' (want hot, cold or swept)\n",
                        optarg);
            return 2;
        case OPT_CSV:
            opts->csv_path = optarg;
            break;
        case OPT_NO_MODEL:
            opts->no_model = 1;
            break;
        case OPT_TUNE:
            opts->tune_path = optarg;
            break;
        case OPT_ALLOC_MEM:
            opts->alloc_mem = 1;
            break;
        case 'h':
            if (rank == 0)
                usage(stdout, prog);
            return 1;
        case ':':
        default: {
            /* A long option is argv[optind - 1]; a short one is optopt. */
            const char *last = argv[optind - 1];
            char short_name[3] = {'-', (char)optopt, '\0'};
            const char *name = strncmp(last, "--", 2) == 0 ? last : short_name;
            if (err)
                fprintf(err, "kcoll-bench: %s '%s' (try -h)\n",
                        c == ':' ? "missing value for option" : "unknown option", name);
            return 2;
        }
        }
    }
    if (optind < argc) {
        if (err)
            fprintf(err, "kcoll-bench: unexpected argument '%s' (try -h)\n", argv[optind]);
        return 2;
    }
    opts->nonblocking = named_nonblocking || flag_nonblocking;
    if (opts->tune_path && opts->nonblocking) {
        if (err)
            fprintf(err, "kcoll-bench: --tune takes a blocking collective (its rules serve "
                         "both forms)\n");
        return 2;
    }
    if (opts->tune_path && !named_algos && parse_algos("auto,all", opts) != 0) {
        if (err)
            fprintf(err, "kcoll-bench: out of memory\n");
        return 2;
    }
    if (opts->test_calls > 0 && !opts->nonblocking) {
        if (err)
            fprintf(err, "kcoll-bench: --test-calls needs a non-blocking collective "
                         "(-c i%s or --nonblocking)\n",
                    opts->coll->name);
        return 2;
    }
    if (opts->nonblocking) {
        /* "MPI_Bcast" -> "MPI_Ibcast", as MPI (and kcoll's statistics) name it */
        const char *m = opts->coll->mpi_name;
        snprintf(opts->name, sizeof opts->name, "i%s", opts->coll->name);
        snprintf(opts->mpi_name, sizeof opts->mpi_name, "MPI_I%c%s",
                 tolower((unsigned char)m[4]), m + 5);
    } else {
        snprintf(opts->name, sizeof opts->name, "%s", opts->coll->name);
        snprintf(opts->mpi_name, sizeof opts->mpi_name, "%s", opts->coll->mpi_name);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Environment                                                             */

/* The machine's largest cache, in bytes, as kcoll's topology layer (hwloc)
 * sees it; BENCH_DEFAULT_LLC if unknown. */
static size_t llc_bytes(void)
{
    size_t llc = kcoll_topo_llc_bytes();
    return llc ? llc : BENCH_DEFAULT_LLC;
}

/* The host MPI's name and version, short: "Open MPI 4.1.4", "MPICH 4.0.2",
 * "Intel MPI 2021.14". */
static void mpi_library_name(char *out, size_t outlen)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS || len <= 0) {
        snprintf(out, outlen, "unknown MPI");
        return;
    }
    lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    lib[strcspn(lib, "\r\n")] = '\0';

    const char *version_word = strstr(lib, "Version");
    if (strncmp(lib, "Intel(R) MPI Library ", 21) == 0) {
        /* "Intel(R) MPI Library 2021.14 for Linux* OS" */
        const char *v = lib + 21;
        snprintf(out, outlen, "Intel MPI %.*s", (int)strcspn(v, " \t"), v);
    } else if (strncmp(lib, "Open MPI v", 10) == 0) {
        /* "Open MPI v4.1.4, package: ..." */
        const char *v = lib + 10;
        snprintf(out, outlen, "Open MPI %.*s", (int)strcspn(v, ", \t"), v);
    } else if (version_word) {
        /* "MPICH Version:\t4.0.2" and alike */
        int name_len = (int)(version_word - lib);
        while (name_len > 0 && isspace((unsigned char)lib[name_len - 1]))
            name_len--;
        const char *v = version_word + strlen("Version");
        v += strspn(v, " \t:");
        snprintf(out, outlen, "%.*s %.*s", name_len, lib, (int)strcspn(v, ", \t"), v);
    } else {
        snprintf(out, outlen, "%.*s", (int)strcspn(lib, ","), lib);
    }
}

static void format_bytes(size_t bytes, char *out, size_t outlen)
{
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0)
        snprintf(out, outlen, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(out, outlen, "%zu MiB", bytes >> 20);
    else if (bytes >= ((size_t)1 << 10) && bytes % ((size_t)1 << 10) == 0)
        snprintf(out, outlen, "%zu KiB", bytes >> 10);
    else
        snprintf(out, outlen, "%zu B", bytes);
}

static void check_mpi(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    fprintf(stderr, "kcoll-bench: %s failed: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Stops the job if any rank ran out of memory (a collective call). */
static void check_alloc_all(int ok, MPI_Comm comm, const char *what)
{
    int all_ok = 0;
    check_mpi(PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm), "PMPI_Allreduce");
    if (all_ok)
        return;
    if (!ok)
        fprintf(stderr, "kcoll-bench: out of memory (%s)\n", what);
    MPI_Abort(comm, 3);
}

/* ---------------------------------------------------------------------- */
/* Measurement                                                             */

typedef struct {
    const bench_opts_t *opts;
    const kcoll_api_t *api;
    MPI_Comm comm;
    int rank, nranks;
    int nvariants;      /* 1 (host) + opts->nalgos */
    MPI_Comm *comms;    /* [nvariants]: the communicator each variant runs on */
    size_t llc;
    /* --cache swept: this rank's region of 2 x llc, swept before every call */
    unsigned char *sweep;
    size_t sweep_bytes;
    /* Buffers: nbufs slots, slot i at send_region + i * send_stride and
     * recv_region + i * recv_stride. The regions are allocated once for the
     * largest need over all sizes. */
    unsigned char *send_region, *recv_region;
    size_t send_capacity, recv_capacity;
    size_t send_stride, recv_stride;
    size_t nbufs;
    uint64_t slot_state; /* next_slot's random sequence, reset per size */
    /* Non-blocking: the compute loop's duration per variant, in seconds
     * (the variant's pure median of the size, the same on every rank). */
    double *compute_s;
    /* [nvariants]: for each kcoll variant the first one whose spec names
     * the same algorithm (made at start), and whether they name more than
     * one */
    int *algo_first;
    int algos_differ;
    /* the algo_first of the algorithm select_variant set last (0: none yet) */
    int algo_set_by;
    /* timed calls so far: the stack's place of the next (run_call) */
    unsigned stack_turn;
} bench_ctx_t;

/* Results of one size, complete on rank 0. */
typedef struct {
    int iters;
    double *median_us, *min_us, *p90_us; /* [nvariants]; non-blocking: the pure time */
    double *total_us, *comp_us;          /* [nvariants], non-blocking: the overlap pass */
    int *failed;                         /* [nvariants]: validation failed on some rank */
    int *handed_to_host;                 /* [nvariants]: kcoll's statistics say it did not run */
    double *pred_us;                     /* [nvariants]: the cost model's prediction, or -1 */
    char (*chosen)[64];                  /* [nvariants]: what the model priced ("host", a spec) */
} bench_result_t;

static size_t round_up(size_t x, size_t to)
{
    return (x + to - 1) / to * to;
}

/* Buffer layout for one size: strides and number of rotated slots. */
static void layout_for(const bench_ctx_t *ctx, size_t bytes, size_t *send_stride,
                       size_t *recv_stride, size_t *nbufs)
{
    size_t send_bytes, recv_bytes;
    ctx->opts->coll->setup(bytes, ctx->nranks, &send_bytes, &recv_bytes);
    *send_stride = round_up(send_bytes, BENCH_STRIDE_ALIGN);
    *recv_stride = round_up(recv_bytes, BENCH_STRIDE_ALIGN);
    size_t slot = *send_stride + *recv_stride;
    if (slot == 0)
        slot = BENCH_STRIDE_ALIGN;
    if (ctx->opts->hot_cache) {
        *nbufs = 1;
        return;
    }
    /* Off-cache: every call takes a slot drawn at random (next_slot), so
     * that no variant is tied to a place in a page. Taken in turn, slots of
     * a few hundred bytes gave each variant the same places in every page
     * for the whole of a size's timed calls (two variants alternating first:
     * the host the first and last KiB of a page, kcoll the middle two at 1
     * KiB), and the hardware prefetcher, which streams on from the previous
     * call's lines within a page but never across one, favoured one side by
     * up to 20%, alike with kcoll disabled. A random slot also follows no
     * neighbour whose lines were prefetched with it: off-cache is then off
     * cache for every variant. */
    size_t nv = (size_t)ctx->nvariants;
    *nbufs = (2 * ctx->llc + slot - 1) / slot;
    if (*nbufs < nv + 1)
        *nbufs = nv + 1;
}

/* The next call's slot: every rank draws the same sequence (reset per
 * size), so the ranks of a call use the same slot index. splitmix64. */
static size_t next_slot(bench_ctx_t *ctx)
{
    if (ctx->nbufs == 1)
        return 0;
    uint64_t z = (ctx->slot_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (size_t)(z % ctx->nbufs);
}

static void *alloc_region(size_t bytes, int alloc_mem)
{
    if (bytes == 0)
        return NULL;
    void *p = NULL;
    if (alloc_mem) {
        if (MPI_Alloc_mem((MPI_Aint)round_up(bytes, BENCH_REGION_ALIGN), MPI_INFO_NULL, &p) !=
            MPI_SUCCESS)
            p = NULL;
    } else {
        p = aligned_alloc(BENCH_REGION_ALIGN, round_up(bytes, BENCH_REGION_ALIGN));
    }
    if (p)
        memset(p, 0xa5, bytes); /* fault every page in before timing */
    return p;
}

static void free_region(void *p, int alloc_mem)
{
    if (p && alloc_mem)
        MPI_Free_mem(p);
    else
        free(p);
}

/* The algorithm part of a spec "ALGO[@ENGINE]" into out. */
static const char *spec_algo(const char *spec, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.*s", (int)strcspn(spec, "@"), spec);
    return out;
}

/* The engine of a spec "ALGO@ENGINE", or NULL. */
static const char *spec_engine(const char *spec)
{
    const char *at = strchr(spec, '@');
    return at ? at + 1 : NULL;
}

/* Every kcoll variant with an engine gets a duplicate of comm made with
 * KCOLL_ENGINE set to it (variants naming one engine share it); the
 * others run on comm. Collective: every rank, same options. */
static MPI_Comm *make_comms(const kcoll_api_t *api, const bench_opts_t *opts, MPI_Comm comm)
{
    MPI_Comm *c = calloc((size_t)opts->nalgos + 1, sizeof *c);
    if (!c)
        return NULL;
    c[0] = comm;
    const char *old = api->param_get ? api->param_get("ENGINE") : NULL;
    char *saved = old ? strdup(old) : NULL;
    for (int v = 1; v <= opts->nalgos; v++) {
        const char *e = spec_engine(opts->algos[v - 1]);
        c[v] = comm;
        if (!e || !api->param_set)
            continue;
        for (int w = 1; w < v && c[v] == comm; w++) {
            const char *f = spec_engine(opts->algos[w - 1]);
            if (f && !strcmp(e, f))
                c[v] = c[w];
        }
        if (c[v] != comm)
            continue;
        api->param_set("ENGINE", e);
        check_mpi(MPI_Comm_dup(comm, &c[v]), "MPI_Comm_dup");
    }
    if (saved && api->param_set)
        api->param_set("ENGINE", saved);
    free(saved);
    return c;
}

static void free_comms(MPI_Comm *c, int nvariants)
{
    for (int v = 1; c && v < nvariants; v++) {
        if (c[v] == c[0])
            continue;
        for (int w = v + 1; w < nvariants; w++)
            if (c[w] == c[v])
                c[w] = c[0];
        MPI_Comm_free(&c[v]);
    }
    free(c);
}

static bench_args_t args_for_slot(const bench_ctx_t *ctx, size_t bytes, size_t slot)
{
    bench_args_t a = {
        .sendbuf = ctx->send_region ? ctx->send_region + slot * ctx->send_stride : NULL,
        .recvbuf = ctx->recv_region ? ctx->recv_region + slot * ctx->recv_stride : NULL,
        .bytes = bytes,
        .root = ctx->opts->root,
        .rank = ctx->rank,
        .nranks = ctx->nranks,
        .comm = ctx->comm,
    };
    return a;
}

/* Variant 0 is the host MPI, variant v > 0 is kcoll with opts->algos[v - 1].
 * Called by every rank before the variant's call, outside the timing: sets
 * the variant's algorithm where another one is set (point 2 above). A
 * variant whose algorithm is set already returns at once, as the host's
 * does: formatting its name before every call (snprintf) cost the kcoll
 * column's next call the lines it evicted, 40-60 ns of MPICH 5.0's 0.65 us
 * 16-128 B MPI_Reduce on-cache, with both columns calling PMPI_Reduce. */
static void select_variant(bench_ctx_t *ctx, int variant)
{
    char algo[128];
    const char *param = ctx->opts->coll->algo_param;
    if (!ctx->api->param_set)
        return;
    if (variant == 0) {
        if (ctx->algos_differ && ctx->api->param_get)
            (void)ctx->api->param_get(param);
        return;
    }
    const int first = ctx->algo_first[variant];
    if (first == ctx->algo_set_by)
        return;
    ctx->algo_set_by = first;
    ctx->api->param_set(param, spec_algo(ctx->opts->algos[first - 1], algo, sizeof algo));
}

/* The compute loop's work: a chain of dependent multiply-adds in one
 * register. It touches no memory, so that the loop neither evicts the
 * collective's data nor competes with it for memory bandwidth: what it
 * takes from the collective is the core alone. */
static volatile double compute_sink = 1.0;

static void compute_chunk(void)
{
    double x = compute_sink;
    for (int i = 0; i < BENCH_COMPUTE_CHUNK; i++)
        x = x * 0.9999999 + 1e-7;
    compute_sink = x;
}

/* Computes for about seconds, in tests + 1 stretches (1 without tests)
 * with one test of *req (PMPI_Test for the host) after each but the last,
 * as OSU's -t spreads its test calls; returns the time spent computing,
 * without the test calls. */
static double compute_loop(double seconds, int tests, int host, MPI_Request *req)
{
    double computed = 0.0;
    for (int k = 0; k <= tests; k++) {
        /* each stretch aims at its share of the total, so that the time
         * one overshoots is taken from the next */
        double until = seconds * (double)(k + 1) / (double)(tests + 1) - computed;
        double t0 = MPI_Wtime(), t = t0;
        while (t - t0 < until) {
            compute_chunk();
            t = MPI_Wtime();
        }
        computed += t - t0;
        if (k < tests) {
            int done = 0;
            check_mpi(host ? PMPI_Test(req, &done, MPI_STATUS_IGNORE)
                           : MPI_Test(req, &done, MPI_STATUS_IGNORE),
                      host ? "PMPI_Test" : "MPI_Test");
        }
    }
    return computed;
}

/* One call of variant on this rank: the blocking collective, or the
 * non-blocking start and its wait (PMPI_Wait for the host, MPI_Wait for
 * kcoll, which completes kcoll's own requests). With overlap, the compute
 * loop of ctx->compute_s[variant] runs between them and its compute time
 * goes to *computed. */
static void call_variant(const bench_ctx_t *ctx, int variant, const bench_args_t *a,
                         int overlap, double *computed)
{
    const bench_coll_t *coll = ctx->opts->coll;
    const int host = variant == 0;
    if (!ctx->opts->nonblocking) {
        check_mpi(host ? coll->host_call(a) : coll->kcoll_call(a), coll->mpi_name);
        return;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    check_mpi(host ? coll->host_start(a, &req) : coll->kcoll_start(a, &req),
              ctx->opts->mpi_name);
    if (overlap)
        *computed = compute_loop(ctx->compute_s[variant], ctx->opts->test_calls, host, &req);
    check_mpi(host ? PMPI_Wait(&req, MPI_STATUS_IGNORE) : MPI_Wait(&req, MPI_STATUS_IGNORE),
              host ? "PMPI_Wait" : "MPI_Wait");
}

/* --cache swept: a read and a write of every line of the rank's sweep
 * region, which holds twice the last-level cache and many times the TLB's
 * reach, so that whatever the next call touches comes from memory. */
static void sweep_caches(bench_ctx_t *ctx)
{
    volatile unsigned char *p = ctx->sweep;
    for (size_t i = 0; i < ctx->sweep_bytes; i += BENCH_STRIDE_ALIGN)
        p[i] = (unsigned char)(p[i] + 1);
}

/* One call of variant v (overlap: the non-blocking one with the compute
 * loop), timed from a barrier; warm: on-cache, first BENCH_HOT_WARM
 * untimed calls of the same variant, so that the timed one finds the data
 * where calls of its own left it, as in OSU's loop of one implementation
 * (another variant's call left it elsewhere: a writer's destination lines
 * in its own cache, a reader's in the reader's). With times, the time
 * goes to times[v * stride + column] (and the compute time to comp). */
static void run_call(bench_ctx_t *ctx, size_t bytes, int v, int overlap, int warm, double *times,
                     double *comp, int stride, int column)
{
    select_variant(ctx, v);
    bench_args_t a = args_for_slot(ctx, bytes, next_slot(ctx));
    a.comm = ctx->comms[v];
    double computed = 0.0;
    for (int w = 0; warm && ctx->opts->hot_cache && w < BENCH_HOT_WARM; w++) {
        check_mpi(PMPI_Barrier(ctx->comm), "PMPI_Barrier");
        call_variant(ctx, v, &a, overlap, &computed);
    }
    if (ctx->sweep)
        sweep_caches(ctx);
    /* the stack's place for this call (4. above) */
    volatile char *pad = __builtin_alloca(BENCH_STACK_STEP * (size_t)(ctx->stack_turn++ %
                                                                     BENCH_STACK_STEPS) +
                                          BENCH_STACK_STEP);
    pad[0] = 0;
    check_mpi(PMPI_Barrier(ctx->comm), "PMPI_Barrier");
    double t0 = MPI_Wtime();
    call_variant(ctx, v, &a, overlap, &computed);
    double t1 = MPI_Wtime();
    size_t at = (size_t)v * (size_t)stride + (size_t)column;
    if (times)
        times[at] = t1 - t0;
    if (comp)
        comp[at] = computed;
}

/* One call of every variant, starting with variant first (warm-up). */
static void run_iteration(bench_ctx_t *ctx, size_t bytes, int first, int overlap)
{
    for (int j = 0; j < ctx->nvariants; j++)
        run_call(ctx, bytes, (first + j) % ctx->nvariants, overlap, 1, NULL, NULL, 0, 0);
}

/* The first 'auto' variant, or -1. */
static int auto_variant(const bench_opts_t *opts)
{
    for (int i = 0; i < opts->nalgos; i++)
        if (!strcmp(opts->algos[i], "auto"))
            return i + 1;
    return -1;
}

/* kcoll checks a decision of the cost model by measurement in a pattern's
 * first calls (docs/adapt.md): 64 calls of the model's choice (8 from a
 * quarter MiB), then some of each side timed, then the faster side runs.
 * Timed from the start, a size would show a mix of both sides, the more
 * so the fewer calls it gets (some 50 at 16 MiB). So where an 'auto'
 * column runs blocking calls, the warm-up goes on until kcoll closed a
 * check of the collective since the size began (on every rank at the
 * same call; rank 0's word ends the loop on all), as a benchmark's
 * warm-up skips a library's first calls of a size: at most as many more
 * iterations as a first check takes (64 + 8 + 128 + 8 + 1 calls, 8 + 8 +
 * 1 + 8 + 1 from a quarter MiB; a pattern checked before, the Barrier's
 * in every row after the first, goes no further) and BENCH_CHECK_SECONDS.
 * Not where kcoll does not check (KCOLL_ADAPT=0, sizes above
 * KCOLL_ADAPT_MAX_BYTES). */
#define BENCH_CHECK_ITERS 210
#define BENCH_CHECK_ITERS_LARGE 27
#define BENCH_CHECK_SECONDS 2.0
static void warm_up_check(bench_ctx_t *ctx, size_t bytes, uint64_t checked_before)
{
    const kcoll_api_t *api = ctx->api;
    const bench_opts_t *o = ctx->opts;
    if (!api->stats_get || !api->param_get || o->nonblocking || auto_variant(o) < 0)
        return;
    const char *on = api->param_get("ADAPT"), *max = api->param_get("ADAPT_MAX_BYTES");
    size_t largest;
    if ((on && !strcmp(on, "0")) || (max && !parse_size(max, &largest) && bytes > largest))
        return;
    const double t0 = MPI_Wtime();
    const int most = bytes >= 256 * 1024 ? BENCH_CHECK_ITERS_LARGE : BENCH_CHECK_ITERS;
    for (int it = 0; it < most; it++) {
        uint64_t checked = checked_before, unused;
        api->stats_get(o->mpi_name, "adapt:checked", &checked, &unused);
        int go = checked == checked_before && MPI_Wtime() - t0 < BENCH_CHECK_SECONDS;
        check_mpi(PMPI_Bcast(&go, 1, MPI_INT, 0, ctx->comm), "PMPI_Bcast");
        if (!go)
            return;
        run_iteration(ctx, bytes, it % ctx->nvariants, 0);
    }
}

/* Warm-up; returns the number of timed iterations (the same on all ranks). */
static int warm_up(bench_ctx_t *ctx, size_t bytes)
{
    /* The estimate is the fastest of the last few warm-up iterations, so
     * that one disturbed iteration (another process on the core) does not
     * shrink the whole measurement to the minimum count. */
    double per_iter = 0.0;
    uint64_t checked = 0, unused;
    if (ctx->api->stats_get)
        ctx->api->stats_get(ctx->opts->mpi_name, "adapt:checked", &checked, &unused);
    for (int it = 0; it < BENCH_WARMUP_ITERS; it++) {
        double t0 = 0.0;
        if (it >= BENCH_WARMUP_ITERS - BENCH_ESTIMATE_ITERS) {
            check_mpi(PMPI_Barrier(ctx->comm), "PMPI_Barrier");
            t0 = MPI_Wtime();
        }
        run_iteration(ctx, bytes, it % ctx->nvariants, 0);
        if (it >= BENCH_WARMUP_ITERS - BENCH_ESTIMATE_ITERS) {
            double t = MPI_Wtime() - t0;
            if (per_iter == 0.0 || t < per_iter)
                per_iter = t;
        }
    }
    warm_up_check(ctx, bytes, checked);
    check_mpi(PMPI_Barrier(ctx->comm), "PMPI_Barrier");

    if (ctx->opts->iters > 0)
        return ctx->opts->iters;
    int iters = BENCH_MAX_ITERS;
    if (ctx->rank == 0 && per_iter > 0.0) {
        /* An iteration runs every variant once, so this is about
         * BENCH_TARGET_SECONDS per variant. */
        const int least = ctx->sweep ? BENCH_SWEPT_MIN_ITERS : BENCH_MIN_ITERS;
        double want = ceil(BENCH_TARGET_SECONDS * ctx->nvariants / per_iter);
        iters = want < least             ? least
                : want > BENCH_MAX_ITERS ? BENCH_MAX_ITERS
                                         : (int)want;
    }
    check_mpi(PMPI_Bcast(&iters, 1, MPI_INT, 0, ctx->comm), "PMPI_Bcast");
    return iters;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and p90 (nearest rank) of n seconds, sorted in place, in us. */
static void summarize(double *t, int n, double *median_us, double *min_us, double *p90_us)
{
    qsort(t, (size_t)n, sizeof *t, compare_double);
    double median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    int p90_index = (int)ceil(0.9 * n) - 1;
    *median_us = median * 1e6;
    *min_us = t[0] * 1e6;
    *p90_us = t[p90_index < 0 ? 0 : p90_index] * 1e6;
}

/* kcoll's statistics row of a forced algorithm: "kcoll:<name>" for the spec
 * "<name>[:params]"; "" for auto, whose algorithm is not known here. */
static void stats_path_for(const char *spec, char *out, size_t outlen)
{
    size_t name_len = strcspn(spec, ":@");
    if (strncmp(spec, "auto", name_len) == 0 && name_len == 4)
        out[0] = '\0';
    else
        snprintf(out, outlen, "kcoll:%.*s", (int)name_len, spec);
}

/* One validation call per variant (non-blocking: one per pass, without
 * and with the compute loop); fills result->failed and
 * result->handed_to_host on rank 0 and returns this rank's failure. */
static int validate_size(bench_ctx_t *ctx, size_t bytes, bench_result_t *result)
{
    const bench_coll_t *coll = ctx->opts->coll;
    const char *mpi_name = ctx->opts->mpi_name;
    int nv = ctx->nvariants;
    int *local = calloc((size_t)(2 * nv), sizeof *local); /* failed, then handed_to_host */
    int *global = calloc((size_t)(2 * nv), sizeof *global);
    check_alloc_all(local && global, ctx->comm, "validation flags");

    int any_failed = 0;
    int passes = ctx->opts->nonblocking ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        for (int v = 0; v < nv; v++) {
            uint64_t seed = mix64((uint64_t)bytes * 1000003u + (uint64_t)v * 7919u + 1u +
                                  (uint64_t)pass * 104729u);
            bench_args_t a = args_for_slot(ctx, bytes, 0);
            a.comm = ctx->comms[v];
            coll->prepare(&a, seed);
            select_variant(ctx, v);

            char path[128] = "";
            uint64_t calls_before = 0, calls_after = 0, unused;
            int have_stats = 0;
            if (v > 0 && ctx->api->stats_get) {
                stats_path_for(ctx->opts->algos[v - 1], path, sizeof path);
                have_stats = path[0] != '\0' &&
                             ctx->api->stats_get(mpi_name, path, &calls_before, &unused) == 0;
                /* a name kcoll keeps no statistics for is no algorithm of
                 * its (a misspelt -a): kcoll hands the column's calls to
                 * the host (mpi:bad_algo), which the table must say */
                if (path[0] && !have_stats)
                    local[nv + v] = 1;
            }

            double computed;
            check_mpi(PMPI_Barrier(ctx->comm), "PMPI_Barrier");
            call_variant(ctx, v, &a, pass, &computed);

            if (have_stats &&
                ctx->api->stats_get(mpi_name, path, &calls_after, &unused) == 0 &&
                calls_after == calls_before)
                local[nv + v] = 1;

            bench_check_t check;
            coll->validate(&a, seed, &check);
            if (check.bad > 0) {
                local[v] = 1;
                any_failed = 1;
                fprintf(stderr,
                        "kcoll-bench: ERROR: %s%s, %zu bytes, variant %s%s, rank %d: %zu wrong "
                        "bytes, first at offset %zu (expected 0x%02x, got 0x%02x)\n",
                        mpi_name, pass ? " with the compute loop" : "", bytes,
                        v == 0 ? "host" : "kcoll:", v == 0 ? "" : ctx->opts->algos[v - 1],
                        ctx->rank, check.bad, check.first, check.expected, check.got);
            }
        }
    }
    check_mpi(PMPI_Reduce(local, global, 2 * nv, MPI_INT, MPI_MAX, 0, ctx->comm), "PMPI_Reduce");
    if (ctx->rank == 0) {
        memcpy(result->failed, global, (size_t)nv * sizeof *global);
        memcpy(result->handed_to_host, global + nv, (size_t)nv * sizeof *global);
    }
    free(local);
    free(global);
    return any_failed;
}

/* iters timed iterations of one pass (overlap: the non-blocking one with
 * the compute loop). On rank 0, per variant, the median, min and p90 (if
 * min_us and p90_us are not NULL) of the slowest rank's times, in us, and
 * with overlap the median of the slowest rank's compute times into
 * comp_us. */
static void time_pass(bench_ctx_t *ctx, size_t bytes, int iters, int overlap, double *median_us,
                      double *min_us, double *p90_us, double *comp_us)
{
    int nv = ctx->nvariants;
    size_t count = (size_t)nv * (size_t)iters;
    size_t all = overlap ? 2 * count : count; /* times, then compute times */
    double *times = malloc(all * sizeof *times);
    double *max_times = ctx->rank == 0 ? malloc(all * sizeof *max_times) : NULL;
    check_alloc_all(times && (ctx->rank != 0 || max_times), ctx->comm, "timing arrays");

    /* the variants take turns in blocks of ctx->opts->block iterations,
     * each block's first variant the next one's in turn */
    const int block = ctx->opts->block;
    for (int it = 0, b = 0; it < iters; it += block, b++) {
        const int n = iters - it < block ? iters - it : block;
        for (int j = 0; j < nv; j++)
            for (int i = 0; i < n; i++)
                run_call(ctx, bytes, (b + j) % nv, overlap, i == 0, times,
                         overlap ? times + count : NULL, iters, it + i);
    }

    check_mpi(PMPI_Reduce(times, max_times, (int)all, MPI_DOUBLE, MPI_MAX, 0, ctx->comm),
              "PMPI_Reduce");
    if (ctx->rank == 0) {
        for (int v = 0; v < nv; v++) {
            size_t at = (size_t)v * (size_t)iters;
            double min, p90;
            summarize(max_times + at, iters, &median_us[v], &min, &p90);
            if (min_us && p90_us) {
                min_us[v] = min;
                p90_us[v] = p90;
            }
            if (overlap)
                summarize(max_times + count + at, iters, &comp_us[v], &min, &p90);
        }
    }
    free(times);
    free(max_times);
}

/* Times one size and validates it; returns this rank's validation failure. */
static int run_size(bench_ctx_t *ctx, size_t bytes, bench_result_t *result)
{
    layout_for(ctx, bytes, &ctx->send_stride, &ctx->recv_stride, &ctx->nbufs);
    ctx->slot_state = 0;

    int iters = warm_up(ctx, bytes);
    if (ctx->rank == 0)
        result->iters = iters;
    time_pass(ctx, bytes, iters, 0, result->median_us, result->min_us, result->p90_us, NULL);

    if (ctx->opts->nonblocking) {
        /* The compute target is the variant's pure median, as in OSU's
         * benchmarks, but the slowest rank's (rank 0 has it) on every
         * rank, so that the ranks leave the loop together as they entered
         * it after the barrier. */
        int nv = ctx->nvariants;
        if (ctx->rank == 0)
            for (int v = 0; v < nv; v++)
                ctx->compute_s[v] = result->median_us[v] * 1e-6;
        check_mpi(PMPI_Bcast(ctx->compute_s, nv, MPI_DOUBLE, 0, ctx->comm), "PMPI_Bcast");
        for (int it = 0; it < BENCH_WARMUP_ITERS; it++)
            run_iteration(ctx, bytes, it % nv, 1);
        time_pass(ctx, bytes, iters, 1, result->total_us, NULL, NULL, result->comp_us);
    }
    return validate_size(ctx, bytes, result);
}

/* ---------------------------------------------------------------------- */
/* Output (rank 0)                                                         */

/* The columns after "bytes": each variant's time, followed by the cost
 * model's prediction of it when there is one; nalgos speedups; for a
 * non-blocking collective 3 overlap columns per variant (total, compute,
 * overlap %); and the model's pick for the first 'auto' variant. */
typedef enum { COL_TIME, COL_MODEL, COL_SPEEDUP, COL_TOTAL, COL_COMP, COL_OVL, COL_PICK } col_kind_t;

typedef struct {
    char **heads;
    int *widths;
    col_kind_t *kinds;
    int *variants;
    int ncols;
    int pick; /* the variant whose pick is shown, or -1 */
} bench_table_t;

static int table_add(bench_table_t *tab, col_kind_t kind, int v, const char *head)
{
    tab->heads[tab->ncols] = strdup(head);
    if (!tab->heads[tab->ncols])
        return -1;
    int w = (int)strlen(head) + 2;
    tab->widths[tab->ncols] = w < 11 ? 11 : w;
    tab->kinds[tab->ncols] = kind;
    tab->variants[tab->ncols] = v;
    tab->ncols++;
    return 0;
}

static int table_init(bench_table_t *tab, const bench_opts_t *opts, int model)
{
    static const char *const what[3] = {"total", "comp", "ovl%"};
    const int nv = 1 + opts->nalgos, one = opts->nalgos == 1;
    const int max = 2 * nv + opts->nalgos + 3 * nv + 1;
    tab->heads = calloc((size_t)max, sizeof *tab->heads);
    tab->widths = calloc((size_t)max, sizeof *tab->widths);
    tab->kinds = calloc((size_t)max, sizeof *tab->kinds);
    tab->variants = calloc((size_t)max, sizeof *tab->variants);
    tab->ncols = 0;
    tab->pick = model ? auto_variant(opts) : -1;
    if (!tab->heads || !tab->widths || !tab->kinds || !tab->variants)
        return -1;
    char head[256];
    for (int v = 0; v < nv; v++) {
        snprintf(head, sizeof head, "%s", v == 0 ? "host_us" : one ? "kcoll_us" : opts->algos[v - 1]);
        if (table_add(tab, COL_TIME, v, head) || (model && table_add(tab, COL_MODEL, v, "model")))
            return -1;
    }
    for (int v = 1; v < nv; v++) {
        if (one)
            snprintf(head, sizeof head, "speedup");
        else
            snprintf(head, sizeof head, "speedup(%s)", opts->algos[v - 1]);
        if (table_add(tab, COL_SPEEDUP, v, head))
            return -1;
    }
    for (int v = 0; opts->nonblocking && v < nv; v++)
        for (int w = 0; w < 3; w++) {
            if (one)
                snprintf(head, sizeof head, "%s_%s", v == 0 ? "host" : "kcoll", what[w]);
            else
                snprintf(head, sizeof head, "%s(%s)", what[w], v == 0 ? "host" : opts->algos[v - 1]);
            if (table_add(tab, (col_kind_t)(COL_TOTAL + w), v, head))
                return -1;
        }
    if (tab->pick > 0 && table_add(tab, COL_PICK, tab->pick, "pick"))
        return -1;
    return 0;
}

static void table_free(bench_table_t *tab)
{
    for (int c = 0; tab->heads && c < tab->ncols; c++)
        free(tab->heads[c]);
    free(tab->heads);
    free(tab->widths);
    free(tab->kinds);
    free(tab->variants);
}

static void print_header(const bench_ctx_t *ctx, const bench_table_t *tab, const char *mpi_name,
                         const char *kcoll_version, const char *model_source)
{
    const bench_opts_t *opts = ctx->opts;
    char cache[160], iters[160], llc[32];
    format_bytes(ctx->llc, llc, sizeof llc);
    if (opts->hot_cache)
        snprintf(cache, sizeof cache, "cache hot: on-cache, 1 buffer for every call as OSU");
    else if (opts->swept)
        snprintf(cache, sizeof cache,
                 "cache swept: off-cache, and before every call each rank sweeps 2 x LLC %s "
                 "of its own (caches and TLB emptied)",
                 llc);
    else
        snprintf(cache, sizeof cache,
                 "cache cold: off-cache, each call on a random one of >= 2 buffers, "
                 ">= 2 x LLC %s in all",
                 llc);
    if (opts->iters > 0)
        snprintf(iters, sizeof iters, "median of %d iterations", opts->iters);
    else
        snprintf(iters, sizeof iters,
                 "median of %d..%d iterations (about %.1f s per size and variant)",
                 opts->swept ? BENCH_SWEPT_MIN_ITERS : BENCH_MIN_ITERS, BENCH_MAX_ITERS,
                 BENCH_TARGET_SECONDS);

    printf("# kcoll-bench: %s, %d ranks, root %d, %s, %s%s, %s, %s, columns in turns of %d "
           "iterations, time = max over ranks\n",
           opts->mpi_name, ctx->nranks, opts->root, mpi_name,
           kcoll_version ? "kcoll " : "", kcoll_version ? kcoll_version : "kcoll not loaded",
           cache, iters, opts->block);
    printf("# host = PMPI_%s%s; kcoll = %s%s with %s set per column; times in us; "
           "speedup = host_us / kcoll_us\n",
           opts->mpi_name + 4, opts->nonblocking ? " + PMPI_Wait" : "", opts->mpi_name,
           opts->nonblocking ? " + MPI_Wait" : "", opts->coll->algo_param);
    if (model_source)
        printf("# model = kcoll's cost model's prediction of the time before it (%s); "
               "pick = its choice for auto\n",
               model_source);
    if (opts->nonblocking) {
        char tests[64] = "no MPI_Test";
        if (opts->test_calls > 0)
            snprintf(tests, sizeof tests, "%d MPI_Test call%s", opts->test_calls,
                     opts->test_calls > 1 ? "s" : "");
        printf("# overlap pass: start, compute loop of about the variant's pure time (%s in "
               "it), wait; total = the whole call, comp = the compute loop alone\n",
               tests);
        printf("# ovl%% = max(0, 100 * (1 - (total - comp) / pure)), pure = the *_us column "
               "(start + wait alone)\n");
    }
    printf("# %8s", "bytes");
    for (int c = 0; c < tab->ncols; c++)
        if (tab->kinds[c] != COL_PICK)
            printf("%*s", tab->widths[c], tab->heads[c]);
    printf("%8s%8s%s\n", "iters", "bufs", tab->pick > 0 ? "  pick" : "");
    fflush(stdout);
}

/* OSU's overlap: the share of the pure time that the compute loop hid. */
static double overlap_pct(const bench_result_t *r, int v)
{
    if (r->median_us[v] <= 0.0)
        return 0.0;
    double pct = 100.0 * (1.0 - (r->total_us[v] - r->comp_us[v]) / r->median_us[v]);
    return pct > 0.0 ? pct : 0.0;
}

static void print_row(const bench_ctx_t *ctx, const bench_table_t *tab, size_t bytes,
                      const bench_result_t *r)
{
    const bench_opts_t *opts = ctx->opts;
    const char *pick = NULL;
    printf("%10zu", bytes);
    for (int c = 0; c < tab->ncols; c++) {
        char cell[64];
        const int v = tab->variants[c];
        switch (tab->kinds[c]) {
        case COL_TIME:
            snprintf(cell, sizeof cell, "%.2f%s", r->median_us[v], r->handed_to_host[v] ? "*" : "");
            break;
        case COL_MODEL:
            if (r->pred_us[v] >= 0)
                snprintf(cell, sizeof cell, "%.2f", r->pred_us[v]);
            else
                snprintf(cell, sizeof cell, "-");
            break;
        case COL_SPEEDUP:
            if (r->median_us[v] > 0.0)
                snprintf(cell, sizeof cell, "%.2fx", r->median_us[0] / r->median_us[v]);
            else
                snprintf(cell, sizeof cell, "-");
            break;
        case COL_TOTAL: snprintf(cell, sizeof cell, "%.2f", r->total_us[v]); break;
        case COL_COMP: snprintf(cell, sizeof cell, "%.2f", r->comp_us[v]); break;
        case COL_OVL: snprintf(cell, sizeof cell, "%.1f", overlap_pct(r, v)); break;
        case COL_PICK: pick = r->chosen[v]; continue;
        }
        printf("%*s", tab->widths[c], cell);
    }
    printf("%8d%8zu", r->iters, ctx->nbufs);
    if (pick)
        printf("  %s", pick);
    printf("\n");
    for (int v = 1; v < ctx->nvariants; v++)
        if (r->handed_to_host[v])
            printf("#   * %s: kcoll's statistics did not count this call as "
                   "kcoll:%.*s: it went to the host MPI\n",
                   opts->algos[v - 1], (int)strcspn(opts->algos[v - 1], ":"),
                   opts->algos[v - 1]);
    for (int v = 0; v < ctx->nvariants; v++)
        if (r->failed[v])
            printf("# ERROR: validation failed at %zu bytes for %s%s (details on stderr)\n", bytes,
                   v == 0 ? "host" : "kcoll:", v == 0 ? "" : opts->algos[v - 1]);
    fflush(stdout);
}

/* The cost model's prediction of every variant at one size (rank 0):
 * r->pred_us (-1 where it has none) and r->chosen. A kcoll variant is
 * predicted with its spec set, as its calls ran, so that 'auto' is what
 * the selector decides and a forced spec that cannot run is the host MPI,
 * where such calls went. Every reduction the tables time is a 32-bit
 * integer sum ("int"); the non-blocking forms run the blocking schedules. */
static void predict_size(bench_ctx_t *ctx, size_t bytes, bench_result_t *r)
{
    const bench_opts_t *opts = ctx->opts;
    for (int v = 0; v < ctx->nvariants; v++) {
        double s;
        r->pred_us[v] = -1;
        snprintf(r->chosen[v], sizeof r->chosen[v], "-");
        select_variant(ctx, v);
        if (ctx->api->predict &&
            !ctx->api->predict(opts->coll->mpi_name, v == 0 ? "host" : "auto", ctx->nranks,
                               bytes, "int", &s, r->chosen[v], sizeof r->chosen[v]))
            r->pred_us[v] = s * 1e6;
    }
}

static void csv_field(FILE *f, const char *text)
{
    if (strpbrk(text, ",\"\n") == NULL) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

#define CSV_HEADER                                                                             \
    "mpi,collective,np,bytes,variant,median_us,min_us,p90_us,iterations,predicted_us,model_choice"
#define CSV_OVERLAP_COLUMNS ",total_us,compute_us,overlap_pct"

/* wide: the file has the overlap columns; a blocking row leaves them
 * empty. */
static void csv_rows(FILE *f, const bench_ctx_t *ctx, const char *mpi_name, int kcoll_loaded,
                     int wide, size_t bytes, const bench_result_t *r)
{
    for (int v = 0; v < ctx->nvariants; v++) {
        char variant[256];
        if (v == 0)
            snprintf(variant, sizeof variant, "host");
        else
            snprintf(variant, sizeof variant, "%s:%s", kcoll_loaded ? "kcoll" : "nokcoll",
                     ctx->opts->algos[v - 1]);
        csv_field(f, mpi_name);
        fputc(',', f);
        csv_field(f, ctx->opts->name);
        fprintf(f, ",%d,%zu,", ctx->nranks, bytes);
        csv_field(f, variant);
        fprintf(f, ",%.3f,%.3f,%.3f,%d,", r->median_us[v], r->min_us[v], r->p90_us[v], r->iters);
        if (r->pred_us[v] >= 0) {
            fprintf(f, "%.3f,", r->pred_us[v]);
            csv_field(f, r->chosen[v]);
        } else {
            fputc(',', f);
        }
        if (ctx->opts->nonblocking)
            fprintf(f, ",%.3f,%.3f,%.1f", r->total_us[v], r->comp_us[v], overlap_pct(r, v));
        else if (wide)
            fputs(",,,", f);
        fputc('\n', f);
    }
    fflush(f);
}

/* Opens the CSV file on rank 0 (with the header if the file is new) into
 * *out, and tells in *wide whether its rows have the overlap columns;
 * *out stays NULL elsewhere or without a path. A non-blocking run needs
 * those columns, so it refuses a file whose header lacks them rather than
 * append rows longer than the header. Returns 0, or -1 on every rank if
 * rank 0 could not use the file. */
static int csv_open(const char *path, int nonblocking, int rank, MPI_Comm comm, FILE **out,
                    int *wide)
{
    static const char narrow_header[] = CSV_HEADER;
    static const char wide_header[] = CSV_HEADER CSV_OVERLAP_COLUMNS;
    *out = NULL;
    *wide = nonblocking;
    int ok = 1;
    if (path && rank == 0) {
        /* "a+" to read the header of a file being continued; "a" where
         * reading is not allowed */
        FILE *f = fopen(path, "a+");
        int readable = f != NULL;
        if (!f)
            f = fopen(path, "a");
        if (!f) {
            fprintf(stderr, "kcoll-bench: cannot open %s: %s\n", path, strerror(errno));
            ok = 0;
        } else if (fseek(f, 0, SEEK_END) == 0 && ftell(f) == 0) {
            fprintf(f, "%s\n", nonblocking ? wide_header : narrow_header);
        } else {
            /* A file that cannot be read or sought (a pipe) gets rows of
             * this run's own shape. */
            char first[256];
            if (readable && fseek(f, 0, SEEK_SET) == 0 && fgets(first, sizeof first, f)) {
                first[strcspn(first, "\r\n")] = '\0';
                *wide = strcmp(first, wide_header) == 0;
                fseek(f, 0, SEEK_END); /* from reading to appending */
                if (!*wide && strcmp(first, narrow_header)) {
                    fprintf(stderr,
                            "kcoll-bench: %s has other columns than this kcoll-bench writes "
                            "(%s): write to another file\n",
                            path, narrow_header);
                    fclose(f);
                    f = NULL;
                    ok = 0;
                }
            }
            if (ok && nonblocking && !*wide) {
                fprintf(stderr,
                        "kcoll-bench: %s has no overlap columns (total_us,compute_us,"
                        "overlap_pct) in its header: write non-blocking results to another "
                        "file\n",
                        path);
                fclose(f);
                ok = 0;
            }
        }
        if (ok && f) {
            fflush(f);
            *out = f;
        }
    }
    check_mpi(PMPI_Bcast(&ok, 1, MPI_INT, 0, comm), "PMPI_Bcast");
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------------- */

/* Checks every algorithm spec with kcoll_param_set on all ranks. Returns 0
 * if all were accepted everywhere. */
static int check_algos(const kcoll_api_t *api, const bench_opts_t *opts, int rank, MPI_Comm comm)
{
    const char *param = opts->coll->algo_param;
    int bad = -1; /* index of the first rejected spec */
    char algo[128];
    for (int i = 0; i < opts->nalgos && bad < 0; i++) {
        const char *e = spec_engine(opts->algos[i]);
        if (api->param_set(param, spec_algo(opts->algos[i], algo, sizeof algo)) != 0 ||
            (e && strcmp(e, "auto") && strcmp(e, "cma") && strcmp(e, "shm") &&
             strcmp(e, "vmsplice") && strcmp(e, "direct")))
            bad = i;
    }
    int any_bad = 0, local = bad >= 0;
    check_mpi(PMPI_Allreduce(&local, &any_bad, 1, MPI_INT, MPI_MAX, comm), "PMPI_Allreduce");
    if (local && rank == 0)
        fprintf(stderr, "kcoll-bench: kcoll rejected %s=%s\n", param, opts->algos[bad]);
    else if (any_bad && rank == 0)
        fprintf(stderr, "kcoll-bench: kcoll rejected an algorithm spec on some rank\n");
    return any_bad;
}

/* Replaces 'all' in the algorithm list with every algorithm kcoll has for
 * the collective at nranks (kcoll_algorithms). Returns 0, or -1 (told on
 * rank 0) when kcoll is not loaded to ask. */
static int expand_all(const kcoll_api_t *api, bench_opts_t *opts, int nranks, int rank)
{
    int has_all = 0;
    for (int i = 0; i < opts->nalgos; i++)
        has_all |= !strcmp(opts->algos[i], "all");
    if (!has_all)
        return 0;
    if (!api->algorithms) {
        if (rank == 0)
            fprintf(stderr, "kcoll-bench: -a all and --tune need kcoll loaded (LD_PRELOAD)\n");
        return -1;
    }
    size_t len = 0, cap = 4096;
    char *list = malloc(cap);
    if (!list)
        return -1;
    list[0] = '\0';
    for (int i = 0; i < opts->nalgos; i++) {
        char names[2048];
        const char *add = opts->algos[i];
        if (!strcmp(add, "all")) {
            if (api->algorithms(opts->coll->mpi_name, nranks, names, sizeof names) <= 0)
                continue;
            add = names;
        }
        len += (size_t)snprintf(list + len, cap - len, "%s%s", len ? "," : "", add);
        if (len >= cap)
            break;
    }
    int rc = len > 0 && len < cap ? parse_algos(list, opts) : -1;
    free(list);
    return rc;
}

int main(int argc, char **argv)
{
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);

    bench_opts_t opts = {0};
    int parsed = parse_args(argc, argv, rank, &opts);
    if (parsed == 0 && opts.root >= nranks) {
        if (rank == 0)
            fprintf(stderr, "kcoll-bench: root %d does not exist with %d ranks\n", opts.root,
                    nranks);
        parsed = 2;
    }
    if (parsed != 0) {
        opts_free(&opts);
        MPI_Finalize();
        return parsed == 1 ? 0 : 2;
    }

    kcoll_api_t api;
    kcoll_api_find(&api);
    const char *kcoll_version = NULL;
    char *saved_algo = NULL; /* the algorithm parameter's value before the run */
    int unusable = expand_all(&api, &opts, nranks, rank) != 0;
    if (!unusable && opts.tune_path &&
        (!api.param_set || !api.predict || auto_variant(&opts) < 0)) {
        if (rank == 0)
            fprintf(stderr, "kcoll-bench: --tune needs kcoll loaded and 'auto' among the "
                            "algorithms\n");
        unusable = 1;
    }
    if (unusable) {
        opts_free(&opts);
        MPI_Finalize();
        return 2;
    }
    if (api.param_set) {
        kcoll_version = api.version ? api.version() : "(unknown version)";
        const char *current = api.param_get ? api.param_get(opts.coll->algo_param) : NULL;
        saved_algo = current ? strdup(current) : NULL;
        if (check_algos(&api, &opts, rank, comm) != 0) {
            if (saved_algo)
                api.param_set(opts.coll->algo_param, saved_algo);
            free(saved_algo);
            opts_free(&opts);
            MPI_Finalize();
            return 2;
        }
    } else if (rank == 0) {
        fprintf(stderr, "kcoll-bench: warning: kcoll is not loaded (no kcoll_param_set symbol); "
                        "every column measures the host MPI. Run with "
                        "LD_PRELOAD=/path/libkcoll.so to compare.\n");
    }

    char mpi_name[128];
    mpi_library_name(mpi_name, sizeof mpi_name);

    FILE *csv;
    int csv_wide;
    if (csv_open(opts.csv_path, opts.nonblocking, rank, comm, &csv, &csv_wide) != 0) {
        free(saved_algo);
        opts_free(&opts);
        MPI_Finalize();
        return 2;
    }

    bench_ctx_t ctx = {
        .opts = &opts,
        .api = &api,
        .comm = comm,
        .rank = rank,
        .nranks = nranks,
        .nvariants = 1 + opts.nalgos,
        .llc = llc_bytes(),
    };
    ctx.algo_first = calloc((size_t)ctx.nvariants, sizeof *ctx.algo_first);
    check_alloc_all(ctx.algo_first != NULL, comm, "the variants");
    for (int v = 1; v < ctx.nvariants; v++) {
        char a[128], b[128];
        spec_algo(opts.algos[v - 1], a, sizeof a);
        ctx.algo_first[v] = v;
        for (int w = 1; w < v && ctx.algo_first[v] == v; w++)
            if (!strcmp(spec_algo(opts.algos[w - 1], b, sizeof b), a))
                ctx.algo_first[v] = w;
        ctx.algos_differ |= ctx.algo_first[v] != 1;
    }
    { /* every rank must rotate the same number of buffers: rank 0's LLC */
        unsigned long long llc = ctx.llc;
        check_mpi(PMPI_Bcast(&llc, 1, MPI_UNSIGNED_LONG_LONG, 0, comm), "PMPI_Bcast");
        ctx.llc = (size_t)llc;
    }
    if (opts.swept) {
        ctx.sweep_bytes = 2 * ctx.llc;
        ctx.sweep = alloc_region(ctx.sweep_bytes, 0);
        check_alloc_all(ctx.sweep != NULL, comm, "the sweep region");
    }

    /* Sizes: MIN doubled while <= MAX (0 is followed by 1). */
    for (size_t bytes = opts.min_bytes;;) {
        size_t send_stride, recv_stride, nbufs;
        layout_for(&ctx, bytes, &send_stride, &recv_stride, &nbufs);
        if (send_stride * nbufs > ctx.send_capacity)
            ctx.send_capacity = send_stride * nbufs;
        if (recv_stride * nbufs > ctx.recv_capacity)
            ctx.recv_capacity = recv_stride * nbufs;
        if (bytes >= opts.max_bytes || bytes > opts.max_bytes / 2)
            break;
        bytes = bytes ? 2 * bytes : 1;
    }
    ctx.send_region = alloc_region(ctx.send_capacity, opts.alloc_mem);
    ctx.recv_region = alloc_region(ctx.recv_capacity, opts.alloc_mem);
    ctx.comms = make_comms(&api, &opts, comm);
    if (opts.nonblocking)
        ctx.compute_s = calloc((size_t)ctx.nvariants, sizeof *ctx.compute_s);
    check_alloc_all((ctx.send_region || !ctx.send_capacity) &&
                        (ctx.recv_region || !ctx.recv_capacity) &&
                        (ctx.compute_s || !opts.nonblocking) && ctx.comms,
                    comm, "buffers");

    int nv = ctx.nvariants;
    bench_result_t result = {0};
    bench_table_t table = {0};
    bench_tune_t *tune = NULL;
    const int model = api.predict && !opts.no_model;
    char model_source[512] = "built-in machine defaults";
    const char *tuning = api.param_get ? api.param_get("TUNING") : NULL;
    if (tuning && *tuning) /* where kcoll looks, in its order (README) */
        snprintf(model_source, sizeof model_source, "KCOLL_TUNING=%s", tuning);
    else if (access("/etc/kcoll/tuning.json", R_OK) == 0)
        snprintf(model_source, sizeof model_source, "/etc/kcoll/tuning.json");
    int ok = 1;
    if (rank == 0) {
        result.median_us = calloc((size_t)nv, sizeof(double));
        result.min_us = calloc((size_t)nv, sizeof(double));
        result.p90_us = calloc((size_t)nv, sizeof(double));
        result.failed = calloc((size_t)nv, sizeof(int));
        result.handed_to_host = calloc((size_t)nv, sizeof(int));
        result.total_us = calloc((size_t)nv, sizeof(double));
        result.comp_us = calloc((size_t)nv, sizeof(double));
        result.pred_us = calloc((size_t)nv, sizeof(double));
        result.chosen = calloc((size_t)nv, sizeof *result.chosen);
        if (opts.tune_path)
            tune = bench_tune_new(opts.coll->mpi_name, nranks, nv,
                                  (const char *const *)opts.algos, opts.hot_cache);
        ok = result.median_us && result.min_us && result.p90_us && result.failed &&
             result.handed_to_host && result.total_us && result.comp_us && result.pred_us &&
             result.chosen && (tune || !opts.tune_path) && table_init(&table, &opts, model) == 0;
    }
    check_alloc_all(ok, comm, "results");
    if (rank == 0)
        print_header(&ctx, &table, mpi_name, kcoll_version, model ? model_source : NULL);

    int failed = 0;
    for (size_t bytes = opts.min_bytes;;) {
        failed |= run_size(&ctx, bytes, &result);
        if (rank == 0) {
            for (int v = 0; v < nv; v++)
                result.pred_us[v] = -1;
            if (model || tune)
                predict_size(&ctx, bytes, &result);
            if (tune)
                bench_tune_add(tune, bytes, result.median_us, result.failed,
                               result.chosen[auto_variant(&opts)]);
            print_row(&ctx, &table, bytes, &result);
            if (csv)
                csv_rows(csv, &ctx, mpi_name, kcoll_version != NULL, csv_wide, bytes, &result);
        }
        if (bytes >= opts.max_bytes || bytes > opts.max_bytes / 2)
            break;
        bytes = bytes ? 2 * bytes : 1;
    }

    int any_failed = 0;
    check_mpi(PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm), "PMPI_Allreduce");
    if (any_failed && rank == 0) {
        printf("# FAILED: some results were wrong (see stderr)\n");
        fflush(stdout);
    }
    if (tune && !any_failed && bench_tune_write(tune, opts.tune_path) != 0)
        any_failed = 1;
    bench_tune_free(tune);

    if (saved_algo) /* every rank, like every other setting */
        api.param_set(opts.coll->algo_param, saved_algo);
    free(saved_algo);
    if (csv)
        fclose(csv);
    table_free(&table);
    free(result.median_us);
    free(result.min_us);
    free(result.p90_us);
    free(result.failed);
    free(result.handed_to_host);
    free(result.total_us);
    free(result.comp_us);
    free(result.pred_us);
    free(result.chosen);
    free(ctx.compute_s);
    free(ctx.algo_first);
    free_comms(ctx.comms, ctx.nvariants);
    free_region(ctx.send_region, opts.alloc_mem);
    free_region(ctx.recv_region, opts.alloc_mem);
    free_region(ctx.sweep, 0);
    opts_free(&opts);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
