/* The direct engine's memory: shareable allocations, the registry peers
 * read, and the mappings of peers' allocations (see direct.h).
 *
 * Walk-through of one step on a peer's MPI_Alloc_mem buffer:
 *  1. The owner, at MPI_Alloc_mem, made a memfd of the size, mapped it
 *     shared and filled a registry entry (base, size, fd, inode), then
 *     made the entry's generation odd with release order.
 *  2. Its EXPOSE of a buffer inside that allocation publishes the entry
 *     and generation (kcoll_direct_ref) beside the address.
 *  3. The reader maps the owner's registry once (through
 *     /proc/<pid>/fd/<fd>, its inode checked), loads the entry's
 *     generation with acquire order (it must be the published one, odd),
 *     then maps the allocation's fd the same way, once, and keeps it.
 *  4. The step copies between its own memory and that mapping.
 * Cost: a memcpy, copy_alpha + n copy_beta: no system call, no pinning;
 * the first step on an allocation pays open + mmap, populated (the page
 * tables of the whole allocation filled at once, so that later steps do
 * not fault page by page); the mapping is kept for the next.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "xfer/direct.h"

#define KCOLL_DREG_MAGIC 0x6b636f6c6c647231ull /* "kcolldr1" */
/* a reference: entry + 1 above, the generation's low bits below */
#define KCOLL_DREF_SHIFT 40
#define KCOLL_DREF_GEN(g) ((g) & ((1ull << KCOLL_DREF_SHIFT) - 1))

typedef struct {
    /* odd: live, the fields below are valid; even: free. Stored last by
     * the owner (release); loaded first by readers (acquire) */
    _Atomic uint64_t gen;
    uint64_t base, size; /* in the owner's address space */
    int64_t fd;          /* the memfd, in the owner */
    uint64_t ino;        /* its inode: a reopened fd is checked against it */
} kcoll_dreg_ent_t;

typedef struct {
    uint64_t magic;
    int64_t pid;
    uint64_t nslots;
    kcoll_dreg_ent_t ent[KCOLL_DIRECT_SLOTS];
} kcoll_dreg_t;

/* A peer's registry, mapped read-only. */
typedef struct {
    pid_t pid;
    uint64_t ino;
    const kcoll_dreg_t *reg;
} kcoll_dpeer_t;

/* A mapping of a peer's allocation. */
typedef struct {
    pid_t pid;
    int idx;
    uint64_t gen;
    char *addr;
    size_t size;
    const kcoll_dreg_t *reg;
    int users;      /* steps copying through it now */
    uint64_t used;  /* last use, for the least recently used */
} kcoll_dview_t;

#define KCOLL_DIRECT_PEERS 256

static struct {
    pthread_mutex_t lock;
    int made;             /* the registry exists (in this process) */
    int fd;
    uint64_t ino;
    kcoll_dreg_t *reg;
    int nlive;
    int live[KCOLL_DIRECT_SLOTS]; /* the live entries' indices, for the exposures' lookup */
    kcoll_dpeer_t peers[KCOLL_DIRECT_PEERS];
    int npeers;
    kcoll_dview_t views[KCOLL_DIRECT_MAPS];
    int nviews;
    uint64_t clock;
    int atfork;
} D = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* A forked child has its parent's registry and mappings, which are not
 * its own: forget them (a test forks teams from one process). */
static void kcoll_direct_child(void)
{
    pthread_mutex_init(&D.lock, NULL);
    D.made = 0;
    if (D.fd >= 0)
        close(D.fd);
    D.fd = -1;
    D.reg = NULL;
    D.nlive = 0;
    D.npeers = 0;
    /* (the inherited allocations are the parent's: this process frees
     * none of them through kcoll) */
    D.nviews = 0;
}

int kcoll_direct_init(char *why, size_t whylen)
{
    int rc = 0;
    pthread_mutex_lock(&D.lock);
    if (!D.atfork) {
        pthread_atfork(NULL, NULL, kcoll_direct_child);
        D.atfork = 1;
    }
    if (!D.made) {
        struct stat sb;
        void *m = MAP_FAILED;
        int fd = memfd_create("kcoll-direct-registry", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, sizeof(kcoll_dreg_t)) == 0 && fstat(fd, &sb) == 0)
            m = mmap(NULL, sizeof(kcoll_dreg_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            kcoll_fmt(why, whylen, "the registry of shareable memory could not be made: %s",
                      strerror(errno));
            if (fd >= 0)
                close(fd);
            rc = -1;
        } else {
            D.reg = m;
            D.reg->pid = getpid();
            D.reg->nslots = KCOLL_DIRECT_SLOTS;
            D.reg->magic = KCOLL_DREG_MAGIC;
            D.fd = fd;
            D.ino = (uint64_t)sb.st_ino;
            D.made = 1;
        }
    }
    pthread_mutex_unlock(&D.lock);
    return rc;
}

void kcoll_direct_self(int64_t *fd, uint64_t *ino)
{
    pthread_mutex_lock(&D.lock);
    *fd = D.made ? D.fd : 0;
    *ino = D.made ? D.ino : 0;
    pthread_mutex_unlock(&D.lock);
}

void *kcoll_direct_alloc(size_t size)
{
    char why[160];
    if (size == 0 || kcoll_direct_init(why, sizeof why))
        return NULL;
    pthread_mutex_lock(&D.lock);
    int idx = -1;
    for (int i = 0; i < KCOLL_DIRECT_SLOTS && idx < 0; i++)
        /* relaxed: this process is the entries' only writer */
        if (!(atomic_load_explicit(&D.reg->ent[i].gen, memory_order_relaxed) & 1))
            idx = i;
    void *m = MAP_FAILED;
    struct stat sb;
    int fd = idx < 0 ? -1 : memfd_create("kcoll-alloc", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)size) == 0 && fstat(fd, &sb) == 0)
        m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        if (fd >= 0)
            close(fd);
        pthread_mutex_unlock(&D.lock);
        return NULL;
    }
    kcoll_dreg_ent_t *e = &D.reg->ent[idx];
    e->base = (uint64_t)(uintptr_t)m;
    e->size = size;
    e->fd = fd;
    e->ino = (uint64_t)sb.st_ino;
    /* release: a peer that loads the odd generation sees the fields */
    atomic_fetch_add_explicit(&e->gen, 1, memory_order_release);
    D.live[D.nlive] = idx;
    /* relaxed: read as a hint by kcoll_direct_ref; the lock orders the rest */
    __atomic_store_n(&D.nlive, D.nlive + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&D.lock);
    return m;
}

int kcoll_direct_free(void *base)
{
    int mine = 0;
    pthread_mutex_lock(&D.lock);
    for (int k = 0; D.made && k < D.nlive && !mine; k++) {
        kcoll_dreg_ent_t *e = &D.reg->ent[D.live[k]];
        if (e->base != (uint64_t)(uintptr_t)base)
            continue;
        /* release: orders nothing a peer reads after it (an even entry is
         * not read); peers that load it learn their mapping is stale */
        atomic_fetch_add_explicit(&e->gen, 1, memory_order_release);
        munmap(base, e->size);
        close((int)e->fd);
        D.live[k] = D.live[D.nlive - 1];
        /* relaxed: see kcoll_direct_alloc */
        __atomic_store_n(&D.nlive, D.nlive - 1, __ATOMIC_RELAXED);
        mine = 1;
    }
    pthread_mutex_unlock(&D.lock);
    return mine;
}

uint64_t kcoll_direct_ref(const void *addr, size_t len)
{
    /* relaxed: a hint; with allocations the lock orders the rest */
    if (!__atomic_load_n(&D.nlive, __ATOMIC_RELAXED) || !addr)
        return 0;
    uint64_t ref = 0, a = (uint64_t)(uintptr_t)addr;
    pthread_mutex_lock(&D.lock);
    for (int k = 0; D.made && k < D.nlive && !ref; k++) {
        const int i = D.live[k];
        kcoll_dreg_ent_t *e = &D.reg->ent[i];
        /* relaxed: this process is the entries' only writer */
        uint64_t g = atomic_load_explicit(&e->gen, memory_order_relaxed);
        if (a >= e->base && len <= e->size && a - e->base <= e->size - len)
            ref = (uint64_t)(i + 1) << KCOLL_DREF_SHIFT | KCOLL_DREF_GEN(g);
    }
    pthread_mutex_unlock(&D.lock);
    return ref;
}

int kcoll_direct_live(void)
{
    pthread_mutex_lock(&D.lock);
    int n = D.nlive;
    pthread_mutex_unlock(&D.lock);
    return n;
}

int kcoll_direct_mapped(void)
{
    pthread_mutex_lock(&D.lock);
    int n = D.nviews;
    pthread_mutex_unlock(&D.lock);
    return n;
}

/* ---------------------------------------------------------------------- */
/* Peers */

/* Process pid's fd as an fd of this process, checked to be inode ino:
 * through /proc/<pid>/fd (the peer's dumpable, same user), else
 * pidfd_getfd (which needs ptrace permission, as cma does). -1 with a
 * reason. */
static int kcoll_direct_open(pid_t pid, int64_t fd, uint64_t ino, char *why, size_t whylen)
{
    char path[64];
    struct stat sb;
    snprintf(path, sizeof path, "/proc/%d/fd/%lld", (int)pid, (long long)fd);
    int f = open(path, O_RDWR | O_CLOEXEC);
    int e = errno;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    if (f < 0) {
        int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pfd >= 0) {
            f = (int)syscall(SYS_pidfd_getfd, pfd, (int)fd, 0);
            close(pfd);
        }
    }
#endif
    if (f < 0) {
        kcoll_fmt(why, whylen, "opening %s failed: %s (the peer must be dumpable and run as the "
                               "same user; or ptrace permission for pidfd_getfd)",
                  path, strerror(e));
        return -1;
    }
    if (fstat(f, &sb) || (uint64_t)sb.st_ino != ino) {
        kcoll_fmt(why, whylen, "%s is not the file the peer's registry names", path);
        close(f);
        return -1;
    }
    return f;
}

/* Process pid's registry, mapped (cached); the caller holds the lock. */
static const kcoll_dreg_t *kcoll_direct_peer_reg(pid_t pid, int64_t fd, uint64_t ino, char *why,
                                                 size_t whylen)
{
    for (int i = 0; i < D.npeers; i++)
        if (D.peers[i].pid == pid && D.peers[i].ino == ino)
            return D.peers[i].reg;
    if (!fd || !ino) {
        kcoll_fmt(why, whylen, "process %d has no registry of shareable memory", (int)pid);
        return NULL;
    }
    int f = kcoll_direct_open(pid, fd, ino, why, whylen);
    if (f < 0)
        return NULL;
    void *m = mmap(NULL, sizeof(kcoll_dreg_t), PROT_READ, MAP_SHARED, f, 0);
    close(f);
    if (m == MAP_FAILED) {
        kcoll_fmt(why, whylen, "mapping process %d's registry failed: %s", (int)pid,
                  strerror(errno));
        return NULL;
    }
    const kcoll_dreg_t *r = m;
    if (r->magic != KCOLL_DREG_MAGIC || r->pid != pid || r->nslots != KCOLL_DIRECT_SLOTS) {
        kcoll_fmt(why, whylen, "process %d's registry is not one (magic, pid)", (int)pid);
        munmap(m, sizeof(kcoll_dreg_t));
        return NULL;
    }
    int slot = D.npeers;
    if (slot == KCOLL_DIRECT_PEERS) {
        /* a full table: a registry none of whose mappings is in use goes,
         * with its mappings */
        slot = -1;
        for (int i = 0; i < D.npeers && slot < 0; i++) {
            int busy = 0;
            for (int v = 0; v < D.nviews; v++)
                busy |= D.views[v].reg == D.peers[i].reg && D.views[v].users;
            if (!busy)
                slot = i;
        }
        if (slot < 0) {
            munmap(m, sizeof(kcoll_dreg_t));
            kcoll_fmt(why, whylen, "too many peers' registries in use");
            return NULL;
        }
        for (int v = 0; v < D.nviews;) {
            if (D.views[v].reg == D.peers[slot].reg) {
                munmap(D.views[v].addr, D.views[v].size);
                D.views[v] = D.views[--D.nviews];
            } else {
                v++;
            }
        }
        munmap((void *)(uintptr_t)D.peers[slot].reg, sizeof(kcoll_dreg_t));
    } else {
        D.npeers++;
    }
    D.peers[slot] = (kcoll_dpeer_t){pid, ino, r};
    return r;
}

/* Unmap the mappings of pid's allocations that its registry says are
 * freed (a later generation) and that no step uses. */
static void kcoll_direct_sweep(pid_t pid)
{
    for (int v = 0; v < D.nviews;) {
        kcoll_dview_t *w = &D.views[v];
        /* acquire: pairs with the owner's release of a new generation */
        if (w->pid == pid && !w->users &&
            atomic_load_explicit(&w->reg->ent[w->idx].gen, memory_order_acquire) != w->gen) {
            munmap(w->addr, w->size);
            *w = D.views[--D.nviews];
        } else {
            v++;
        }
    }
}

kcoll_status_t kcoll_direct_get(pid_t pid, int64_t reg_fd, uint64_t reg_ino, uint64_t ref,
                                uint64_t addr, size_t len, char **local, void **hold, char *why,
                                size_t whylen)
{
    const int idx = (int)(ref >> KCOLL_DREF_SHIFT) - 1;
    kcoll_status_t rc = KCOLL_ERR_UNSUPPORTED;
    if (idx < 0 || idx >= KCOLL_DIRECT_SLOTS) {
        kcoll_fmt(why, whylen, "no such registry entry");
        return KCOLL_ERR_PROTO;
    }
    pthread_mutex_lock(&D.lock);
    const kcoll_dreg_t *reg = kcoll_direct_peer_reg(pid, reg_fd, reg_ino, why, whylen);
    if (!reg)
        goto out;
    const kcoll_dreg_ent_t *e = &reg->ent[idx];
    /* acquire: pairs with the owner's release of the generation; base,
     * size, fd and ino are those of this generation */
    uint64_t gen = atomic_load_explicit(&e->gen, memory_order_acquire);
    if (!(gen & 1) || KCOLL_DREF_GEN(gen) != KCOLL_DREF_GEN(ref)) {
        kcoll_fmt(why, whylen, "process %d's allocation is no longer the exposed one", (int)pid);
        goto out;
    }
    if (addr < e->base || len > e->size || addr - e->base > e->size - len) {
        kcoll_fmt(why, whylen, "the exposed range lies outside process %d's allocation",
                  (int)pid);
        rc = KCOLL_ERR_PROTO;
        goto out;
    }
    kcoll_dview_t *w = NULL;
    for (int v = 0; v < D.nviews && !w; v++)
        if (D.views[v].pid == pid && D.views[v].idx == idx && D.views[v].gen == gen &&
            D.views[v].reg == reg)
            w = &D.views[v];
    if (!w) {
        kcoll_direct_sweep(pid);
        if (D.nviews == KCOLL_DIRECT_MAPS) { /* the least recently used one not in use */
            int lru = -1;
            for (int v = 0; v < D.nviews; v++)
                if (!D.views[v].users && (lru < 0 || D.views[v].used < D.views[lru].used))
                    lru = v;
            if (lru < 0) {
                kcoll_fmt(why, whylen, "every mapping of peers' memory is in use");
                goto out;
            }
            munmap(D.views[lru].addr, D.views[lru].size);
            D.views[lru] = D.views[--D.nviews];
        }
        int f = kcoll_direct_open(pid, e->fd, e->ino, why, whylen);
        if (f < 0)
            goto out;
        /* populated: the page tables are filled now, once, so that the
         * steps do not fault page by page (the owner's pages are there) */
        void *m = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, f, 0);
        close(f);
        if (m == MAP_FAILED) {
            kcoll_fmt(why, whylen, "mapping process %d's allocation failed: %s", (int)pid,
                      strerror(errno));
            goto out;
        }
        w = &D.views[D.nviews++];
        *w = (kcoll_dview_t){.pid = pid, .idx = idx, .gen = gen, .addr = m, .size = e->size,
                             .reg = reg};
    }
    w->users++;
    w->used = ++D.clock;
    *local = w->addr + (addr - e->base);
    *hold = w;
    rc = KCOLL_OK;
out:
    pthread_mutex_unlock(&D.lock);
    return rc;
}

void kcoll_direct_put(void *hold)
{
    pthread_mutex_lock(&D.lock);
    ((kcoll_dview_t *)hold)->users--;
    pthread_mutex_unlock(&D.lock);
}

int kcoll_direct_probe_peer(pid_t pid, int64_t reg_fd, uint64_t reg_ino, char *why,
                            size_t whylen)
{
    pthread_mutex_lock(&D.lock);
    const kcoll_dreg_t *r = kcoll_direct_peer_reg(pid, reg_fd, reg_ino, why, whylen);
    pthread_mutex_unlock(&D.lock);
    return r ? 0 : -1;
}

void kcoll_direct_fini(void)
{
    pthread_mutex_lock(&D.lock);
    for (int v = 0; v < D.nviews; v++)
        munmap(D.views[v].addr, D.views[v].size);
    D.nviews = 0;
    for (int i = 0; i < D.npeers; i++)
        munmap((void *)(uintptr_t)D.peers[i].reg, sizeof(kcoll_dreg_t));
    D.npeers = 0;
    pthread_mutex_unlock(&D.lock);
}
