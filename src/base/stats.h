/* Statistics counters: calls and bytes per (row, path), for this process.
 *
 * The counters know nothing of collectives: a row is one kind of call
 * and a path one way of doing it, both small numbers that the call layer
 * (call/report.c) assigns and names ("MPI_Ibcast", "kcoll:knomial",
 * "mpi:below_min_bytes"). MPI_Finalize sums the snapshots of all ranks
 * and rank 0 prints them (KCOLL_STATS). */
#ifndef KCOLL_STATS_H
#define KCOLL_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define KCOLL_STATS_ROWS 48   /* kinds of call */
#define KCOLL_STATS_PATHS 160 /* paths of one kind of call */
#define KCOLL_STATS_LEN (KCOLL_STATS_ROWS * KCOLL_STATS_PATHS * 2)

/* One call more on (row, path), moving `bytes`. Out-of-range indices are
 * ignored. shared: other threads may count at the same time (atomic
 * additions); 0: this thread is the only one counting (plain additions,
 * cheaper on a path every call takes). */
void kcoll_stats_add(int row, int path, size_t bytes, int shared);
/* The same for `calls` calls at once, moving `bytes` in all. */
void kcoll_stats_add_calls(int row, int path, uint64_t calls, uint64_t bytes, int shared);
/* The counters of (row, path) themselves (calls, bytes), or NULL out of
 * range: for a path that counts the same cell again and again
 * (call/shortcut.h) with kcoll_stats_bump. */
_Atomic uint64_t *kcoll_stats_cell_of(int row, int path);
/* `calls` calls more on a cell, moving `bytes`, by the only thread
 * counting on it: a relaxed load and store, without the locked
 * instruction an atomic add costs on every call. */
static inline void kcoll_stats_bump_n(_Atomic uint64_t *cell, uint64_t calls, uint64_t bytes)
{
    /* relaxed: a counter, ordering nothing; no other thread writes it */
    atomic_store_explicit(&cell[0], atomic_load_explicit(&cell[0], memory_order_relaxed) + calls,
                          memory_order_relaxed);
    /* relaxed: as above */
    atomic_store_explicit(&cell[1], atomic_load_explicit(&cell[1], memory_order_relaxed) + bytes,
                          memory_order_relaxed);
}
/* One call more, so. */
static inline void kcoll_stats_bump(_Atomic uint64_t *cell, size_t bytes)
{
    kcoll_stats_bump_n(cell, 1, bytes);
}
/* Calls and bytes of (row, path) within a snapshot. */
static inline const uint64_t *kcoll_stats_cell(const uint64_t *table, int row, int path)
{
    return &table[((size_t)row * KCOLL_STATS_PATHS + (size_t)path) * 2];
}
/* Calls and bytes of one (row, path) of this process. */
void kcoll_stats_read(int row, int path, uint64_t *calls, uint64_t *bytes);
/* The whole table as (calls, bytes) pairs, row by row, for summing over
 * ranks. */
void kcoll_stats_snapshot(uint64_t out[KCOLL_STATS_LEN]);

/* Scratch memory: bytes the call layer holds for collectives' temporary
 * buffers (an algorithm's TMP, packed datatypes), counted when allocated
 * (delta > 0) and freed (delta < 0); the most held at once since the last
 * reset of the peak. */
void kcoll_scratch_add(int64_t delta);
void kcoll_scratch_read(uint64_t *held, uint64_t *peak, int reset_peak);

#endif
