/* Pieces shared by the reduction algorithms (coll/reduce/, coll/allreduce/,
 * coll/reduce_scatter/): the geometry of the vector and the chunked
 * reduction of one range of it in kcoll's fixed order.
 *
 * Reduction order. For every element, the result is
 *     r_0 op (r_1 op (... op (r_{p-2} op r_{p-1})))
 * computed right to left: the accumulator starts as rank p-1's element and
 * rank q's element is applied as acc = r_q op acc for q = p-2, ..., 0 (the
 * argument order of an MPI user function, invec op inoutvec). Every element
 * is reduced by exactly one rank, in this order, whatever algorithm, root
 * or chunk size: the bits of a floating-point result depend only on the
 * inputs and p, and every rank of an Allreduce gets the same bits. For a
 * non-commutative operation this is MPI's order (MPI assumes operations
 * are associative).
 */
#ifndef KCOLL_REDUCE_COMMON_H
#define KCOLL_REDUCE_COMMON_H

#include "coll/coll.h"

/* Bytes of the whole vector: count elements (Reduce, Allreduce), p blocks
 * of count (Reduce_scatter_block) or the sum of counts (Reduce_scatter). */
size_t kcoll_red_vector(const kcoll_args_t *a);
/* Rank q's slice of the vector, in bytes: its block for the
 * Reduce_scatter family, else a 1/p share cut on whole elements (cache
 * lines where the element size allows). */
void kcoll_red_slice(const kcoll_args_t *a, int q, size_t *off, size_t *len);
/* Chunk size in bytes: prm.chunk KiB, a whole number of elements. */
size_t kcoll_red_chunk(const kcoll_args_t *a);

/* Where the reduced chunks of a range go. */
typedef struct {
    kcoll_buf_t acc;  /* accumulator buffer, when not staged */
    size_t acc_off;   /* offset of the range's first byte in it */
    int staged;       /* accumulate each chunk in TMP[chunk..2*chunk), then deliver it: */
    int peer;         /*   -1: COPY to the local dst; else WRITE to this peer's dst */
    kcoll_buf_t dst;
    size_t dst_off;
} kcoll_red_dest_t;

/* Append this rank's steps that reduce bytes [off, off+len) of the vector
 * over all ranks' SEND buffers, in kcoll's order, chunk by chunk: the
 * accumulator chunk is initialized from rank p-1 (a READ straight into it;
 * rank p-1 itself reads rank p-2's chunk and reduces its own in with the
 * operands reversed, acc = acc op r_{p-1}, which saves copying its SEND;
 * a user function cannot be reversed, so there it COPYs), and each other
 * rank's chunk is READ
 * into TMP[0..chunk) and REDUCEd into it (a staged READ: where the direct
 * engine maps q's SEND, the executor reduces from it in place; this
 * rank's own chunk is reduced from SEND directly). Every peer must have
 * exposed SEND. */
void kcoll_red_range(const kcoll_args_t *a, kcoll_sched_t *s, size_t off, size_t len,
                     const kcoll_red_dest_t *d);
/* The same reduction with the peers' chunks read in a staggered order
 * (coll/reduce/staggered.c): rank r reads rank r+1's chunk first, then
 * r+2's, ..., each into its own slot of TMP from
 * kcoll_reduce_tmp_len(a) on, and reduces them in kcoll's order once all
 * are in. */
void kcoll_red_range_staggered(const kcoll_args_t *a, kcoll_sched_t *s, size_t off, size_t len,
                               const kcoll_red_dest_t *d);
typedef void (*kcoll_red_range_fn)(const kcoll_args_t *a, kcoll_sched_t *s, size_t off,
                                   size_t len, const kcoll_red_dest_t *d);
/* The partitioned reduction's schedule (coll/reduce/partitioned.c), each
 * rank's slice reduced by `range`. */
kcoll_status_t kcoll_reduce_sliced(const kcoll_args_t *a, kcoll_sched_t *s,
                                   kcoll_red_range_fn range);

/* Do the hierarchical reductions combine by levels (else they run the
 * flat partitioned algorithm)? Where the team has levels, p > 1, and the
 * operation commutes (the predefined ones) or every group is a run of
 * consecutive ranks (then combining the groups in order is rank order). */
int kcoll_red_by_levels(const kcoll_args_t *a);

/* The hierarchical reduction up the levels to `root` (reduce/hier.c) of
 * the whole vector (kcoll_red_vector), one partitioned Reduce per group
 * and level, flag values from 0 to (lv->n + 1) * KCOLL_PHASE_VALUES: the
 * result lands in root's RECV, or with res_tmp in its TMP at
 * kcoll_red_up_tmp's offset (where every rank, the root too, keeps its
 * partial results: a Reduce_scatter's root has no room for the vector in
 * RECV). For teams with levels (kcoll_red_by_levels). */
void kcoll_red_up(const kcoll_args_t *a, kcoll_sched_t *s, int root, int res_tmp);
/* TMP bytes this rank needs for it: two chunks of scratch (the
 * partitioned algorithm's), then, from kcoll_red_up_off on, the vector
 * where the rank keeps partial results. */
size_t kcoll_red_up_tmp(const kcoll_args_t *a, int root, int res_tmp);
size_t kcoll_red_up_off(const kcoll_args_t *a);

/* Wait until every other rank has raised `flag` to 1. */
void kcoll_red_wait_all(const kcoll_args_t *a, kcoll_sched_t *s, kcoll_flag_t flag);

#endif
