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
    /* a path ending in '*' names every path it begins */
    size_t plen = strlen(path);
    const int prefix = plen && path[plen - 1] == '*';
    int found = -1;
    *calls = *bytes = 0;
    for (int row = 0; row < KCOLL_NCOLL * KCOLL_NMODES; row++) {
        char rname[48];
        if (!kcoll_stats_row_name(row, rname, sizeof rname) || strcmp(coll, rname))
            continue;
        /* algorithm names repeat across families ("bruck", "partitioned"):
         * the cells of the others' are empty on this row, so every
         * matching path is added */
        for (int i = 0; i < KCOLL_NPATHS; i++) {
            char name[64];
            uint64_t c, b;
            if (!kcoll_stats_path_name(i, name, sizeof name) ||
                (prefix ? strncmp(name, path, plen - 1) : strcmp(name, path)))
                continue;
            kcoll_stats_read(row, i, &c, &b);
            *calls += c;
            *bytes += b;
            found = 0;
        }
    }
    return found;
}
