/* The shortcut: a blocking call that repeats its collective's previous
 * call argument for argument, where the call layer's memo (call.c) sent
 * that call to the host MPI, goes to the host at once, before it is even
 * described.
 *
 * Below the crossover the host MPI does the call, and what kcoll adds to
 * it is its whole cost there: an 8-byte Allreduce that Open MPI 4.1 does
 * in 0.26 us took 0.36 us through the memo (describing the call for its
 * family, the communicator's record, the memo's 14-word key under the
 * team's lock, the statistics, the decision cache's bookkeeping). The
 * shortcut compares the entry point's own arguments (communicator,
 * MPI_IN_PLACE or not, counts, datatype and operation handles, root: 8
 * words, and the v arrays the memo holds: MPI_Reduce_scatter's
 * recvcounts, MPI_Allgatherv's recvcounts and displs;
 * not the buffers' addresses, which no decision reads) with those
 * of the previous call and checks two numbers, so a solver's dot products
 * cost the host's time plus a few nanoseconds.
 *
 * It decides what the memo would, on every rank alike, because it is only
 * armed by a memo hit (the memo's key then matched, and the decision
 * depends on nothing a repeat changes: call.c) and every way the decision
 * could change disarms it first:
 *  - every call of the collective that reaches the call layer (any mode,
 *    any communicator: kcoll_call_prepare, kcoll_call_host), so the
 *    team's previous call, which the cache-state estimate reads, is the
 *    armed one;
 *  - a parameter change (the generation is compared);
 *  - a communicator's record going (a handle may then name another
 *    communicator: kcoll_shortcut_forget);
 *  - the count of calls to the decision's next check
 *    (KCOLL_ADAPT_RECHECK): the shortcut takes at most that many minus
 *    one, so the call that starts a check goes through the memo; the
 *    calls it took are added to the decision's count at the next call
 *    that reaches the call layer.
 * Handles are compared, so only predefined datatypes (never freed) arm it;
 * the memo already refuses user operations. Not with
 * MPI_THREAD_MULTIPLE (one state per process, no lock) nor KCOLL_TRACE
 * (each call is traced). The calls it takes are counted in the statistics
 * as the memo counts them, and again in path "shortcut" of their row, when
 * the shortcut is disarmed or the statistics are read (kcoll_shortcut_tally).
 * What the entry point reads lies on the hot page (base/hot.h).
 * KCOLL_SHORTCUT=0 turns it off.
 */
#ifndef KCOLL_CALL_SHORTCUT_H
#define KCOLL_CALL_SHORTCUT_H

#include <stdint.h>
#include <string.h>

#include "base/params.h"
#include "base/stats.h"
#include "call/call.h"

#define KCOLL_SHORTCUT_WORDS 8
/* v arrays compared beside the key: at most this many bytes, which the
 * memo holds of them at most too (call.c) */
#define KCOLL_SHORTCUT_VBYTES 1024
/* ... of which this many ints (counts, then displacements) are held on
 * the shortcut's own line: a communicator of up to 4 ranks compares its
 * Allgatherv's arrays (8 of a Reduce_scatter's counts) without a line
 * or a page more */
#define KCOLL_SHORTCUT_VNEAR 8

/* What the entry point reads and writes of a collective's shortcut: two
 * cache lines on the hot page (base/hot.h), so that a call taken from
 * cold caches and TLB costs one page walk with the generation and the
 * pending count beside it. The calls taken are counted here (used) and
 * reach the statistics later (kcoll_shortcut_tally), not a cell of the
 * statistics' table on every call: another page. */
typedef struct {
    uint64_t key[KCOLL_SHORTCUT_WORDS]; /* the entry point's arguments, as it wrote them */
    uint32_t left;                      /* repeats it may still take (0: disarmed) */
    /* the v arrays of a collective that has them (MPI_Reduce_scatter's
     * counts; MPI_Allgatherv's counts, then displacements): vn arrays of
     * vints ints each, copied from the memo's at the offer (0: none), in
     * near when they fit there, else in kcoll_shortcut_rest_t.v */
    uint32_t vints;
    uint64_t gen;     /* the parameter generation it was armed in */
    uint32_t used;    /* repeats taken, not yet added to the decision */
    uint32_t counted; /* of them, those already in the statistics */
    int vn;
    int near[KCOLL_SHORTCUT_VNEAR];
} __attribute__((aligned(128))) kcoll_shortcut_t;
_Static_assert(sizeof(kcoll_shortcut_t) == 128, "a shortcut is two cache lines");

/* The rest of a collective's shortcut, which only the slow path reads
 * (and the entry point the v arrays that do not fit its line). */
typedef struct {
    int row;  /* the statistics' row of the calls it takes ... */
    int path; /* ... and the path the memo counts them in */
    uint64_t bytes; /* with these bytes each */
    /* what the memo hit of the call being made offers (call.c): arm with
     * this many repeats (0: no offer), counted into decision dkey of team */
    uint32_t offer;
    int dkey;
    kcoll_team_t *team;
    int v[KCOLL_SHORTCUT_VBYTES / sizeof(int)];
} kcoll_shortcut_rest_t;

/* One per collective, for the process (not with MPI_THREAD_MULTIPLE:
 * kcoll_shortcut_allowed); the hot parts on the hot page. */
extern kcoll_shortcut_t kcoll_shortcuts[KCOLL_NCOLL];
extern kcoll_shortcut_rest_t kcoll_shortcut_rests[KCOLL_NCOLL];
/* Set at start-up: no thread calls MPI while another does. */
extern int kcoll_shortcut_allowed;
/* The host MPI's blocking function of each collective (its PMPI_*), which
 * the entry point calls when the shortcut or a kept streak takes the
 * call: held here, on the hot page, and called through (pmpi/pmpi.h,
 * KCOLL_HOST_CALL) rather than through the library's procedure linkage
 * table. From cold caches and TLB (a solver's dot product after its
 * sweep over the matrix), a call through that table first jumps to the
 * table's entry for the function, on a page of code of its own, which
 * reads the function's global offset table entry on a page of data of
 * its own, besides the hot page: two page walks more, some 0.3 us of a
 * 4-5 us call from cold (docs/adapt.md, "From cold"). Set by the
 * entry points' layer when the library is loaded (pmpi/host_calls.c;
 * this layer knows no MPI), as generic function pointers: each is called
 * as the function it is. */
typedef void (*kcoll_host_fn_t)(void);
extern kcoll_host_fn_t kcoll_host_fns[KCOLL_NCOLL];

/* Where the shortcut of collective c holds its v arrays (vn arrays of
 * vints ints): on its own line where they fit there, else in the rest's */
static inline int *kcoll_shortcut_varrays(kcoll_coll_t c)
{
    kcoll_shortcut_t *s = &kcoll_shortcuts[c];
    return (uint32_t)s->vn * s->vints <= KCOLL_SHORTCUT_VNEAR ? s->near : kcoll_shortcut_rests[c].v;
}

/* A blocking call of collective c with arguments key (and its v arrays
 * counts and displs, for a collective that has them; else NULL): 1 when it
 * repeats the armed call (counted: the caller hands it to the host MPI),
 * else 0. The caller checks first that no kcoll request is pending
 * anywhere (the host call must then be driven: pmpi.h). */
static inline int kcoll_shortcut_take(kcoll_coll_t c, const uint64_t key[KCOLL_SHORTCUT_WORDS],
                                      const int *counts, const int *displs)
{
    kcoll_shortcut_t *s = &kcoll_shortcuts[c];
    /* the words compared inline (no call before the host's), each on its
     * own: the loop unrolled (GCC keeps it a loop at -O2) and not
     * vectorized (the entry points are compiled without the vectorizer:
     * CMakeLists.txt says why) */
    uint64_t differ = 0;
#pragma GCC unroll 8
    for (int i = 0; i < KCOLL_SHORTCUT_WORDS; i++)
        differ |= s->key[i] ^ key[i];
    if (!s->left || differ || kcoll_params_generation() != s->gen)
        return 0;
    if (s->vints) {
        const int *v = kcoll_shortcut_varrays(c);
        if (!counts || (s->vn > 1 && !displs))
            return 0;
        /* compared inline, word by word (a call to memcmp cost more than
         * the host's 8-byte Allgatherv's 5%) */
        unsigned diff = 0;
        for (uint32_t i = 0; i < s->vints; i++)
            diff |= (unsigned)(v[i] ^ counts[i]);
        if (s->vn > 1)
            for (uint32_t i = 0; i < s->vints; i++)
                diff |= (unsigned)(v[s->vints + i] ^ displs[i]);
        if (diff)
            return 0;
    }
    s->left--;
    s->used++;
    return 1;
}

/* The calls the shortcuts and the host streaks' fast paths took and the
 * statistics do not hold yet go there (in the path the memo or the streak
 * counts them in, and again in path "shortcut" or "host_streak"): before
 * the statistics are read. */
void kcoll_shortcut_tally(void);

/* After a blocking call of c went to the host MPI: arm the shortcut with
 * its arguments if the call layer offered it (plain: the call's datatypes
 * are predefined ones), and take the offer back either way. */
static inline void kcoll_shortcut_arm(kcoll_coll_t c, const uint64_t key[KCOLL_SHORTCUT_WORDS],
                                      int plain)
{
    kcoll_shortcut_rest_t *r = &kcoll_shortcut_rests[c];
    if (!r->offer)
        return;
    if (plain) {
        memcpy(kcoll_shortcuts[c].key, key, sizeof kcoll_shortcuts[c].key);
        kcoll_shortcuts[c].left = r->offer;
    }
    r->offer = 0;
}

/* Disarm every shortcut (a communicator's record goes: its handle may
 * name another one later), adding the calls they took to their
 * decisions; the host streaks' fast paths too. */
void kcoll_shortcut_forget(void);

/* The host streak's fast path. A blocking MPI_Gatherv, MPI_Scatterv or
 * MPI_Alltoallv that its team's host streak takes (call.c, "the host
 * streak") went through the communicator's record, the team's lock, the
 * statistics' row and path lookups and the trace's check: some 260
 * instructions, 60-80 ns, on a call the host does in 0.1-0.7 us. Once the
 * streak has taken one call of a communicator, the entry point keeps
 * where that streak is (one per collective, for the process): the next
 * call with the same communicator handle reads the team's streak itself
 * (its calls left, root, reason, parameter generation: every rank takes
 * exactly what the slow path would) and counts the call for the two
 * statistics cells the slow path counts into (added to them by
 * kcoll_shortcut_tally, as the shortcut's calls), with the size of the
 * datatype its previous call counted (a predefined one: kept with it), so
 * the entry point makes no call before the host's (pmpi/pmpi.h). Kept under the
 * shortcut's rules: not with MPI_THREAD_MULTIPLE or once a helper thread
 * advances requests (the call layer then locks), not with KCOLL_TRACE,
 * forgotten with the shortcuts (a communicator's record going,
 * MPI_Finalize). */
typedef struct {
    uint64_t comm;              /* the communicator's handle, as a word */
    kcoll_streak_t *k;          /* its team's streak of the collective (NULL: none kept) */
    int why;                    /* the reason the cells count (the streak's when kept) */
    int p, rank;                /* the team's size and this rank in it (its comm's) */
    _Atomic uint64_t *cells[2]; /* statistics: the reason's path, then "host_streak" */
    /* calls taken and their bytes, not yet in cells (kcoll_shortcut_tally) */
    uint64_t calls, bytes;
    /* the datatype (its handle word) the entry point last counted a call
     * of it with, a predefined one (never freed), and its size (0: none) */
    uint64_t type;
    size_t size;
} __attribute__((aligned(128))) kcoll_streak_fast_t;

/* (on the hot page: base/hot.h) */
extern kcoll_streak_fast_t kcoll_streak_fasts[KCOLL_NCOLL];

/* A blocking call of c on the communicator whose handle word is comm, with
 * root: the kept streak when it takes the call (one call of it used; the
 * caller counts it with kcoll_streak_fast_count), else NULL (the slow
 * path decides). */
static inline kcoll_streak_fast_t *kcoll_streak_fast_take(kcoll_coll_t c, uint64_t comm, int root)
{
    kcoll_streak_fast_t *f = &kcoll_streak_fasts[c];
    kcoll_streak_t *k = f->k;
    if (!k || f->comm != comm || !k->left || k->root != root || k->why != f->why ||
        k->gen != kcoll_params_generation() || kcoll_team_threads)
        return NULL;
    k->left--;
    return f;
}

/* The side of a streak's call the statistics count on this rank (rank of
 * its communicator; vcounts, the int form's array of that side): its v
 * side's blocks (1: a root's, an all-to-all's receive counts) or its own
 * block (0) ... */
static inline int kcoll_streak_v(kcoll_coll_t c, int rank, int root, const int *vcounts)
{
    return vcounts && (c == KCOLL_COLL_ALLTOALLV || rank == root);
}
/* ... and its bytes in elements of size bytes: the p blocks of vcounts
 * (v), else count elements. */
static inline size_t kcoll_streak_sum(int v, int p, const int *vcounts, int count, size_t size)
{
    size_t bytes = 0;
    if (!v)
        return count > 0 ? (size_t)count * size : 0;
    for (int q = 0; q < p; q++)
        bytes += vcounts[q] > 0 ? (size_t)vcounts[q] * size : 0;
    return bytes;
}

static inline void kcoll_streak_fast_count(kcoll_streak_fast_t *f, size_t bytes)
{
    f->calls++; /* into the statistics later, as the shortcut's calls */
    f->bytes += bytes;
}

/* After the slow path's streak on team t took a call of c on the
 * communicator of handle word comm: keep it for the fast path (where the
 * rules allow). */
void kcoll_streak_fast_keep(kcoll_team_t *t, kcoll_coll_t c, uint64_t comm);

/* The same fast path while kcoll is disabled (KCOLL_DISABLE): a blocking
 * MPI_Gatherv, MPI_Scatterv or MPI_Alltoallv then goes to the host, and a
 * disabled kcoll keeps no team to hold a streak, nor a record of the
 * communicator whose going would say that its handle may name another
 * one. So the entry point asks the host for the communicator's size and
 * this rank (mpi/handed.c: kcoll_off_count) and counts into the statistics
 * cell kept here, valid while the parameter generation is the one it was
 * kept in (any parameter changed: the slow path decides again and keeps
 * it anew). Under the kept streak's rules. */
typedef struct {
    uint64_t gen;                          /* the parameter generation kept in */
    _Atomic uint64_t *cells[KCOLL_NCOLL]; /* path mpi:disabled of each collective's row */
} kcoll_off_fast_t;

extern kcoll_off_fast_t kcoll_off_fast;

/* After the slow path handed a blocking call of c to the host because
 * kcoll is disabled: keep the fast path for c (where the rules allow). */
void kcoll_off_fast_keep(kcoll_coll_t c);

#endif
