/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter:
 * the partitioned reduction (partitioned.c) with its reads staggered, so
 * that every rank is read by one peer at a time.
 *
 * In the partitioned reduction every rank reduces its own slice reading
 * the peers' chunks in kcoll's order, rank p-1 first, then p-2, ...: at
 * each step all p-1 readers read the same process, the case paper 003
 * (section III, Fig. 5) shows slowing each reader as their number grows
 * (gamma_{p-1}: the readers contend for that process's page-table lock).
 * Here rank r reads, for each chunk of its slice,
 *  1. the peers' chunks in the order r+1, r+2, ..., r-1 (mod p): at step
 *     i every rank is read by rank r-i alone, one reader per process, as
 *     in the pairwise all-to-all. Rank p-1's chunk goes straight into the
 *     accumulator, every other into a slot of its own in TMP (after what
 *     partitioned.c uses: the incoming chunk and the staged accumulator);
 *     rank p-1 itself copies its own chunk into the accumulator;
 *  2. then reduces the slots in kcoll's order, acc = r_q op acc for
 *     q = p-2 down to 0 (its own chunk from SEND): the same expression,
 *     so the same bits, as every other reduction (docs/reductions.md), for
 *     user operations too.
 * Delivery (the Allreduce's slices read from their owners, the Reduce's
 * chunks written to the root, MPI_IN_PLACE) is partitioned.c's.
 *
 * Cost (m = n/p, c = chunk, w = per-byte reduction time): phase 1 as
 * partitioned's with gamma_1 for gamma_{p-1}:
 *   ceil(m/c) * (p-1) * (alpha + c*beta + l*gamma_1*ceil(c/s)) + (p-1)*m*w
 * plus the delivery. The price: (p-1)*c bytes of scratch (the chunk is
 * cut so that they stay within KCOLL_STAGGER_SLOTS, 2 MiB), a chunk's
 * reads all done before its reductions (no overlap of a read with the
 * reduction of the previous one), and no reducing straight from a mapped
 * peer (the direct engine's staged reads): where readers do not contend
 * (2 ranks, few pages) partitioned stays the cheaper and the model picks
 * it. Any p, root, count, predefined or user operation.
 */
#include "coll/reduce/common.h"

#define KCOLL_STAGGER_SLOTS ((size_t)2 << 20)

/* The call with its chunk cut so that p-1 slots fit KCOLL_STAGGER_SLOTS. */
static kcoll_args_t kcoll_stagger_view(const kcoll_args_t *a)
{
    kcoll_args_t b = *a;
    if (a->p > 1) {
        int kib = (int)(KCOLL_STAGGER_SLOTS / 1024 / (size_t)(a->p - 1));
        if (kib < 4)
            kib = 4;
        if (b.prm.chunk <= 0 || b.prm.chunk > kib)
            b.prm.chunk = kib;
    }
    return b;
}

size_t kcoll_reduce_staggered_tmp(const kcoll_args_t *a)
{
    const kcoll_args_t b = kcoll_stagger_view(a);
    return kcoll_reduce_tmp_len(&b) + (size_t)(b.p > 1 ? b.p - 1 : 0) * kcoll_red_chunk(&b);
}

/* Rank q's slot, from byte base of TMP: peers in rank order, this rank
 * (r) left out. */
static size_t kcoll_stagger_slot(size_t base, int r, int q, size_t c)
{
    return base + (size_t)(q < r ? q : q - 1) * c;
}

void kcoll_red_range_staggered(const kcoll_args_t *a, kcoll_sched_t *s, size_t off, size_t len,
                               const kcoll_red_dest_t *d)
{
    const int p = a->p, r = a->rank;
    const size_t c = kcoll_red_chunk(a), base = kcoll_reduce_tmp_len(a);
    for (size_t x = 0; x < len; x += c) {
        const size_t m = len - x < c ? len - x : c;
        const kcoll_buf_t ab = d->staged ? KCOLL_BUF_TMP : d->acc;
        const size_t ao = d->staged ? c : d->acc_off + x;
        /* 1: acc = r_{p-1}; the others into their slots, one reader each */
        if (r == p - 1)
            kcoll_sched_copy(s, ab, ao, KCOLL_BUF_SEND, off + x, m);
        for (int i = 1; i < p; i++) {
            const int q = (r + i) % p;
            if (q == p - 1)
                kcoll_sched_read(s, q, KCOLL_BUF_SEND, off + x, ab, ao, m);
            else
                kcoll_sched_read(s, q, KCOLL_BUF_SEND, off + x, KCOLL_BUF_TMP,
                                 kcoll_stagger_slot(base, r, q, c), m);
        }
        /* 2: acc = r_q op acc, q = p-2 .. 0 */
        for (int q = p - 2; q >= 0; q--) {
            if (q == r)
                kcoll_sched_reduce(s, ab, ao, KCOLL_BUF_SEND, off + x, m);
            else
                kcoll_sched_reduce(s, ab, ao, KCOLL_BUF_TMP, kcoll_stagger_slot(base, r, q, c), m);
        }
        if (d->staged && d->peer < 0)
            kcoll_sched_copy(s, d->dst, d->dst_off + x, KCOLL_BUF_TMP, c, m);
        else if (d->staged)
            kcoll_sched_write(s, d->peer, d->dst, d->dst_off + x, KCOLL_BUF_TMP, c, m);
    }
}

kcoll_status_t kcoll_reduce_staggered(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const kcoll_args_t b = kcoll_stagger_view(a);
    return kcoll_reduce_sliced(&b, s, kcoll_red_range_staggered);
}
