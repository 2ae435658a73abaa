/* The team's control segment, seen from one rank (see team.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/team.h"

static size_t kcoll_slot_size(void)
{
    return (sizeof(kcoll_slot_t) + KCOLL_CACHELINE - 1) / KCOLL_CACHELINE * KCOLL_CACHELINE;
}

static size_t kcoll_tables_off(int p)
{
    return sizeof(kcoll_seg_hdr_t) + (size_t)p * kcoll_slot_size();
}

size_t kcoll_team_seg_len(int p)
{
    /* the tables are touched only by v-variants: pages never used cost nothing */
    return kcoll_tables_off(p) + 2 * (size_t)p * KCOLL_TABLE_LEN(p) * sizeof(size_t);
}

void kcoll_team_seg_init(void *seg, int p)
{
    kcoll_seg_hdr_t *h = seg;
    h->p = (uint32_t)p;
    h->slot_size = (uint32_t)kcoll_slot_size();
    h->magic = KCOLL_SEG_MAGIC;
}

/* A word in this process's private memory that peers read in the CMA
 * probe; its value depends on the pid, so a read of the wrong process or
 * of stale memory is noticed. */
static uint64_t kcoll_probe_word_storage;

const void *kcoll_team_probe_word(uint64_t *value)
{
    kcoll_probe_word_storage = 0x6b636f6c6cull ^ ((uint64_t)getpid() << 20);
    *value = kcoll_probe_word_storage;
    return &kcoll_probe_word_storage;
}

kcoll_status_t kcoll_team_attach(kcoll_team_t *t, void *seg, size_t len, int p, int rank)
{
    memset(t, 0, sizeof *t);
    kcoll_seg_hdr_t *h = seg;
    if (len < kcoll_team_seg_len(p) || h->magic != KCOLL_SEG_MAGIC || h->p != (uint32_t)p ||
        h->slot_size != kcoll_slot_size() || rank < 0 || rank >= p)
        return KCOLL_ERR_PROTO;
    t->p = p;
    t->rank = rank;
    t->seg = seg;
    t->seg_len = len;
    t->slots = (kcoll_slot_t *)((char *)seg + sizeof(kcoll_seg_hdr_t));
    t->tables = (size_t *)((char *)seg + kcoll_tables_off(p));
    t->pids = calloc((size_t)p, sizeof *t->pids);
    if (!t->pids)
        return KCOLL_ERR_NOMEM;
    kcoll_sched_init(&t->sched);

    kcoll_slot_t *me = &t->slots[rank];
    uint64_t val;
    me->probe_addr = (uint64_t)(uintptr_t)kcoll_team_probe_word(&val);
    me->probe_val = val;
    me->pid = getpid();
    /* release: publishes pid and probe word before peers see attached == 1 */
    atomic_store_explicit(&me->attached, 1, memory_order_release);
    return KCOLL_OK;
}

kcoll_status_t kcoll_team_load_pids(kcoll_team_t *t)
{
    for (int r = 0; r < t->p; r++) {
        /* acquire: pairs with the release in attach, so pid is visible */
        if (atomic_load_explicit(&t->slots[r].attached, memory_order_acquire) != 1)
            return KCOLL_ERR_PROTO;
        t->pids[r] = (pid_t)t->slots[r].pid;
    }
    return KCOLL_OK;
}

void *kcoll_team_scratch(kcoll_team_t *t, size_t len)
{
    if (len <= t->scratch_len && t->scratch)
        return t->scratch;
    void *mem = NULL;
    size_t want = (len + 4095) / 4096 * 4096;
    if (want == 0)
        want = 4096;
    if (posix_memalign(&mem, 4096, want))
        return NULL;
    free(t->scratch);
    t->scratch = mem;
    t->scratch_len = want;
    return mem;
}

void kcoll_team_fini(kcoll_team_t *t)
{
    free(t->pids);
    t->pids = NULL;
    free(t->scratch);
    t->scratch = NULL;
    t->scratch_len = 0;
    free(t->layouts);
    t->layouts = NULL;
    kcoll_sched_free(&t->sched);
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
