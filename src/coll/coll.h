/* Collectives, their algorithms and the descriptors that name them.
 *
 * Every algorithm is one builder function in its own file under
 * src/coll/<family>/: given the arguments of one rank it appends that
 * rank's steps to a schedule (sched/sched.h). Its descriptor (the table in
 * coll/registry.c) says everything the layers above need to know about it
 * without knowing the algorithm: its name (KCOLL_<FAMILY>_ALGO, kcoll-info,
 * the statistics), its parameters with their ranges and defaults, the
 * scratch memory (TMP) a rank needs, for which process counts and
 * parameters it is valid, and which transfer engines it can run on.
 */
#ifndef KCOLL_COLL_H
#define KCOLL_COLL_H

#include <stddef.h>

#include "coll/levels.h"
#include "sched/runs.h"
#include "sched/sched.h"
#include "xfer/engine.h"

/* Every intercepted collective has its own statistics rows. A v-variant
 * shares the algorithms and the KCOLL_<FAMILY>_ALGO variable of its family
 * (MPI_Scatterv: the MPI_Scatter algorithms, KCOLL_SCATTER_ALGO). */
typedef enum {
    KCOLL_COLL_BCAST = 0,
    KCOLL_COLL_SCATTER,
    KCOLL_COLL_SCATTERV,
    KCOLL_COLL_GATHER,
    KCOLL_COLL_GATHERV,
    KCOLL_COLL_ALLGATHER,
    KCOLL_COLL_ALLGATHERV,
    KCOLL_COLL_ALLTOALL,
    KCOLL_COLL_ALLTOALLV,
    KCOLL_COLL_BARRIER,
    KCOLL_COLL_REDUCE,
    KCOLL_COLL_ALLREDUCE,
    KCOLL_COLL_REDUCE_SCATTER_BLOCK,
    KCOLL_COLL_REDUCE_SCATTER,
    KCOLL_NCOLL
} kcoll_coll_t;

/* Layout of one rank's blocked buffers in a v-variant, in bytes: block j
 * of its SEND buffer is sdispl[j]..+scount[j], of its RECV buffer
 * rdispl[j]..+rcount[j] (j = 0..p-1, team ranks). Arrays a collective
 * does not use on that rank are NULL. */
typedef struct {
    const size_t *scount, *sdispl;
    const size_t *rcount, *rdispl;
} kcoll_layout_t;

/* An algorithm's parameters, by name. Each algorithm uses the fields its
 * descriptor lists; the others are 0. */
typedef struct {
    int k;     /* k-nomial fan-out; readers or writers at a time (throttled) */
    int j;     /* ring stride (ring_neighbor) */
    int chunk; /* KiB per reduction chunk */
} kcoll_aparam_t;

/* What a builder needs to know about one rank's call. Team ranks.
 *
 * Builders see the same global view on every rank (that is what makes the
 * schedules of all ranks fit together): everything here except `rank`
 * and the root's `in_place` is identical on all ranks of one call. */
typedef struct {
    kcoll_coll_t coll;
    int p;        /* processes in the team */
    int rank;     /* this rank */
    int root;     /* root of rooted collectives */
    /* Bcast: the whole message. Uniform blocked collectives (Scatter,
     * Gather, Allgather, Alltoall): the bytes of one block. */
    size_t bytes;
    /* v-variants: lay[q] is rank q's layout (all p ranks, so a rank can
     * address a block in a peer's buffer). NULL for uniform collectives:
     * then block j of a blocked buffer is j*bytes..+bytes. */
    const kcoll_layout_t *lay;
    /* MPI_IN_PLACE as passed by this rank. For rooted collectives only the
     * root's matters and only the root knows it: the schedules of the
     * other ranks must not depend on it. */
    int in_place;
    kcoll_aparam_t prm; /* the algorithm's parameters, defaulted and valid */
    /* Reductions: count is the whole vector for Reduce and Allreduce and
     * one block for Reduce_scatter_block (counts NULL); for
     * Reduce_scatter, counts[q] is rank q's block (all ranks know them). */
    size_t count;                /* elements */
    size_t esize;                /* bytes per element */
    const size_t *counts;
    /* Reductions: the operation REDUCE steps apply (op/op.h), identical on
     * all ranks. */
    const struct kcoll_op *op;
    /* The team's topology levels (coll/levels.h), identical on all ranks;
     * NULL or flat: none. Only the hierarchical algorithms read them. */
    const kcoll_levels_t *lv;
} kcoll_args_t;

/* Bytes and offset of block j of rank q's SEND (RECV) buffer, for blocked
 * buffers: from the layouts of a v-variant, else j*bytes..+bytes. */
static inline size_t kcoll_sblock(const kcoll_args_t *a, int q, int j, size_t *off)
{
    if (a->lay) {
        *off = a->lay[q].sdispl[j];
        return a->lay[q].scount[j];
    }
    *off = (size_t)j * a->bytes;
    return a->bytes;
}
static inline size_t kcoll_rblock(const kcoll_args_t *a, int q, int j, size_t *off)
{
    if (a->lay) {
        *off = a->lay[q].rdispl[j];
        return a->lay[q].rcount[j];
    }
    *off = (size_t)j * a->bytes;
    return a->bytes;
}

typedef kcoll_status_t (*kcoll_builder_fn)(const kcoll_args_t *a, kcoll_sched_t *s);

/* One parameter of an algorithm: "k" in KCOLL_BCAST_ALGO=knomial:k=4. */
typedef struct {
    const char *name; /* NULL ends a descriptor's list */
    size_t field;     /* offsetof(kcoll_aparam_t, ...) */
    int def, min, max;
} kcoll_pdesc_t;

#define KCOLL_ALGO_MAX_PARAMS 3

typedef struct kcoll_algo {
    kcoll_coll_t family;    /* the non-v collective of the family */
    const char *name;       /* as in KCOLL_BCAST_ALGO=<name> */
    kcoll_builder_fn build;
    kcoll_pdesc_t params[KCOLL_ALGO_MAX_PARAMS];
    /* Bytes of TMP this rank needs (NULL: none), from the builder's view. */
    size_t (*tmp)(const kcoll_args_t *a);
    /* Valid for p processes with these parameters? NULL: always. Else 0,
     * or -1 with a one-line reason naming the value and p in why. */
    int (*check)(int p, const kcoll_aparam_t *prm, char *why, size_t whylen);
    unsigned engines;       /* the KCOLL_ENGINE_BIT()s it can run on */
    /* 1: it follows the team's topology levels; on a team without levels
     * it is (or falls back to) another algorithm of its family */
    int levels;
    const char *help;       /* one line */
} kcoll_algo_t;

extern const kcoll_algo_t kcoll_algos[];
extern const int kcoll_nalgos;

const char *kcoll_coll_name(kcoll_coll_t c);  /* "MPI_Bcast" */
/* Is c a reduction (an operation combines the ranks' data)? */
static inline int kcoll_coll_reduces(kcoll_coll_t c)
{
    return c == KCOLL_COLL_REDUCE || c == KCOLL_COLL_ALLREDUCE ||
           c == KCOLL_COLL_REDUCE_SCATTER_BLOCK || c == KCOLL_COLL_REDUCE_SCATTER;
}
/* "MPI_Bcast" or "Bcast", in any case: the collective, or KCOLL_NCOLL. */
kcoll_coll_t kcoll_coll_by_name(const char *name);
kcoll_coll_t kcoll_coll_family(kcoll_coll_t c); /* MPI_Scatterv -> MPI_Scatter */
const char *kcoll_coll_env(kcoll_coll_t c);   /* "BCAST": KCOLL_<this>_ALGO (of the family) */
/* Is c a v-variant (per-rank counts and displacements)? */
int kcoll_coll_is_v(kcoll_coll_t c);
int kcoll_algo_index(const kcoll_algo_t *a);  /* position in kcoll_algos */
const kcoll_algo_t *kcoll_algo_find(kcoll_coll_t c, const char *name);
/* The field of prm that parameter d names. */
static inline int *kcoll_aparam_field(kcoll_aparam_t *prm, const kcoll_pdesc_t *d)
{
    return (int *)(void *)((char *)prm + d->field);
}
/* prm set to a's defaults. */
void kcoll_algo_defaults(const kcoll_algo_t *a, kcoll_aparam_t *prm);
/* Parse "<name>[:<param>=<N>[,<param>=<N>...]]" for collective c: the
 * algorithm and its parameters (defaults where not given, ranges checked).
 * "auto" or "" gives *algo = NULL. Returns 0, or -1 with a one-line reason
 * in err. Validity for a process count is the descriptor's check. */
int kcoll_algo_parse(kcoll_coll_t c, const char *spec, const kcoll_algo_t **algo,
                     kcoll_aparam_t *prm, char *err, size_t errlen);
/* "knomial:k=4": the name and the values of its parameters. */
void kcoll_algo_spec(const kcoll_algo_t *a, const kcoll_aparam_t *prm, char *out, size_t outlen);

/* Relative rank: the root is 0, the others follow in rank order. */
static inline int kcoll_rel(const kcoll_args_t *a, int rank)
{
    return (rank - a->root + a->p) % a->p;
}
static inline int kcoll_abs(const kcoll_args_t *a, int rel)
{
    return (rel + a->root) % a->p;
}

/* Split n bytes into `parts` pieces whose boundaries fall on cache lines
 * (on pages once a piece is at least a few pages): piece i is
 * [*off, *off + *len). Later pieces may be empty. */
void kcoll_split(size_t n, int parts, int i, size_t *off, size_t *len);

/* Builders. */
kcoll_status_t kcoll_bcast_direct_read(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_direct_write(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_knomial(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_scatter_allgather(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_split_rw(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_hier(const kcoll_args_t *a, kcoll_sched_t *s);

/* -- Scatter, Gather (and v) builders -- */
/* The root's blocked buffer is SEND (Scatter) / RECV (Gather), a
 * non-root's one block RECV (Scatter) / SEND (Gather) at offset 0; block
 * sizes and places come from kcoll_sblock / kcoll_rblock of the root. */
kcoll_status_t kcoll_scatter_parallel_read(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_scatter_sequential_write(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_scatter_throttled_read(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_gather_parallel_write(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_gather_sequential_read(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_gather_throttled_write(const kcoll_args_t *a, kcoll_sched_t *s);
/* hier: along the tree of the levels; TMP: a leader's subtree's blocks */
kcoll_status_t kcoll_scatter_hier(const kcoll_args_t *a, kcoll_sched_t *s);
size_t kcoll_scatter_hier_tmp(const kcoll_args_t *a);
kcoll_status_t kcoll_gather_hier(const kcoll_args_t *a, kcoll_sched_t *s);
size_t kcoll_gather_hier_tmp(const kcoll_args_t *a);
/* The rooted movers are one builder each with a direction (the files of
 * coll/rooted): a scatter's root holds the blocked buffer in SEND and
 * every rank's block goes to its RECV; a gather's is RECV, filled from
 * every rank's SEND. */
typedef enum { KCOLL_ROOTED_SCATTER, KCOLL_ROOTED_GATHER } kcoll_rooted_dir_t;
/* The root's blocked buffer; a non-root's own (one block at offset 0). */
static inline kcoll_buf_t kcoll_rooted_blocked(kcoll_rooted_dir_t d)
{
    return d == KCOLL_ROOTED_SCATTER ? KCOLL_BUF_SEND : KCOLL_BUF_RECV;
}
static inline kcoll_buf_t kcoll_rooted_own(kcoll_rooted_dir_t d)
{
    return d == KCOLL_ROOTED_SCATTER ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
}
/* Rank q's block: its bytes, and its place in the root's blocked buffer. */
static inline size_t kcoll_rooted_block(const kcoll_args_t *a, kcoll_rooted_dir_t d, int q,
                                        size_t *off)
{
    return d == KCOLL_ROOTED_SCATTER ? kcoll_sblock(a, a->root, q, off)
                                     : kcoll_rblock(a, a->root, q, off);
}
/* The root's own block, copied from its place in the blocked buffer to its
 * receive buffer (scatter) or from its send buffer into its place there
 * (gather); nothing with MPI_IN_PLACE, where it already lies there. */
static inline void kcoll_rooted_copy_own(const kcoll_args_t *a, kcoll_sched_t *s,
                                         kcoll_rooted_dir_t d)
{
    size_t off, len;
    if (!a->in_place) {
        len = kcoll_rooted_block(a, d, a->root, &off);
        if (d == KCOLL_ROOTED_SCATTER)
            kcoll_sched_copy(s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, off, len);
        else
            kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
    }
}
/* A non-root moves its own block, len bytes at off in the root's blocked
 * buffer: a scatter's reads it from the root, a gather's writes it there. */
static inline void kcoll_rooted_peer_moves(const kcoll_args_t *a, kcoll_sched_t *s,
                                           kcoll_rooted_dir_t d, size_t off, size_t len)
{
    if (d == KCOLL_ROOTED_SCATTER)
        kcoll_sched_read(s, a->root, KCOLL_BUF_SEND, off, KCOLL_BUF_RECV, 0, len);
    else
        kcoll_sched_write(s, a->root, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
}
/* The root moves non-root q's block: writes it into q's receive buffer
 * (scatter) or reads it from q's send buffer (gather). */
static inline void kcoll_rooted_root_moves(kcoll_sched_t *s, kcoll_rooted_dir_t d, int q,
                                           size_t off, size_t len)
{
    if (d == KCOLL_ROOTED_SCATTER)
        kcoll_sched_write(s, q, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, off, len);
    else
        kcoll_sched_read(s, q, KCOLL_BUF_SEND, 0, KCOLL_BUF_RECV, off, len);
}

/* -- Allgather, Alltoall (and v), Barrier builders -- */
kcoll_status_t kcoll_allgather_gather_bcast(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allgather_ring_neighbor(const kcoll_args_t *a, kcoll_sched_t *s);
/* Is ring_neighbor's j valid for p ranks (gcd(p, j) = 1)? */
int kcoll_allgather_ring_neighbor_check(int p, const kcoll_aparam_t *prm, char *why,
                                        size_t whylen);
kcoll_status_t kcoll_allgather_ring_source_read(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allgather_ring_source_write(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allgather_recursive_doubling(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allgather_bruck(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allgather_hier(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allgather_ring_levels(const kcoll_args_t *a, kcoll_sched_t *s);
/* ring_neighbor's ring over the ranks in order[0..p) (a permutation; this
 * rank is order[pos]): step i reads from the predecessor the block it got
 * in step i-1. */
kcoll_status_t kcoll_allgather_ring_order(const kcoll_args_t *a, kcoll_sched_t *s,
                                          const int *order, int pos);
kcoll_status_t kcoll_alltoall_pairwise(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_alltoall_pairwise_write(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_alltoall_bruck(const kcoll_args_t *a, kcoll_sched_t *s);
/* TMP bytes: bruck's two areas; the pairwise ones in place: a copy of the
 * receive buffer. */
size_t kcoll_alltoall_bruck_tmp(const kcoll_args_t *a);
size_t kcoll_alltoall_in_place_tmp(const kcoll_args_t *a);
kcoll_status_t kcoll_barrier_dissemination(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_barrier_hier(const kcoll_args_t *a, kcoll_sched_t *s);

/* The start every Allgather builder but the ring_source ones shares:
 * expose SEND (unless in place) and RECV, and copy this rank's own block
 * from SEND to its place in RECV (unless in place). */
static inline void kcoll_allgather_own_block(const kcoll_args_t *a, kcoll_sched_t *s)
{
    if (!a->in_place)
        kcoll_sched_expose(s, KCOLL_BUF_SEND);
    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    if (!a->in_place) {
        size_t off, len = kcoll_rblock(a, a->rank, a->rank, &off);
        kcoll_sched_copy(s, KCOLL_BUF_RECV, off, KCOLL_BUF_SEND, 0, len);
    }
}

/* Allgather: where rank q's own block lies in q's buffers: RECV block q
 * in place (MPI_IN_PLACE is passed by all ranks or none), else SEND at 0. */
static inline kcoll_buf_t kcoll_ag_own(const kcoll_args_t *a, int q, size_t *off)
{
    if (a->in_place) {
        kcoll_rblock(a, q, q, off);
        return KCOLL_BUF_RECV;
    }
    *off = 0;
    return KCOLL_BUF_SEND;
}

/* Alltoall: where block j (for rank j) of rank q's send data lies: SEND
 * block j, or in place (all ranks or none pass MPI_IN_PLACE) block j of
 * q's private TMP copy of its receive buffer, at the RECV offsets. */
static inline kcoll_buf_t kcoll_a2a_src(const kcoll_args_t *a, int q, int j, size_t *off,
                                        size_t *len)
{
    if (a->in_place) {
        *len = kcoll_rblock(a, q, j, off);
        return KCOLL_BUF_TMP;
    }
    *len = kcoll_sblock(a, q, j, off);
    return KCOLL_BUF_SEND;
}
/* In place: copy the receive blocks other than the rank's own to TMP. */
void kcoll_a2a_save(const kcoll_args_t *a, kcoll_sched_t *s);

/* -- Reduce, Allreduce, Reduce_scatter(_block) builders -- */
/* partitioned serves all four collectives (a->coll says which) */
kcoll_status_t kcoll_reduce_partitioned(const kcoll_args_t *a, kcoll_sched_t *s);
/* staggered too: partitioned with the peers read one reader at a time */
kcoll_status_t kcoll_reduce_staggered(const kcoll_args_t *a, kcoll_sched_t *s);
size_t kcoll_reduce_staggered_tmp(const kcoll_args_t *a);
kcoll_status_t kcoll_reduce_serial(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_reduce_hier(const kcoll_args_t *a, kcoll_sched_t *s);
size_t kcoll_reduce_hier_tmp(const kcoll_args_t *a);
kcoll_status_t kcoll_reduce_scatter_hier(const kcoll_args_t *a, kcoll_sched_t *s);
size_t kcoll_reduce_scatter_hier_tmp(const kcoll_args_t *a);
kcoll_status_t kcoll_allreduce_reduce_bcast(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_allreduce_hier(const kcoll_args_t *a, kcoll_sched_t *s);
/* Bytes of TMP (scratch) a reduction schedule of this rank needs. */
size_t kcoll_reduce_tmp_len(const kcoll_args_t *a);

/* -- pieces of the hierarchical algorithms (coll/phase.c) -- */
/* A rooted collective's blocks along the tree of the levels from its root
 * (gather/hier.c, scatter/hier.c): boff[i] is the bytes of the blocks of
 * t.order[0 .. i) (i = 0 .. p), block q being the root's block for q in
 * its blocked buffer `side` (SEND: Scatter, RECV: Gather). A leader that
 * is not the root keeps its subtree's blocks but its own in TMP, in
 * preorder: places t.at[r] + 1 .. t.at[r] + t.size[r]. */
typedef struct {
    kcoll_tree_t t;
    size_t *boff;
    kcoll_buf_t side;
} kcoll_tree_blocks_t;
int kcoll_tree_blocks_make(kcoll_tree_blocks_t *b, const kcoll_args_t *a, kcoll_buf_t side);
void kcoll_tree_blocks_free(kcoll_tree_blocks_t *b);
/* TMP bytes of this rank: its subtree's blocks but its own (0 at the root). */
size_t kcoll_tree_blocks_tmp(const kcoll_args_t *a, kcoll_buf_t side);
/* Move the blocks of the preorder places [i0, i1), which lie one after
 * the other in local lbuf from loff, from (kind READ) or into (WRITE)
 * this rank's parent v: v's TMP, or the root's blocked buffer block by
 * block (neighbouring blocks of both sides merged into one copy). */
void kcoll_tree_blocks_move(const kcoll_args_t *a, kcoll_sched_t *s, const kcoll_tree_blocks_t *b,
                            int kind, int v, int i0, int i1, kcoll_buf_t lbuf, size_t loff);

/* Append one phase of a composed schedule: build runs for the view b (a
 * group's: b->p members, this rank is member b->rank), its peers mapped
 * to team ranks members[], its flag values in [base, base + values)
 * (KCOLL_PHASE_VALUES for a phase of its own; one past that fails the
 * build, s->err), its buffers placed by map (kcoll_sched_append_mapped).
 * With sync, this rank first raises
 * AUX to base and waits until every other member i with need[i] (need
 * NULL: every member) has raised it: those members' buffers hold an
 * earlier phase's result, which this phase reads. */
void kcoll_phase_append(kcoll_sched_t *s, const kcoll_args_t *b, kcoll_builder_fn build,
                        const int *members, uint32_t base, uint32_t values,
                        const kcoll_bufmap_t *map, int nmap, int sync, const char *need);

#endif
