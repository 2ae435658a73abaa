/* The registry of algorithms: names for KCOLL_<COLL>_ALGO, kcoll-info and
 * the statistics, and the parser of "<name>[:<param>=<N>]". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

const kcoll_algo_t kcoll_algos[] = {
    {KCOLL_COLL_BCAST, "direct_read", kcoll_bcast_direct_read, NULL, 0, 0,
     "every non-root reads the whole message from the root at once (paper 000 V.B, 003 V.B.1)"},
    {KCOLL_COLL_BCAST, "direct_write", kcoll_bcast_direct_write, NULL, 0, 0,
     "the root writes the message into each non-root in turn (paper 003 V.B.1)"},
    {KCOLL_COLL_BCAST, "knomial", kcoll_bcast_knomial, "k", 4, 2,
     "k-nomial tree of readers, at most k-1 readers of one process per round (paper 003 V.B.2)"},
    {KCOLL_COLL_BCAST, "scatter_allgather", kcoll_bcast_scatter_allgather, NULL, 0, 0,
     "non-roots read one 1/p chunk each, then read the others from their owners in a ring (paper 003 V.B.3)"},
    {KCOLL_COLL_BCAST, "split_rw", kcoll_bcast_split_rw, NULL, 0, 0,
     "the root writes 1/p of each peer's copy while the peer reads the rest: both cores copy"},

    /* -- Scatter, Gather (and v) -- */
    {KCOLL_COLL_SCATTER, "parallel_read", kcoll_scatter_parallel_read, NULL, 0, 0,
     "every non-root reads its block from the root at once (paper 003 IV.A.1)"},
    {KCOLL_COLL_SCATTER, "sequential_write", kcoll_scatter_sequential_write, NULL, 0, 0,
     "the root writes each non-root's block in turn (paper 003 IV.A.2)"},
    {KCOLL_COLL_SCATTER, "throttled_read", kcoll_scatter_throttled_read, "k", 4, 1,
     "at most k non-roots read from the root at a time, chained by flags (paper 003 IV.A.3)"},
    {KCOLL_COLL_GATHER, "parallel_write", kcoll_gather_parallel_write, NULL, 0, 0,
     "every non-root writes its block into the root at once (paper 003 IV.B.1)"},
    {KCOLL_COLL_GATHER, "sequential_read", kcoll_gather_sequential_read, NULL, 0, 0,
     "the root reads each non-root's block in turn (paper 003 IV.B.2)"},
    {KCOLL_COLL_GATHER, "throttled_write", kcoll_gather_throttled_write, "k", 4, 1,
     "at most k non-roots write into the root at a time, chained by flags (paper 003 IV.B.3)"},

    /* -- Allgather, Alltoall (and v), Barrier -- */
    {KCOLL_COLL_ALLGATHER, "gather_bcast", kcoll_allgather_gather_bcast, NULL, 0, 0,
     "rank 0 reads every block, then all read the rest from rank 0 (paper 000 V.C baseline)"},
    {KCOLL_COLL_ALLGATHER, "ring_neighbor", kcoll_allgather_ring_neighbor, "j", 1, 1,
     "step i reads block rank-i*j from rank-j, which got it in step i-1; gcd(p,j)=1 (paper 003 IV.C)"},
    {KCOLL_COLL_ALLGATHER, "ring_source_read", kcoll_allgather_ring_source_read, NULL, 0, 0,
     "step i reads block rank-i straight from its owner, no forwarding (paper 003 IV.C)"},
    {KCOLL_COLL_ALLGATHER, "ring_source_write", kcoll_allgather_ring_source_write, NULL, 0, 0,
     "step i writes the own block into rank+i (paper 003 IV.C)"},
    {KCOLL_COLL_ALLGATHER, "recursive_doubling", kcoll_allgather_recursive_doubling, NULL, 0, 0,
     "log2 rounds reading the partner's half, extra ranks folded in (paper 003 IV.C)"},
    {KCOLL_COLL_ALLGATHER, "bruck", kcoll_allgather_bruck, NULL, 0, 0,
     "ceil(log2 p) rounds reading min(2^t,p-2^t) blocks from rank+2^t (paper 003 IV.C)"},
    {KCOLL_COLL_ALLTOALL, "pairwise", kcoll_alltoall_pairwise, NULL, 0, 0,
     "p-1 steps, read from rank XOR i (p power of 2) or rank-i: one reader per process (003 IV.C.1)"},
    {KCOLL_COLL_ALLTOALL, "bruck", kcoll_alltoall_bruck, NULL, 0, 0,
     "ceil(log2 p) rounds through scratch, for small blocks (paper 003 IV.C.1)"},
    {KCOLL_COLL_ALLTOALL, "pairwise_write", kcoll_alltoall_pairwise_write, NULL, 0, 0,
     "the pairwise schedule with the sender writing (paper 003 IV.C.1)"},
    {KCOLL_COLL_BARRIER, "dissemination", kcoll_barrier_dissemination, NULL, 0, 0,
     "ceil(log2 p) rounds of flags on the control segment, no data"},

    /* -- Reduce, Allreduce, Reduce_scatter(_block) -- */
    {KCOLL_COLL_REDUCE, "partitioned", kcoll_reduce_partitioned, "chunk", 128, 4,
     "every rank reduces 1/p of the vector, reading it from all peers in chunk-KiB pieces, and writes it to the root (paper 004 IV.A)"},
    {KCOLL_COLL_REDUCE, "serial", kcoll_reduce_serial, "chunk", 128, 4,
     "the root reads and reduces every contribution itself, chunk by chunk (paper 004's original)"},
    {KCOLL_COLL_ALLREDUCE, "partitioned", kcoll_reduce_partitioned, "chunk", 128, 4,
     "every rank reduces 1/p of the vector from all peers, then reads the other slices from their owners (paper 004 IV.A)"},
    {KCOLL_COLL_ALLREDUCE, "reduce_bcast", kcoll_allreduce_reduce_bcast, "chunk", 128, 4,
     "partitioned reduce to rank 0, then every rank reads the whole result from it (paper 004 IV.C)"},
    {KCOLL_COLL_REDUCE_SCATTER, "partitioned", kcoll_reduce_partitioned, "chunk", 128, 4,
     "every rank reduces its own block, reading it from all peers in chunk-KiB pieces (paper 004 IV.A)"},

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
        if (kcoll_algos[i].coll == c && !strcmp(kcoll_algos[i].name, name))
            return &kcoll_algos[i];
    return NULL;
}

int kcoll_algo_parse(kcoll_coll_t c, const char *spec, const kcoll_algo_t **algo, int *param,
                     char *err, size_t errlen)
{
    char name[64];
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    *algo = NULL;
    *param = 0;
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
            if (kcoll_algos[i].coll == kcoll_coll_family(c))
                n += snprintf(err + n, errlen - (size_t)n, ", %s", kcoll_algos[i].name);
        if (n > 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ")");
        return -1;
    }
    int value = a->param_default;
    if (colon) {
        const char *arg = colon + 1;
        size_t plen = a->param ? strlen(a->param) : 0;
        char *end;
        if (!a->param || strncmp(arg, a->param, plen) || arg[plen] != '=') {
            snprintf(err, errlen, "%s takes %s%s%s", a->name, a->param ? "only the parameter " : "no parameter",
                     a->param ? a->param : "", a->param ? "=N" : "");
            return -1;
        }
        long v = strtol(arg + plen + 1, &end, 10);
        if (end == arg + plen + 1 || *end || v < a->param_min || v > 1 << 20) {
            snprintf(err, errlen, "%s: %s must be an integer >= %d, not '%s'", a->name, a->param,
                     a->param_min, arg + plen + 1);
            return -1;
        }
        value = (int)v;
    }
    *algo = a;
    *param = value;
    return 0;
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
