/* A rank dies in the middle of collectives that run through kcoll; the
 * others must not hang. run_kill.sh runs it once per case and checks what
 * the job leaves (/dev/shm) and prints.
 *
 * usage: test_kill FAMILY FORM HOW STAMPFILE
 *   FAMILY: bcast scatter gather allgather alltoall barrier reduce
 *           allreduce reduce_scatter (one collective of each family kcoll
 *           runs; 1 MiB blocks)
 *   FORM:   blocking or nonblocking (MPI_I<coll> + MPI_Wait)
 *   HOW:    kill  - a thread of the victim SIGKILLs it 100-300 ms into a
 *                   loop of collectives (so it dies at any point of
 *                   kcoll's protocol, inside a copy, a wait or between
 *                   calls);
 *           exit  - the victim returns from main without MPI_Finalize
 *                   after 20 collectives, the others in the 21st;
 *           abort - the victim calls MPI_Abort(MPI_COMM_WORLD, 7) after
 *                   20 collectives, the others in the 21st.
 * The victim is the last rank (never the root). Before it goes, it writes
 * the time (CLOCK_MONOTONIC, shared by the processes of one machine) to
 * STAMPFILE. Every other rank loops on the collective with
 * MPI_ERRORS_RETURN until a call fails, then prints (to its stderr, which
 * goes to the file STAMPFILE.log.<rank>, with kcoll's lines: a launcher
 * may stop forwarding output once a rank has died)
 *   "test_kill: rank R: <coll> failed after N ms: <MPI error string>"
 * (N: from the victim's stamp), waits until every survivor has (files
 * STAMPFILE.<rank>; one that left at once would be a second dead peer for
 * the others) and leaves with _exit(0): MPI_Finalize with a dead peer is
 * not defined. kcoll itself prints the line naming the
 * dead peer ("... rank 2 (pid P) of this communicator died while this
 * rank waited for it"); the victim prints its pid first. For kill and
 * exit the launcher must not kill the survivors when the victim dies
 * (run_kill.sh: Open MPI's orte_enable_recovery, MPICH's
 * -disable-auto-cleanup); MPI_Abort runs with its defaults (it ends the
 * job).
 * The warm-up calls must run on kcoll's path (MIN_BYTES=0; the statistics
 * are checked), so the case tests kcoll and not the host MPI. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

#define BLOCK (1 << 20)
#define WARMUP 3
#define BEFORE 20 /* collectives the victim makes before exit / abort */

static const char *const families[] = {"bcast",  "scatter", "gather",
                                       "allgather", "alltoall", "barrier",
                                       "reduce", "allreduce", "reduce_scatter"};
static const char *const rows[2][9] = {
    {"MPI_Bcast", "MPI_Scatter", "MPI_Gather", "MPI_Allgather", "MPI_Alltoall", "MPI_Barrier",
     "MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter_block"},
    {"MPI_Ibcast", "MPI_Iscatter", "MPI_Igather", "MPI_Iallgather", "MPI_Ialltoall",
     "MPI_Ibarrier", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ireduce_scatter_block"}};
#define NFAMILIES (int)(sizeof families / sizeof families[0])

static int fam, nonblocking, p, rank;
static char *sbuf, *rbuf;
static const char *stamp_path;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void stamp(void)
{
    FILE *f = fopen(stamp_path, "w");
    if (f) {
        fprintf(f, "%lld\n", (long long)now_ns());
        fclose(f);
    }
}

/* One collective of the family, blocking or started and waited for. */
static int one(void)
{
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Request *r = nonblocking ? &q : NULL;
    const int n = BLOCK / 4;
    int rc;
#define ONE(B, I, ...) (r ? MPI_##I(__VA_ARGS__, r) : MPI_##B(__VA_ARGS__))
    switch (fam) {
    case 0: rc = ONE(Bcast, Ibcast, rbuf, BLOCK, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case 1: rc = ONE(Scatter, Iscatter, sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case 2: rc = ONE(Gather, Igather, sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case 3: rc = ONE(Allgather, Iallgather, sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE, MPI_COMM_WORLD); break;
    case 4: rc = ONE(Alltoall, Ialltoall, sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE, MPI_COMM_WORLD); break;
    case 5: rc = r ? MPI_Ibarrier(MPI_COMM_WORLD, r) : MPI_Barrier(MPI_COMM_WORLD); break;
    case 6: rc = ONE(Reduce, Ireduce, sbuf, rbuf, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case 7: rc = ONE(Allreduce, Iallreduce, sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
    default: rc = ONE(Reduce_scatter_block, Ireduce_scatter_block, sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
    }
#undef ONE
    if (rc == MPI_SUCCESS && r)
        rc = MPI_Wait(r, MPI_STATUS_IGNORE);
    return rc;
}

static void *killer(void *arg)
{
    struct timespec d = {0, (long)(100 + (intptr_t)arg % 200) * 1000000};
    nanosleep(&d, NULL);
    stamp();
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 5 || p < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: test_kill FAMILY blocking|nonblocking kill|exit|abort STAMPFILE "
                            "(at least 2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (fam = 0; fam < NFAMILIES && strcmp(argv[1], families[fam]); fam++)
        ;
    nonblocking = !strcmp(argv[2], "nonblocking");
    const char *how = argv[3];
    stamp_path = argv[4];
    if (fam == NFAMILIES || (!nonblocking && strcmp(argv[2], "blocking")) ||
        (strcmp(how, "kill") && strcmp(how, "exit") && strcmp(how, "abort"))) {
        if (rank == 0)
            fprintf(stderr, "test_kill: unknown case %s %s %s\n", argv[1], argv[2], how);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    kcoll_param_set("MIN_BYTES", "0");
    sbuf = calloc((size_t)p, BLOCK);
    rbuf = calloc((size_t)p, BLOCK);
    const int victim = p - 1;
    const char *row = rows[nonblocking][fam];
    uint64_t before = mt_calls(row, "kcoll:*");
    for (int i = 0; i < WARMUP; i++)
        if (one() != MPI_SUCCESS) {
            fprintf(stderr, "test_kill: rank %d: a warm-up %s failed\n", rank, row);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    if (mt_calls(row, "kcoll:*") != before + WARMUP) {
        fprintf(stderr, "test_kill: rank %d: kcoll did not run the warm-up %s calls: this case "
                        "would not test kcoll\n", rank, row);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == victim) {
        printf("test_kill: victim: rank %d pid %d (%s, %s, %s)\n", rank, (int)getpid(), row,
               argv[2], how);
        fflush(stdout);
    } else {
        /* a survivor's lines (its own and kcoll's) go to STAMPFILE.log.<rank>:
         * a launcher may stop forwarding output once a rank has died */
        char log[4096];
        snprintf(log, sizeof log, "%s.log.%d", stamp_path, rank);
        if (freopen(log, "w", stderr))
            setvbuf(stderr, NULL, _IOLBF, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) {
        if (!strcmp(how, "kill")) {
            pthread_t t;
            pthread_create(&t, NULL, killer, (void *)(intptr_t)(getpid() * 7919));
            for (;;)
                one();
        }
        for (int i = 0; i < BEFORE; i++)
            one();
        stamp();
        if (!strcmp(how, "abort"))
            MPI_Abort(MPI_COMM_WORLD, 7);
        return 0; /* without MPI_Finalize */
    }
    /* the survivors: until a call fails, at most 120 s */
    const int64_t t0 = now_ns();
    int rc = MPI_SUCCESS;
    long calls = 0;
    while (rc == MPI_SUCCESS && now_ns() - t0 < 120 * (int64_t)1000000000) {
        rc = one();
        calls++;
    }
    const int64_t t_err = now_ns();
    long long died = 0;
    FILE *f = fopen(stamp_path, "r");
    if (!f || fscanf(f, "%lld", &died) != 1)
        died = 0;
    if (f)
        fclose(f);
    char msg[MPI_MAX_ERROR_STRING] = "no error";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "test_kill: rank %d: %s failed after %lld ms: %s (%ld calls)\n", rank, row,
            died ? (long long)((t_err - died) / 1000000) : -1, msg, calls);
    fflush(stderr);
    /* stay until every survivor has failed (at most 10 s): one that left
     * first would be a dead peer for the others too */
    char mine[4096];
    snprintf(mine, sizeof mine, "%s.%d", stamp_path, rank);
    FILE *d = fopen(mine, "w");
    if (d)
        fclose(d);
    for (int waited = 0, all = 0; !all && waited < 1000; waited++) {
        all = 1;
        for (int q = 0; q < victim; q++) {
            snprintf(mine, sizeof mine, "%s.%d", stamp_path, q);
            all = all && access(mine, F_OK) == 0;
        }
        if (!all)
            usleep(10000);
    }
    _exit(rc == MPI_SUCCESS ? 1 : 0);
}
