/* The CMA transfer engine (DESIGN.md section 5).
 *
 * 1. What CMA is. Linux Cross Memory Attach gives two system calls,
 *    process_vm_readv and process_vm_writev, that copy between this
 *    process's memory and another process's memory in one step: the kernel
 *    looks up the peer's pages, pins them and copies directly between the
 *    two address spaces. kcoll uses them so that a collective moves every
 *    byte once, from the source buffer to the destination buffer, instead of
 *    twice through a shared bounce buffer.
 *
 * 2. What a copy costs. Paper 003 (003_101891c58ad7736e.txt, section II and
 *    Table III) prices one CMA copy of n bytes as
 *        alpha + n * beta + l * gamma_c * ceil(n / s)
 *    where alpha is the start-up cost of one call (the system call itself
 *    plus the kernel's check that the caller may access the peer), l is the
 *    time to lock and pin one page of s bytes in the peer (gamma_c >= 1
 *    grows it when c processes pin pages of the same peer at once), and beta
 *    is the time per byte of the copy proper. Hence kcoll makes few, large
 *    calls: many small regions go into one call as an iovec list (one alpha)
 *    rather than one call each.
 *
 * 3. Partial transfers. One call moves at most 0x7ffff000 bytes
 *    (KCOLL_CMA_MAX_CALL) and at most IOV_MAX (1024) iovec entries per side,
 *    and it may return fewer bytes than asked, for instance when it meets an
 *    unmapped page after some bytes were already copied. The functions below
 *    therefore keep a cursor (entry index + offset) in the local and in the
 *    remote list, build a window of at most KCOLL_CMA_IOV_MAX entries and
 *    KCOLL_CMA_MAX_CALL bytes with the same byte count on both sides, make
 *    the call, advance both cursors by what it returned, and call again
 *    until everything has moved. A call that returns 0 while bytes remain
 *    would loop forever: it is an error (EFAULT). EINTR is retried.
 *
 * 4. Permission. The kernel lets process A read or write process B when A
 *    could ptrace-attach to B (PTRACE_MODE_ATTACH_REALCREDS): same user and
 *    B dumpable, or A holds CAP_SYS_PTRACE. On top of that the Yama security
 *    module, where present, reads /proc/sys/kernel/yama/ptrace_scope:
 *      0  classic rules only;
 *      1  (Ubuntu's default) only ancestors may attach, and MPI ranks are
 *         siblings, so each rank must name its peers allowed with
 *         prctl(PR_SET_PTRACER, ...); kcoll_cma_allow_peers uses
 *         PR_SET_PTRACER_ANY;
 *      2  only processes with CAP_SYS_PTRACE may attach;
 *      3  nobody may attach, and the setting cannot be lowered until reboot.
 *    Containers add a seccomp filter: Docker's default profile refuses
 *    process_vm_readv/writev (EPERM) unless the container has
 *    CAP_SYS_PTRACE, and some runtimes answer ENOSYS. The rules are checked
 *    at every call, so the only reliable test is a real read from a peer
 *    (kcoll_cma_probe_peer), whose failure message names the likely cause
 *    and the fix.
 *
 * 5. Errors. errno maps to a status: ESRCH -> KCOLL_ERR_PEER_DEAD (no such
 *    process, or a zombie), EPERM -> KCOLL_ERR_PERM, ENOSYS ->
 *    KCOLL_ERR_UNSUPPORTED, anything else -> KCOLL_ERR_SYS with errno kept.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv, process_vm_writev */
#endif
#include "xfer/cma.h"
#include "xfer/iovs.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"

/* Most bytes one call moves (the kernel's MAX_RW_COUNT). */
#define KCOLL_CMA_MAX_CALL ((size_t)0x7ffff000)
/* Most iovec entries per side in one call (the kernel's UIO_MAXIOV). */
#define KCOLL_CMA_IOV_MAX 1024
/* How long kcoll_cma_probe_local waits for its two processes. */
#define KCOLL_CMA_PROBE_TIMEOUT_MS 5000

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long)-1)
#endif

typedef ssize_t (*kcoll_cma_call_fn)(pid_t, const struct iovec *, unsigned long,
                                     const struct iovec *, unsigned long, unsigned long);

/* ---------------------------------------------------------------------- */
/* Transfers                                                              */
/* ---------------------------------------------------------------------- */

static kcoll_status_t kcoll_cma_map_errno(int e)
{
    switch (e) {
    case ESRCH:
        return KCOLL_ERR_PEER_DEAD;
    case EPERM:
        return KCOLL_ERR_PERM;
    case ENOSYS:
        return KCOLL_ERR_UNSUPPORTED;
    default:
        return KCOLL_ERR_SYS;
    }
}

/* One system call, EINTR retried. Returns the bytes moved, 0 included, or
 * -1 with errno set. */
static ssize_t kcoll_cma_call(kcoll_cma_call_fn fn, pid_t pid,
                              const struct iovec *l, unsigned long nl,
                              const struct iovec *r, unsigned long nr)
{
    ssize_t n;

    do {
        n = fn(pid, l, nl, r, nr, 0);
    } while (n < 0 && errno == EINTR);
    return n;
}

/* One contiguous region on each side. */
static kcoll_status_t kcoll_cma_rw1(kcoll_cma_call_fn fn, pid_t pid, char *local,
                                    char *remote, size_t len)
{
    while (len > 0) {
        size_t chunk = len < KCOLL_CMA_MAX_CALL ? len : KCOLL_CMA_MAX_CALL;
        struct iovec l = { .iov_base = local, .iov_len = chunk };
        struct iovec r = { .iov_base = remote, .iov_len = chunk };
        ssize_t n = kcoll_cma_call(fn, pid, &l, 1, &r, 1);

        if (n < 0)
            return kcoll_cma_map_errno(errno);
        if (n == 0) {
            errno = EFAULT;
            return KCOLL_ERR_SYS;
        }
        local += n;
        remote += n;
        len -= (size_t)n;
    }
    return KCOLL_OK;
}

kcoll_status_t kcoll_cma_read(pid_t pid, void *local, const void *remote, size_t len)
{
    if (len == 0)
        return KCOLL_OK;
    if (!local || !remote)
        return KCOLL_ERR_ARG;
    return kcoll_cma_rw1(process_vm_readv, pid, local, (char *)(uintptr_t)remote, len);
}

kcoll_status_t kcoll_cma_write(pid_t pid, const void *local, void *remote, size_t len)
{
    if (len == 0)
        return KCOLL_OK;
    if (!local || !remote)
        return KCOLL_ERR_ARG;
    return kcoll_cma_rw1(process_vm_writev, pid, (char *)(uintptr_t)local, remote, len);
}

/* The general case: any number of entries on either side, partial
 * transfers resumed (section 3 of the header). */
static kcoll_status_t kcoll_cma_rwv(kcoll_cma_call_fn fn, pid_t pid,
                                    const struct iovec *local, int nlocal,
                                    const struct iovec *remote, int nremote)
{
    kcoll_iovcur_t cl, cr;
    struct iovec *win = NULL;
    size_t total, rtotal, done = 0;
    kcoll_status_t st;
    ssize_t n;
    int saved;

    if (kcoll_iovs_total(local, nlocal, &total) || kcoll_iovs_total(remote, nremote, &rtotal))
        return KCOLL_ERR_ARG;
    if (total != rtotal)
        return KCOLL_ERR_ARG;
    if (total == 0)
        return KCOLL_OK;
    kcoll_iovcur_init(&cl, local, nlocal);
    kcoll_iovcur_init(&cr, remote, nremote);

    /* Common case: the caller's lists fit one call as they are. */
    if (nlocal <= KCOLL_CMA_IOV_MAX && nremote <= KCOLL_CMA_IOV_MAX &&
        total <= KCOLL_CMA_MAX_CALL) {
        n = kcoll_cma_call(fn, pid, local, (unsigned long)nlocal, remote,
                           (unsigned long)nremote);
        if (n < 0)
            return kcoll_cma_map_errno(errno);
        if (n == 0) {
            errno = EFAULT;
            return KCOLL_ERR_SYS;
        }
        if ((size_t)n == total)
            return KCOLL_OK;
        done = (size_t)n;
        kcoll_iovcur_advance(&cl, done);
        kcoll_iovcur_advance(&cr, done);
    }

    /* Windows of both sides, built afresh for every call. */
    win = malloc(2 * KCOLL_CMA_IOV_MAX * sizeof(*win));
    if (!win)
        return KCOLL_ERR_NOMEM;

    while (done < total) {
        size_t limit = total - done, lbytes, rbytes;
        struct iovec *lw = win, *rw = win + KCOLL_CMA_IOV_MAX;
        int nl, nr;

        if (limit > KCOLL_CMA_MAX_CALL)
            limit = KCOLL_CMA_MAX_CALL;
        nl = kcoll_iovcur_window(&cl, lw, KCOLL_CMA_IOV_MAX, limit, &lbytes);
        nr = kcoll_iovcur_window(&cr, rw, KCOLL_CMA_IOV_MAX, lbytes, &rbytes);
        if (rbytes < lbytes) /* the remote side ran out of entries first */
            nl = kcoll_iovcur_window(&cl, lw, KCOLL_CMA_IOV_MAX, rbytes, &lbytes);

        n = kcoll_cma_call(fn, pid, lw, (unsigned long)nl, rw, (unsigned long)nr);
        if (n < 0) {
            st = kcoll_cma_map_errno(errno);
            goto err_free;
        }
        if (n == 0) {
            errno = EFAULT;
            st = KCOLL_ERR_SYS;
            goto err_free;
        }
        done += (size_t)n;
        kcoll_iovcur_advance(&cl, (size_t)n);
        kcoll_iovcur_advance(&cr, (size_t)n);
    }
    free(win);
    return KCOLL_OK;

err_free:
    saved = errno;
    free(win);
    errno = saved;
    return st;
}

kcoll_status_t kcoll_cma_readv(pid_t pid, const struct iovec *local, int nlocal,
                               const struct iovec *remote, int nremote)
{
    return kcoll_cma_rwv(process_vm_readv, pid, local, nlocal, remote, nremote);
}

kcoll_status_t kcoll_cma_writev(pid_t pid, const struct iovec *local, int nlocal,
                                const struct iovec *remote, int nremote)
{
    return kcoll_cma_rwv(process_vm_writev, pid, local, nlocal, remote, nremote);
}

/* ---------------------------------------------------------------------- */
/* Permission                                                             */
/* ---------------------------------------------------------------------- */

int kcoll_cma_yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int scope = -1;

    if (!f)
        return -1;
    if (fscanf(f, "%d", &scope) != 1 || scope < 0)
        scope = -1;
    fclose(f);
    return scope;
}

/* Whether this process holds CAP_SYS_PTRACE in its effective set. */
static int kcoll_cma_has_ptrace_cap(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    unsigned long long eff = 0;
    int found = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "CapEff: %llx", &eff) == 1) {
            found = 1;
            break;
        }
    }
    fclose(f);
    return found && (eff >> CAP_SYS_PTRACE) & 1;
}

int kcoll_cma_allow_peers(char *why, size_t whylen)
{
    /* The process that made the prctl: the permission is not inherited
     * across fork, so a child must make it again.
     * relaxed: the pid only skips a repeated (idempotent) prctl; it orders
     * no other memory */
    static _Atomic pid_t allowed_pid;
    int scope = kcoll_cma_yama_scope();
    pid_t self = getpid();

    if (why && whylen > 0)
        why[0] = '\0';
    switch (scope) {
    case 1:
        /* relaxed: see the declaration */
        if (atomic_load_explicit(&allowed_pid, memory_order_relaxed) == self)
            return 0;
        if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0) {
            kcoll_fmt(why, whylen,
                          "prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY) failed: %s "
                          "(Yama ptrace_scope=1: set kernel.yama.ptrace_scope=0)",
                          strerror(errno));
            return -1;
        }
        /* relaxed: see the declaration */
        atomic_store_explicit(&allowed_pid, self, memory_order_relaxed);
        return 0;
    case 2:
        /* Peers started like this process hold the same capabilities. */
        if (kcoll_cma_has_ptrace_cap())
            return 0;
        kcoll_fmt(why, whylen,
                      "Yama ptrace_scope=2 allows cross-memory attach only with "
                      "CAP_SYS_PTRACE: run as root or with CAP_SYS_PTRACE, or set "
                      "kernel.yama.ptrace_scope=0");
        return -1;
    case 3:
        kcoll_fmt(why, whylen,
                      "Yama ptrace_scope=3 forbids cross-memory attach until reboot: "
                      "boot with kernel.yama.ptrace_scope set to 0 or 1");
        return -1;
    default:
        /* No Yama, or scope 0: the classic same-user rules apply. */
        return 0;
    }
}

/* Why a read from pid failed with errno e, and how to fix it: the part in
 * parentheses of the probe's message. */
static void kcoll_cma_explain(int e, char *buf, size_t len)
{
    int scope = kcoll_cma_yama_scope();

    switch (e) {
    case EPERM:
        if (scope == 1)
            snprintf(buf, len,
                     "Yama ptrace_scope=1: the peer must allow it with "
                     "prctl(PR_SET_PTRACER) and run as the same user; or set "
                     "kernel.yama.ptrace_scope=0");
        else if (scope == 2)
            snprintf(buf, len,
                     "Yama ptrace_scope=2: run as root or with CAP_SYS_PTRACE, or set "
                     "kernel.yama.ptrace_scope=0");
        else if (scope == 3)
            snprintf(buf, len,
                     "Yama ptrace_scope=3 forbids it until reboot: boot with "
                     "kernel.yama.ptrace_scope set to 0 or 1");
        else
            snprintf(buf, len,
                     "%s: likely a container's seccomp profile blocking "
                     "process_vm_readv (e.g. docker run --cap-add=SYS_PTRACE or a "
                     "profile that allows it), or the peer is not dumpable or runs as "
                     "another user, which needs CAP_SYS_PTRACE",
                     scope == 0 ? "Yama ptrace_scope=0" : "no Yama");
        break;
    case ENOSYS:
        snprintf(buf, len,
                 "the kernel lacks CONFIG_CROSS_MEMORY_ATTACH, or a seccomp filter "
                 "hides the system call: use a kernel built with it, or allow "
                 "process_vm_readv/process_vm_writev in the filter");
        break;
    case ESRCH:
        snprintf(buf, len,
                 "no such process: the peer exited, or it runs in another PID "
                 "namespace (run all ranks in one container)");
        break;
    case EFAULT:
        snprintf(buf, len,
                 "the address is not mapped in the peer: the peer published a "
                 "wrong address");
        break;
    default:
        snprintf(buf, len, "unexpected error");
        break;
    }
}

kcoll_status_t kcoll_cma_probe_peer(pid_t pid, const void *remote_word, uint64_t expect,
                                    char *why, size_t whylen)
{
    uint64_t got = ~expect;
    kcoll_status_t st;
    char hint[320];
    int e;

    if (why && whylen > 0)
        why[0] = '\0';
    st = kcoll_cma_read(pid, &got, remote_word, sizeof got);
    if (st != KCOLL_OK) {
        e = errno;
        kcoll_cma_explain(e, hint, sizeof hint);
        kcoll_fmt(why, whylen, "process_vm_readv from pid %ld failed: %s (%s)",
                      (long)pid, strerror(e), hint);
        errno = e;
        return st;
    }
    if (got != expect) {
        kcoll_fmt(why, whylen,
                      "process_vm_readv from pid %ld read 0x%016" PRIx64 " at %p, "
                      "expected 0x%016" PRIx64 " (the peer published a wrong address "
                      "or pid)",
                      (long)pid, got, remote_word, expect);
        return KCOLL_ERR_PROTO;
    }
    return KCOLL_OK;
}

/* ---------------------------------------------------------------------- */
/* Self-contained probe                                                   */
/* ---------------------------------------------------------------------- */

/* The page the parent and its two children A (reader) and B (target)
 * share. Written before fork or by one child each; read after the flags. */
typedef struct {
    _Atomic int b_ready;      /* B: 1 once addr/value are published */
    _Atomic int a_done;       /* A: 1 once status/why are written */
    uint64_t b_addr;          /* B: address of its private word */
    uint64_t b_value;         /* B: the value of that word */
    int a_status;             /* A: kcoll_cma_probe_peer's status */
    int a_errno;              /* A: errno with that status */
    char b_why[256];          /* B: kcoll_cma_allow_peers's reason, if it failed */
    char a_why[768];          /* A: kcoll_cma_probe_peer's reason */
} kcoll_cma_probe_page_t;

static void kcoll_cma_nap(void)
{
    struct timespec ts = { 0, 1000000 }; /* 1 ms */

    nanosleep(&ts, NULL);
}

/* Child B: make itself readable, publish a private word, wait until A is
 * done (or the time is up, or the parent is gone). */
static void kcoll_cma_probe_target(kcoll_cma_probe_page_t *pg, pid_t parent)
{
    volatile uint64_t word;
    int64_t deadline = (kcoll_now_ns() / 1000000) + KCOLL_CMA_PROBE_TIMEOUT_MS;

    /* A value A cannot know without reading B: it depends on B's pid and
     * the time, both fixed only after fork. */
    word = 0x6b636f6c6c000000ull ^ ((uint64_t)getpid() << 20) ^
           (uint64_t)(kcoll_now_ns() / 1000000);
    /* On failure b_why holds the reason; A's read then tells what it costs. */
    (void)kcoll_cma_allow_peers(pg->b_why, sizeof pg->b_why);
    pg->b_addr = (uint64_t)(uintptr_t)&word;
    pg->b_value = word;
    /* release: publishes b_addr, b_value, b_why and the prctl to A */
    atomic_store_explicit(&pg->b_ready, 1, memory_order_release);

    /* acquire: pairs with A's release of a_done (A no longer reads word) */
    while (!atomic_load_explicit(&pg->a_done, memory_order_acquire)) {
        if ((kcoll_now_ns() / 1000000) > deadline || getppid() != parent)
            break;
        kcoll_cma_nap();
    }
}

/* Child A: wait for B, read its word, report through the page. */
static void kcoll_cma_probe_reader(kcoll_cma_probe_page_t *pg, pid_t b)
{
    int64_t deadline = (kcoll_now_ns() / 1000000) + KCOLL_CMA_PROBE_TIMEOUT_MS;

    /* acquire: pairs with B's release of b_ready (b_addr, b_value valid) */
    while (!atomic_load_explicit(&pg->b_ready, memory_order_acquire)) {
        if ((kcoll_now_ns() / 1000000) > deadline) {
            pg->a_status = KCOLL_ERR_SYS;
            pg->a_errno = ETIMEDOUT;
            snprintf(pg->a_why, sizeof pg->a_why,
                     "probe process %ld did not start within %d ms", (long)b,
                     KCOLL_CMA_PROBE_TIMEOUT_MS);
            goto out;
        }
        kcoll_cma_nap();
    }
    pg->a_status = kcoll_cma_probe_peer(b, (const void *)(uintptr_t)pg->b_addr, pg->b_value,
                                        pg->a_why, sizeof pg->a_why);
    pg->a_errno = errno;
out:
    /* release: publishes a_status and a_why to B and the parent */
    atomic_store_explicit(&pg->a_done, 1, memory_order_release);
}

/* Reap the children that are still running; kill them at the deadline.
 * *pid is set to 0 once reaped; *wstatus gets its wait status. */
static void kcoll_cma_reap(pid_t *pids, int *wstatus, int n, int64_t deadline)
{
    for (;;) {
        int left = 0;

        for (int i = 0; i < n; i++) {
            pid_t r;

            if (pids[i] <= 0)
                continue;
            r = waitpid(pids[i], &wstatus[i], WNOHANG);
            if (r == pids[i] || (r < 0 && errno != EINTR))
                pids[i] = 0; /* reaped, or not our child any more (SIGCHLD ignored) */
            else
                left++;
        }
        if (left == 0)
            return;
        if ((kcoll_now_ns() / 1000000) > deadline) {
            for (int i = 0; i < n; i++) {
                if (pids[i] <= 0)
                    continue;
                kill(pids[i], SIGKILL);
                while (waitpid(pids[i], &wstatus[i], 0) < 0 && errno == EINTR)
                    ;
                pids[i] = 0;
            }
            return;
        }
        kcoll_cma_nap();
    }
}

kcoll_status_t kcoll_cma_probe_local(char *why, size_t whylen)
{
    kcoll_cma_probe_page_t *pg;
    pid_t parent = getpid(), pids[2] = { 0, 0 }; /* [0] = B, [1] = A */
    int wstatus[2] = { 0, 0 };
    kcoll_status_t st;
    pid_t a;
    int e;

    if (why && whylen > 0)
        why[0] = '\0';
    pg = mmap(NULL, sizeof *pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pg == MAP_FAILED) {
        e = errno;
        kcoll_fmt(why, whylen, "mmap of the probe page failed: %s", strerror(e));
        errno = e;
        return KCOLL_ERR_SYS;
    }
    atomic_init(&pg->b_ready, 0);
    atomic_init(&pg->a_done, 0);
    pg->a_status = KCOLL_ERR_SYS;

    fflush(NULL); /* nothing buffered is written twice */
    pids[0] = fork();
    if (pids[0] < 0) {
        e = errno;
        kcoll_fmt(why, whylen, "fork failed: %s", strerror(e));
        goto err_unmap;
    }
    if (pids[0] == 0) {
        kcoll_cma_probe_target(pg, parent);
        _exit(0);
    }
    pids[1] = fork();
    if (pids[1] < 0) {
        e = errno;
        kcoll_fmt(why, whylen, "fork failed: %s", strerror(e));
        goto err_kill;
    }
    if (pids[1] == 0) {
        kcoll_cma_probe_reader(pg, pids[0]);
        _exit(0);
    }

    a = pids[1];
    kcoll_cma_reap(pids, wstatus, 2, (kcoll_now_ns() / 1000000) + KCOLL_CMA_PROBE_TIMEOUT_MS + 1000);
    /* acquire: pairs with A's release of a_done (a_status, a_why valid) */
    if (!atomic_load_explicit(&pg->a_done, memory_order_acquire)) {
        if (WIFSIGNALED(wstatus[1]))
            kcoll_fmt(why, whylen, "CMA probe process %ld was killed by signal %d%s",
                          (long)a, WTERMSIG(wstatus[1]),
                          WTERMSIG(wstatus[1]) == SIGKILL ? " (timed out)" : "");
        else
            kcoll_fmt(why, whylen, "CMA probe process %ld ended without a result",
                          (long)a);
        e = ETIMEDOUT;
        goto err_unmap;
    }
    st = (kcoll_status_t)pg->a_status;
    e = pg->a_errno;
    if (st != KCOLL_OK) {
        pg->a_why[sizeof pg->a_why - 1] = '\0';
        if (pg->b_why[0] != '\0')
            kcoll_fmt(why, whylen, "%s; %s", pg->a_why, pg->b_why);
        else
            kcoll_fmt(why, whylen, "%s", pg->a_why);
    }
    munmap(pg, sizeof *pg);
    errno = e;
    return st;

err_kill:
    kill(pids[0], SIGKILL);
    while (waitpid(pids[0], NULL, 0) < 0 && errno == EINTR)
        ;
err_unmap:
    munmap(pg, sizeof *pg);
    errno = e;
    return KCOLL_ERR_SYS;
}

const kcoll_engine_t kcoll_engine_cma = {
    .id = KCOLL_ENGINE_CMA,
    .name = "cma",
    .read_call = "process_vm_readv",
    .write_call = "process_vm_writev",
    .readv = kcoll_cma_readv,
    .writev = kcoll_cma_writev,
    .allow_peers = kcoll_cma_allow_peers,
    .probe_peer = kcoll_cma_probe_peer,
};
