/* A request and the collective families, inside the call layer.
 *
 * Life of a request (call/request.c advances it; every step resumes where
 * the last one stopped):
 *   PREPARED  taken by kcoll_call_prepare: decided, a sequence number;
 *   QUEUED    started, waiting for its lane (the collective KCOLL_LANES
 *             before it on the team has not completed on this rank);
 *   AGREE     in its lane, running its agreement (families that agree);
 *   AGREED    (blocking calls that agree) the votes are in, the caller
 *             decides between kcoll and the host MPI;
 *   RUN       schedule built (or reused), executing;
 *   DONE      completed with a status; the lane is free again.
 * A blocking call of a family that agrees runs QUEUED and AGREE inside
 * kcoll_call_prepare, because its decision depends on the votes.
 */
#ifndef KCOLL_CALL_REQUEST_H
#define KCOLL_CALL_REQUEST_H

#include <stdatomic.h>

#include "call/call.h"
#include "model/select.h"
#include "sched/agree.h"
#include "sched/exec.h"
#include "sched/wait.h"

typedef enum {
    KCOLL_REQ_PREPARED,
    KCOLL_REQ_QUEUED,
    KCOLL_REQ_AGREE,
    KCOLL_REQ_AGREED, /* a blocking call's votes are in: kcoll_call_prepare decides */
    KCOLL_REQ_RUN,
    KCOLL_REQ_DONE
} kcoll_req_state_t;

/* What differs between families of collectives (call/fam_*.c). */
typedef struct kcoll_family {
    /* From the call alone: r->args (coll, p, rank, root, bytes, in_place,
     * reduction fields), r->policy_bytes (what KCOLL_MIN_BYTES and the
     * rules compare; KCOLL_BYTES_UNKNOWN when only an agreement tells),
     * r->stat_bytes,
     * and the flags r->invalid (arguments every rank sees alike are wrong,
     * or this rank's are, in a family without agreement), r->noncontig
     * (this rank's layout is not one kcoll moves) and r->bad_op. */
    void (*shared)(kcoll_req_t *r);
    /* Families that agree: this rank's vote (its own validity, layout,
     * MPI_IN_PLACE, block sizes) and its layout table (NULL: none). */
    uint64_t (*vote)(kcoll_req_t *r);
    void (*fill)(void *r, size_t *table);
    /* Families that agree: read every rank's vote (r->votes) and tables;
     * 0, or the reason the host MPI must do the call (KCOLL_R_INVALID,
     * KCOLL_R_NONCONTIG, KCOLL_R_SMALL). Sets r->args.lay, r->args.bytes,
     * r->policy_bytes, r->stat_bytes as the votes tell. */
    int (*decide)(kcoll_req_t *r);
    /* The executor's buffers (r->bufs, r->lens) from the call; TMP is
     * added by the call layer from the algorithm's descriptor. */
    void (*buffers)(kcoll_req_t *r);
    /* Families that agree on one node but run across nodes without an
     * agreement (the blocked collectives, src/cluster/gather_leaders.c):
     * this rank's view from its own arguments and what MPI requires alike
     * of every rank (block sizes, counts): 0 with r->args (bytes, lay:
     * this rank's one layout, cluster.h) and what buffers() reads set, or
     * the reason this rank cannot take part (KCOLL_R_INVALID: its
     * arguments are wrong; KCOLL_R_NONCONTIG: a datatype kcoll cannot lay
     * out). NULL: the family needs nothing more than shared(). */
    int (*across)(kcoll_req_t *r);
} kcoll_family_t;

extern const kcoll_family_t kcoll_fam_bcast, kcoll_fam_rooted, kcoll_fam_allgather,
    kcoll_fam_alltoall, kcoll_fam_barrier, kcoll_fam_reduce;

struct kcoll_req {
    kcoll_req_t *next, *prev;   /* the team's pool, or the list of started requests */
    kcoll_team_t *team;
    const kcoll_family_t *fam;
    kcoll_call_t call;          /* the caller's description */
    kcoll_op_t op;              /* a copy of *call.op (reductions) */
    kcoll_mode_t mode;
    int row;                    /* statistics row */
    kcoll_req_state_t state;
    uint64_t seq;               /* the collective's number on the team */
    int seen;                   /* `seen` stored for seq (sched/agree.h) */
    int built;                  /* sched holds this call's schedule (persistent: kept) */
    int detached;               /* release by itself when done */
    int listed;                 /* on the list of started requests (not blocking) */
    int holds_team;             /* holds a reference to team */
    _Atomic int busy;           /* a thread is advancing it (listed requests) */
    _Atomic int completed;      /* 1 once DONE: what other threads look at */

    /* decision */
    int invalid, noncontig, bad_op;
    size_t policy_bytes, stat_bytes;
    kcoll_cache_t cache;        /* the cache state its data is estimated in */
    /* what a family finds out about this rank's own arguments before it
     * votes (call/fam_*.c): their validity, the bytes of its own block (or
     * its largest), where its buffers start and how long they are */
    int own_valid;
    size_t mine;
    const char *base[2]; /* send, recv */
    size_t span[2];
    /* across nodes, an Allgatherv's receive blocks are addressed from its
     * lowest displacement: where that lies from the receive buffer, bytes
     * (0, or negative: fam_allcoll.c) */
    ptrdiff_t rshift;
    kcoll_choice_t choice;
    kcoll_args_t args;
    /* a call across nodes (kcoll_call_prepare_across): its layout instead
     * of choice.algo; xhost starts its host collectives in call order */
    int across;
    kcoll_across_t xa;
    int xleft;   /* host collectives this run has still to start (-1: not built yet) */

    /* agreement */
    kcoll_agree_t ag;
    uint64_t *votes;            /* p */
    kcoll_layout_t *lay;        /* p */
    size_t *counts;             /* p (Reduce_scatter's counts in elements; across
                                 * nodes an Allgatherv's counts in bytes) */
    size_t *xdispl;             /* p: across nodes, an Allgatherv's displacements in bytes */
    int cap_p;                  /* size of the four arrays */

    /* execution */
    kcoll_sched_t sched;        /* built here, or: */
    const kcoll_sched_t *run;   /* the schedule executed: sched or a team cache entry */
    int cache_slot;             /* that entry, or -1 */
    kcoll_exec_t x;
    void *bufs[KCOLL_NBUF];
    size_t lens[KCOLL_NBUF];
    const kcoll_dmap_t *maps[KCOLL_NBUF]; /* the buffers' datatype maps (NULL: contiguous) */
    /* a non-blocking or persistent call's own copies of its sides' maps
     * (MPI lets the program free a datatype while such a call is pending) */
    kcoll_dmap_t *mapcopy[2];
    /* ...and of their v-arrays (counts, displacements): MPI requires them
     * unchanged until the call completes, but the host MPIs read them at
     * the start (their schedules are made then), so programs (mpi4py
     * 4.1.2's Iallgatherv) that let them go sooner work there; kcoll reads
     * them at the agreement and the build, later: its own copy, made at
     * the start (p entries each; kept with the pooled request) */
    void *varrays;
    size_t varrays_cap;
    /* SEND and RECV of maps with short segments, packed for the run
     * (request.c, kcoll_req_pack); unpack: 1 + the buffer RECV's result is
     * in, or 0 */
    void *packed[2];
    size_t packed_cap[2];
    int unpack;
    int unpack_host;            /* ...through the layer above's packer (KCOLL_TYPE_HOSTPACK) */
    void *tmp;
    size_t tmp_cap;
    kcoll_watch_t watch;

    kcoll_status_t status;
    char errmsg[256];
    void (*done)(kcoll_req_t *r, void *ctx);
    void *done_ctx;
};

/* Count r's call on `path` (its statistics row). */
void kcoll_call_stat(kcoll_req_t *r, int path, size_t bytes);
/* Selection for r: 0, the reason for the host MPI, or -1 when the check of
 * a decision failed (call/adapt.h; r->errmsg says why). */
int kcoll_call_select(kcoll_req_t *r);
/* One sharing of r's team's control segment (sched/share.h), numbered by
 * the team's next ticket (every rank of the team shares at the same
 * calls): post mine, fill all (KCOLL_SHARE_VALS per rank). 0, or -1 with
 * r->errmsg when a peer is gone. */
int kcoll_req_share(kcoll_req_t *r, const float *mine, float *all);
/* Build r's schedule and start executing it: state RUN. */
void kcoll_req_build(kcoll_req_t *r);
/* Advance everything until r has reached `state` (or DONE). */
void kcoll_req_wait_state(kcoll_req_t *r, kcoll_req_state_t state);
/* A blocking call that agreed goes to the host MPI after all: its number
 * is used up alike on every rank; the lane is freed, r released. */
void kcoll_req_abandon(kcoll_req_t *r);
/* Advance r once as far as it goes (the caller owns r->busy). Returns 1
 * if it moved on. */
int kcoll_req_advance(kcoll_req_t *r);
/* The layouts from every rank's table of r's agreement (r->lay). */
const kcoll_layout_t *kcoll_req_layouts(kcoll_req_t *r);

#endif
