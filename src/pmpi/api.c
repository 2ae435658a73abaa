/* kcoll's public run-time interface (include/kcoll.h). */
#include <string.h>

#include "base/params.h"
#include "base/stats.h"
#include "kcoll.h"
#include "pmpi/pmpi.h"

KCOLL_PUBLIC const char *kcoll_version(void)
{
    return KCOLL_VERSION;
}

KCOLL_PUBLIC int kcoll_param_set(const char *name, const char *value)
{
    return kcoll_params_set(name, value);
}

KCOLL_PUBLIC const char *kcoll_param_get(const char *name)
{
    return kcoll_params_get(name);
}

KCOLL_PUBLIC int kcoll_stats_get(const char *coll, const char *path, uint64_t *calls,
                                 uint64_t *bytes)
{
    for (int row = 0; row < KCOLL_NCOLL * KCOLL_NMODES; row++) {
        char rname[48];
        if (!kcoll_stats_row_name(row, rname, sizeof rname) || strcmp(coll, rname))
            continue;
        const kcoll_coll_t family = kcoll_coll_family((kcoll_coll_t)(row / KCOLL_NMODES));
        for (int i = 0; i < KCOLL_MAX_ALGOS + KCOLL_NREASON; i++) {
            char name[64];
            if (!kcoll_stats_path_name(i, name, sizeof name) || strcmp(name, path))
                continue;
            /* algorithm names repeat across families ("bruck", "partitioned"):
             * the collective's own family's is the path */
            if (i < kcoll_nalgos && kcoll_algos[i].family != family)
                continue;
            kcoll_stats_read(row, i, calls, bytes);
            return 0;
        }
    }
    return -1;
}
