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
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "sched/wait.h"
#include "team/team.h"

int kcoll_team_threads;

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
            kcoll_warn("shm_open(%s) failed: %s; this communicator uses the host MPI", name,
                       strerror(errno));
            name[0] = '\0';
        } else {
            if (ftruncate(fd, (off_t)len) == 0)
                seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            if (seg == MAP_FAILED) {
                kcoll_warn("sizing or mapping %zu bytes of shared memory failed: %s; this "
                           "communicator uses the host MPI", len, strerror(errno));
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
        int fd = shm_open(name, O_RDWR, 0600);
        if (fd >= 0) {
            seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
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

/* Step 3 for one engine: can every rank reach its right neighbour? The
 * lowest failing rank warns (once per process). Agreed by all. */
static int kcoll_team_probe(kcoll_team_t *t, const kcoll_engine_t *e, const kcoll_team_host_t *h)
{
    static _Atomic int warned;
    const int p = t->ctl.p, rank = t->ctl.rank, peer = (rank + 1) % p;
    char allow_why[200] = "", why[320] = "";
    e->allow_peers(allow_why, sizeof allow_why);
    int v[2] = {0, 0};
    if (h->allmin(h->ctx, v, 1)) /* every rank has allowed its peers before anyone probes */
        return -1;
    kcoll_slot_t *ps = &t->ctl.slots[peer];
    kcoll_status_t st = e->probe_peer(t->ctl.pids[peer], (const void *)(uintptr_t)ps->probe_addr,
                                      ps->probe_val, why, sizeof why);
    int first_fail = st == KCOLL_OK ? p : rank;
    if (h->allmin(h->ctx, &first_fail, 1))
        return -1;
    if (first_fail == p)
        return 0;
    /* relaxed: at most one warning per process; orders nothing */
    if (first_fail == rank && !atomic_exchange_explicit(&warned, 1, memory_order_relaxed))
        kcoll_warn("single-copy transfers are not permitted here, so communicators use the host "
                   "MPI (engine %s): %s%s%s",
                   e->name, why, allow_why[0] ? "; also: " : "", allow_why);
    return -1;
}

kcoll_status_t kcoll_team_setup(kcoll_team_t *t, int p, int rank, const kcoll_team_host_t *h)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    for (int l = 0; l < KCOLL_LANES; l++)
        t->lane_next[l] = l ? (uint64_t)l : KCOLL_LANES; /* collective numbers start at 1 */
    t->refs = 1;
    if (kcoll_team_map(t, p, rank, h))
        return KCOLL_ERR_SYS;
    for (int id = 0; id < KCOLL_NENGINES; id++) {
        const kcoll_engine_t *e = kcoll_engine((kcoll_engine_id_t)id);
        if (kcoll_team_probe(t, e, h) == 0) {
            t->engine = e;
            return KCOLL_OK;
        }
    }
    munmap(t->ctl.seg, t->ctl.seg_len);
    kcoll_ctl_fini(&t->ctl);
    return KCOLL_ERR_PERM;
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
    for (int i = 0; i < KCOLL_SCHED_CACHE; i++)
        kcoll_sched_free(&t->scache[i].sched);
    kcoll_levels_free(&t->levels);
    munmap(t->ctl.seg, t->ctl.seg_len);
    kcoll_ctl_fini(&t->ctl);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
