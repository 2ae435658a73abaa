/* What kcoll holds per communicator and per call, and what it does past an
 * operating-system limit (docs/resources.md).
 *
 * 1. 1000 communicators alive at once, each with a team (MPI_Comm_dup,
 *    then a 64 KiB MPI_Bcast through kcoll on each): this process holds
 *    no more file descriptors than before, one more kcoll mapping per team
 *    (its control segment), each of the same size and within the bound
 *    docs/resources.md gives for p ranks; all freed, all gone.
 * 2. The descriptor limit (RLIMIT_NOFILE) lowered to the descriptors this
 *    process has open (the gaps below it filled): a new communicator's
 *    segment cannot be made (the creator, rank 0, limited) or opened (the
 *    last rank limited); its collectives use the host MPI
 *    (mpi:team_failed) with the right results, and the limited process
 *    prints one warning line for 20 such communicators (stderr is caught
 *    in a file for the phase), the others none; the limit raised again, a
 *    new communicator has a team.
 * 3. Scratch memory (kcoll_scratch_get): on a fresh communicator a call's
 *    peak grows by exactly its algorithm's scratch as docs/resources.md
 *    gives it (Alltoall bruck 2 p b, Alltoall in place the receive
 *    buffer, reductions 2 chunks, in-place Reduce_scatter_block 2 chunks
 *    and the rank's block, a packed derived datatype its data), page
 *    rounded; a second call reuses it; 20 non-blocking calls outstanding
 *    at once keep at most 20 requests' scratch (as many as were
 *    outstanding at once); freeing the communicator gives
 *    all of it back.
 * 4. A SIGALRM storm (every 50 us, handler without SA_RESTART) during
 *    16 MiB broadcasts and 4 MiB allreduces through kcoll: right results. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "mpitest.h"

#define NCOMMS 1000
#define BYTES (64 << 10)
#define PAGE 4096
#define ROUND(x) (((x) + PAGE - 1) / PAGE * PAGE)

static int rank, p;

/* kcoll segments mapped here: how many, and the sizes of all but one
 * (MPI_COMM_WORLD's) are equal to *size (0 if they differ). */
static int count_segments(size_t *size)
{
    char line[1024];
    int n = 0;
    *size = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (!strstr(line, "/kcoll-") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        n++;
        *size = n == 1 || *size == hi - lo ? hi - lo : 0;
    }
    if (f)
        fclose(f);
    return n;
}

static int bcast_ok(MPI_Comm c, char *buf, int tag)
{
    memset(buf, rank == 0 ? tag : 0, BYTES);
    MPI_Bcast(buf, BYTES, MPI_BYTE, 0, c);
    return buf[0] == (char)tag && buf[BYTES - 1] == (char)tag;
}

static uint64_t kcoll_bcasts(void)
{
    return mt_calls("MPI_Bcast", "kcoll:*");
}

/* ---- 1 ---- */
static void many_teams(char *buf)
{
    static MPI_Comm comms[NCOMMS];
    size_t size0, size1;
    const int fds0 = mt_open_fds(), maps0 = count_segments(&size0);
    const uint64_t k0 = kcoll_bcasts();
    int wrong = 0;
    for (int i = 0; i < NCOMMS; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        wrong += !bcast_ok(comms[i], buf, i & 0x7f);
    }
    const int fds1 = mt_open_fds(), maps1 = count_segments(&size1);
    /* docs/resources.md: the control part, 64 + 7808 p + 512 p^2 bytes,
     * pages rounded (the bound leaves the slot room to grow to 8 KiB), the
     * mailboxes of the two-copy engine, under 1 KiB per rank, pages
     * rounded, and its 2 p bounce cells of KCOLL_SHM_CELL (64 KiB) */
    const size_t bound = ROUND(64 + 8192 * (size_t)p + 512 * (size_t)p * (size_t)p) +
                         ROUND(1024 * (size_t)p) + 2 * (size_t)p * 65536;
    if (wrong)
        mt_fail("1000 teams: %d broadcasts gave wrong data", wrong);
    else if (kcoll_bcasts() - k0 != NCOMMS)
        mt_fail("1000 teams: kcoll ran %llu of %d broadcasts",
                (unsigned long long)(kcoll_bcasts() - k0), NCOMMS);
    else if (fds1 != fds0)
        mt_fail("1000 teams: %d file descriptors before, %d with the teams alive", fds0, fds1);
    else if (maps1 != maps0 + NCOMMS)
        mt_fail("1000 teams: %d kcoll mappings before, %d with %d teams", maps0, maps1, NCOMMS);
    else if (size1 == 0 || size1 > bound)
        mt_fail("1000 teams: segments of %zu bytes (0: of different sizes), bound %zu", size1, bound);
    else
        mt_pass();
    if (rank == 0)
        printf("test_resources: %d teams alive at %d ranks: %d descriptors (as before), %d kcoll "
               "mappings of %zu bytes (bound %zu)\n", NCOMMS, p, fds1, maps1, size1, bound);
    for (int i = 0; i < NCOMMS; i++)
        MPI_Comm_free(&comms[i]);
    const int fds2 = mt_open_fds(), maps2 = count_segments(&size1);
    if (fds2 != fds0 || maps2 != maps0)
        mt_fail("1000 teams freed: %d descriptors (%d before), %d mappings (%d before)", fds2, fds0,
                maps2, maps0);
    else
        mt_pass();
}

/* ---- 2 ---- */

/* Lower this process's descriptor limit so that the next open fails: the
 * limit at the highest descriptor in use + 1, every free one below it
 * taken by /dev/null. Returns the fillers (to close) in fill[], -1 ended. */
static void exhaust_fds(struct rlimit *old, int *fill, int max)
{
    int top = 0, n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int fd = atoi(e->d_name);
        if (fd > top)
            top = fd;
    }
    if (d)
        closedir(d);
    getrlimit(RLIMIT_NOFILE, old);
    struct rlimit lim = *old;
    lim.rlim_cur = (rlim_t)top + 1;
    setrlimit(RLIMIT_NOFILE, &lim);
    int fd;
    while (n < max - 1 && (fd = open("/dev/null", O_RDONLY)) >= 0)
        fill[n++] = fd;
    fill[n] = -1;
}

static void restore_fds(const struct rlimit *old, const int *fill)
{
    for (int i = 0; fill[i] >= 0; i++)
        close(fill[i]);
    setrlimit(RLIMIT_NOFILE, old);
}

/* Warning lines in a file. */
static int count_warnings(const char *path)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        n += !strncmp(line, "kcoll: warning:", 15);
    if (f)
        fclose(f);
    return n;
}

static void limited(char *buf, int who, const char *what)
{
    char path[64];
    static int fill[4096];
    struct rlimit old;
    const int limited_here = rank == who;
    snprintf(path, sizeof path, "/tmp/kcoll-resources-%d.err", (int)getpid());
    fflush(stderr);
    const int saved = dup(2), caught = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    dup2(caught, 2);
    close(caught);
    const uint64_t failed0 = mt_calls("MPI_Bcast", "mpi:team_failed");
    MPI_Barrier(MPI_COMM_WORLD);
    if (limited_here)
        exhaust_fds(&old, fill, 4096);
    int wrong = 0;
    for (int i = 0; i < 20; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        wrong += !bcast_ok(c, buf, 5 + i);
        MPI_Comm_free(&c);
    }
    if (limited_here)
        restore_fds(&old, fill);
    MPI_Barrier(MPI_COMM_WORLD);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    const int warnings = count_warnings(path);
    unlink(path);
    const uint64_t failed = mt_calls("MPI_Bcast", "mpi:team_failed") - failed0;
    if (wrong)
        mt_fail("%s: %d broadcasts on the host MPI gave wrong data", what, wrong);
    else if (failed != 20)
        mt_fail("%s: %llu of 20 broadcasts counted as mpi:team_failed", what,
                (unsigned long long)failed);
    else if (warnings != limited_here) /* each process is limited in one phase only */
        mt_fail("%s: %d warning lines from this process (expected %d)", what, warnings,
                limited_here);
    else
        mt_pass();
    /* the limit back: teams again */
    MPI_Comm c;
    const uint64_t k0 = kcoll_bcasts();
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (!bcast_ok(c, buf, 99) || kcoll_bcasts() != k0 + 1)
        mt_fail("%s: after the limit was raised, a new communicator did not get a team", what);
    else
        mt_pass();
    MPI_Comm_free(&c);
}

/* ---- 3 ---- */

/* Scratch held and the peak's growth over one call on a fresh
 * communicator (whose pool is empty). */
typedef struct {
    uint64_t held0, held, grew;
} scratch_t;

static scratch_t scratch_begin(void)
{
    scratch_t s = {0, 0, 0};
    uint64_t peak;
    kcoll_scratch_get(&s.held0, &peak, 1);
    return s;
}

static void scratch_end(scratch_t *s)
{
    uint64_t peak;
    kcoll_scratch_get(&s->held, &peak, 0);
    s->grew = peak - s->held0;
}

static void expect_scratch(const char *what, const scratch_t *s, uint64_t want)
{
    if (s->grew != want)
        mt_fail("scratch of %s: the peak grew by %llu bytes, docs/resources.md gives %llu", what,
                (unsigned long long)s->grew, (unsigned long long)want);
    else
        mt_pass();
}

/* What the call layer holds once the communicators that used it are gone:
 * what it held before them. */
static void expect_released(const char *what, uint64_t before)
{
    uint64_t held, peak;
    kcoll_scratch_get(&held, &peak, 0);
    if (held != before)
        mt_fail("scratch: %llu bytes held after %s was freed, %llu before",
                (unsigned long long)held, what, (unsigned long long)before);
    else
        mt_pass();
}

static void scratch(void)
{
    const size_t b = 48 << 10; /* a block */
    char *sb = malloc((size_t)p * b), *rb = malloc((size_t)p * b);
    memset(sb, rank + 1, (size_t)p * b);
    memset(rb, 0, (size_t)p * b);
    MPI_Comm c;
    scratch_t s;
    uint64_t held_before, peak;
    kcoll_scratch_get(&held_before, &peak, 0);

    /* Alltoall bruck: 2 p b; the second call reuses it */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    kcoll_param_set("ALLTOALL_ALGO", "bruck");
    s = scratch_begin();
    MPI_Alltoall(sb, (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, c);
    scratch_end(&s);
    expect_scratch("MPI_Alltoall bruck", &s, ROUND(2 * (size_t)p * b));
    s = scratch_begin();
    MPI_Alltoall(sb, (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, c);
    scratch_end(&s);
    expect_scratch("a second MPI_Alltoall bruck", &s, 0);
    /* 20 outstanding: 16 lanes and 4 queued */
    MPI_Request q[20];
    char *many = malloc(20 * (size_t)p * b);
    s = scratch_begin();
    for (int i = 0; i < 20; i++)
        MPI_Ialltoall(sb, (int)b, MPI_BYTE, many + (size_t)i * (size_t)p * b, (int)b, MPI_BYTE, c,
                      &q[i]);
    MPI_Status sts[20];
    MPI_Waitall(20, q, sts);
    scratch_end(&s);
    /* as many requests as were outstanding at once, each with its
     * scratch: up to 19 more than the one the blocking calls left (fewer
     * where earlier calls finished, in the host's progress, while later
     * ones started) */
    const uint64_t one = ROUND(2 * (size_t)p * b), more = s.held - s.held0;
    if (more % one || more > 19 * one)
        mt_fail("scratch: 20 outstanding MPI_Ialltoall bruck keep %llu bytes more, expected "
                "up to 19 more requests' %llu each", (unsigned long long)more,
                (unsigned long long)one);
    else
        mt_pass();
    free(many);
    MPI_Comm_free(&c);
    expect_released("the communicator", held_before);

    /* Alltoall in place (pairwise): the receive buffer */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    kcoll_param_set("ALLTOALL_ALGO", "pairwise");
    s = scratch_begin();
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_BYTE, rb, (int)b, MPI_BYTE, c);
    scratch_end(&s);
    expect_scratch("MPI_Alltoall in place", &s, ROUND((size_t)p * b));
    MPI_Comm_free(&c);
    kcoll_param_set("ALLTOALL_ALGO", "auto");

    /* reductions: two chunks; in-place Reduce_scatter_block also its block */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    kcoll_param_set("ALLREDUCE_ALGO", "partitioned:chunk=16");
    s = scratch_begin();
    MPI_Allreduce(sb, rb, (int)(b / 4), MPI_INT, MPI_SUM, c);
    scratch_end(&s);
    expect_scratch("MPI_Allreduce partitioned:chunk=16", &s, 2 * 16384);
    MPI_Comm_free(&c);
    kcoll_param_set("ALLREDUCE_ALGO", "auto");
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    kcoll_param_set("REDUCE_SCATTER_ALGO", "partitioned:chunk=16");
    memcpy(rb, sb, (size_t)p * b);
    s = scratch_begin();
    MPI_Reduce_scatter_block(MPI_IN_PLACE, rb, (int)(b / 4), MPI_INT, MPI_SUM, c);
    scratch_end(&s);
    expect_scratch("MPI_Reduce_scatter_block in place, partitioned:chunk=16", &s,
                   ROUND(2 * 16384 + b));
    MPI_Comm_free(&c);
    kcoll_param_set("REDUCE_SCATTER_ALGO", "auto");

    /* a derived datatype of 8-byte pieces (packed): its data */
    MPI_Datatype col;
    MPI_Type_vector((int)(b / 8), 1, 2, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    char *wide = malloc(2 * b);
    memset(wide, rank, 2 * b);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    s = scratch_begin();
    MPI_Bcast(wide, 1, col, 0, c);
    scratch_end(&s);
    expect_scratch("MPI_Bcast of a column of doubles (packed)", &s, ROUND(b));
    MPI_Comm_free(&c);
    MPI_Type_free(&col);
    free(wide);

    expect_released("every communicator", held_before);
    free(sb);
    free(rb);
}

/* ---- 4 ---- */
static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* Collectives through kcoll while a timer sends SIGALRM every 50 us to a
 * handler without SA_RESTART: a copy, a wait or a nap caught by a signal
 * must complete all the same; the results equal the host MPI's. */
static void signals(void)
{
    const size_t big = 16 << 20;
    char *a = malloc(big), *b = malloc(big);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
    const uint64_t k0 = kcoll_bcasts() + mt_calls("MPI_Allreduce", "kcoll:*");
    int wrong = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    const long s0 = (long)alarms;
    for (int i = 0; i < 10; i++) {
        memset(a, rank == i % p ? 'a' + i : 0, big);
        MPI_Bcast(a, (int)big, MPI_BYTE, i % p, MPI_COMM_WORLD);
        wrong += a[0] != 'a' + i || a[big - 1] != 'a' + i;
        for (size_t k = 0; k < big / 4 / 4; k++)
            ((int *)a)[k] = (int)k + rank;
        MPI_Allreduce(a, b, (int)(big / 4 / 4), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (size_t k = 0; k < big / 4 / 4; k += 4099)
            wrong += ((int *)b)[k] != (int)k * p + p * (p - 1) / 2;
    }
    const long caught = (long)alarms - s0;
    setitimer(ITIMER_REAL, &off, NULL);
    const uint64_t ran = kcoll_bcasts() + mt_calls("MPI_Allreduce", "kcoll:*") - k0;
    if (wrong)
        mt_fail("signals: %d wrong results under a SIGALRM storm", wrong);
    else if (ran != 20)
        mt_fail("signals: kcoll ran %llu of 20 calls", (unsigned long long)ran);
    else if (caught == 0)
        mt_fail("signals: no signal arrived during the calls: nothing was tested");
    else
        mt_pass();
    if (rank == 0)
        printf("test_resources: 10 x 16 MiB MPI_Bcast and 4 MiB MPI_Allreduce through kcoll under "
               "%ld signals: %s\n", caught, wrong ? "WRONG" : "right");
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    char *buf = malloc(BYTES);
    kcoll_param_set("MIN_BYTES", "0"); /* every call of a team on kcoll's path */
    /* warm up: the host MPI allocates its own things on first use */
    for (int i = 0; i < 5; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        bcast_ok(c, buf, 1);
        MPI_Comm_free(&c);
    }
    if (p > 1) {
        many_teams(buf);
        limited(buf, 0, "descriptor limit on the rank that creates the segment");
        limited(buf, p - 1, "descriptor limit on a rank that opens the segment");
        scratch();
        signals();
    }
    free(buf);
    int rc = mt_finish("test_resources");
    MPI_Finalize();
    return rc;
}
