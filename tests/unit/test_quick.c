/* The quick calibration (model/quick.h) lands in the decisions: a machine
 * whose measured host MPI is much cheaper than the built-in defaults say
 * flips kcoll's choice for an 8 KiB Allreduce at 2 ranks to the host; one
 * whose host is much dearer flips an 8-byte one to kcoll; the measured
 * points replace the defaults' only at the measured process count and up
 * to the largest measured size; the result written as the per-machine
 * cache file (a tuning file) reads back to the same decisions; the
 * identity hash tells different machines apart; what the measurement
 * reads of its CPUs is right: the affinity mask, and the run delay that
 * grows while another process shares the one CPU it is bound to. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#endif
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
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

/* This process bound to one CPU it may use, then 300 ms of busy work
 * alone and 300 ms beside a busy child bound to the same CPU: the run
 * delay (kcoll_run_delay) grows by about half the second time and hardly
 * the first. */
static void run_delay_checks(void)
{
    uint64_t mask[16];
    cpu_set_t set, one;
    CHECK(kcoll_cpu_affinity(mask, 16) == 0 && sched_getaffinity(0, sizeof set, &set) == 0,
          "affinity read");
    int cpu = -1, same = 1;
    for (int c = 0; c < 1024 && c < CPU_SETSIZE; c++) {
        const int in = (mask[c / 64] >> (c % 64)) & 1;
        same &= in == !!CPU_ISSET(c, &set);
        if (in && cpu < 0)
            cpu = c;
    }
    CHECK(same && cpu >= 0, "the affinity mask is the process's CPUs");
    if (kcoll_run_delay() < 0) {
        printf("no run delay from this kernel: its check left out\n");
        return;
    }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "bound to CPU %d", cpu);
    double share[2];
    for (int shared = 0; shared < 2; shared++) {
        pid_t child = shared ? fork() : 0;
        if (shared && child == 0)
            for (;;) /* the child keeps the affinity: the same CPU */
                ;
        const double d0 = kcoll_run_delay();
        const int64_t t0 = kcoll_now_ns();
        while (kcoll_now_ns() - t0 < 300000000)
            ;
        share[shared] = (kcoll_run_delay() - d0) / ((double)(kcoll_now_ns() - t0) * 1e-9);
        if (shared) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
    }
    sched_setaffinity(0, sizeof set, &set);
    CHECK(share[1] > 0.25, "beside a busy process on its CPU it waited %.0f%% of the time",
          100 * share[1]);
    CHECK(share[0] < share[1] / 2, "alone it waited %.1f%% (beside one: %.0f%%)", 100 * share[0],
          100 * share[1]);
}

int main(void)
{
    run_delay_checks();
    kcoll_tuning_t base, t;
    kcoll_quick_t q;
    kcoll_tuning_defaults(&base);
    kcoll_tuning_set(&base);
    const int k8k = kcoll_takes(8192), k8 = kcoll_takes(8);
    CHECK(k8k == 1, "the defaults give an 8 KiB Allreduce at 2 ranks to kcoll (%d)", k8k);

    /* a host ten times cheaper: the host takes it */
    fake_quick(&q, 2, 0.1);
    t = base;
    kcoll_quick_apply(&t.m, &q);
    kcoll_tuning_set(&t);
    CHECK(kcoll_takes(8192) == 0, "a host 10x cheaper takes the 8 KiB Allreduce");

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
    CHECK(kcoll_takes(8192) == 0, "the cache file decides as the measurement did");

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
    CHECK(kcoll_takes(8192) == 1, "points measured at 3 ranks leave 2 ranks' decisions alone");
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
