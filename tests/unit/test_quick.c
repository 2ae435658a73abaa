/* The quick calibration (model/quick.h) lands in the decisions: a machine
 * whose measured host MPI is much cheaper than the built-in defaults say
 * flips kcoll's choice for a 4 KiB Allreduce at 2 ranks to the host; one
 * whose host is much dearer flips an 8-byte one to kcoll; the measured
 * points replace the defaults' only at the measured process count and up
 * to the largest measured size; the result written as the per-machine
 * cache file (a tuning file) reads back to the same decisions; the
 * identity hash tells different machines apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model/quick.h"
#include "model/select.h"
#include "model/tuning.h"

/* What the selector runs for an Allreduce of `bytes` at 2 ranks under the
 * tuning in force: 1 kcoll, 0 the host. */
static int kcoll_takes(size_t bytes)
{
    kcoll_pcall_t c = {.coll = KCOLL_COLL_ALLREDUCE, .p = 2, .bytes = bytes};
    kcoll_choice_t ch;
    double t;
    if (kcoll_model_predict(&c, "auto", 1, &ch, &t))
        return -1;
    return ch.algo != NULL;
}

/* A quick calibration at p ranks whose host times are `scale` times the
 * built-in defaults' at 2 ranks (interpolated by the model's own price). */
static void fake_quick(kcoll_quick_t *q, int p, double scale)
{
    kcoll_tuning_t d;
    kcoll_tuning_defaults(&d);
    kcoll_tuning_set(&d);
    memset(q, 0, sizeof *q);
    q->p = p;
    q->alpha = d.m.alpha;
    for (int i = 0; i < KCOLL_QUICK_COLLS; i++)
        for (int k = 0; k < KCOLL_QUICK_SIZES; k++) {
            kcoll_pcall_t c = {.coll = kcoll_quick_colls[i], .p = p,
                               .bytes = (size_t)kcoll_quick_bytes[k]};
            kcoll_choice_t ch;
            double t;
            if (!kcoll_model_predict(&c, "host", 1, &ch, &t))
                q->host[i][k] = t * scale;
        }
}

int main(void)
{
    kcoll_tuning_t base, t;
    kcoll_quick_t q;
    kcoll_tuning_defaults(&base);
    kcoll_tuning_set(&base);
    const int k4 = kcoll_takes(4096), k8 = kcoll_takes(8);
    CHECK(k4 == 1, "the defaults give a 4 KiB Allreduce at 2 ranks to kcoll (%d)", k4);

    /* a host ten times cheaper: the host takes it */
    fake_quick(&q, 2, 0.1);
    t = base;
    kcoll_quick_apply(&t.m, &q);
    kcoll_tuning_set(&t);
    CHECK(kcoll_takes(4096) == 0, "a host 10x cheaper takes the 4 KiB Allreduce");

    /* written as the cache file and read back: the same decision */
    char path[] = "/tmp/kcoll-quick-XXXXXX";
    const int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f && kcoll_tuning_write(f, &t) == 0 && fclose(f) == 0, "cache file written");
    kcoll_tuning_t back;
    char err[256] = "";
    CHECK(kcoll_tuning_load(path, &back, err, sizeof err) == 0, "cache file read back: %s", err);
    unlink(path);
    kcoll_tuning_set(&back);
    CHECK(kcoll_takes(4096) == 0, "the cache file decides as the measurement did");

    /* a host ten times dearer at the smallest sizes: kcoll takes 8 bytes */
    fake_quick(&q, 2, 10);
    t = base;
    kcoll_quick_apply(&t.m, &q);
    kcoll_tuning_set(&t);
    CHECK(k8 == 0, "the defaults give an 8-byte Allreduce to the host");
    CHECK(kcoll_takes(8) == 1, "a host 10x dearer gives the 8-byte Allreduce to kcoll");

    /* only p's points up to the largest measured size are replaced */
    int big = 0, same = 1;
    for (int i = 0; i < base.m.nhost[KCOLL_COLL_ALLREDUCE]; i++) {
        const kcoll_hostpt_t *b = &base.m.host[KCOLL_COLL_ALLREDUCE][i];
        if (b->bytes <= kcoll_quick_bytes[KCOLL_QUICK_SIZES - 1])
            continue;
        big++;
        int found = 0;
        for (int j = 0; j < t.m.nhost[KCOLL_COLL_ALLREDUCE]; j++) {
            const kcoll_hostpt_t *x = &t.m.host[KCOLL_COLL_ALLREDUCE][j];
            found |= x->p == b->p && x->bytes == b->bytes && x->t == b->t;
        }
        same &= found;
    }
    CHECK(big > 0 && same, "the defaults' larger points stay (%d of them)", big);
    fake_quick(&q, 3, 0.1);
    t = base;
    kcoll_quick_apply(&t.m, &q);
    kcoll_tuning_set(&t);
    CHECK(kcoll_takes(4096) == 1, "points measured at 3 ranks leave 2 ranks' decisions alone");
    /* Scatterv follows Scatter */
    int sv = 0;
    for (int j = 0; j < t.m.nhost[KCOLL_COLL_SCATTERV]; j++)
        sv += t.m.host[KCOLL_COLL_SCATTERV][j].p == 3;
    CHECK(sv == KCOLL_QUICK_SIZES, "Scatterv got Scatter's points (%d)", sv);

    /* the identity */
    const char *a = "cpu=AMD EPYC;cores=2", *b = "cpu=Intel Xeon;cores=2";
    CHECK(kcoll_fnv(KCOLL_FNV_START, a, strlen(a)) != kcoll_fnv(KCOLL_FNV_START, b, strlen(b)),
          "two machines, two hashes");
    CHECK(kcoll_fnv(KCOLL_FNV_START, a, strlen(a)) == kcoll_fnv(KCOLL_FNV_START, a, strlen(a)),
          "one machine, one hash");
    kcoll_tuning_set(&base);
    return check_report("test_quick");
}
