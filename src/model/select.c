/* Selection through a team's decision cache (see select.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/params.h"
#include "model/select.h"

/* KCOLL_<FAMILY>_ALGO of each family. */
static kcoll_param_id_t kcoll_algo_param_of(kcoll_coll_t family)
{
    switch (family) {
    case KCOLL_COLL_SCATTER: return KCOLL_P_SCATTER_ALGO;
    case KCOLL_COLL_GATHER: return KCOLL_P_GATHER_ALGO;
    case KCOLL_COLL_ALLGATHER: return KCOLL_P_ALLGATHER_ALGO;
    case KCOLL_COLL_ALLTOALL: return KCOLL_P_ALLTOALL_ALGO;
    case KCOLL_COLL_BARRIER: return KCOLL_P_BARRIER_ALGO;
    case KCOLL_COLL_REDUCE: return KCOLL_P_REDUCE_ALGO;
    case KCOLL_COLL_ALLREDUCE: return KCOLL_P_ALLREDUCE_ALGO;
    case KCOLL_COLL_REDUCE_SCATTER: return KCOLL_P_REDUCE_SCATTER_ALGO;
    default: return KCOLL_P_BCAST_ALGO;
    }
}

/* One warning per (family, spec, p): a forced spec that cannot run goes to
 * the host MPI on every call, and the user needs to hear it once. */
static void kcoll_select_warn(kcoll_coll_t family, const char *spec, int p, const char *why)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        char spec[128];
        int p;
    } last[KCOLL_NCOLL];
    int say = 0;
    pthread_mutex_lock(&lock);
    if (last[family].p != p || strncmp(last[family].spec, spec, sizeof last[family].spec - 1)) {
        snprintf(last[family].spec, sizeof last[family].spec, "%s", spec);
        last[family].p = p;
        say = 1;
    }
    pthread_mutex_unlock(&lock);
    if (say)
        kcoll_warn("KCOLL_%s_ALGO: %s; %s uses the host MPI", kcoll_coll_env(family), why,
                   kcoll_coll_name(family));
}

/* The first matching default rule. */
static kcoll_select_t kcoll_select_rules(kcoll_coll_t family, int p, int levels, size_t bytes,
                                         kcoll_choice_t *out)
{
    for (int i = 0; i < kcoll_ndefault_rules; i++) {
        const kcoll_rule_t *r = &kcoll_default_rules[i];
        if (r->family != family || p < r->pmin || (r->pmax && p > r->pmax) || bytes < r->bmin ||
            (r->bmax && bytes >= r->bmax) || levels < r->levels)
            continue;
        if (!strcmp(r->spec, "host"))
            return KCOLL_SELECT_HOST;
        char err[160];
        if (kcoll_algo_parse(family, r->spec, &out->algo, &out->prm, err, sizeof err) ||
            !out->algo)
            break; /* a broken rule (the unit test forbids them): the host MPI */
        return KCOLL_SELECT_KCOLL;
    }
    return KCOLL_SELECT_HOST;
}

kcoll_select_t kcoll_select(kcoll_decisions_t *d, kcoll_coll_t c, int p, int levels,
                            size_t bytes, kcoll_choice_t *out)
{
    const kcoll_coll_t family = kcoll_coll_family(c);
    const uint64_t gen = kcoll_params_generation();
    const int key = (int)c * 65 + kcoll_size_class(bytes) + 1;
    if (d->gen != gen || d->p != p) {
        memset(d, 0, sizeof *d);
        d->gen = gen;
        d->p = p;
    }
    __typeof__(d->e[0]) *e = &d->e[key % KCOLL_DECISIONS];
    if (e->key == key) {
        out->algo = e->algo >= 0 ? &kcoll_algos[e->algo] : NULL;
        out->prm = e->prm;
        return (kcoll_select_t)e->result;
    }

    kcoll_select_t res;
    __typeof__(d->forced[0]) *f = &d->forced[family];
    const char *spec = kcoll_param_str(kcoll_algo_param_of(family));
    if (!f->state) {
        const kcoll_algo_t *a;
        char err[256];
        if (kcoll_algo_parse(family, spec, &a, &f->prm, err, sizeof err)) {
            f->state = 3;
            kcoll_select_warn(family, spec, 0, err);
        } else {
            f->state = a ? 2 : 1;
            f->algo = a ? (int16_t)kcoll_algo_index(a) : -1;
        }
    }
    out->algo = NULL;
    memset(&out->prm, 0, sizeof out->prm);
    if (f->state == 3) {
        res = KCOLL_SELECT_BAD;
    } else if (f->state == 2) {
        char why[160];
        out->algo = &kcoll_algos[f->algo];
        out->prm = f->prm;
        res = KCOLL_SELECT_KCOLL;
        if (out->algo->check && out->algo->check(p, &out->prm, why, sizeof why)) {
            kcoll_select_warn(family, spec, p, why);
            out->algo = NULL;
            res = KCOLL_SELECT_BAD;
        }
    } else {
        res = kcoll_select_rules(family, p, levels, bytes, out);
        if (res != KCOLL_SELECT_KCOLL)
            out->algo = NULL;
    }
    e->key = (int16_t)key;
    e->algo = out->algo ? (int16_t)kcoll_algo_index(out->algo) : -1;
    e->prm = out->prm;
    e->result = (int8_t)res;
    return res;
}
