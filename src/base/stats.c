/* Statistics counters (see stats.h). Relaxed atomic adds: a counter orders
 * nothing, it only must not lose increments when several threads call
 * collectives at once. Where the caller says it is the only thread
 * counting, a relaxed load and store instead, without the locked
 * instruction an atomic add costs on every call. */
#include <stdatomic.h>

#include "base/stats.h"

static _Atomic uint64_t kcoll_stats[KCOLL_STATS_ROWS][KCOLL_STATS_PATHS][2];

_Atomic uint64_t *kcoll_stats_cell_of(int row, int path)
{
    if (row < 0 || row >= KCOLL_STATS_ROWS || path < 0 || path >= KCOLL_STATS_PATHS)
        return NULL;
    return kcoll_stats[row][path];
}

void kcoll_stats_add_calls(int row, int path, uint64_t calls, uint64_t bytes, int shared)
{
    _Atomic uint64_t *cell = kcoll_stats_cell_of(row, path);
    if (!cell)
        return;
    if (!shared) { /* the only thread counting: no locked instruction needed */
        kcoll_stats_bump_n(cell, calls, bytes);
        return;
    }
    /* relaxed: a counter, ordering nothing */
    atomic_fetch_add_explicit(&cell[0], calls, memory_order_relaxed);
    /* relaxed: a counter, ordering nothing */
    atomic_fetch_add_explicit(&cell[1], bytes, memory_order_relaxed);
}

void kcoll_stats_add(int row, int path, size_t bytes, int shared)
{
    kcoll_stats_add_calls(row, path, 1, bytes, shared);
}

void kcoll_stats_snapshot(uint64_t out[KCOLL_STATS_LEN])
{
    size_t i = 0;
    for (int r = 0; r < KCOLL_STATS_ROWS; r++)
        for (int p = 0; p < KCOLL_STATS_PATHS; p++)
            for (int k = 0; k < 2; k++)
                /* relaxed: a snapshot of counters, ordering nothing */
                out[i++] = atomic_load_explicit(&kcoll_stats[r][p][k], memory_order_relaxed);
}

void kcoll_stats_read(int row, int path, uint64_t *calls, uint64_t *bytes)
{
    *calls = *bytes = 0;
    if (row < 0 || row >= KCOLL_STATS_ROWS || path < 0 || path >= KCOLL_STATS_PATHS)
        return;
    /* relaxed: reading counters, ordering nothing */
    *calls = atomic_load_explicit(&kcoll_stats[row][path][0], memory_order_relaxed);
    /* relaxed: reading counters, ordering nothing */
    *bytes = atomic_load_explicit(&kcoll_stats[row][path][1], memory_order_relaxed);
}

/* Relaxed: a count read on its own (a snapshot for a test or a tool);
 * the peak may miss a concurrent add by another thread, never exceed
 * what was held. */
static _Atomic int64_t kcoll_scratch_held;
static _Atomic int64_t kcoll_scratch_peak;

void kcoll_scratch_add(int64_t delta)
{
    /* relaxed: see above */
    int64_t now = atomic_fetch_add_explicit(&kcoll_scratch_held, delta, memory_order_relaxed) + delta;
    int64_t peak = atomic_load_explicit(&kcoll_scratch_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&kcoll_scratch_peak, &peak, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        ;
}

void kcoll_scratch_read(uint64_t *held, uint64_t *peak, int reset_peak)
{
    /* relaxed: see above */
    int64_t h = atomic_load_explicit(&kcoll_scratch_held, memory_order_relaxed);
    *held = h > 0 ? (uint64_t)h : 0;
    *peak = (uint64_t)atomic_load_explicit(&kcoll_scratch_peak, memory_order_relaxed);
    if (reset_peak)
        atomic_store_explicit(&kcoll_scratch_peak, h, memory_order_relaxed);
}
