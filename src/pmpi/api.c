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
    int found = 0;
    kcoll_stats_snapshot(table);
    *calls = *bytes = 0;
    for (int c = 0; c < KCOLL_NCOLL; c++) {
        if (strcmp(coll, kcoll_coll_name((kcoll_coll_t)c)))
            continue;
        /* algorithms of different families may share a name ("partitioned"):
         * add up every path of that name (only the collective's own counts) */
        for (int i = 0; i < KCOLL_NPATH; i++) {
            char name[64];
            if (!kcoll_stats_path_name(i, name, sizeof name) || strcmp(name, path))
                continue;
            /* algorithm names repeat across families (bruck): take this family's */
            if (i < kcoll_nalgos && kcoll_algos[i].coll != kcoll_coll_family((kcoll_coll_t)c))
                continue;
            const uint64_t *row = &table[((size_t)c * KCOLL_NPATH + (size_t)i) * 2];
            *calls += row[0];
            *bytes += row[1];
            found = 1;
        }
    }
    return found ? 0 : -1;
}
