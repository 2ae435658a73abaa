/* Teams of forked processes for the unit tests: p processes attached to
 * one anonymous shared control segment, each running a body, moving data
 * with the real engine (cross-memory attach to a sibling works as it does
 * between MPI ranks). */
#ifndef KCOLL_TEST_FORKTEAM_H
#define KCOLL_TEST_FORKTEAM_H

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sched/ctl.h"
#include "xfer/cma.h"

#define FORKTEAM_LIMIT_S 120

/* Attach rank `rank` to seg and wait until every rank has attached. */
static inline int forkteam_attach(kcoll_ctl_t *c, void *seg, size_t len, int p, int rank)
{
    char why[256];
    if (kcoll_ctl_attach(c, seg, len, p, rank))
        return -1;
    kcoll_cma_allow_peers(why, sizeof why);
    while (!kcoll_ctl_all_attached(c))
        sched_yield();
    return kcoll_ctl_load_pids(c) == KCOLL_OK ? 0 : -1;
}

/* Run body(ctl, rank, arg) in p forked processes on a fresh segment; each
 * must return 0. Failures are CHECKed with `what`. */
static inline void forkteam_run(int p, int (*body)(kcoll_ctl_t *c, int rank, void *arg), void *arg,
                                const char *what)
{
    size_t len = kcoll_ctl_seg_len(p);
    void *seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    kcoll_ctl_seg_init(seg, p);
    pid_t pids[64];
    for (int r = 0; r < p; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            kcoll_ctl_t c;
            int rc = forkteam_attach(&c, seg, len, p, r) ? 1000 : body(&c, r, arg);
            kcoll_ctl_fini(&c);
            _exit(rc ? 1 : 0);
        }
    }
    /* a team that has not finished in FORKTEAM_LIMIT_S seconds hangs: it
     * is killed and the case named (not left to the test runner's limit,
     * which says nothing of which case it was) */
    int status[64], left = p;
    for (int r = 0; r < p; r++)
        status[r] = -1;
    for (long waited_ms = 0; left > 0; waited_ms += 10) {
        for (int r = 0; r < p; r++) {
            int st = 0;
            if (status[r] == -1 && waitpid(pids[r], &st, WNOHANG) == pids[r]) {
                status[r] = st;
                left--;
            }
        }
        if (left > 0 && waited_ms >= FORKTEAM_LIMIT_S * 1000L) {
            for (int r = 0; r < p; r++)
                if (status[r] == -1) {
                    fprintf(stderr, "forkteam: %s p=%d: rank %d still runs after %d s: killed\n",
                            what, p, r, FORKTEAM_LIMIT_S);
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], &status[r], 0);
                }
            break;
        }
        if (left > 0)
            usleep(10000);
    }
    for (int r = 0; r < p; r++)
        CHECK(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0,
              "%s p=%d: rank %d failed (status %d)", what, p, r, status[r]);
    munmap(seg, len);
}

#endif
