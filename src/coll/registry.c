/* The algorithm descriptors (coll.h): names for KCOLL_<FAMILY>_ALGO,
 * kcoll-info and the statistics, parameters, scratch, validity, engines;
 * and the parser of "<name>[:<param>=<N>,...]". */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll/coll.h"

/* Parameter descriptors shared by several algorithms. */
#define KCOLL_PARAM_K(def, min) {"k", offsetof(kcoll_aparam_t, k), def, min, 1 << 20}
#define KCOLL_PARAM_J {"j", offsetof(kcoll_aparam_t, j), 1, 1, 1 << 20}
#define KCOLL_PARAM_CHUNK {"chunk", offsetof(kcoll_aparam_t, chunk), 128, 4, 1 << 20}

const kcoll_algo_t kcoll_algos[] = {
    {.family = KCOLL_COLL_BCAST, .name = "direct_read", .build = kcoll_bcast_direct_read,
     .engines = KCOLL_ENGINES_ALL,
     .help = "every non-root reads the whole message from the root at once (paper 000 V.B, 003 V.B.1)"},
    {.family = KCOLL_COLL_BCAST, .name = "direct_write", .build = kcoll_bcast_direct_write,
     .engines = KCOLL_ENGINES_ALL,
     .help = "the root writes the message into each non-root in turn (paper 003 V.B.1)"},
    {.family = KCOLL_COLL_BCAST, .name = "knomial", .build = kcoll_bcast_knomial,
     .params = {KCOLL_PARAM_K(4, 2)}, .engines = KCOLL_ENGINES_ALL,
     .help = "k-nomial tree of readers, at most k-1 readers of one process per round (paper 003 V.B.2)"},
    {.family = KCOLL_COLL_BCAST, .name = "scatter_allgather",
     .build = kcoll_bcast_scatter_allgather, .engines = KCOLL_ENGINES_ALL,
     .help = "non-roots read one 1/p chunk each, then read the others from their owners in a ring (paper 003 V.B.3)"},
    {.family = KCOLL_COLL_BCAST, .name = "split_rw", .build = kcoll_bcast_split_rw,
     .engines = KCOLL_ENGINES_ALL,
     .help = "the root writes 1/p of each peer's copy while the peer reads the rest: both cores copy"},
    {.family = KCOLL_COLL_BCAST, .name = "hier", .build = kcoll_bcast_hier,
     .params = {{"chunk", offsetof(kcoll_aparam_t, chunk), 0, 0, 1 << 20}}, .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "tree along the topology levels, each rank reads from its group's leader, in chunk-KiB segments (0: 16 KiB, 512 KiB from 1 MiB) (paper 000 IV)"},

    /* -- Scatter, Gather (and v) -- */
    {.family = KCOLL_COLL_SCATTER, .name = "parallel_read", .build = kcoll_scatter_parallel_read,
     .engines = KCOLL_ENGINES_ALL,
     .help = "every non-root reads its block from the root at once (paper 003 IV.A.1)"},
    {.family = KCOLL_COLL_SCATTER, .name = "sequential_write",
     .build = kcoll_scatter_sequential_write, .engines = KCOLL_ENGINES_ALL,
     .help = "the root writes each non-root's block in turn (paper 003 IV.A.2)"},
    {.family = KCOLL_COLL_SCATTER, .name = "throttled_read", .build = kcoll_scatter_throttled_read,
     .params = {KCOLL_PARAM_K(4, 1)}, .engines = KCOLL_ENGINES_ALL,
     .help = "at most k non-roots read from the root at a time, chained by flags (paper 003 IV.A.3)"},
    {.family = KCOLL_COLL_SCATTER, .name = "hier", .build = kcoll_scatter_hier,
     .tmp = kcoll_scatter_hier_tmp, .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "tree along the topology levels: each leader reads its subtree's blocks from its parent, its group reads from it (flat without levels)"},
    {.family = KCOLL_COLL_GATHER, .name = "parallel_write", .build = kcoll_gather_parallel_write,
     .engines = KCOLL_ENGINES_ALL,
     .help = "every non-root writes its block into the root at once (paper 003 IV.B.1)"},
    {.family = KCOLL_COLL_GATHER, .name = "sequential_read", .build = kcoll_gather_sequential_read,
     .engines = KCOLL_ENGINES_ALL,
     .help = "the root reads each non-root's block in turn (paper 003 IV.B.2)"},
    {.family = KCOLL_COLL_GATHER, .name = "throttled_write", .build = kcoll_gather_throttled_write,
     .params = {KCOLL_PARAM_K(4, 1)}, .engines = KCOLL_ENGINES_ALL,
     .help = "at most k non-roots write into the root at a time, chained by flags (paper 003 IV.B.3)"},
    {.family = KCOLL_COLL_GATHER, .name = "hier", .build = kcoll_gather_hier,
     .tmp = kcoll_gather_hier_tmp, .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "tree along the topology levels: each rank writes its block and its children's subtrees into its parent, the root's group straight into the root (flat without levels)"},

    /* -- Allgather, Alltoall (and v), Barrier -- */
    {.family = KCOLL_COLL_ALLGATHER, .name = "gather_bcast", .build = kcoll_allgather_gather_bcast,
     .engines = KCOLL_ENGINES_ALL,
     .help = "rank 0 reads every block, then all read the rest from rank 0 (paper 000 V.C baseline)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "ring_neighbor",
     .build = kcoll_allgather_ring_neighbor, .params = {KCOLL_PARAM_J},
     .check = kcoll_allgather_ring_neighbor_check, .engines = KCOLL_ENGINES_ALL,
     .help = "step i reads block rank-i*j from rank-j, which got it in step i-1; gcd(p,j)=1 (paper 003 IV.C)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "ring_source_read",
     .build = kcoll_allgather_ring_source_read, .engines = KCOLL_ENGINES_ALL,
     .help = "step i reads block rank-i straight from its owner, no forwarding (paper 003 IV.C)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "ring_source_write",
     .build = kcoll_allgather_ring_source_write, .engines = KCOLL_ENGINES_ALL,
     .help = "step i writes the own block into rank+i (paper 003 IV.C)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "recursive_doubling",
     .build = kcoll_allgather_recursive_doubling, .engines = KCOLL_ENGINES_ALL,
     .help = "log2 rounds reading the partner's half, extra ranks folded in (paper 003 IV.C)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "bruck", .build = kcoll_allgather_bruck,
     .engines = KCOLL_ENGINES_ALL,
     .help = "ceil(log2 p) rounds reading min(2^t,p-2^t) blocks from rank+2^t (paper 003 IV.C)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "ring_levels", .build = kcoll_allgather_ring_levels,
     .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "ring_neighbor's ring (j=1) in the order of the topology levels: a group's ranks follow each other, few readers cross domains (paper 000 VI.D)"},
    {.family = KCOLL_COLL_ALLGATHER, .name = "hier", .build = kcoll_allgather_hier,
     .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "gather up each outermost topology group's tree, exchange among the groups' leaders, read the rest down the tree piece by piece (flat without levels)"},
    {.family = KCOLL_COLL_ALLTOALL, .name = "pairwise", .build = kcoll_alltoall_pairwise,
     .tmp = kcoll_alltoall_in_place_tmp, .engines = KCOLL_ENGINES_ALL,
     .help = "p-1 steps, read from rank XOR i (p power of 2) or rank-i: one reader per process (003 IV.C.1)"},
    {.family = KCOLL_COLL_ALLTOALL, .name = "bruck", .build = kcoll_alltoall_bruck,
     .tmp = kcoll_alltoall_bruck_tmp, .engines = KCOLL_ENGINES_ALL,
     .help = "ceil(log2 p) rounds through scratch, for small blocks (paper 003 IV.C.1)"},
    {.family = KCOLL_COLL_ALLTOALL, .name = "pairwise_write", .build = kcoll_alltoall_pairwise_write,
     .tmp = kcoll_alltoall_in_place_tmp, .engines = KCOLL_ENGINES_ALL,
     .help = "the pairwise schedule with the sender writing (paper 003 IV.C.1)"},
    {.family = KCOLL_COLL_BARRIER, .name = "dissemination", .build = kcoll_barrier_dissemination,
     .engines = KCOLL_ENGINES_ALL,
     .help = "ceil(log2 p) rounds of flags on the control segment, no data"},
    {.family = KCOLL_COLL_BARRIER, .name = "hier", .build = kcoll_barrier_hier,
     .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "arrive up the tree of the topology levels, leave down it (flat: a central counter)"},

    /* -- Reduce, Allreduce, Reduce_scatter(_block) -- */
    {.family = KCOLL_COLL_REDUCE, .name = "partitioned", .build = kcoll_reduce_partitioned,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_tmp_len, .engines = KCOLL_ENGINES_ALL,
     .help = "every rank reduces 1/p of the vector, reading it from all peers in chunk-KiB pieces, and writes it to the root (paper 004 IV.A)"},
    {.family = KCOLL_COLL_REDUCE, .name = "staggered", .build = kcoll_reduce_staggered,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_staggered_tmp, .engines = KCOLL_ENGINES_ALL,
     .help = "every rank reduces 1/p of the vector, reading its peers in a staggered order (rank r+1 first: one reader per process at a time) into scratch, in kcoll's order, and writes it to the root"},
    {.family = KCOLL_COLL_REDUCE, .name = "serial", .build = kcoll_reduce_serial,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_tmp_len, .engines = KCOLL_ENGINES_ALL,
     .help = "the root reads and reduces every contribution itself, chunk by chunk (paper 004's original)"},
    {.family = KCOLL_COLL_REDUCE, .name = "hier", .build = kcoll_reduce_hier,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_hier_tmp, .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "partitioned reduce inside each topology group to its leader (the root in its own), up the levels to the root (flat without levels)"},
    {.family = KCOLL_COLL_ALLREDUCE, .name = "partitioned", .build = kcoll_reduce_partitioned,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_tmp_len, .engines = KCOLL_ENGINES_ALL,
     .help = "every rank reduces 1/p of the vector from all peers, then reads the other slices from their owners (paper 004 IV.A)"},
    {.family = KCOLL_COLL_ALLREDUCE, .name = "staggered", .build = kcoll_reduce_staggered,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_staggered_tmp, .engines = KCOLL_ENGINES_ALL,
     .help = "partitioned with staggered reads: every rank reduces 1/p of the vector reading rank r+1 first, one reader per process at a time, then reads the other slices"},
    {.family = KCOLL_COLL_ALLREDUCE, .name = "reduce_bcast", .build = kcoll_allreduce_reduce_bcast,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_tmp_len, .engines = KCOLL_ENGINES_ALL,
     .help = "partitioned reduce to rank 0, then every rank reads the whole result from it (paper 004 IV.C)"},
    {.family = KCOLL_COLL_ALLREDUCE, .name = "hier", .build = kcoll_allreduce_hier,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_tmp_len, .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "partitioned reduce inside each topology group, up the levels, partitioned allreduce of the outer leaders, broadcast back down (flat without levels)"},
    {.family = KCOLL_COLL_REDUCE_SCATTER, .name = "partitioned", .build = kcoll_reduce_partitioned,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_tmp_len, .engines = KCOLL_ENGINES_ALL,
     .help = "every rank reduces its own block, reading it from all peers in chunk-KiB pieces (paper 004 IV.A)"},
    {.family = KCOLL_COLL_REDUCE_SCATTER, .name = "staggered", .build = kcoll_reduce_staggered,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_staggered_tmp, .engines = KCOLL_ENGINES_ALL,
     .help = "every rank reduces its own block, reading its peers in a staggered order (rank r+1 first: one reader per process at a time)"},
    {.family = KCOLL_COLL_REDUCE_SCATTER, .name = "hier", .build = kcoll_reduce_scatter_hier,
     .params = {KCOLL_PARAM_CHUNK}, .tmp = kcoll_reduce_scatter_hier_tmp, .levels = 1, .engines = KCOLL_ENGINES_ALL,
     .help = "the hierarchical reduce of the whole vector to rank 0, then the hierarchical scatter of its blocks (flat partitioned without levels)"},
};
const int kcoll_nalgos = (int)(sizeof kcoll_algos / sizeof kcoll_algos[0]);

static const struct {
    const char *name, *env;
    kcoll_coll_t family;
    int v;
} kcoll_colls[KCOLL_NCOLL] = {
    [KCOLL_COLL_BCAST] = {"MPI_Bcast", "BCAST", KCOLL_COLL_BCAST, 0},
    [KCOLL_COLL_SCATTER] = {"MPI_Scatter", "SCATTER", KCOLL_COLL_SCATTER, 0},
    [KCOLL_COLL_SCATTERV] = {"MPI_Scatterv", "SCATTER", KCOLL_COLL_SCATTER, 1},
    [KCOLL_COLL_GATHER] = {"MPI_Gather", "GATHER", KCOLL_COLL_GATHER, 0},
    [KCOLL_COLL_GATHERV] = {"MPI_Gatherv", "GATHER", KCOLL_COLL_GATHER, 1},
    [KCOLL_COLL_ALLGATHER] = {"MPI_Allgather", "ALLGATHER", KCOLL_COLL_ALLGATHER, 0},
    [KCOLL_COLL_ALLGATHERV] = {"MPI_Allgatherv", "ALLGATHER", KCOLL_COLL_ALLGATHER, 1},
    [KCOLL_COLL_ALLTOALL] = {"MPI_Alltoall", "ALLTOALL", KCOLL_COLL_ALLTOALL, 0},
    [KCOLL_COLL_ALLTOALLV] = {"MPI_Alltoallv", "ALLTOALL", KCOLL_COLL_ALLTOALL, 1},
    [KCOLL_COLL_BARRIER] = {"MPI_Barrier", "BARRIER", KCOLL_COLL_BARRIER, 0},
    [KCOLL_COLL_REDUCE] = {"MPI_Reduce", "REDUCE", KCOLL_COLL_REDUCE, 0},
    [KCOLL_COLL_ALLREDUCE] = {"MPI_Allreduce", "ALLREDUCE", KCOLL_COLL_ALLREDUCE, 0},
    [KCOLL_COLL_REDUCE_SCATTER_BLOCK] = {"MPI_Reduce_scatter_block", "REDUCE_SCATTER",
                                         KCOLL_COLL_REDUCE_SCATTER, 0},
    [KCOLL_COLL_REDUCE_SCATTER] = {"MPI_Reduce_scatter", "REDUCE_SCATTER",
                                   KCOLL_COLL_REDUCE_SCATTER, 1},
};

const char *kcoll_coll_name(kcoll_coll_t c)
{
    return (unsigned)c < KCOLL_NCOLL ? kcoll_colls[c].name : "?";
}

kcoll_coll_t kcoll_coll_by_name(const char *name)
{
    for (int i = 0; name && i < KCOLL_NCOLL; i++)
        if (!strcasecmp(name, kcoll_colls[i].name) || !strcasecmp(name, kcoll_colls[i].name + 4))
            return (kcoll_coll_t)i;
    return KCOLL_NCOLL;
}

kcoll_coll_t kcoll_coll_family(kcoll_coll_t c)
{
    return (unsigned)c < KCOLL_NCOLL ? kcoll_colls[c].family : c;
}

const char *kcoll_coll_env(kcoll_coll_t c)
{
    return (unsigned)c < KCOLL_NCOLL ? kcoll_colls[c].env : "?";
}

int kcoll_coll_is_v(kcoll_coll_t c)
{
    return (unsigned)c < KCOLL_NCOLL && kcoll_colls[c].v;
}

int kcoll_algo_index(const kcoll_algo_t *a)
{
    return (int)(a - kcoll_algos);
}

const kcoll_algo_t *kcoll_algo_find(kcoll_coll_t c, const char *name)
{
    c = kcoll_coll_family(c);
    for (int i = 0; i < kcoll_nalgos; i++)
        if (kcoll_algos[i].family == c && !strcmp(kcoll_algos[i].name, name))
            return &kcoll_algos[i];
    return NULL;
}

void kcoll_algo_defaults(const kcoll_algo_t *a, kcoll_aparam_t *prm)
{
    memset(prm, 0, sizeof *prm);
    for (const kcoll_pdesc_t *d = a->params; d < a->params + KCOLL_ALGO_MAX_PARAMS && d->name; d++)
        *kcoll_aparam_field(prm, d) = d->def;
}

static const kcoll_pdesc_t *kcoll_param_find(const kcoll_algo_t *a, const char *name, size_t len)
{
    for (const kcoll_pdesc_t *d = a->params; d < a->params + KCOLL_ALGO_MAX_PARAMS && d->name; d++)
        if (strlen(d->name) == len && !strncmp(d->name, name, len))
            return d;
    return NULL;
}

/* "k, chunk" or "no parameter": what a's spec may name. */
static void kcoll_param_list(const kcoll_algo_t *a, char *out, size_t outlen)
{
    int n = 0;
    out[0] = '\0';
    for (const kcoll_pdesc_t *d = a->params; d < a->params + KCOLL_ALGO_MAX_PARAMS && d->name; d++)
        n += snprintf(out + n, n < (int)outlen ? outlen - (size_t)n : 0, "%s%s=N", n ? ", " : "",
                      d->name);
    if (!n)
        snprintf(out, outlen, "no parameter");
}

int kcoll_algo_parse(kcoll_coll_t c, const char *spec, const kcoll_algo_t **algo,
                     kcoll_aparam_t *prm, char *err, size_t errlen)
{
    char name[64];
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    *algo = NULL;
    memset(prm, 0, sizeof *prm);
    if (nlen >= sizeof name) {
        snprintf(err, errlen, "algorithm name '%s' is too long", spec);
        return -1;
    }
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    if (nlen == 0 || !strcmp(name, "auto")) {
        if (colon) {
            snprintf(err, errlen, "'auto' takes no parameter");
            return -1;
        }
        return 0;
    }
    const kcoll_algo_t *a = kcoll_algo_find(c, name);
    if (!a) {
        int n = snprintf(err, errlen, "unknown %s algorithm '%s' (known: auto", kcoll_coll_name(c), name);
        for (int i = 0; i < kcoll_nalgos && n > 0 && (size_t)n < errlen; i++)
            if (kcoll_algos[i].family == kcoll_coll_family(c))
                n += snprintf(err + n, errlen - (size_t)n, ", %s", kcoll_algos[i].name);
        if (n > 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ")");
        return -1;
    }
    kcoll_algo_defaults(a, prm);
    for (const char *arg = colon ? colon + 1 : NULL; arg;) {
        const char *eq = strchr(arg, '='), *comma = strchr(arg, ',');
        const kcoll_pdesc_t *d = eq && (!comma || eq < comma) ? kcoll_param_find(a, arg, (size_t)(eq - arg)) : NULL;
        if (!d) {
            char list[96];
            kcoll_param_list(a, list, sizeof list);
            snprintf(err, errlen, "%s takes %s, not '%.*s'", a->name, list,
                     (int)(comma ? (size_t)(comma - arg) : strlen(arg)), arg);
            return -1;
        }
        char *end;
        long v = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || (*end && *end != ',') || v < d->min || v > d->max) {
            snprintf(err, errlen, "%s: %s must be an integer from %d to %d, not '%.*s'", a->name,
                     d->name, d->min, d->max,
                     (int)(comma ? (size_t)(comma - eq - 1) : strlen(eq + 1)), eq + 1);
            return -1;
        }
        *kcoll_aparam_field(prm, d) = (int)v;
        arg = comma ? comma + 1 : NULL;
    }
    *algo = a;
    return 0;
}

void kcoll_algo_spec(const kcoll_algo_t *a, const kcoll_aparam_t *prm, char *out, size_t outlen)
{
    kcoll_aparam_t v = *prm;
    int n = snprintf(out, outlen, "%s", a->name);
    for (const kcoll_pdesc_t *d = a->params; d < a->params + KCOLL_ALGO_MAX_PARAMS && d->name; d++)
        n += snprintf(out + n, n < (int)outlen ? outlen - (size_t)n : 0, "%c%s=%d",
                      d == a->params ? ':' : ',', d->name, *kcoll_aparam_field(&v, d));
}

void kcoll_split(size_t n, int parts, int i, size_t *off, size_t *len)
{
    size_t align = n / (size_t)parts >= 4 * 4096 ? 4096 : 64;
    size_t piece = (n / (size_t)parts + align - 1) / align * align;
    if (piece == 0)
        piece = align;
    size_t lo = piece * (size_t)i, hi = lo + piece;
    if (lo > n)
        lo = n;
    if (hi > n || i == parts - 1)
        hi = n;
    *off = lo;
    *len = hi - lo;
}
