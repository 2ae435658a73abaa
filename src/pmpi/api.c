/* kcoll's public run-time interface (include/kcoll.h). */
#include <string.h>

#include "core/params.h"
#include "core/stats.h"
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
    uint64_t table[KCOLL_STATS_LEN];
    kcoll_stats_snapshot(table);
    for (int c = 0; c < KCOLL_NCOLL; c++) {
        if (strcmp(coll, kcoll_coll_name((kcoll_coll_t)c)))
            continue;
        for (int i = 0; i < KCOLL_NPATH; i++) {
            char name[64];
            if (!kcoll_stats_path_name(i, name, sizeof name) || strcmp(name, path))
                continue;
            /* algorithm names repeat across families ("bruck", "partitioned"):
             * the collective's own family's is the row */
            if (i < kcoll_nalgos && kcoll_algos[i].coll != kcoll_coll_family((kcoll_coll_t)c))
                continue;
            const uint64_t *row = &table[((size_t)c * KCOLL_NPATH + (size_t)i) * 2];
            *calls = row[0];
            *bytes = row[1];
            return 0;
        }
    }
    return -1;
}
