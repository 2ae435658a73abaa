/* The quick calibration laid over the model's machine (see quick.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kcoll.h"

#include "base/cache.h"
#include "model/quick.h"
#include "model/tuning.h"

const double kcoll_quick_bytes[KCOLL_QUICK_SIZES] = {8, 1024, 4096, 16384};
const kcoll_coll_t kcoll_quick_colls[KCOLL_QUICK_COLLS] = {
    KCOLL_COLL_BCAST,     KCOLL_COLL_SCATTER,   KCOLL_COLL_GATHER,
    KCOLL_COLL_ALLGATHER, KCOLL_COLL_ALLTOALL,  KCOLL_COLL_BARRIER,
    KCOLL_COLL_REDUCE,    KCOLL_COLL_ALLREDUCE, KCOLL_COLL_REDUCE_SCATTER_BLOCK,
};

/* Replace coll's points at p up to `upto` bytes by `n` new ones. */
static void kcoll_quick_points(kcoll_machine_t *m, kcoll_coll_t coll, int p, double upto,
                               const kcoll_hostpt_t *pts, int n)
{
    kcoll_hostpt_t keep[KCOLL_HOST_POINTS];
    int k = 0;
    for (int i = 0; i < m->nhost[coll]; i++)
        if (m->host[coll][i].p != p || m->host[coll][i].bytes > upto)
            keep[k++] = m->host[coll][i];
    for (int i = 0; i < n && k < KCOLL_HOST_POINTS; i++)
        keep[k++] = pts[i];
    memcpy(m->host[coll], keep, (size_t)k * sizeof keep[0]);
    m->nhost[coll] = k;
}

void kcoll_quick_apply(kcoll_machine_t *m, const kcoll_quick_t *q)
{
    if (q->alpha > 0)
        m->alpha = q->alpha;
    for (int i = 0; i < KCOLL_QUICK_COLLS; i++) {
        const kcoll_coll_t c = kcoll_quick_colls[i];
        const int one = c == KCOLL_COLL_BARRIER;
        kcoll_hostpt_t pts[KCOLL_QUICK_SIZES];
        int n = 0;
        double upto = 0;
        for (int k = 0; k < (one ? 1 : KCOLL_QUICK_SIZES); k++)
            if (q->host[i][k] > 0) {
                pts[n++] = (kcoll_hostpt_t){q->p, one ? 0 : kcoll_quick_bytes[k], q->host[i][k]};
                upto = one ? 0 : kcoll_quick_bytes[k];
            }
        if (n)
            kcoll_quick_points(m, c, q->p, upto, pts, n);
        /* the v-variants run the host's own v-collective: their times
         * follow the plain one's, as kcoll-calibrate measured them alike */
        const kcoll_coll_t v = c == KCOLL_COLL_SCATTER     ? KCOLL_COLL_SCATTERV
                               : c == KCOLL_COLL_GATHER    ? KCOLL_COLL_GATHERV
                               : c == KCOLL_COLL_ALLGATHER ? KCOLL_COLL_ALLGATHERV
                               : c == KCOLL_COLL_ALLTOALL  ? KCOLL_COLL_ALLTOALLV
                               : c == KCOLL_COLL_REDUCE_SCATTER_BLOCK ? KCOLL_COLL_REDUCE_SCATTER
                                                                      : KCOLL_NCOLL;
        if (n && v != KCOLL_NCOLL)
            kcoll_quick_points(m, v, q->p, upto, pts, n);
    }
}

int kcoll_quick_path(int p, const char *mpi, char *path, size_t len, char *ident, size_t ilen)
{
    char cpu[256];
    struct utsname u;
    kcoll_cpu_model(cpu, sizeof cpu);
    if (uname(&u) != 0)
        u.release[0] = '\0';
    static kcoll_tuning_t d; /* large: not on the stack */
    kcoll_tuning_defaults(&d);
    const uint64_t defaults = kcoll_fnv(KCOLL_FNV_START, &d.m, sizeof d.m);
    snprintf(ident, ilen,
             "cpu=%s;cpus=%ld;kernel=%s;mpi=%.120s;ranks=%d;kcoll=%s;defaults=%016llx;method=%d",
             cpu, sysconf(_SC_NPROCESSORS_ONLN), u.release, mpi, p, KCOLL_VERSION,
             (unsigned long long)defaults, KCOLL_QUICK_METHOD);
    char base[400];
    if (kcoll_cache_folder(base, sizeof base) != 0)
        return -1;
    const uint64_t h = kcoll_fnv(KCOLL_FNV_START, ident, strlen(ident));
    const int n = snprintf(path, len, "%s/machine-%016llx.json", base, (unsigned long long)h);
    return n > 0 && (size_t)n < len ? 0 : -1;
}
