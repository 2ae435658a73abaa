/* The default rules: which algorithm runs where no KCOLL_<FAMILY>_ALGO
 * forces one, until the cost model (paper 003 "Tuned CMA") prices every
 * candidate. First match wins; sizes are per block for blocked
 * collectives (the largest block of a v-variant), per vector for Reduce
 * and Allreduce, per block for Reduce_scatter(_block). The reasoning:
 *
 * MPI_Bcast
 *  - a team whose ranks span several NUMA domains or packages (topology
 *    levels), p > 2: hier, the tree along the levels with 16 KiB / 512 KiB
 *    segments. Paper 000 (section IV, a 48-core 8-NUMA machine) measured
 *    the two-level NUMA tree 2.2-2.4x faster than reading from the root
 *    and pipelining up to 1.25x more; every copy but the top level's stays
 *    inside a domain. (Not measured here: this machine has one domain.)
 *  - p = 2: split_rw. The root's core would otherwise idle while the one
 *    reader copies; splitting the copy between both cores is the fastest
 *    single-copy broadcast between two processes (docs/benchmarks.md).
 *  - p > 2, n < 1 MiB: knomial with k = 4. Paper 003 (Fig. 11) finds
 *    k-nomial reading better than direct read or write on every machine:
 *    at most k-1 readers per process keeps page-lock contention low while
 *    the tree is only ceil(log_4 p) rounds deep.
 *  - p > 2, n >= 1 MiB: scatter_allgather. For large messages its
 *    contention-free ring of n/p-byte reads wins (paper 003 Fig. 11).
 *
 * MPI_Scatter(v)
 *  - p <= 5, or blocks below 64 KiB: parallel_read. At most four readers
 *    contend on the root's pages, which paper 003 (Fig. 7) finds harmless,
 *    and every reader starts at once while the root copies its own block
 *    in parallel; with few pages per block throttling's chained flags
 *    would only add latency ("throttled read performs worse for small
 *    messages due to the synchronization overhead").
 *  - otherwise throttled_read with k = 4, the throttle factor paper 003
 *    finds best for medium and large messages on Broadwell and close to it
 *    on KNL. sequential_write is never the default: it serializes every
 *    copy on the root's core.
 * MPI_Gather(v): the mirror image (paper 003 Fig. 8: Gather's trends are
 * "very similar to their Scatter counterparts"): parallel_write, else
 * throttled_write with k = 4.
 *
 * MPI_Allgather(v)
 *  - p = 2: ring_source_write. Both ranks write their block into the other
 *    while the other does the same: measured 10-30% faster than reading
 *    from 16 KiB to 1 MiB per block (docs/allcoll.md).
 *  - p > 2, blocks of 64 KiB or more: ring_source_read: nothing is
 *    forwarded, one reader per process per step (paper 003's best
 *    large-message Allgather), and reading keeps the copy on the core
 *    that uses the data (paper 000).
 *  - p > 2, smaller blocks: bruck: ceil(log2 p) rounds instead of p-1.
 *
 * MPI_Alltoall(v): pairwise (one single copy per block, read by the
 * receiver, one reader per process per step, paper 003 IV.C.1), except
 * bruck below 4 KiB per block with p > 2 (ceil(log2 p) rounds; only
 * reached with KCOLL_MIN_BYTES lowered).
 *
 * MPI_Barrier: with topology levels and p > 2, hier (arrive up the tree,
 * leave down it: each flag polled within its domain but at the top);
 * otherwise dissemination.
 *
 * MPI_Reduce: the host MPI below 256 KiB (Open MPI's Reduce, one message
 * into the root, was as fast or faster than partitioned's two synchronized
 * phases at 2 ranks: 0.76-1.1x from 16 to 512 KiB, 1.05-1.12x from 1 MiB,
 * docs/benchmarks.md; with MPICH, whose Reduce is 1.4-4x slower there,
 * KCOLL_REDUCE_ALGO=partitioned uses kcoll from KCOLL_MIN_BYTES), then
 * partitioned: it spreads the copying and the arithmetic over all p cores
 * (paper 004 Fig. 7) in kcoll's fixed order, so non-commutative
 * operations are served too.
 * MPI_Allreduce: the host MPI below 32 KiB (MPICH's shared-memory eager
 * path was 1.2x faster at 16 KiB, docs/reductions.md), then partitioned:
 * each rank moves 2n(p-1)/p bytes, the bandwidth optimum (paper 004 IV.C).
 * With topology levels and p > 2, from 32 KiB: hier (partitioned inside
 * each group, up the levels, then back down): every copy but the outer
 * leaders' stays inside a NUMA domain or package, where flat partitioned
 * has p-1 readers of every process across the interconnect. Chosen by
 * that argument (paper 000 section IV's, for reductions), not measured:
 * this machine has one domain; the cost model is to price it.
 * MPI_Reduce_scatter(_block): partitioned, the only one: each rank reads
 * exactly its own block from every peer.
 */
#include "model/select.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

const kcoll_rule_t kcoll_default_rules[] = {
    {KCOLL_COLL_BCAST, 3, 0, 0, 0, "hier", 1},
    {KCOLL_COLL_BCAST, 2, 2, 0, 0, "split_rw", 0},
    {KCOLL_COLL_BCAST, 3, 0, 0, MiB, "knomial:k=4", 0},
    {KCOLL_COLL_BCAST, 3, 0, MiB, 0, "scatter_allgather", 0},

    {KCOLL_COLL_SCATTER, 2, 5, 0, 0, "parallel_read", 0},
    {KCOLL_COLL_SCATTER, 6, 0, 0, 64 * KiB, "parallel_read", 0},
    {KCOLL_COLL_SCATTER, 6, 0, 64 * KiB, 0, "throttled_read:k=4", 0},
    {KCOLL_COLL_GATHER, 2, 5, 0, 0, "parallel_write", 0},
    {KCOLL_COLL_GATHER, 6, 0, 0, 64 * KiB, "parallel_write", 0},
    {KCOLL_COLL_GATHER, 6, 0, 64 * KiB, 0, "throttled_write:k=4", 0},

    {KCOLL_COLL_ALLGATHER, 2, 2, 0, 0, "ring_source_write", 0},
    {KCOLL_COLL_ALLGATHER, 3, 0, 64 * KiB, 0, "ring_source_read", 0},
    {KCOLL_COLL_ALLGATHER, 3, 0, 0, 64 * KiB, "bruck", 0},
    {KCOLL_COLL_ALLTOALL, 3, 0, 0, 4 * KiB, "bruck", 0},
    {KCOLL_COLL_ALLTOALL, 2, 0, 0, 0, "pairwise", 0},
    {KCOLL_COLL_BARRIER, 3, 0, 0, 0, "hier", 1},
    {KCOLL_COLL_BARRIER, 2, 0, 0, 0, "dissemination", 0},

    {KCOLL_COLL_REDUCE, 2, 0, 0, 256 * KiB, "host", 0},
    {KCOLL_COLL_REDUCE, 2, 0, 256 * KiB, 0, "partitioned:chunk=128", 0},
    {KCOLL_COLL_ALLREDUCE, 2, 0, 0, 32 * KiB, "host", 0},
    {KCOLL_COLL_ALLREDUCE, 3, 0, 32 * KiB, 0, "hier:chunk=128", 1},
    {KCOLL_COLL_ALLREDUCE, 2, 0, 32 * KiB, 0, "partitioned:chunk=128", 0},
    {KCOLL_COLL_REDUCE_SCATTER, 2, 0, 0, 0, "partitioned:chunk=128", 0},
};
const int kcoll_ndefault_rules = (int)(sizeof kcoll_default_rules / sizeof kcoll_default_rules[0]);
