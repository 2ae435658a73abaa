/* Statistics of what kcoll accelerated and what it handed to the host MPI.
 * Counters are per process; MPI_Finalize sums them over MPI_COMM_WORLD and
 * rank 0 prints the table (KCOLL_STATS=1). Relaxed atomic adds: a counter
 * orders nothing, it only must not lose increments when several threads
 * call collectives on different communicators. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/stats.h"

static _Atomic uint64_t kcoll_stats[KCOLL_NCOLL][KCOLL_NPATH][2];

static const char *const kcoll_reason_names[KCOLL_NREASON] = {
    [KCOLL_R_DISABLED] = "disabled",
    [KCOLL_R_INVALID] = "invalid_args",
    [KCOLL_R_INTERCOMM] = "intercomm",
    [KCOLL_R_ONE_RANK] = "one_rank",
    [KCOLL_R_SMALL] = "below_min_bytes",
    [KCOLL_R_NONCONTIG] = "noncontig_datatype",
    [KCOLL_R_MULTINODE] = "multinode",
    [KCOLL_R_NO_CMA] = "no_cma",
    [KCOLL_R_TEAM_FAILED] = "team_failed",
    [KCOLL_R_BAD_ALGO] = "bad_algo",
    [KCOLL_R_OP] = "unsupported_op",
};

const char *kcoll_reason_name(kcoll_reason_t r)
{
    return (unsigned)r < KCOLL_NREASON ? kcoll_reason_names[r] : "unknown";
}

static void kcoll_stats_add(kcoll_coll_t c, int path, size_t bytes)
{
    if ((unsigned)c >= KCOLL_NCOLL || path < 0 || path >= KCOLL_NPATH)
        return;
    /* relaxed: a counter, ordering nothing */
    atomic_fetch_add_explicit(&kcoll_stats[c][path][0], 1, memory_order_relaxed);
    /* relaxed: a counter, ordering nothing */
    atomic_fetch_add_explicit(&kcoll_stats[c][path][1], bytes, memory_order_relaxed);
}

void kcoll_stats_count_kcoll(kcoll_coll_t c, int algo_index, size_t bytes)
{
    if (algo_index >= 0 && algo_index < KCOLL_MAX_ALGOS)
        kcoll_stats_add(c, algo_index, bytes);
}

void kcoll_stats_count_mpi(kcoll_coll_t c, kcoll_reason_t r, size_t bytes)
{
    kcoll_stats_add(c, KCOLL_MAX_ALGOS + (int)r, bytes);
}

void kcoll_stats_snapshot(uint64_t out[KCOLL_STATS_LEN])
{
    size_t i = 0;
    for (int c = 0; c < KCOLL_NCOLL; c++)
        for (int p = 0; p < KCOLL_NPATH; p++)
            for (int k = 0; k < 2; k++)
                /* relaxed: a snapshot of counters, ordering nothing */
                out[i++] = atomic_load_explicit(&kcoll_stats[c][p][k], memory_order_relaxed);
}

const char *kcoll_stats_path_name(int i, char *buf, size_t buflen)
{
    if (i < 0 || i >= KCOLL_NPATH)
        return NULL;
    if (i < KCOLL_MAX_ALGOS) {
        if (i >= kcoll_nalgos)
            return NULL;
        snprintf(buf, buflen, "kcoll:%s", kcoll_algos[i].name);
    } else {
        snprintf(buf, buflen, "mpi:%s", kcoll_reason_name((kcoll_reason_t)(i - KCOLL_MAX_ALGOS)));
    }
    return buf;
}

void kcoll_stats_print(const uint64_t table[KCOLL_STATS_LEN], int nranks, void *file)
{
    FILE *out = file;
    fprintf(out, "# kcoll statistics, summed over %d ranks (calls and bytes per rank, added up)\n",
            nranks);
    fprintf(out, "# %-16s %-28s %14s %20s\n", "collective", "path", "calls", "bytes");
    for (int c = 0; c < KCOLL_NCOLL; c++)
        for (int p = 0; p < KCOLL_NPATH; p++) {
            const uint64_t *row = &table[((size_t)c * KCOLL_NPATH + (size_t)p) * 2];
            char name[64];
            if (!row[0] || !kcoll_stats_path_name(p, name, sizeof name))
                continue;
            fprintf(out, "  %-16s %-28s %14" PRIu64 " %20" PRIu64 "\n",
                    kcoll_coll_name((kcoll_coll_t)c), name, row[0], row[1]);
        }
    fflush(out);
}
