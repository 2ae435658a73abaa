/* Teams: collective set-up (see team.h for the steps) and lifetime. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hot.h"
#include "base/log.h"
#include "sched/wait.h"
#include "base/params.h"
#include "team/team.h"
#include "xfer/chan.h"
#include "xfer/direct.h"
#include "xfer/vmsplice.h"

/* read by the host streak's fast path on every call it takes: on the hot
 * page (base/hot.h) */
KCOLL_HOT int kcoll_team_threads;

/* A segment that could not be made or mapped: one warning line per
 * process (a program that makes communicators past an operating-system
 * limit, such as the descriptors of ulimit -n, gets one line, not one per
 * communicator); every such communicator uses the host MPI. */
static void kcoll_team_map_warn(const char *what, const char *name, int err)
{
    static _Atomic int warned;
    kcoll_warn_once(&warned,
                    "%s%s%s failed: %s; this communicator and every later one whose shared "
                    "memory cannot be set up use the host MPI (warned once)",
                    what, name[0] ? " " : "", name, strerror(err));
}

/* Steps 1-2: the shared control segment. Returns 0 when every rank has it
 * mapped and attached; otherwise -1 on every rank, nothing left mapped. */
static int kcoll_team_map(kcoll_team_t *t, int p, int rank, const kcoll_team_host_t *h)
{
    /* relaxed: only makes names unique between threads; orders nothing */
    static _Atomic unsigned counter;
    char name[64] = "";
    size_t len = kcoll_ctl_seg_len(p);
    void *seg = MAP_FAILED;
    int ok = 1;

    if (rank == 0) {
        snprintf(name, sizeof name, "/kcoll-%d-%u-%lx", (int)getpid(),
                 atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed),
                 (unsigned long)kcoll_now_ns());
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0) {
            kcoll_team_map_warn("shm_open", name, errno);
            name[0] = '\0';
        } else {
            int err = 0;
            if (ftruncate(fd, (off_t)len) == 0)
                seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            err = errno;
            close(fd);
            if (seg == MAP_FAILED) {
                kcoll_team_map_warn("sizing or mapping the shared memory", name, err);
                shm_unlink(name);
                name[0] = '\0';
            } else {
                kcoll_ctl_seg_init(seg, p);
            }
        }
    }
    if (h->bcast0(h->ctx, name, sizeof name) || !name[0]) {
        if (seg != MAP_FAILED)
            munmap(seg, len);
        return -1; /* every rank sees the empty name */
    }
    if (rank != 0) {
        /* the creator's length: its KCOLL_SHM_CELL sized the bounce cells */
        int fd = shm_open(name, O_RDWR, 0600);
        struct stat sb;
        if (fd < 0) {
            kcoll_team_map_warn("shm_open", name, errno);
        } else {
            int err = EINVAL; /* an empty segment: its creator failed to size it */
            if (fstat(fd, &sb) != 0) {
                err = errno;
            } else if (sb.st_size > 0) {
                len = (size_t)sb.st_size;
                seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                err = errno;
            }
            close(fd);
            if (seg == MAP_FAILED)
                kcoll_team_map_warn("mapping the shared memory", name, err);
        }
    }
    if (seg == MAP_FAILED || kcoll_ctl_attach(&t->ctl, seg, len, p, rank) != KCOLL_OK)
        ok = 0;
    int all_ok = ok;
    if (h->allmin(h->ctx, &all_ok, 1))
        all_ok = 0;
    if (rank == 0)
        shm_unlink(name); /* everyone has it mapped (or gave up): no name is needed any more */
    if (all_ok && kcoll_ctl_load_pids(&t->ctl) == KCOLL_OK) {
        /* more ranks than the cores they may run on: waiters give their
         * core away. Agreed (the fewest cores any crowded rank found), so
         * that every rank prices and stores its flags alike (sched/wait.h) */
        int cores = kcoll_wait_crowd_cores(p, kcoll_ctl_cores(&t->ctl));
        int v[1] = {cores > 0 ? cores : INT_MAX};
        if (h->allmin(h->ctx, v, 1) == 0 && v[0] != INT_MAX)
            kcoll_wait_crowd_note(v[0]);
        return 0;
    }
    if (ok)
        kcoll_ctl_fini(&t->ctl);
    if (seg != MAP_FAILED)
        munmap(seg, len);
    return -1;
}

/* The end of an engine's probe: every rank says whether it succeeded
 * (ok), all agree. 0 if all did; otherwise -1, and on the lowest failing
 * rank *lowest is 1 and why holds its reason got. */
static int kcoll_team_agree(kcoll_team_t *t, const kcoll_team_host_t *h, int ok, const char *got,
                            char *why, size_t whylen, int *lowest)
{
    const int p = t->ctl.p, rank = t->ctl.rank;
    int first_fail = ok ? p : rank;
    *lowest = 0;
    if (h->allmin(h->ctx, &first_fail, 1))
        return -1;
    if (first_fail == p)
        return 0;
    if (first_fail == rank) {
        *lowest = 1;
        kcoll_fmt(why, whylen, "%s", got);
    }
    return -1;
}

/* Step 3 for a one-sided engine: can every rank reach its right
 * neighbour? 0 if all can; otherwise -1, and on the lowest failing rank
 * *lowest is 1 and why says why. Agreed by all. */
static int kcoll_team_probe(kcoll_team_t *t, const kcoll_engine_t *e, const kcoll_team_host_t *h,
                            char *why, size_t whylen, int *lowest)
{
    const int p = t->ctl.p, rank = t->ctl.rank, peer = (rank + 1) % p;
    char allow_why[200] = "", got[320] = "";
    *lowest = 0;
    e->allow_peers(allow_why, sizeof allow_why);
    int v[2] = {0, 0};
    if (h->allmin(h->ctx, v, 1)) /* every rank has allowed its peers before anyone probes */
        return -1;
    kcoll_slot_t *ps = &t->ctl.slots[peer];
    kcoll_status_t st = e->probe_peer(t->ctl.pids[peer], (const void *)(uintptr_t)ps->probe_addr,
                                      ps->probe_val, got, sizeof got);
    if (st != KCOLL_OK && allow_why[0])
        kcoll_fmt(got + strlen(got), sizeof got - strlen(got), "; also: %s", allow_why);
    return kcoll_team_agree(t, h, st == KCOLL_OK, got, why, whylen, lowest);
}

/* The direct engine: can every rank map its right neighbour's registry
 * of shareable memory? 0 if all can; otherwise -1, and on the lowest
 * failing rank *lowest is 1 and why says why. Agreed by all. */
static int kcoll_team_probe_direct(kcoll_team_t *t, const kcoll_team_host_t *h, char *why,
                                   size_t whylen, int *lowest)
{
    const int p = t->ctl.p, rank = t->ctl.rank, peer = (rank + 1) % p;
    kcoll_slot_t *me = &t->ctl.slots[rank], *ps = &t->ctl.slots[peer];
    char got[320] = "";
    *lowest = 0;
    int ok = kcoll_direct_init(got, sizeof got) == 0;
    if (ok)
        kcoll_direct_self(&me->dreg_fd, &me->dreg_ino);
    int v[1] = {0};
    if (h->allmin(h->ctx, v, 1)) /* every rank has published its registry */
        return -1;
    if (ok)
        ok = kcoll_direct_probe_peer(t->ctl.pids[peer], ps->dreg_fd, ps->dreg_ino, got,
                                     sizeof got) == 0;
    return kcoll_team_agree(t, h, ok, got, why, whylen, lowest);
}

/* The vmsplice engine: every rank makes its pipe and names it in its slot,
 * opens every peer's by name, unlinks its own name, splices its probe word
 * into its right neighbour's pipe and reads its left neighbour's from its
 * own. 0 if all can (the channel then owns the fds); otherwise -1 with
 * every fd closed, and on the lowest failing rank *lowest is 1 and why
 * says why. Agreed by all. */
static int kcoll_team_probe_vmsplice(kcoll_team_t *t, const kcoll_team_host_t *h, char *why,
                                     size_t whylen, int *lowest)
{
    const int p = t->ctl.p, rank = t->ctl.rank;
    kcoll_slot_t *me = &t->ctl.slots[rank];
    char got[320] = "";
    int *fds = malloc((size_t)p * sizeof *fds);
    int ok = fds != NULL, v[1] = {0};
    *lowest = 0;
    for (int q = 0; fds && q < p; q++)
        fds[q] = -1;
    me->pipe[0] = '\0';
    if (ok)
        ok = (fds[rank] = kcoll_vmsplice_make(me->pipe, sizeof me->pipe,
                                              (size_t)kcoll_param_int(KCOLL_P_PIPE_SIZE), got,
                                              sizeof got)) >= 0;
    if (h->allmin(h->ctx, v, 1)) /* every pipe is made and named */
        ok = 0;
    for (int q = 0; ok && q < p; q++)
        if (q != rank && (fds[q] = kcoll_vmsplice_open(t->ctl.slots[q].pipe, got, sizeof got)) < 0)
            ok = 0;
    int opened = ok;
    if (h->allmin(h->ctx, &opened, 1)) /* every rank has opened every pipe (or gave up) */
        opened = 0;
    kcoll_vmsplice_unlink(me->pipe);
    /* the probe: this rank's word into its right neighbour's pipe, the
     * left neighbour's out of its own (the word stays put until read) */
    const uint64_t word = me->probe_val;
    uint64_t left = 0;
    if (opened && ok)
        ok = kcoll_vmsplice_probe_put(fds[(rank + 1) % p], &word, got, sizeof got) == 0;
    v[0] = 0;
    if (h->allmin(h->ctx, v, 1)) /* every word is in its pipe */
        ok = 0;
    if (opened && ok && kcoll_vmsplice_probe_get(fds[rank], &left, got, sizeof got) == 0 &&
        left != t->ctl.slots[(rank + p - 1) % p].probe_val) {
        kcoll_fmt(got, sizeof got, "the word read from this rank's pipe is not its neighbour's");
        ok = 0;
    } else if (opened && ok && !left) {
        ok = 0;
    }
    /* a rank that did not get as far as the probe because another could
     * not open a pipe reports success: the one that failed reports */
    if (kcoll_team_agree(t, h, ok, got, why, whylen, lowest) == 0 && opened) {
        kcoll_chan_set_pipes(t->ctl.chan, fds);
        return 0;
    }
    for (int q = 0; fds && q < p; q++)
        if (fds[q] >= 0)
            close(fds[q]);
    free(fds);
    return -1;
}

/* One warning line per process about the engines (the lowest failing
 * rank of a team says it). */
static void kcoll_team_warn(const char *line)
{
    static _Atomic int warned;
    kcoll_warn_once(&warned, "%s", line);
}

/* KCOLL_ENGINE forces an engine that cannot run here (what): the lowest
 * failing rank says so, and why; -1. */
static int kcoll_team_refuse(const char *engine, const char *what, const char *why, int lowest)
{
    char line[900];
    kcoll_fmt(line, sizeof line,
              "KCOLL_ENGINE=%s, but %s, so communicators use the host MPI: %s", engine, what,
              why);
    if (lowest)
        kcoll_team_warn(line);
    return -1;
}

/* KCOLL_ENGINE as a team reads it: an engine id, or -1 for auto (an
 * unknown name warns once and is auto). */
static int kcoll_team_forced_engine(void)
{
    const char *v = kcoll_param_str(KCOLL_P_ENGINE);
    if (!v || !strcmp(v, "auto") || !v[0])
        return -1;
    int id = kcoll_engine_by_name(v);
    if (id < 0) {
        static _Atomic int warned;
        kcoll_warn_once(&warned,
                        "KCOLL_ENGINE=%s is not an engine (auto, cma, shm, direct, vmsplice): "
                        "using auto",
                        v);
    }
    return id;
}

/* Bounce memory this process holds for calls on shm in teams on cma
 * (KCOLL_SHM_PERCALL). */
static _Atomic size_t kcoll_team_percall_held;

/* Take ring bytes of the budget: 1 if they fit (and /dev/shm keeps half
 * its room free after them), else 0 and nothing taken. */
static int kcoll_team_percall_take(size_t ring)
{
    const size_t budget = (size_t)kcoll_param_int(KCOLL_P_SHM_PERCALL);
    struct statvfs vfs;
    if (!ring || statvfs("/dev/shm", &vfs) != 0 ||
        ((double)vfs.f_bavail - (double)ring / (double)vfs.f_frsize) * 2.0 < (double)vfs.f_blocks)
        return 0;
    /* relaxed: a counter of this process's own bytes; nothing else is ordered by it */
    size_t held = atomic_load_explicit(&kcoll_team_percall_held, memory_order_relaxed);
    do {
        if (held + ring > budget)
            return 0;
        /* relaxed: as above */
    } while (!atomic_compare_exchange_weak_explicit(&kcoll_team_percall_held, &held, held + ring,
                                                    memory_order_relaxed, memory_order_relaxed));
    return 1;
}

static void kcoll_team_percall_give(size_t ring)
{
    /* relaxed: as in kcoll_team_percall_take */
    atomic_fetch_sub_explicit(&kcoll_team_percall_held, ring, memory_order_relaxed);
}

/* An auto team on cma: may single calls run on shm (one engine per call,
 * docs/engines.md)? Their two-copy transfers go through the bounce cells,
 * which must then be resident on every rank (a /dev/shm too small shows
 * here, not as SIGBUS in a transfer): each rank takes them from its
 * process's budget and reserves them, and all agree. Where any rank
 * cannot, the team stays on cma for every call, silently (nothing is lost
 * but the option). 0, or -1 when the host's collective failed. */
static int kcoll_team_percall(kcoll_team_t *t, const kcoll_team_host_t *h)
{
    const size_t ring = kcoll_chan_ring_bytes(t->ctl.chan);
    char why[320];
    int ok = kcoll_team_percall_take(ring);
    if (ok && kcoll_chan_reserve(t->ctl.chan, why, sizeof why) != 0) {
        kcoll_team_percall_give(ring);
        ok = 0;
    }
    if (ok)
        t->percall_bytes = ring;
    int all = ok;
    if (h->allmin(h->ctx, &all, 1)) {
        if (ok)
            kcoll_team_percall_give(ring);
        t->percall_bytes = 0;
        return -1;
    }
    if (all)
        t->decisions.percall = KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM);
    return 0;
}

/* Step 3: the engines. Returns 0 with t->engine and t->engines set, or
 * -1 when the engine KCOLL_ENGINE forces cannot run here (warned). */
static int kcoll_team_engines_setup(kcoll_team_t *t, const kcoll_team_host_t *h)
{
    const int forced = kcoll_team_forced_engine();
    char why[600] = "", line[800];
    int lowest = 0;
    t->forced = forced;
    t->engines = 0;
    /* shm needs nothing but the segment everyone has mapped */
    t->engines |= KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM);
    if (forced < 0 || forced == KCOLL_ENGINE_CMA || forced == KCOLL_ENGINE_DIRECT) {
        const kcoll_engine_t *cma = kcoll_engine(KCOLL_ENGINE_CMA);
        if (kcoll_team_probe(t, cma, h, why, sizeof why, &lowest) == 0) {
            t->engines |= KCOLL_ENGINE_BIT(KCOLL_ENGINE_CMA);
        } else if (forced == KCOLL_ENGINE_CMA) {
            return kcoll_team_refuse("cma", "single-copy transfers are not permitted here", why,
                                     lowest);
        } else if (lowest) {
            kcoll_fmt(line, sizeof line,
                      "single-copy transfers are not permitted here, so kcoll runs with two "
                      "copies through shared memory (engine shm; KCOLL_ENGINE=shm chooses it "
                      "without this line): %s",
                      why);
            kcoll_team_warn(line);
        }
    }
    if (forced < 0 || forced == KCOLL_ENGINE_DIRECT) {
        if (kcoll_team_probe_direct(t, h, why, sizeof why, &lowest) == 0) {
            t->engines |= KCOLL_ENGINE_BIT(KCOLL_ENGINE_DIRECT);
            t->ctl.direct = 1;
        } else if (forced == KCOLL_ENGINE_DIRECT) {
            return kcoll_team_refuse("direct", "processes cannot map each other's memory here",
                                     why, lowest);
        }
    }
    if (forced == KCOLL_ENGINE_VMSPLICE) {
        if (kcoll_team_probe_vmsplice(t, h, why, sizeof why, &lowest))
            return kcoll_team_refuse("vmsplice", "its pipes cannot be used here", why, lowest);
        t->engines |= KCOLL_ENGINE_BIT(KCOLL_ENGINE_VMSPLICE);
    }
    if (forced >= 0 && forced != KCOLL_ENGINE_DIRECT)
        t->engine = kcoll_engine((kcoll_engine_id_t)forced);
    else if (t->engines & KCOLL_ENGINE_BIT(KCOLL_ENGINE_CMA))
        t->engine = kcoll_engine(KCOLL_ENGINE_CMA);
    else
        t->engine = kcoll_engine(KCOLL_ENGINE_SHM);
    if (t->engine->two_sided) { /* the bounce cells are used: resident now */
        char got[320] = "";
        int ok = kcoll_chan_reserve(t->ctl.chan, got, sizeof got) == 0;
        if (kcoll_team_agree(t, h, ok, got, why, sizeof why, &lowest)) {
            kcoll_fmt(line, sizeof line, "communicators use the host MPI: %s", why);
            if (lowest)
                kcoll_team_warn(line);
            return -1;
        }
    }
    /* the model prices the team's steps as they will run: loads and
     * stores where direct is forced (the program says its buffers are
     * MPI_Alloc_mem's), else the team's engine */
    t->decisions.engine = forced == KCOLL_ENGINE_DIRECT ? KCOLL_ENGINE_DIRECT : (int)t->engine->id;
    if (!(t->engines & KCOLL_ENGINE_BIT(t->engine->id)))
        return -1;
    if (forced < 0 && t->engine->id == KCOLL_ENGINE_CMA && kcoll_team_percall(t, h))
        return -1;
    return 0;
}

kcoll_status_t kcoll_team_setup(kcoll_team_t *t, int p, int rank, const kcoll_team_host_t *h)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    for (int l = 0; l < KCOLL_LANES; l++)
        t->lane_next[l] = l ? (uint64_t)l : KCOLL_LANES; /* collective numbers start at 1 */
    t->xturn = 1;
    t->refs = 1;
    if (kcoll_team_map(t, p, rank, h))
        return KCOLL_ERR_SYS;
    if (kcoll_team_engines_setup(t, h) == 0)
        return KCOLL_OK;
    munmap(t->ctl.seg, t->ctl.seg_len);
    kcoll_ctl_fini(&t->ctl);
    return KCOLL_ERR_PERM;
}

int kcoll_team_turn(kcoll_team_t *t, uint64_t call, int done)
{
    const uint64_t low = ((uint64_t)1 << 48) - 1;
    kcoll_seg_hdr_t *h = t->ctl.seg;
    const uint64_t p = (uint64_t)t->ctl.p;
    /* acquire: pairs with the acq_rel exchanges below (orders nothing
     * else: the word is its own message) */
    uint64_t x = atomic_load_explicit(&h->turn, memory_order_acquire);
    for (;;) {
        const uint64_t ndone = x >> 48, most = x & low;
        if (!done && ndone == p) /* all done: the word is final */
            return call > most;
        const uint64_t next = (ndone + (done ? 1u : 0u)) << 48 | (call > most ? call : most);
        /* acq_rel: one order of every rank's changes of the word */
        if (atomic_compare_exchange_weak_explicit(&h->turn, &x, next, memory_order_acq_rel,
                                                  memory_order_acquire))
            return 0;
    }
}

int kcoll_team_turn_final(const kcoll_team_t *t)
{
    kcoll_seg_hdr_t *h = t->ctl.seg;
    /* acquire: as in kcoll_team_turn */
    return atomic_load_explicit(&h->turn, memory_order_acquire) >> 48 == (uint64_t)t->ctl.p;
}

void kcoll_team_ref(kcoll_team_t *t)
{
    kcoll_team_lock(t);
    t->refs++;
    kcoll_team_unlock(t);
}

void kcoll_team_set_levels(kcoll_team_t *t, int nraw, const int *ids)
{
    kcoll_levels_free(&t->levels);
    if (kcoll_levels_make(&t->levels, t->ctl.p, nraw, ids))
        kcoll_levels_free(&t->levels); /* out of memory: flat */
}

void kcoll_team_unref(kcoll_team_t *t, void (*release)(kcoll_team_t *t))
{
    kcoll_team_lock(t);
    int last = --t->refs == 0;
    kcoll_team_unlock(t);
    if (!last)
        return;
    if (release)
        release(t);
    if (t->percall_bytes)
        kcoll_team_percall_give(t->percall_bytes);
    for (int i = 0; i < KCOLL_SCHED_CACHE; i++)
        kcoll_sched_free(&t->scache[i].sched);
    kcoll_levels_free(&t->levels);
    munmap(t->ctl.seg, t->ctl.seg_len);
    kcoll_ctl_fini(&t->ctl);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
