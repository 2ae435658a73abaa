/* Teams of forked processes for the unit tests: p processes attached to
 * one anonymous shared control segment, each running a body, moving data
 * with the real engine (cross-memory attach to a sibling works as it does
 * between MPI ranks). */
#ifndef KCOLL_TEST_FORKTEAM_H
#define KCOLL_TEST_FORKTEAM_H

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sched/ctl.h"
#include "xfer/cma.h"

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
    for (int r = 0; r < p; r++) {
        int status = 0;
        waitpid(pids[r], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s p=%d: rank %d failed (status %d)",
              what, p, r, status);
    }
    munmap(seg, len);
}

#endif
