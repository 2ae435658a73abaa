/* Helpers shared by kcoll's MPI test programs (see mpitest.h). */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static long mt_passed, mt_failed;

void mt_shapes(MPI_Comm comms[MT_NSHAPES], const char *names[MT_NSHAPES])
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    comms[0] = MPI_COMM_WORLD;
    names[0] = "world";
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    names[1] = "dup";
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]);
    names[2] = "odd/even split";
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &comms[3]);
    names[3] = "reversed split";
}

void mt_free_shapes(MPI_Comm comms[MT_NSHAPES])
{
    for (int i = 1; i < MT_NSHAPES; i++)
        MPI_Comm_free(&comms[i]);
}

int mt_open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the descriptor of the open directory itself */
}

int mt_maps_of(const char *what)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return n;
}

uint64_t mt_calls(const char *coll, const char *path)
{
    uint64_t calls = 0, bytes = 0;
    if (kcoll_stats_get(coll, path, &calls, &bytes))
        return 0;
    return calls;
}

mt_opts_t mt_options(int argc, char **argv)
{
    mt_opts_t o = {0, NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q"))
            o.quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            o.only = argv[++i];
    }
    return o;
}

/* Is the name of spec ("name[:params]") in the comma-separated list? */
static int mt_named(const char *spec, const char *list)
{
    const size_t nlen = strcspn(spec, ":");
    for (const char *l = list; l && *l; l += strcspn(l, ","), l += *l == ',') {
        size_t llen = strcspn(l, ",");
        if (llen == nlen && !strncmp(spec, l, nlen))
            return 1;
    }
    return 0;
}

int mt_algo_wanted(const mt_opts_t *o, const char *spec, int ai, const char *levels_only)
{
    if (ai == 0)
        return 1;
    if (o->only)
        return mt_named(spec, o->only);
    return !mt_named(spec, levels_only);
}

uint64_t mt_calls_any(const char *coll, const char *const *algos, int n)
{
    uint64_t sum = 0;
    for (int a = 1; a < n; a++)
        if (!strchr(algos[a], ':')) {
            char path[64];
            snprintf(path, sizeof path, "kcoll:%s", algos[a]);
            sum += mt_calls(coll, path);
        }
    return sum;
}

const char *mt_verdict(int rc1, int rc2, const void *ref, const void *got, size_t span,
                       int expect_kcoll, int forced, int bad, mt_rows_t before, mt_rows_t after)
{
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS)
        return "an MPI call returned an error";
    if (memcmp(ref, got, span))
        return "result differs from the host MPI";
    if (expect_kcoll != (after.any == before.any + 1))
        return expect_kcoll ? "kcoll did not run" : "kcoll ran where the host MPI should";
    if (expect_kcoll && forced && after.path != before.path + 1)
        return "statistics do not show the forced algorithm";
    if (bad && after.bad != before.bad + 1)
        return "an invalid algorithm was not counted as mpi:bad_algo";
    return NULL;
}

MPI_Datatype mt_unmapped_type(void)
{
    MPI_Datatype t;
    int gsize = 4, distrib = MPI_DISTRIBUTE_CYCLIC, darg = 1, psize = 2;
    MPI_Type_create_darray(2, 0, 1, &gsize, &distrib, &darg, &psize, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

void mt_check_fallbacks(const char *coll, const char *collv)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1 && mt_calls(coll, "mpi:noncontig_datatype") == 0)
        mt_fail("no call counted as mpi:noncontig_datatype");
    if (size > 1 && mt_calls(collv, "mpi:below_min_bytes") == 0)
        mt_fail("no call counted as mpi:below_min_bytes");
    if (size == 1 && mt_calls(coll, "mpi:one_rank") == 0)
        mt_fail("no call counted as mpi:one_rank");
}

uint64_t mt_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static unsigned mt_rng;

void mt_seed(unsigned seed)
{
    mt_rng = seed;
}

unsigned mt_rnd(void)
{
    mt_rng = mt_rng * 1103515245u + 12345u;
    return (mt_rng >> 8) & 0xffffff;
}

int mt_shuffle(int p, const int *counts, int *displs, int *order)
{
    for (int q = 0; q < p; q++)
        order[q] = q;
    for (int q = p - 1; q > 0; q--) {
        int k = (int)(mt_rnd() % (unsigned)(q + 1)), t = order[q];
        order[q] = order[k];
        order[k] = t;
    }
    int end = (int)(mt_rnd() % 3);
    for (int q = 0; q < p; q++) {
        displs[order[q]] = end;
        end += counts[order[q]] + (int)(mt_rnd() % 3);
    }
    return end;
}

void mt_fail(const char *fmt, ...)
{
    if (mt_failed++ < 20) {
        int rank;
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "world rank %d: FAIL: %s\n", rank, line);
    }
}

void mt_pass(void)
{
    mt_passed++;
}

long mt_failures(void)
{
    return mt_failed;
}

int mt_finish(const char *name)
{
    long mine[2] = {mt_passed, mt_failed}, sum[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s (%d ranks): %ld passed, %ld failed\n", name, size, sum[0], sum[1]);
        fflush(stdout);
    }
    return sum[1] ? 1 : 0;
}

int mt_host_is_ompi(void)
{
    static int known = -1;
    if (known < 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(v, &len);
        known = strstr(v, "Open MPI") != NULL;
    }
    return known;
}

void mt_paths_alike(const unsigned char *paths, int n, MPI_Comm comm, const char *what)
{
    int lo = 0, hi = 0;
    MPI_Allreduce(&n, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&n, &hi, 1, MPI_INT, MPI_MAX, comm);
    if (lo != hi) {
        mt_fail("%s: the ranks made %d..%d calls", what, lo, hi);
        return;
    }
    if (!n)
        return;
    unsigned char *pmin = malloc((size_t)n), *pmax = malloc((size_t)n);
    if (!pmin || !pmax) {
        fprintf(stderr, "mt_paths_alike: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Allreduce(paths, pmin, n, MPI_UNSIGNED_CHAR, MPI_MIN, comm);
    MPI_Allreduce(paths, pmax, n, MPI_UNSIGNED_CHAR, MPI_MAX, comm);
    for (int i = 0; i < n; i++)
        if (pmin[i] != pmax[i]) {
            mt_fail("%s: call %d took kcoll on some ranks and the host on others", what, i);
            break;
        }
    free(pmin);
    free(pmax);
}
