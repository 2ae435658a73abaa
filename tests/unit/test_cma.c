/* The CMA engine against a real peer: a forked child keeps private
 * (malloc'ed) buffers and publishes their addresses on a shared page; this
 * process reads and writes them with kcoll_cma_*. Checked:
 *   - read/write of several pages from an unaligned address with an odd
 *     length, byte for byte, with the bytes around the range untouched
 *     (the child checks what was written to it and reports on the page);
 *   - readv/writev with more than 1024 entries on one side, another count
 *     on the other side, empty entries, and remote entries out of address
 *     order;
 *   - argument errors (totals that differ) and zero-length transfers;
 *   - a remote range that runs into an unmapped page: an error, not OK and
 *     not a hang;
 *   - the probe: right value, wrong value, and the self-contained probe;
 *   - a zombie peer and a reaped one: kcoll_pid_alive says 0 and a transfer
 *     reports KCOLL_ERR_PEER_DEAD.
 * A watchdog (alarm) kills the child and fails the test if anything hangs;
 * every wait on the child is bounded. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/status.h"
#include "sched/ctl.h"
#include "xfer/cma.h"

#define PAGE 4096
/* read/write: more than 5 pages, odd length, unaligned at both ends */
#define BUF_LEN (20 * PAGE)
#define RW_OFF 13
#define RW_LOCAL_OFF 7
#define RW_LEN (5 * PAGE + 1235)
/* readv/writev */
#define V_LEN 70001
#define V_MANY 3001 /* entries on the long side */
#define WAIT_MS 1000 /* longest wait for the child at any one point */
#define WATCHDOG_S 4
_Static_assert(V_LEN <= BUF_LEN, "the readv source is the child's src buffer");

/* Child commands */
enum { CMD_NONE, CMD_VERIFY_RW, CMD_VERIFY_V, CMD_EXIT };

typedef struct {
    _Atomic int ready;      /* child: addresses below published */
    _Atomic int cmd_seq;    /* parent: sequence number of the command in cmd */
    _Atomic int done_seq;   /* child: last command sequence number carried out */
    int cmd;
    size_t arg_off, arg_len; /* CMD_VERIFY_RW: range written */
    int result;             /* child: bytes found wrong by the last verification */
    uint64_t src, dst, vdst; /* child buffers: src holds pat_a, dst and vdst start zeroed */
    uint64_t hole;          /* child: a mapped page directly followed by an unmapped one */
    uint64_t word_addr, word_val; /* child: private probe word */
} shared_t;

static volatile pid_t watched_child;

static void watchdog(int sig)
{
    static const char msg[] = "test_cma: watchdog expired, something hung\n";
    (void)sig;
    if (watched_child > 0)
        kill(watched_child, SIGKILL);
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    _exit(2);
}

static void nap(void)
{
    struct timespec ts = {0, 100000}; /* 0.1 ms */
    nanosleep(&ts, NULL);
}

static uint8_t pat_a(size_t i)
{
    return (uint8_t)(i * 7 + (i >> 8) + 1);
}

static uint8_t pat_b(size_t i)
{
    return (uint8_t)(i * 13 + (i >> 9) + 5);
}

/* ---------------------------------------------------------------------- */
/* The child                                                              */
/* ---------------------------------------------------------------------- */

/* Bytes of buf[0, n) that are wrong: pat_b inside [off, off + len), 0
 * elsewhere. */
static int count_wrong(const uint8_t *buf, size_t n, size_t off, size_t len)
{
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t want = i >= off && i < off + len ? pat_b(i) : 0;
        wrong += buf[i] != want;
    }
    return wrong;
}

static int child_main(shared_t *sh, pid_t parent)
{
    uint8_t *src = malloc(BUF_LEN), *dst = calloc(1, BUF_LEN), *vdst = calloc(1, V_LEN);
    volatile uint64_t word = 0x6b636f6c6c746573ull ^ ((uint64_t)getpid() << 16);
    uint8_t *hole = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
    char why[256];

    if (!src || !dst || !vdst || hole == MAP_FAILED || munmap(hole + PAGE, PAGE) != 0)
        return 10;
    for (size_t i = 0; i < BUF_LEN; i++)
        src[i] = pat_a(i);
    if (kcoll_cma_allow_peers(why, sizeof why) != 0)
        return 11;
    sh->src = (uint64_t)(uintptr_t)src;
    sh->dst = (uint64_t)(uintptr_t)dst;
    sh->vdst = (uint64_t)(uintptr_t)vdst;
    sh->hole = (uint64_t)(uintptr_t)hole;
    sh->word_addr = (uint64_t)(uintptr_t)&word;
    sh->word_val = word;
    atomic_store_explicit(&sh->ready, 1, memory_order_release);

    int64_t deadline = (kcoll_now_ns() / 1000000) + WATCHDOG_S * 1000;
    int seen = 0;
    while ((kcoll_now_ns() / 1000000) < deadline && getppid() == parent) {
        int seq = atomic_load_explicit(&sh->cmd_seq, memory_order_acquire);
        if (seq == seen) {
            nap();
            continue;
        }
        seen = seq;
        switch (sh->cmd) {
        case CMD_VERIFY_RW:
            sh->result = count_wrong(dst, BUF_LEN, sh->arg_off, sh->arg_len);
            break;
        case CMD_VERIFY_V:
            sh->result = count_wrong(vdst, V_LEN, 0, V_LEN);
            break;
        case CMD_EXIT: {
            /* the reads never changed the source */
            int wrong = 0;
            for (size_t i = 0; i < BUF_LEN; i++)
                wrong += src[i] != pat_a(i);
            return wrong ? 12 : 0;
        }
        default:
            sh->result = -1;
        }
        atomic_store_explicit(&sh->done_seq, seq, memory_order_release);
    }
    return 13; /* timed out or orphaned */
}

/* ---------------------------------------------------------------------- */
/* Helpers of the parent                                                  */
/* ---------------------------------------------------------------------- */

static shared_t *sh;

/* Let the child carry out cmd; returns its result, or -1000 on timeout
 * (then the child is taken as lost and later commands do not wait). */
static int ask_child(int cmd, size_t off, size_t len)
{
    static int seq, lost;
    if (lost)
        return -1000;
    sh->cmd = cmd;
    sh->arg_off = off;
    sh->arg_len = len;
    atomic_store_explicit(&sh->cmd_seq, ++seq, memory_order_release);
    if (cmd == CMD_EXIT)
        return 0;
    int64_t deadline = (kcoll_now_ns() / 1000000) + WAIT_MS;
    while (atomic_load_explicit(&sh->done_seq, memory_order_acquire) != seq) {
        if ((kcoll_now_ns() / 1000000) > deadline) {
            lost = 1;
            return -1000;
        }
        nap();
    }
    return sh->result;
}

/* Wait (bounded) until pid has exited, without reaping it. */
static int wait_zombie(pid_t pid)
{
    int64_t deadline = (kcoll_now_ns() / 1000000) + WAIT_MS;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            return 1;
        if ((kcoll_now_ns() / 1000000) > deadline)
            return 0;
        nap();
    }
}

/* Reap pid within the bound; kill it past the bound. Returns the status. */
static int reap(pid_t pid)
{
    int status = -1;
    int64_t deadline = (kcoll_now_ns() / 1000000) + WAIT_MS;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return status;
        if ((kcoll_now_ns() / 1000000) > deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return -1;
        }
        nap();
    }
}

/* Lengths 1..41 bytes, varying; split [0, total) into n pieces of such
 * lengths except the last, which takes the rest. */
static void split(size_t *len, int n, size_t total, unsigned salt)
{
    size_t left = total;
    for (int i = 0; i < n - 1; i++) {
        size_t l = 1 + ((size_t)i * 17 + salt) % 41;
        if (l > left)
            l = left;
        len[i] = l;
        left -= l;
    }
    len[n - 1] = left;
}

/* Remote list of n entries covering base[0, total), listed out of address
 * order: entry k covers piece perm(k), perm(k) = k * 7 mod n (n not a
 * multiple of 7). piece_off[j] is the offset of piece j. */
static void remote_list(struct iovec *v, int n, uint8_t *base, size_t total, size_t *piece_len,
                        size_t *piece_off)
{
    split(piece_len, n, total, 3);
    size_t off = 0;
    for (int j = 0; j < n; j++) {
        piece_off[j] = off;
        off += piece_len[j];
    }
    for (int k = 0; k < n; k++) {
        int j = (int)(((long)k * 7) % n);
        v[k].iov_base = base + piece_off[j];
        v[k].iov_len = piece_len[j];
    }
}

/* Local list of n entries covering buf[0, total) in order, every third
 * entry empty. */
static void local_list(struct iovec *v, int n, uint8_t *buf, size_t total)
{
    size_t *len = calloc((size_t)n, sizeof *len);
    int nfull = 0;
    for (int i = 0; i < n; i++)
        nfull += i % 3 != 1;
    split(len, nfull, total, 11);
    size_t off = 0;
    for (int i = 0, f = 0; i < n; i++) {
        size_t l = i % 3 != 1 ? len[f++] : 0;
        v[i].iov_base = buf + off;
        v[i].iov_len = l;
        off += l;
    }
    free(len);
}

/* The local stream (buf, in order) against the remote entries: byte s of the
 * stream must be pat(address offset) of the remote byte it maps to. Returns
 * the number of wrong bytes. */
static size_t stream_wrong(const uint8_t *buf, const struct iovec *rv, int nr, const uint8_t *base,
                           uint8_t (*pat)(size_t))
{
    size_t s = 0, wrong = 0;
    for (int k = 0; k < nr; k++) {
        size_t roff = (size_t)((const uint8_t *)rv[k].iov_base - base);
        for (size_t j = 0; j < rv[k].iov_len; j++, s++)
            wrong += buf[s] != pat(roff + j);
    }
    return wrong;
}

/* ---------------------------------------------------------------------- */
/* The checks                                                             */
/* ---------------------------------------------------------------------- */

static void check_read_write(pid_t c)
{
    uint8_t *src = (uint8_t *)(uintptr_t)sh->src, *dst = (uint8_t *)(uintptr_t)sh->dst;
    uint8_t *loc = malloc(BUF_LEN);
    kcoll_status_t st;

    /* read: unaligned on both sides, odd length, guards around the range */
    memset(loc, 0xee, BUF_LEN);
    st = kcoll_cma_read(c, loc + RW_LOCAL_OFF, src + RW_OFF, RW_LEN);
    CHECK(st == KCOLL_OK, "read: %s", kcoll_status_str(st));
    size_t wrong = 0;
    for (size_t i = 0; i < RW_LEN; i++)
        wrong += loc[RW_LOCAL_OFF + i] != pat_a(RW_OFF + i);
    CHECK(wrong == 0, "read: %zu of %d bytes wrong", wrong, RW_LEN);
    size_t guards = 0;
    for (size_t i = 0; i < BUF_LEN; i++)
        if (i < RW_LOCAL_OFF || i >= RW_LOCAL_OFF + RW_LEN)
            guards += loc[i] != 0xee;
    CHECK(guards == 0, "read: %zu bytes outside the range changed", guards);

    /* write: the child checks the range and that nothing around it moved */
    for (size_t i = 0; i < RW_LEN; i++)
        loc[RW_LOCAL_OFF + i] = pat_b(RW_OFF + i);
    st = kcoll_cma_write(c, loc + RW_LOCAL_OFF, dst + RW_OFF, RW_LEN);
    CHECK(st == KCOLL_OK, "write: %s", kcoll_status_str(st));
    int r = ask_child(CMD_VERIFY_RW, RW_OFF, RW_LEN);
    CHECK(r == 0, "write: child found %d bytes wrong (-1000: no answer)", r);

    /* length 0 */
    CHECK(kcoll_cma_read(c, loc, src, 0) == KCOLL_OK, "read of 0 bytes");
    CHECK(kcoll_cma_write(c, loc, dst, 0) == KCOLL_OK, "write of 0 bytes");
    CHECK(kcoll_cma_read(c, NULL, NULL, 0) == KCOLL_OK, "read of 0 bytes, NULL addresses");
    free(loc);
}

static void check_vectors(pid_t c)
{
    uint8_t *src = (uint8_t *)(uintptr_t)sh->src, *vdst = (uint8_t *)(uintptr_t)sh->vdst;
    uint8_t *loc = malloc(V_LEN);
    struct iovec *rv = calloc(V_MANY, sizeof *rv), *lv = calloc(V_MANY, sizeof *lv);
    size_t *plen = calloc(V_MANY, sizeof *plen), *poff = calloc(V_MANY, sizeof *poff);
    kcoll_status_t st;
    size_t wrong;

    /* readv: 3001 remote entries out of order, 7 local ones (2 empty) */
    remote_list(rv, V_MANY, src, V_LEN, plen, poff);
    local_list(lv, 7, loc, V_LEN);
    memset(loc, 0, V_LEN);
    st = kcoll_cma_readv(c, lv, 7, rv, V_MANY);
    CHECK(st == KCOLL_OK, "readv 7 x %d: %s", V_MANY, kcoll_status_str(st));
    wrong = stream_wrong(loc, rv, V_MANY, src, pat_a);
    CHECK(wrong == 0, "readv 7 x %d: %zu bytes wrong", V_MANY, wrong);

    /* readv: 2000 local entries (a third empty), 1500 remote ones */
    remote_list(rv, 1500, src, V_LEN, plen, poff);
    local_list(lv, 2000, loc, V_LEN);
    memset(loc, 0, V_LEN);
    st = kcoll_cma_readv(c, lv, 2000, rv, 1500);
    CHECK(st == KCOLL_OK, "readv 2000 x 1500: %s", kcoll_status_str(st));
    wrong = stream_wrong(loc, rv, 1500, src, pat_a);
    CHECK(wrong == 0, "readv 2000 x 1500: %zu bytes wrong", wrong);

    /* writev: 2500 local entries (a third empty), 3001 remote ones out of
     * order; the stream is laid out so that vdst ends up as pat_b */
    remote_list(rv, V_MANY, vdst, V_LEN, plen, poff);
    local_list(lv, 2500, loc, V_LEN);
    size_t s = 0;
    for (int k = 0; k < V_MANY; k++) {
        size_t roff = (size_t)((uint8_t *)rv[k].iov_base - vdst);
        for (size_t j = 0; j < rv[k].iov_len; j++)
            loc[s++] = pat_b(roff + j);
    }
    st = kcoll_cma_writev(c, lv, 2500, rv, V_MANY);
    CHECK(st == KCOLL_OK, "writev 2500 x %d: %s", V_MANY, kcoll_status_str(st));
    int r = ask_child(CMD_VERIFY_V, 0, V_LEN);
    CHECK(r == 0, "writev: child found %d bytes wrong (-1000: no answer)", r);

    /* totals that differ: one byte short on the remote side */
    remote_list(rv, V_MANY, src, V_LEN - 1, plen, poff);
    local_list(lv, 2000, loc, V_LEN);
    CHECK(kcoll_cma_readv(c, lv, 2000, rv, V_MANY) == KCOLL_ERR_ARG, "readv, totals differ");
    CHECK(kcoll_cma_writev(c, lv, 2000, rv, V_MANY) == KCOLL_ERR_ARG, "writev, totals differ");
    struct iovec one = {loc, 10}, two = {src, 11};
    CHECK(kcoll_cma_readv(c, &one, 1, &two, 1) == KCOLL_ERR_ARG, "readv 10 vs 11 bytes");
    CHECK(kcoll_cma_writev(c, &one, 1, &two, 1) == KCOLL_ERR_ARG, "writev 10 vs 11 bytes");
    CHECK(kcoll_cma_readv(c, &one, -1, &two, 1) == KCOLL_ERR_ARG, "negative entry count");

    /* nothing to move */
    struct iovec empty[3] = {{loc, 0}, {loc, 0}, {loc, 0}};
    CHECK(kcoll_cma_readv(c, NULL, 0, NULL, 0) == KCOLL_OK, "readv of no entries");
    CHECK(kcoll_cma_writev(c, NULL, 0, NULL, 0) == KCOLL_OK, "writev of no entries");
    CHECK(kcoll_cma_readv(c, empty, 3, empty, 2) == KCOLL_OK, "readv of empty entries");
    CHECK(kcoll_cma_writev(c, empty, 2, empty, 3) == KCOLL_OK, "writev of empty entries");

    free(loc);
    free(rv);
    free(lv);
    free(plen);
    free(poff);
}

/* A remote range whose first half is mapped and second half is not: the
 * system call moves the first part, then fails. */
static void check_partial(pid_t c)
{
    uint8_t *hole = (uint8_t *)(uintptr_t)sh->hole;
    uint8_t loc[4 * PAGE];
    kcoll_status_t st;

    memset(loc, 0x5a, sizeof loc);
    errno = 0;
    st = kcoll_cma_read(c, loc, hole + PAGE - 100, 200);
    CHECK(st == KCOLL_ERR_SYS && errno == EFAULT, "read across the hole: %s, errno %d",
          kcoll_status_str(st), errno);
    errno = 0;
    st = kcoll_cma_write(c, loc, hole + PAGE / 2, PAGE);
    CHECK(st == KCOLL_ERR_SYS && errno == EFAULT, "write across the hole: %s, errno %d",
          kcoll_status_str(st), errno);
    /* one entry each (one call), then many entries (windowed path) */
    struct iovec l1 = {loc, 2 * PAGE}, r1 = {hole, 2 * PAGE};
    errno = 0;
    st = kcoll_cma_readv(c, &l1, 1, &r1, 1);
    CHECK(st == KCOLL_ERR_SYS && errno == EFAULT, "readv across the hole: %s, errno %d",
          kcoll_status_str(st), errno);
    struct iovec lm[1100], rm[2];
    for (int i = 0; i < 1100; i++) {
        lm[i].iov_base = loc + (size_t)i * 2;
        lm[i].iov_len = 2;
    }
    rm[0].iov_base = hole + PAGE - 1000;
    rm[0].iov_len = 1000;
    rm[1].iov_base = hole + PAGE;
    rm[1].iov_len = 1200;
    errno = 0;
    st = kcoll_cma_writev(c, lm, 1100, rm, 2);
    CHECK(st == KCOLL_ERR_SYS && errno == EFAULT, "writev 1100 x 2 across the hole: %s, errno %d",
          kcoll_status_str(st), errno);
}

static void check_probe(pid_t c)
{
    const void *word = (const void *)(uintptr_t)sh->word_addr;
    char why[1024];
    kcoll_status_t st;

    strcpy(why, "stale");
    st = kcoll_cma_probe_peer(c, word, sh->word_val, why, sizeof why);
    CHECK(st == KCOLL_OK, "probe with the right value: %s: %s", kcoll_status_str(st), why);
    CHECK(why[0] == '\0', "no reason after success: %s", why);
    why[0] = '\0';
    st = kcoll_cma_probe_peer(c, word, sh->word_val ^ 1, why, sizeof why);
    CHECK(st == KCOLL_ERR_PROTO, "probe with a wrong value: %s", kcoll_status_str(st));
    CHECK(why[0] != '\0', "probe with a wrong value gives a reason");

    why[0] = '\0';
    fflush(NULL); /* the probe forks */
    st = kcoll_cma_probe_local(why, sizeof why);
    if (st == KCOLL_OK) {
        printf("test_cma: kcoll_cma_probe_local: CMA permitted\n");
        CHECK(st == KCOLL_OK, "probe_local");
    } else {
        printf("test_cma: kcoll_cma_probe_local: CMA not permitted (%s): %s\n",
               kcoll_status_str(st), why);
        CHECK(why[0] != '\0', "probe_local failed without a reason");
    }
}

/* Called once the child has been told to exit: first a zombie, then gone. */
static void check_dead(pid_t c)
{
    uint8_t loc[64];
    char why[1024];

    CHECK(wait_zombie(c), "child did not exit");
    CHECK(kcoll_pid_alive(c) == 0, "zombie reported alive");
    CHECK(kcoll_cma_read(c, loc, (void *)(uintptr_t)sh->src, sizeof loc) == KCOLL_ERR_PEER_DEAD,
          "read from a zombie");

    int status = reap(c);
    watched_child = 0;
    CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "child's own checks (wait status %d)", status);

    CHECK(kcoll_pid_alive(c) == 0, "reaped child reported alive");
    CHECK(kcoll_cma_read(c, loc, (void *)(uintptr_t)sh->src, sizeof loc) == KCOLL_ERR_PEER_DEAD,
          "read from a dead pid");
    CHECK(kcoll_cma_write(c, loc, (void *)(uintptr_t)sh->dst, sizeof loc) == KCOLL_ERR_PEER_DEAD,
          "write to a dead pid");
    struct iovec l = {loc, sizeof loc}, r = {(void *)(uintptr_t)sh->src, sizeof loc};
    CHECK(kcoll_cma_readv(c, &l, 1, &r, 1) == KCOLL_ERR_PEER_DEAD, "readv from a dead pid");
    why[0] = '\0';
    CHECK(kcoll_cma_probe_peer(c, (void *)(uintptr_t)sh->word_addr, sh->word_val, why,
                               sizeof why) == KCOLL_ERR_PEER_DEAD,
          "probe of a dead pid");
    CHECK(why[0] != '\0', "probe of a dead pid gives a reason");
}

int main(void)
{
    char why[256];

    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);

    sh = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    kcoll_cma_allow_peers(why, sizeof why);

    pid_t parent = getpid();
    fflush(NULL);
    pid_t c = fork();
    if (c < 0) {
        perror("fork");
        return 1;
    }
    if (c == 0) {
        signal(SIGALRM, SIG_DFL);
        _exit(child_main(sh, parent));
    }
    watched_child = c;

    int64_t deadline = (kcoll_now_ns() / 1000000) + WAIT_MS;
    while (!atomic_load_explicit(&sh->ready, memory_order_acquire) && (kcoll_now_ns() / 1000000) < deadline)
        nap();
    int ready = atomic_load_explicit(&sh->ready, memory_order_acquire);
    CHECK(ready, "child did not start");
    if (ready) {
        CHECK(kcoll_pid_alive(c) == 1, "live child reported dead");
        CHECK(kcoll_pid_alive(getpid()) == 1, "this process reported dead");
        check_read_write(c);
        check_vectors(c);
        check_partial(c);
        check_probe(c);
        ask_child(CMD_EXIT, 0, 0);
        check_dead(c);
    } else {
        kill(c, SIGKILL);
        reap(c);
        watched_child = 0;
    }
    alarm(0);
    munmap(sh, PAGE);
    return check_report("test_cma");
}
