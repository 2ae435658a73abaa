/* Waiting on a crowded node (sched/wait.h): the cores a team may run on
 * (the union of its processes' affinity masks), the crowding the cost
 * model and the waiters act on, and sleeping on a flag word between
 * processes: a waiter that has waited long sleeps in the kernel, the
 * owner's flag store with kcoll_flag_store wakes it (the wake-up, not the
 * sleep's time limit, ends the sleep), and a store without the wake only
 * costs the time limit, never a hang. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_*, sched_setaffinity */
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/params.h"
#include "check.h"
#include "forkteam.h"
#include "sched/wait.h"

#define ROUNDS 30

/* Rank 1 pins itself to one CPU before attaching; rank 0 keeps its mask.
 * Both must find the union of the two masks. */
static void cores_of_masks(void)
{
    cpu_set_t all;
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0, "sched_getaffinity");
    const int n = CPU_COUNT(&all);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    size_t len = kcoll_ctl_seg_len(2);
    void *seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    kcoll_ctl_seg_init(seg, 2);
    int *seen = mmap(NULL, 2 * sizeof *seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        if ((pids[r] = fork()) == 0) {
            if (r == 1) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(first, &one);
                sched_setaffinity(0, sizeof one, &one);
            }
            kcoll_ctl_t c;
            if (forkteam_attach(&c, seg, len, 2, r))
                _exit(1);
            seen[r] = kcoll_ctl_cores(&c);
            kcoll_ctl_fini(&c);
            _exit(0);
        }
    }
    for (int r = 0; r < 2; r++)
        waitpid(pids[r], NULL, 0);
    CHECK(seen[0] == n && seen[1] == n, "cores of the team: %d and %d, want %d (the union)",
          seen[0], seen[1], n);
    munmap(seen, 2 * sizeof *seen);
    munmap(seg, len);
}

static void crowding(void)
{
    CHECK(!kcoll_wait_crowded() && kcoll_wait_cores() == 0, "crowded before any team");
    CHECK(kcoll_wait_crowd_cores(2, 2) == 0 && kcoll_wait_crowd_cores(3, 0) == 0,
          "2 ranks on 2 cores, or unknown cores, are not crowded");
    kcoll_wait_crowd_note(kcoll_wait_crowd_cores(2, 2));
    CHECK(!kcoll_wait_crowded(), "not crowded: nothing noted");
    kcoll_params_set("CORES", "1");
    CHECK(kcoll_wait_crowd_cores(2, 2) == 1, "KCOLL_CORES=1 replaces the cores found");
    kcoll_params_set("CORES", "0");
    kcoll_wait_crowd_note(kcoll_wait_crowd_cores(8, 2));
    CHECK(kcoll_wait_crowded() && kcoll_wait_cores() == 2, "8 ranks on 2 cores: crowded, 2 cores");
    kcoll_wait_crowd_note(kcoll_wait_crowd_cores(4, 1)); /* a later team does not change it */
    CHECK(kcoll_wait_cores() == 2, "the first crowded team's cores stay");
}

/* Flag 0 of lane 1: rank 1 raises it round by round, rank 0 waits for each
 * value (kcoll_pause_on) and acknowledges on its own flag 0. Rank 1
 * stores only once rank 0 is asleep on the word (sleepers > 0), with the
 * wake-up when `wake` is set. Rank 0 reports how many sleeps a wake-up
 * ended, through `out`. */
typedef struct {
    int wake;
    int64_t *out;
} sleep_arg_t;

static int sleeper(kcoll_ctl_t *c, int rank, void *argp)
{
    sleep_arg_t *arg = argp;
    kcoll_line_t *mine = &kcoll_ctl_lane(c, rank, 1)->flag[0];
    kcoll_line_t *theirs = &kcoll_ctl_lane(c, 1 - rank, 1)->flag[0];
    int64_t woken = 0, slept = 0;
    for (uint32_t i = 1; i <= ROUNDS; i++) {
        const uint64_t want = kcoll_flag_word(1, i);
        if (rank == 0) {
            kcoll_pause_t pause;
            kcoll_pause_init(&pause);
            while (atomic_load_explicit(&theirs->v, memory_order_acquire) < want)
                kcoll_pause_on(&pause, theirs, want);
            woken += pause.woken;
            slept += pause.slept;
            kcoll_flag_store(mine, want);
        } else {
            int64_t until = kcoll_now_ns() + 5000000000LL;
            while (!atomic_load_explicit(&mine->sleepers, memory_order_relaxed))
                if (kcoll_now_ns() > until)
                    return 1; /* rank 0 never slept */
            /* rank 0 counted itself before its futex call: give it time to
             * be asleep in the kernel */
            struct timespec nap = {0, 300000};
            nanosleep(&nap, NULL);
            if (arg->wake)
                kcoll_flag_store(mine, want);
            else /* release: a store without the wake-up */
                atomic_store_explicit(&mine->v, want, memory_order_release);
            while (atomic_load_explicit(&theirs->v, memory_order_acquire) < want)
                sched_yield();
        }
    }
    if (rank == 0) {
        arg->out[0] = woken;
        arg->out[1] = slept;
    }
    return 0;
}

static void sleep_and_wake(int wake)
{
    int64_t *out = mmap(NULL, 2 * sizeof *out, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
    sleep_arg_t arg = {wake, out};
    int64_t t0 = kcoll_now_ns();
    forkteam_run(2, sleeper, &arg, wake ? "sleep and wake" : "sleep without a wake");
    double ms = (double)(kcoll_now_ns() - t0) / 1e6;
    if (wake)
        /* a wake-up ends (nearly) every sleep; a missing one would leave
         * every sleep to its time limit */
        CHECK(out[0] >= ROUNDS / 2, "woken %lld of %lld sleeps in %d rounds (%.1f ms)",
              (long long)out[0], (long long)out[1], ROUNDS, ms);
    else /* the time limit ends them: slower, never stuck */
        CHECK(out[1] - out[0] >= ROUNDS / 2, "without the wake-up: %lld of %lld sleeps woken",
              (long long)out[0], (long long)out[1]);
    printf("test_wait: %s: %lld of %lld sleeps ended by the store, %d rounds in %.1f ms\n",
           wake ? "with kcoll_flag_store" : "without it", (long long)out[0], (long long)out[1], ROUNDS,
           ms);
    munmap(out, 2 * sizeof *out);
}

int main(void)
{
    kcoll_params_set("WARN", "1");
    cores_of_masks();
    crowding(); /* this process and its children are crowded from here on */
    sleep_and_wake(1);
    sleep_and_wake(0);
    return check_report("test_wait");
}
