/* Long CMA transfers interrupted by signals: a forked child keeps 64 MiB
 * of private memory; this process reads all of it with kcoll_cma_read and
 * writes it back with kcoll_cma_write (and as iovec lists of many pieces,
 * kcoll_cma_readv/writev) while a timer sends it SIGALRM every 50 us to a
 * handler installed without SA_RESTART, so that a system call caught by a
 * signal returns EINTR or a partial transfer instead of being restarted.
 * Every transfer must complete with every byte right, and the signals
 * must really have arrived during them (counted by the handler).
 *
 * Linux (6.x) does not interrupt process_vm_readv/writev for a caught
 * signal: the signal is handled when the call returns. So the transfers
 * are run a second time with this program's own process_vm_readv and
 * process_vm_writev in front of the C library's (the engine, linked into
 * this program, calls them): every third call fails with EINTR having
 * moved nothing, every third moves only half of its first entry, as a
 * kernel that is interrupted may; the engine must retry and resume, and
 * the bytes must come out right. A watchdog thread fails the test if
 * anything hangs. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>

#include "check.h"
#include "base/status.h"
#include "xfer/cma.h"

#define LEN (64u << 20)
#define PIECES 3000

typedef struct {
    _Atomic int ready, done;
    uint64_t addr;
} shared_t;

static volatile sig_atomic_t signals;

/* ---- the system calls, interrupted on demand ---- */

typedef ssize_t (*rw_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                         unsigned long, unsigned long);
static int simulate;
static long fake_eintr, fake_partial;

static ssize_t interrupted(rw_fn real, pid_t pid, const struct iovec *l, unsigned long nl,
                           const struct iovec *r, unsigned long nr, unsigned long flags)
{
    static unsigned long calls;
    if (simulate && ++calls % 3 == 0) {
        fake_eintr++;
        errno = EINTR;
        return -1;
    }
    if (simulate && calls % 3 == 1 && nl && nr && l[0].iov_len > 1 && r[0].iov_len > 1) {
        const size_t half = (l[0].iov_len < r[0].iov_len ? l[0].iov_len : r[0].iov_len) / 2;
        const struct iovec l1 = {l[0].iov_base, half}, r1 = {r[0].iov_base, half};
        fake_partial++;
        return real(pid, &l1, 1, &r1, 1, flags);
    }
    return real(pid, l, nl, r, nr, flags);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl,
                         const struct iovec *r, unsigned long nr, unsigned long flags)
{
    static rw_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "process_vm_readv");
    return interrupted(real, pid, l, nl, r, nr, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long nl,
                          const struct iovec *r, unsigned long nr, unsigned long flags)
{
    static rw_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "process_vm_writev");
    return interrupted(real, pid, l, nl, r, nr, flags);
}

static void on_alarm(int sig)
{
    (void)sig;
    signals++;
}

static uint8_t pat(size_t i, unsigned salt)
{
    return (uint8_t)(i * 31 + (i >> 12) + salt);
}

static void *watchdog(void *arg)
{
    pid_t child = (pid_t)(intptr_t)arg;
    sleep(120);
    static const char msg[] = "test_cma_signals: watchdog expired, something hung\n";
    kill(child, SIGKILL);
    if (write(2, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    _exit(2);
}

static size_t wrong_bytes(const uint8_t *b, size_t n, unsigned salt)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += b[i] != pat(i, salt);
    return w;
}

/* One round: the child's memory holds pattern `salt`; read it whole and
 * as 3000 pieces in reverse order, then write pattern salt + 1, half as
 * one call, half as lists. */
static void transfers(pid_t child, uint8_t *remote, uint8_t *buf, struct iovec *lv,
                      struct iovec *rv, unsigned salt)
{
    memset(buf, 0, LEN);
    kcoll_status_t st = kcoll_cma_read(child, buf, remote, LEN);
    CHECK(st == KCOLL_OK, "64 MiB read: %s", kcoll_status_str(st));
    CHECK(wrong_bytes(buf, LEN, salt) == 0, "64 MiB read: wrong bytes");

    const size_t piece = LEN / PIECES;
    for (int i = 0; i < PIECES; i++) { /* the remote pieces in reverse order */
        lv[i] = (struct iovec){buf + (size_t)i * piece, piece};
        rv[i] = (struct iovec){remote + (size_t)(PIECES - 1 - i) * piece, piece};
    }
    memset(buf, 0, LEN);
    st = kcoll_cma_readv(child, lv, PIECES, rv, PIECES);
    CHECK(st == KCOLL_OK, "readv of %d pieces: %s", PIECES, kcoll_status_str(st));
    size_t wrong = 0;
    for (int i = 0; i < PIECES; i++)
        for (size_t k = 0; k < piece; k++)
            wrong += buf[(size_t)i * piece + k] != pat((size_t)(PIECES - 1 - i) * piece + k, salt);
    CHECK(wrong == 0, "readv: %zu wrong bytes", wrong);

    for (size_t i = 0; i < LEN; i++)
        buf[i] = pat(i, salt + 1);
    st = kcoll_cma_write(child, buf, remote, LEN / 2);
    CHECK(st == KCOLL_OK, "32 MiB write: %s", kcoll_status_str(st));
    const int half = PIECES / 2;
    const size_t each = LEN / 2 / (size_t)half;
    for (int i = 0; i < half; i++) {
        const size_t off = LEN / 2 + (size_t)i * each;
        lv[i] = (struct iovec){buf + off, each};
        rv[i] = (struct iovec){remote + off, each};
    }
    st = kcoll_cma_writev(child, lv, half, rv, half);
    CHECK(st == KCOLL_OK, "writev: %s", kcoll_status_str(st));
    const size_t covered = LEN / 2 + (size_t)half * each; /* and the tail the pieces miss */
    st = kcoll_cma_write(child, buf + covered, remote + covered, LEN - covered);
    CHECK(st == KCOLL_OK, "write of the tail: %s", kcoll_status_str(st));
}

int main(void)
{
    shared_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED, "shared page");
    if (sh == MAP_FAILED)
        return check_report("test_cma_signals");
    char why[256];
    CHECK(kcoll_cma_allow_peers(why, sizeof why) == 0, "%s", why);
    pid_t child = fork();
    if (child == 0) { /* private memory with a pattern; at the end, check what was written */
        uint8_t *mem = malloc(LEN);
        if (!mem)
            _exit(10);
        for (size_t i = 0; i < LEN; i++)
            mem[i] = pat(i, 1);
        sh->addr = (uint64_t)(uintptr_t)mem;
        atomic_store_explicit(&sh->ready, 1, memory_order_release);
        while (!atomic_load_explicit(&sh->done, memory_order_acquire))
            usleep(1000);
        _exit(wrong_bytes(mem, LEN, 3) ? 11 : 0); /* two rounds wrote 2, then 3 */
    }
    /* the watchdog does not take SIGALRM: every signal goes to this thread */
    sigset_t alrm, was;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, &was);
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, (void *)(intptr_t)child);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    while (!atomic_load_explicit(&sh->ready, memory_order_acquire))
        usleep(1000);
    uint8_t *remote = (uint8_t *)(uintptr_t)sh->addr;
    uint8_t *buf = malloc(LEN);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);

    struct iovec *lv = malloc(PIECES * sizeof *lv), *rv = malloc(PIECES * sizeof *rv);
    for (int round = 0; round < 2; round++) {
        simulate = round == 1;
        const long sig0 = (long)signals;
        transfers(child, remote, buf, lv, rv, (unsigned)(1 + round));
        printf("test_cma_signals: %s: %ld signals during the round%s\n",
               round ? "system calls interrupted (simulated)" : "real system calls",
               (long)signals - sig0, round ? "" : "");
        CHECK((long)signals > sig0, "no signal arrived during the transfers: nothing was tested");
    }
    CHECK(fake_eintr >= 3 && fake_partial >= 3, "the simulation interrupted %ld calls, cut %ld short",
          fake_eintr, fake_partial);
    printf("test_cma_signals: simulated: %ld calls failed with EINTR, %ld moved half an entry\n",
           fake_eintr, fake_partial);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    atomic_store_explicit(&sh->done, 1, memory_order_release);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child found wrong bytes written (status %d)", status);
    free(lv);
    free(rv);
    free(buf);
    return check_report("test_cma_signals");
}
