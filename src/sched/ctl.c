/* The control segment, seen from one rank (see ctl.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/params.h"
#include "sched/ctl.h"
#include "sched/dmap.h"
#include "xfer/chan.h"

static size_t kcoll_slot_size(void)
{
    return (sizeof(kcoll_slot_t) + KCOLL_CACHELINE - 1) / KCOLL_CACHELINE * KCOLL_CACHELINE;
}

static size_t kcoll_tables_off(int p)
{
    return sizeof(kcoll_seg_hdr_t) + (size_t)p * kcoll_slot_size();
}

/* Where the channel's area starts: after the tables, on a page */
static size_t kcoll_chan_off(int p)
{
    size_t end = kcoll_tables_off(p) + (size_t)p * KCOLL_LANES * KCOLL_TABLE_LEN(p) * sizeof(size_t);
    return (end + 4095) / 4096 * 4096;
}

/* KCOLL_SHM_CELL as a whole number of pages, 4 KiB to 16 MiB */
static size_t kcoll_ctl_cell(void)
{
    int64_t v = kcoll_param_int(KCOLL_P_SHM_CELL);
    if (v < 4096)
        v = 4096;
    if (v > (16 << 20))
        v = 16 << 20;
    return (size_t)(v + 4095) / 4096 * 4096;
}

size_t kcoll_ctl_seg_len(int p)
{
    /* the tables are touched only by agreements, the bounce cells only by
     * two-sided transfers: pages never used cost nothing */
    return kcoll_chan_off(p) + kcoll_chan_area_len(p, kcoll_ctl_cell());
}

void kcoll_ctl_seg_init(void *seg, int p)
{
    kcoll_seg_hdr_t *h = seg;
    h->p = (uint32_t)p;
    h->slot_size = (uint32_t)kcoll_slot_size();
    h->lanes = KCOLL_LANES;
    h->cell = kcoll_ctl_cell();
    h->magic = KCOLL_SEG_MAGIC;
}

/* A word in this process's private memory that peers read in the CMA
 * probe; its value depends on the pid, so a read of the wrong process or
 * of stale memory is noticed. */
static uint64_t kcoll_probe_word_storage;

const void *kcoll_ctl_probe_word(uint64_t *value)
{
    kcoll_probe_word_storage = 0x6b636f6c6cull ^ ((uint64_t)getpid() << 20);
    *value = kcoll_probe_word_storage;
    return &kcoll_probe_word_storage;
}

kcoll_status_t kcoll_ctl_attach(kcoll_ctl_t *c, void *seg, size_t len, int p, int rank)
{
    memset(c, 0, sizeof *c);
    kcoll_seg_hdr_t *h = seg;
    if (len < sizeof *h || h->magic != KCOLL_SEG_MAGIC || h->p != (uint32_t)p ||
        h->slot_size != kcoll_slot_size() || h->lanes != KCOLL_LANES || rank < 0 || rank >= p ||
        h->cell < 4096 || h->cell % 4096 || h->cell > (16 << 20) ||
        len < kcoll_chan_off(p) + kcoll_chan_area_len(p, h->cell))
        return KCOLL_ERR_PROTO;
    c->p = p;
    c->rank = rank;
    c->seg = seg;
    c->seg_len = len;
    c->slots = (kcoll_slot_t *)((char *)seg + sizeof(kcoll_seg_hdr_t));
    c->tables = (size_t *)((char *)seg + kcoll_tables_off(p));
    c->pids = calloc((size_t)p, sizeof *c->pids);
    c->chan = kcoll_chan_attach((char *)seg + kcoll_chan_off(p), p, rank, h->cell,
                                kcoll_ctl_resolve, c);
    if (!c->pids || !c->chan) {
        kcoll_ctl_fini(c);
        return KCOLL_ERR_NOMEM;
    }

    kcoll_slot_t *me = &c->slots[rank];
    uint64_t val;
    me->probe_addr = (uint64_t)(uintptr_t)kcoll_ctl_probe_word(&val);
    me->probe_val = val;
    me->pid = getpid();
    kcoll_cpu_affinity(me->cpus, KCOLL_CPU_WORDS);
    /* release: publishes pid, probe word and cpus before peers see attached == 1 */
    atomic_store_explicit(&me->attached, 1, memory_order_release);
    return KCOLL_OK;
}

int kcoll_ctl_all_attached(const kcoll_ctl_t *c)
{
    for (int r = 0; r < c->p; r++)
        /* acquire: pairs with the release in attach, so pid and probe word are visible */
        if (atomic_load_explicit(&c->slots[r].attached, memory_order_acquire) != 1)
            return 0;
    return 1;
}

kcoll_status_t kcoll_ctl_load_pids(kcoll_ctl_t *c)
{
    for (int r = 0; r < c->p; r++) {
        /* acquire: pairs with the release in attach, so pid is visible */
        if (atomic_load_explicit(&c->slots[r].attached, memory_order_acquire) != 1)
            return KCOLL_ERR_PROTO;
        c->pids[r] = (pid_t)c->slots[r].pid;
    }
    return KCOLL_OK;
}

int kcoll_ctl_cores(const kcoll_ctl_t *c)
{
    uint64_t any[KCOLL_CPU_WORDS] = {0};
    for (int r = 0; r < c->p; r++)
        /* acquire: pairs with the release in attach, so cpus is visible */
        if (atomic_load_explicit(&c->slots[r].attached, memory_order_acquire) == 1)
            for (int w = 0; w < KCOLL_CPU_WORDS; w++)
                any[w] |= c->slots[r].cpus[w];
    return kcoll_cpu_count(any, KCOLL_CPU_WORDS);
}

void kcoll_ctl_fini(kcoll_ctl_t *c)
{
    free(c->pids);
    c->pids = NULL;
    kcoll_chan_detach(c->chan);
    c->chan = NULL;
}

kcoll_status_t kcoll_ctl_resolve(void *ctx, uint64_t seq, int buf, size_t off, size_t len,
                                 kcoll_iovs_t *out, char *why, size_t whylen)
{
    const kcoll_ctl_t *c = ctx;
    if (buf < 0 || buf >= KCOLL_NBUF) {
        snprintf(why, whylen, "no buffer %d", buf);
        return KCOLL_ERR_PROTO;
    }
    kcoll_expo_t *e = &kcoll_ctl_lane(c, c->rank, seq)->expose[buf];
    /* acquire: pairs with the release in this rank's EXPOSE (maybe made by
     * another thread of this process); addr, len and map are visible */
    uint64_t at = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (at != seq) {
        snprintf(why, whylen, "its %s buffer is exposed for collective %llu, not %llu",
                 kcoll_buf_name(buf), (unsigned long long)at, (unsigned long long)seq);
        return KCOLL_ERR_PROTO;
    }
    /* relaxed: ordered by the acquire load of seq above */
    uint64_t addr = atomic_load_explicit(&e->addr, memory_order_relaxed);
    /* relaxed: as above */
    uint64_t blen = atomic_load_explicit(&e->len, memory_order_relaxed);
    /* relaxed: as above */
    uint64_t map = atomic_load_explicit(&e->map, memory_order_relaxed);
    if (off > blen || len > blen - off) {
        snprintf(why, whylen, "bytes %zu..%zu of its %s buffer, which has %llu", off, off + len,
                 kcoll_buf_name(buf), (unsigned long long)blen);
        return KCOLL_ERR_PROTO;
    }
    if (kcoll_dmap_iov((const kcoll_dmap_t *)(uintptr_t)map, (char *)(uintptr_t)addr, off, len,
                       out)) {
        snprintf(why, whylen, "out of memory");
        return KCOLL_ERR_NOMEM;
    }
    return KCOLL_OK;
}

int kcoll_pid_alive(pid_t pid)
{
    if (kill(pid, 0) == -1 && errno == ESRCH)
        return 0;
    /* A process that has exited but was not reaped yet still answers
     * kill(); /proc/<pid>/stat says 'Z' (zombie) or 'X' (dead). */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the command name may hold spaces */
    if (paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'))
        return 0;
    return 1;
}
