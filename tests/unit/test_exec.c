/* The executor with the real engine: ranks are forked processes sharing an
 * anonymous control segment, moving data with process_vm_readv/writev.
 * Each group of p processes runs many collectives in a row on one team
 * (every algorithm, root and size), so sequence numbers and flags carry
 * over between collectives as they do in an MPI job. Then a peer dies and
 * the waiter must report it instead of hanging. */
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "coll/coll.h"
#include "base/params.h"
#include "core/team.h"
#include "sched/exec.h"
#include "sched/agree.h"
#include "xfer/cma.h"

static const size_t sizes[] = {0, 1, 4095, 16387, 1048581};

static void wait_attached(kcoll_team_t *t)
{
    for (int r = 0; r < t->p; r++)
        while (atomic_load_explicit(&t->slots[r].attached, memory_order_acquire) != 1)
            sched_yield();
}

static uint8_t pattern(size_t i, int case_no)
{
    return (uint8_t)(i * 7 + (size_t)case_no * 13 + 1);
}

/* Body of team rank `rank`: returns the number of wrong results. */
static int child(void *seg, size_t len, int p, int rank)
{
    kcoll_team_t t;
    char why[256];
    if (kcoll_team_attach(&t, seg, len, p, rank))
        return 1000;
    kcoll_cma_allow_peers(why, sizeof why);
    wait_attached(&t);
    kcoll_team_load_pids(&t);
    uint8_t *buf = malloc(sizes[4]);
    int wrong = 0, case_no = 0;
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *algo = &kcoll_algos[ai];
        if (algo->coll != KCOLL_COLL_BCAST)
            continue;
        for (int root = 0; root < p; root++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, case_no++) {
                size_t n = sizes[si];
                for (size_t i = 0; i < n; i++)
                    buf[i] = rank == root ? pattern(i, case_no) : 0xee;
                kcoll_args_t a = {.coll = algo->coll, .p = p, .rank = rank, .root = root,
                                  .bytes = n, .k = algo->param ? 2 + case_no % 3 : 0};
                kcoll_sched_reset(&t.sched);
                algo->build(&a, &t.sched);
                void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
                size_t lens[KCOLL_NBUF] = {0, n, 0};
                kcoll_exec_t x;
                kcoll_exec_start(&x, &t, &t.sched, bufs, lens, ++t.seq);
                kcoll_status_t st = kcoll_exec_run(&x);
                if (st) {
                    fprintf(stderr, "rank %d %s root %d n %zu: %s: %s\n", rank, algo->name, root,
                            n, kcoll_status_str(st), x.errmsg);
                    return wrong + 100;
                }
                for (size_t i = 0; i < n; i++)
                    if (buf[i] != pattern(i, case_no)) {
                        fprintf(stderr, "rank %d %s root %d n %zu: byte %zu wrong\n", rank,
                                algo->name, root, n, i);
                        wrong++;
                        break;
                    }
            }
    }
    free(buf);
    kcoll_team_fini(&t);
    return wrong;
}

static void *new_segment(int p, size_t *len)
{
    *len = kcoll_team_seg_len(p);
    void *seg = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    kcoll_team_seg_init(seg, p);
    return seg;
}

/* Body of rank `rank` in the agreement test: many agreements in a row,
 * ranks running at different speeds; every rank must see every rank's
 * vote and table of the same agreement. Returns the number of wrong
 * values. */
static int agree_child(void *seg, size_t len, int p, int rank)
{
    kcoll_team_t t;
    char err[256];
    if (kcoll_team_attach(&t, seg, len, p, rank))
        return 1000;
    wait_attached(&t);
    kcoll_team_load_pids(&t);
    int wrong = 0;
    uint64_t *votes = calloc((size_t)p, sizeof *votes);
    for (uint64_t a = 1; a <= 300; a++) {
        size_t *tab = kcoll_agree_my_table(&t);
        for (size_t i = 0; i < KCOLL_TABLE_LEN(p); i++)
            tab[i] = a * 1000003u + (size_t)rank * 1009u + i;
        if ((a + (uint64_t)rank) % 7 == 0) /* some ranks lag behind now and then */
            for (int y = 0; y < 20; y++)
                sched_yield();
        if (kcoll_agree(&t, a * 100 + (uint64_t)rank, votes, err, sizeof err)) {
            fprintf(stderr, "agree rank %d a=%llu: %s\n", rank, (unsigned long long)a, err);
            return wrong + 100;
        }
        const kcoll_layout_t *lay = kcoll_agree_layouts(&t);
        for (int q = 0; q < p; q++) {
            wrong += votes[q] != a * 100 + (uint64_t)q;
            for (int j = 0; j < p; j++) {
                size_t base = a * 1000003u + (size_t)q * 1009u;
                wrong += lay[q].scount[j] != base + (size_t)j;
                wrong += lay[q].rdispl[j] != base + 3 * (size_t)p + (size_t)j;
            }
        }
    }
    free(votes);
    kcoll_team_fini(&t);
    return wrong;
}

static void run_group_of(int p, int (*body)(void *, size_t, int, int))
{
    size_t len;
    void *seg = new_segment(p, &len);
    pid_t pids[16];
    for (int r = 0; r < p; r++) {
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(body(seg, len, p, r) ? 1 : 0);
    }
    for (int r = 0; r < p; r++) {
        int status = 0;
        waitpid(pids[r], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "p=%d rank %d failed (status %d)", p,
              r, status);
    }
    munmap(seg, len);
}

static void run_group(int p)
{
    run_group_of(p, child);
}

/* Rank `rank` of a 2-rank team on seg: one 64 KiB direct_read broadcast
 * from rank 0, as the first collective, started delay_ms after attaching.
 * Returns the status; the executor's message goes to msg (if not NULL). */
static kcoll_status_t bcast_pair(void *seg, size_t len, int rank, int delay_ms, char *msg,
                                 size_t msglen)
{
    kcoll_team_t t;
    static char buf[65536];
    kcoll_team_attach(&t, seg, len, 2, rank);
    wait_attached(&t);
    kcoll_team_load_pids(&t);
    struct timespec delay = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    nanosleep(&delay, NULL);
    kcoll_args_t a = {.coll = KCOLL_COLL_BCAST, .p = 2, .rank = rank, .root = 0,
                      .bytes = sizeof buf};
    kcoll_bcast_direct_read(&a, &t.sched);
    void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
    size_t lens[KCOLL_NBUF] = {0, sizeof buf, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, &t, &t.sched, bufs, lens, 1);
    kcoll_status_t st = kcoll_exec_run(&x);
    if (msg)
        snprintf(msg, msglen, "%s", x.errmsg);
    return st;
}

/* Rank 1 attaches and exits at once; rank 0 (this process's child) waits
 * for it in a broadcast and must report the death. */
static void dead_peer(void)
{
    size_t len;
    void *seg = new_segment(2, &len);
    int *result = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *msg = (char *)(result + 4);
    pid_t dying = fork();
    if (dying == 0) {
        kcoll_team_t t;
        kcoll_team_attach(&t, seg, len, 2, 1);
        _exit(0); /* stays a zombie: nobody reaps it until the root is done */
    }
    pid_t root = fork();
    if (root == 0) {
        kcoll_params_set("PEER_CHECK_MS", "20");
        result[0] = bcast_pair(seg, len, 0, 0, msg, 1000);
        _exit(0);
    }
    int status;
    waitpid(root, &status, 0);
    waitpid(dying, &status, 0);
    CHECK(result[0] == KCOLL_ERR_PEER_DEAD, "dead peer reported (status %d: %s)", result[0], msg);
    CHECK(strstr(msg, "died") != NULL, "message names the death: %s", msg);
    munmap(seg, len);
    munmap(result, 4096);
}

/* Rank 1 arrives 600 ms late; rank 0, told to warn after 100 ms, must say
 * once which peer it waits for, then finish normally when it arrives. */
static void late_peer(void)
{
    size_t len;
    void *seg = new_segment(2, &len);
    int *result = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char logname[] = "/tmp/kcoll-test-exec-XXXXXX";
    int logfd = mkstemp(logname);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] != 0)
            continue;
        if (r == 0) {
            kcoll_params_set("WAIT_WARN_MS", "100");
            kcoll_params_set("PEER_CHECK_MS", "20");
            dup2(logfd, 2);
        }
        result[r] = bcast_pair(seg, len, r, r == 1 ? 600 : 0, NULL, 0);
        _exit(0);
    }
    for (int r = 0; r < 2; r++)
        waitpid(pids[r], NULL, 0);
    char log[2048] = "";
    ssize_t n = pread(logfd, log, sizeof log - 1, 0);
    log[n > 0 ? n : 0] = '\0';
    close(logfd);
    unlink(logname);
    CHECK(result[0] == KCOLL_OK && result[1] == KCOLL_OK, "late peer: statuses %d %d", result[0],
          result[1]);
    CHECK(strstr(log, "waited") && strstr(log, "for rank 1"), "one warning naming rank 1: %s", log);
    CHECK(strchr(log, '\n') && strchr(log, '\n') == strrchr(log, '\n'), "exactly one line: %s",
          log);
    munmap(seg, len);
    munmap(result, 4096);
}

int main(void)
{
    kcoll_params_set("WARN", "1");
    for (int p = 1; p <= 5; p++)
        run_group(p);
    run_group(8);
    for (int p = 1; p <= 8; p += 3)
        run_group_of(p, agree_child);
    dead_peer();
    late_peer();
    return check_report("test_exec");
}
