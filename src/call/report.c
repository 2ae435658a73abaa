/* The statistics table's rows and paths, named (see report.h), and its
 * printed form (KCOLL_STATS). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/stats.h"
#include "call/report.h"
#include "team/team.h"

static const char *const kcoll_reason_names[KCOLL_NREASON] = {
    [KCOLL_R_NONE] = "none",
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
    [KCOLL_R_NO_TEAM] = "no_team",
    [KCOLL_R_SPANS] = "spans",
};

_Static_assert(KCOLL_NROWS <= KCOLL_STATS_ROWS, "a statistics row per call kind");
_Static_assert(KCOLL_NPATHS_ALL <= KCOLL_STATS_PATHS, "a path per way");

const char *kcoll_reason_name(kcoll_reason_t r)
{
    return (unsigned)r < KCOLL_NREASON ? kcoll_reason_names[r] : "unknown";
}

const char *kcoll_stats_row_name(int row, char *buf, size_t buflen)
{
    if (row == KCOLL_ROW_TRANSFERS) {
        snprintf(buf, buflen, "transfers");
        return buf;
    }
    if (row < 0 || row >= KCOLL_NCOLL * KCOLL_NMODES)
        return NULL;
    const char *name = kcoll_coll_name((kcoll_coll_t)(row / KCOLL_NMODES));
    switch ((kcoll_mode_t)(row % KCOLL_NMODES)) {
    case KCOLL_MODE_NONBLOCKING: /* MPI_Bcast -> MPI_Ibcast */
        snprintf(buf, buflen, "MPI_I%c%s", name[4] + 'a' - 'A', name + 5);
        break;
    case KCOLL_MODE_PERSISTENT:
        snprintf(buf, buflen, "%s_init", name);
        break;
    default:
        snprintf(buf, buflen, "%s", name);
    }
    return buf;
}

const char *kcoll_stats_path_name(int path, char *buf, size_t buflen)
{
    if (path == KCOLL_PATH_SHORTCUT || path == KCOLL_PATH_STREAK) {
        snprintf(buf, buflen, "%s", path == KCOLL_PATH_SHORTCUT ? "shortcut" : "host_streak");
        return buf;
    }
    if (path == KCOLL_PATH_LEADERS || path == KCOLL_PATH_LANES) {
        snprintf(buf, buflen, "kcoll:%s", path == KCOLL_PATH_LEADERS ? "leaders" : "lanes");
        return buf;
    }
    if (path == KCOLL_PATH_ADAPT_CHECK || path == KCOLL_PATH_ADAPT_SWITCH) {
        snprintf(buf, buflen, "adapt:%s", path == KCOLL_PATH_ADAPT_CHECK ? "checked" : "switched");
        return buf;
    }
    if (path >= KCOLL_NPATHS && path < KCOLL_NPATHS_ALL) {
        snprintf(buf, buflen, "engine:%s", kcoll_engine((kcoll_engine_id_t)(path - KCOLL_NPATHS))->name);
        return buf;
    }
    if (path < 0 || path >= KCOLL_NPATHS)
        return NULL;
    if (path < KCOLL_MAX_ALGOS) {
        if (path >= kcoll_nalgos)
            return NULL;
        snprintf(buf, buflen, "kcoll:%s", kcoll_algos[path].name);
    } else {
        snprintf(buf, buflen, "mpi:%s", kcoll_reason_name((kcoll_reason_t)(path - KCOLL_MAX_ALGOS)));
    }
    return buf;
}

void kcoll_stats_engines(const kcoll_exec_t *x)
{
    for (int e = 0; e < KCOLL_NENGINES; e++)
        if (x->moved[e])
            kcoll_stats_add(KCOLL_ROW_TRANSFERS, KCOLL_PATH_ENGINE(e), x->moved[e],
                            kcoll_team_threads);
}

void kcoll_stats_print(const uint64_t *table, int nranks, void *file)
{
    FILE *out = file;
    fprintf(out, "# kcoll statistics, summed over %d ranks (calls and bytes per rank, added up)\n",
            nranks);
    fprintf(out, "# %-28s %-34s %14s %20s\n", "collective", "path", "calls", "bytes");
    for (int row = 0; row < KCOLL_NROWS; row++)
        for (int p = 0; p < KCOLL_NPATHS_ALL; p++) {
            const uint64_t *cell = kcoll_stats_cell(table, row, p);
            char rname[48], pname[64];
            if (!cell[0] || !kcoll_stats_path_name(p, pname, sizeof pname))
                continue;
            fprintf(out, "  %-28s %-34s %14" PRIu64 " %20" PRIu64 "\n",
                    kcoll_stats_row_name(row, rname, sizeof rname), pname, cell[0], cell[1]);
        }
    fflush(out);
}
