/* kcoll's public run-time interface (include/kcoll.h). */
#include <stdio.h>
#include <string.h>

#include "base/params.h"
#include "base/stats.h"
#include "coll/coll.h"
#include "kcoll.h"
#include "model/select.h"
#include "pmpi/pmpi.h"
#include "sched/wait.h"

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
    kcoll_shortcut_tally(); /* the calls the shortcuts took, counted later */
    for (int row = 0; row < KCOLL_NROWS; row++) {
        char rname[48];
        if (!kcoll_stats_row_name(row, rname, sizeof rname) || strcmp(coll, rname))
            continue;
        /* algorithm names repeat across families ("bruck", "partitioned"):
         * the cells of the others' are empty on this row, so every
         * matching path is added */
        for (int i = 0; i < KCOLL_NPATHS_ALL; i++) {
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

KCOLL_PUBLIC void kcoll_scratch_get(uint64_t *held, uint64_t *peak, int reset_peak)
{
    kcoll_scratch_read(held, peak, reset_peak);
}

KCOLL_PUBLIC int kcoll_predict(const char *coll, const char *algo, int nranks, uint64_t bytes,
                               const char *rclass, double *seconds, char *chosen,
                               size_t chosen_len)
{
    static const char *const classes[KCOLL_NRCLASS] = {"int", "float", "double", "user"};
    static const size_t esizes[KCOLL_NRCLASS] = {4, 4, 8, 8};
    kcoll_pcall_t pc = {.coll = kcoll_coll_by_name(coll), .p = nranks, .bytes = (size_t)bytes,
                        .rclass = KCOLL_RCLASS_DOUBLE, .esize = 8, .cores = kcoll_wait_cores()};
    if (pc.coll == KCOLL_NCOLL || nranks < 1)
        return -1;
    if (rclass) {
        int i = 0;
        while (i < KCOLL_NRCLASS && strcmp(rclass, classes[i]))
            i++;
        if (i == KCOLL_NRCLASS)
            return -1;
        pc.rclass = (kcoll_rclass_t)i;
        pc.esize = esizes[i];
    }
    /* KCOLL_MIN_BYTES as the call layer reads it: "auto" lets the model
     * weigh the host MPI; a size sends smaller calls to it */
    const int64_t min = kcoll_param_int(KCOLL_P_MIN_BYTES);
    const int auto_pick = !algo || !*algo || !strcmp(algo, "auto");
    if (auto_pick && min >= 0 && bytes < (uint64_t)min)
        algo = "host";
    /* as a team made now would be: on cma, single calls on shm where
     * KCOLL_ENGINE is auto and the bounce memory budget is not 0 */
    const char *engine = kcoll_param_str(KCOLL_P_ENGINE);
    if ((!engine[0] || !strcmp(engine, "auto")) && kcoll_param_int(KCOLL_P_SHM_PERCALL) > 0)
        pc.percall = KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM);
    kcoll_choice_t ch;
    if (kcoll_model_predict(&pc, algo, min < 0, &ch, seconds))
        return -1;
    if (chosen && chosen_len)
        kcoll_choice_spec(&ch, chosen, chosen_len);
    return 0;
}

KCOLL_PUBLIC int kcoll_algorithms(const char *coll, int nranks, char *out, size_t outlen)
{
    const kcoll_coll_t c = kcoll_coll_by_name(coll);
    if (c == KCOLL_NCOLL || nranks < 1)
        return -1;
    int n = 0;
    size_t len = 0;
    if (outlen)
        out[0] = '\0';
    for (int i = 0; i < kcoll_nalgos; i++) {
        const kcoll_algo_t *a = &kcoll_algos[i];
        kcoll_aparam_t prm;
        char why[160];
        if (a->family != kcoll_coll_family(c) || !strcmp(a->name, "hier"))
            continue; /* hier needs levels inside the node */
        kcoll_algo_defaults(a, &prm);
        if (a->check && a->check(nranks, &prm, why, sizeof why))
            continue;
        if (len < outlen)
            len += (size_t)snprintf(out + len, outlen - len, "%s%s", n ? "," : "", a->name);
        n++;
    }
    return n;
}
