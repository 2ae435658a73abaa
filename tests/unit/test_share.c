/* Sharing through the control segment (sched/share.h): teams of forked
 * processes share many times in a row, each rank posting values that
 * name the sharing and itself, with random pauses so that ranks run
 * ahead of each other by a sharing or two; every rank must read, for
 * every sharing, exactly what each peer posted for it (a rank that wrote
 * a half still being read would show). A rank that dies while the others
 * wait in a sharing is named in an error, not waited for. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forkteam.h"
#include "sched/share.h"

#define ROUNDS 2000

static int rounds_body(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    float mine[KCOLL_SHARE_VALS], *all = malloc((size_t)c->p * KCOLL_SHARE_VALS * sizeof *all);
    char err[256];
    unsigned seed = 12345u + (unsigned)rank;
    int bad = 0;
    for (uint64_t t = 1; t <= ROUNDS && !bad; t++) {
        for (int i = 0; i < KCOLL_SHARE_VALS; i++)
            mine[i] = (float)(t * 1000 + (uint64_t)rank * 100 + (uint64_t)i);
        if (rand_r(&seed) % 8 == 0)
            usleep(rand_r(&seed) % 50);
        if (kcoll_share(c, t, mine, all, NULL, err, sizeof err) != KCOLL_OK) {
            fprintf(stderr, "rank %d sharing %llu: %s\n", rank, (unsigned long long)t, err);
            bad = 1;
        }
        for (int q = 0; q < c->p && !bad; q++)
            for (int i = 0; i < KCOLL_SHARE_VALS && !bad; i++)
                if (all[q * KCOLL_SHARE_VALS + i] != (float)(t * 1000 + (uint64_t)q * 100 + (uint64_t)i)) {
                    fprintf(stderr, "rank %d sharing %llu: rank %d's value %d is %g\n", rank,
                            (unsigned long long)t, q, i, (double)all[q * KCOLL_SHARE_VALS + i]);
                    bad = 1;
                }
    }
    free(all);
    return bad;
}

/* rank 1 dies before sharing 2; the others must fail with its name */
static int death_body(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    float mine[KCOLL_SHARE_VALS] = {0}, all[4 * KCOLL_SHARE_VALS];
    char err[256] = "";
    if (kcoll_share(c, 1, mine, all, NULL, err, sizeof err) != KCOLL_OK)
        return 1;
    if (rank == 1)
        raise(SIGKILL);
    const kcoll_status_t st = kcoll_share(c, 2, mine, all, NULL, err, sizeof err);
    if (st != KCOLL_ERR_PEER_DEAD || !strstr(err, "rank 1")) {
        fprintf(stderr, "rank %d: status %d, '%s'\n", rank, (int)st, err);
        return 1;
    }
    return 0;
}

int main(void)
{
    for (int p = 2; p <= 4; p++)
        forkteam_run(p, rounds_body, NULL, "sharings in a row");
    /* the dead rank's own exit is a failure the team reports: run the
     * others' checks through their exit statuses instead */
    size_t len = kcoll_ctl_seg_len(3);
    void *seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    kcoll_ctl_seg_init(seg, 3);
    pid_t pids[3];
    for (int r = 0; r < 3; r++)
        if ((pids[r] = fork()) == 0) {
            kcoll_ctl_t c;
            int rc = forkteam_attach(&c, seg, len, 3, r) ? 1000 : death_body(&c, r, NULL);
            _exit(rc ? 1 : 0);
        }
    for (int r = 0; r < 3; r++) {
        int st = 0;
        waitpid(pids[r], &st, 0);
        if (r == 1)
            CHECK(WIFSIGNALED(st), "rank 1 died");
        else
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank %d named the dead rank", r);
    }
    munmap(seg, len);
    return check_report("test_share");
}
