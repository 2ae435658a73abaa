/* The call layer: a collective's whole life, blocking or not (DESIGN.md
 * section 2).
 *
 * The PMPI functions translate MPI arguments into a kcoll_call_t (buffers,
 * element sizes and layouts, MPI_IN_PLACE, the reduction operation) and
 * hand it here. The call layer checks eligibility, agrees where ranks know
 * different things, selects the algorithm, builds the schedule, runs or
 * starts it and counts the statistics; the PMPI layer then either waits,
 * returns a request, or calls the host MPI when kcoll does not take the
 * call.
 *
 * A request (kcoll_req_t) owns one collective: its sequence number and
 * lane, its agreement, schedule, execution state, scratch memory, layouts
 * and reduction operation. It advances whenever kcoll_progress runs (in
 * every kcoll collective call and every completion call of the PMPI layer;
 * see docs/architecture.md "Progress") and when its owner waits on it.
 *
 * Deciding alike. A rank must never run kcoll's protocol while another
 * rank of the same call runs the host MPI's. A blocking call decides from
 * values every rank knows alike and, where the family needs it, from an
 * agreement made inside the call. A non-blocking or persistent call must
 * return without waiting for other processes (MPI: its start is local),
 * so it decides at the call from values every rank knows alike and from
 * its own datatypes' layout (all ranks are assumed to use datatypes of one
 * layout, as MPI_Bcast always has: README "Limitations"); its agreement
 * (layouts, argument checks) then runs inside the request and can no
 * longer send the call to the host MPI: an inconsistency it finds is an
 * error of the request.
 */
#ifndef KCOLL_CALL_H
#define KCOLL_CALL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/status.h"
#include "call/report.h"
#include "cluster/cluster.h"
#include "coll/coll.h"
#include "op/op.h"
#include "sched/dmap.h"
#include "sched/exec.h"
#include "team/team.h"

/* kcoll_side_t.type */
#define KCOLL_TYPE_VALID 1u  /* a usable datatype */
#define KCOLL_TYPE_DENSE 2u  /* one element is one run of bytes (true extent == size) */
#define KCOLL_TYPE_PACKED 4u /* elements follow each other without gaps (extent == size) */
/* a datatype kcoll cannot flatten into a map (sched/dmap.h), but the layer
 * above can pack and unpack (kcoll_call_set_packer): a call across nodes,
 * which has no agreement to send such a call to the host MPI on every
 * rank at once, moves it packed; offsets along the side are logical, as
 * with a map */
#define KCOLL_TYPE_HOSTPACK 8u

/* One buffer side of a call, as the PMPI layer found it. The count is 64
 * bits wide, so that an MPI-4 large-count call (MPI_Bcast_c) describes
 * itself whole. A v side keeps the caller's own arrays (MPI requires them
 * unchanged until the call completes, non-blocking calls included): int
 * arrays from the int forms, 64-bit ones (MPI_Count counts, MPI_Aint
 * displacements) from the _c forms (wide); read them with
 * kcoll_side_vcount and kcoll_side_vdispl. */
typedef struct {
    const void *buf;             /* the first byte (datatype lower bound applied) */
    int64_t count;               /* elements (uniform sides) */
    const void *counts, *displs; /* v sides: per rank of the communicator (NULL: none) */
    int wide;                    /* the large-count form's (v sides: counts and displs are
                                  * int64_t, not int) */
    size_t size;                 /* bytes of one element's data */
    size_t extent;               /* distance from one element to the next */
    ptrdiff_t lb;                /* the datatype's true lower bound: buf - the address passed */
    unsigned type;               /* KCOLL_TYPE_* */
    /* a datatype whose elements are not one run each, back to back: where
     * its data lies (sched/dmap.h; made by the PMPI layer, NULL when it
     * could not be); offsets along the side are then logical, counted in
     * element sizes (kcoll_side_step), while buf stays the memory address
     * of element 0's data */
    const kcoll_dmap_t *map;
} kcoll_side_t;

/* Distance between two elements' starts in the side's logical stream:
 * the extent for memory that is the stream, the element size for a map
 * (or a side packed by the layer above, KCOLL_TYPE_HOSTPACK). */
static inline size_t kcoll_side_step(const kcoll_side_t *s)
{
    return s->map || (s->type & KCOLL_TYPE_HOSTPACK) ? s->size : s->extent;
}

/* Element q of a v side's array, int or (wide) a 64-bit MPI integer type,
 * read by its bytes whatever the MPI named that type. */
static inline int64_t kcoll_side_ventry(const void *a, int wide, int q)
{
    if (!wide)
        return ((const int *)a)[q];
    int64_t v;
    memcpy(&v, (const char *)a + (size_t)q * sizeof v, sizeof v);
    return v;
}
/* Rank q's count and displacement of a v side (its arrays must be set). */
static inline int64_t kcoll_side_vcount(const kcoll_side_t *s, int q)
{
    return kcoll_side_ventry(s->counts, s->wide, q);
}
static inline int64_t kcoll_side_vdispl(const kcoll_side_t *s, int q)
{
    return kcoll_side_ventry(s->displs, s->wide, q);
}


/* One rank's call. Which sides a collective uses:
 *   Bcast: recv (the buffer);  Barrier: none;
 *   Scatter(v), Gather(v): send and recv as in MPI (the root's blocked
 *     buffer is send for a scatter, recv for a gather; v: counts/displs);
 *   Allgather(v), Alltoall(v): send and recv as in MPI (v: counts/displs);
 *   reductions: send, recv (count on recv; Reduce_scatter: recv.counts),
 *     and op.
 * Arrays are read until the request completes (MPI requires them to stay
 * unchanged that long for non-blocking calls). */
typedef struct {
    kcoll_coll_t coll;
    int p, rank;       /* of the communicator (0, 0 when it is not usable) */
    int root;
    int in_place;      /* MPI_IN_PLACE was passed where MPI allows it */
    kcoll_side_t send, recv;
    const kcoll_op_t *op; /* reductions: kcoll's operation, or NULL: none applies */
    /* the MPI layer's own handles of the call's datatype and operation
     * (pmpi.h: kcoll_pmpi_handles), opaque here: a call across nodes gives
     * them to the host's collectives between nodes */
    _Alignas(8) unsigned char handles[24];
} kcoll_call_t;

typedef struct kcoll_req kcoll_req_t;

typedef enum {
    KCOLL_CALL_KCOLL,  /* *req is kcoll's request for the call */
    KCOLL_CALL_HOST,   /* the host MPI does the call (*why; counted) */
    KCOLL_CALL_FAILED, /* an error after the protocol started (err) */
    KCOLL_CALL_ACROSS  /* the communicator spans nodes (team_why KCOLL_R_SPANS) and kcoll has
                        * a layout across nodes for the collective (kcoll_call_across_has):
                        * the caller prepares it with kcoll_call_prepare_across (nothing
                        * counted yet) */
} kcoll_call_result_t;

/* Which collectives run across nodes as one schedule (src/cluster/'s
 * layouts; the others go to the host MPI there, as mpi:multinode)? None
 * with KCOLL_HIER=off. */
int kcoll_call_across_has(kcoll_coll_t c);
/* KCOLL_HIER: 0 off (the host MPI does such calls whole), 1 auto (the
 * cost model decides per collective and size), 2 on or leaders (always
 * across nodes in the leaders' layout), 3 lanes (the lanes layout where
 * the collective has it). An unknown value is auto, with one warning. */
int kcoll_call_across_mode(void);

/* Take a call: decide whether kcoll does it and if so prepare its request
 * (not started). team is the communicator's team, or NULL with the reason
 * in team_why. A blocking call whose family agrees runs its agreement
 * here, so it waits for the other ranks to arrive. */
kcoll_call_result_t kcoll_call_prepare(const kcoll_call_t *c, kcoll_mode_t mode,
                                       kcoll_team_t *team, kcoll_reason_t team_why,
                                       kcoll_req_t **req, kcoll_reason_t *why, char *err,
                                       size_t errlen);
/* A call on a communicator that spans nodes, run as one schedule (a
 * layout of src/cluster/: on-node phases and host collectives between
 * nodes) by this node's team, as any other request: blocking,
 * non-blocking or persistent alike. cl says where this rank stands (its
 * peer_of names the node team's ranks and must outlive the request);
 * layout is KCOLL_NODES_LEADERS or KCOLL_NODES_LANES (model/nodes.h);
 * a rooted call's root is (root_node, root_local). */
typedef struct kcoll_across {
    kcoll_cluster_t cl;
    int layout;
    int root_node, root_local;
    /* the host collectives' runner and its state for this call (the
     * caller's: a copy is kept with the request); drop(data) when the
     * request is given back */
    const kcoll_xhost_t *xhost;
    void (*drop)(void *data);
    /* MPI_Alltoallv: the node's layouts by local rank (cluster.h);
     * MPI_Gatherv, MPI_Scatterv: the root's layout, as every rank's; the
     * caller's until drop, and the largest block of any rank's (agreed) */
    const kcoll_layout_t *lay;
    size_t largest;
    /* NULL, or a call whose layout an agreement decides after the call
     * returned (a non-blocking MPI_Alltoallv, Gatherv or Scatterv:
     * span/run.c). Every rank takes part in it (the call is not judged
     * when it is taken); the request asks settle(x) when it is its turn
     * until it is no longer KCOLL_IN_PROGRESS: KCOLL_OK with x->layout
     * decided (its layout, with lay, largest and cl.segment; or
     * KCOLL_NODES_HOST: the host MPI does
     * the call whole, as one host collective KCOLL_XC_CALL in the team's
     * order of calls), or an error (err). */
    kcoll_status_t (*settle)(struct kcoll_across *x, char *err, size_t errlen);
    _Alignas(16) unsigned char data[96];
} kcoll_across_t;
/* Take a call across nodes in layout x on the node's team: KCOLL_CALL_KCOLL
 * with *req prepared, KCOLL_CALL_HOST (*why: the arguments are invalid or
 * not kcoll's to move; every rank finds the same, since it depends only
 * on what MPI requires alike of a reduction's or a Bcast's ranks) or
 * KCOLL_CALL_FAILED (err; a rank of a blocked collective whose own
 * arguments kcoll cannot run: kcoll_family_t.across). The collectives
 * src/cluster/registry.c has a layout of. */
/* MPI_Alltoallv (on one node its vote and layout table, across nodes its
 * agreement): this rank's layout in bytes, by communicator rank (tab: room
 * for 4 c->p values, or NULL: measure only; send counts and displacements,
 * the receive side's in place, then the receive side's), the lengths of
 * its send and receive buffers (len[0]: 0 in place) and its largest block;
 * 0, or why kcoll cannot take part (KCOLL_R_INVALID: its arguments are
 * wrong, which the host MPI reports; KCOLL_R_NONCONTIG: a layout kcoll
 * cannot address). */
int kcoll_alltoallv_sides(const kcoll_call_t *c, size_t *tab, size_t len[2], size_t *largest);
/* MPI_Gatherv and MPI_Scatterv across nodes (their agreement, span/run.c),
 * at the root: its blocked buffer's layout in bytes (cnt, dsp: room for
 * c->p each; displacements from its lowest non-empty block on) and 0, or
 * why the call cannot run in a layout (KCOLL_R_INVALID: its arguments are
 * wrong, which the host MPI reports; KCOLL_R_NONCONTIG: a blocked buffer
 * kcoll cannot address, or an own block it can neither address nor have
 * the host pack). */
int kcoll_rooted_sides(const kcoll_call_t *c, size_t *cnt, size_t *dsp);
kcoll_call_result_t kcoll_call_prepare_across(const kcoll_call_t *c, kcoll_mode_t mode,
                                              kcoll_team_t *team, const kcoll_across_t *x,
                                              kcoll_req_t **req, kcoll_reason_t *why, char *err,
                                              size_t errlen);
/* The layer above's packing of a datatype kcoll has no map for
 * (KCOLL_TYPE_HOSTPACK): pack n elements of call c's send (side 0) or
 * receive (side 1) datatype from base, the address the program passed,
 * into n * size bytes at out, or unpack them from in back to base. 0, or
 * -1. Set once at start-up. */
typedef struct {
    int (*pack)(const kcoll_call_t *c, int side, const void *base, size_t n, void *out);
    int (*unpack)(const kcoll_call_t *c, int side, const void *in, size_t n, void *base);
} kcoll_packer_t;
void kcoll_call_set_packer(const kcoll_packer_t *p);
/* Count a call the host MPI does for `why` without kcoll_call_prepare
 * (kcoll not initialized, an unusable communicator: p 0; a persistent
 * request's start when the host runs it). */
void kcoll_call_host(const kcoll_call_t *c, kcoll_mode_t mode, kcoll_reason_t why);
/* The host streak of MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv (call.c):
 * a blocking call of collective c with this root on team t goes to the
 * host MPI without agreeing where take returns its reason (not 0); the
 * caller then counts it with the bytes of its own part (count). Every
 * blocking call of these collectives asks, on every rank, before
 * anything else (kcoll_call_prepare asks for calls that did not). */
kcoll_reason_t kcoll_call_streak_take(kcoll_team_t *t, kcoll_coll_t c, int root);
/* The host streak's rule, for one streak k (a team's on one node; a
 * communicator's across nodes, span/run.c): take says whether a call with
 * this root goes to the host on it (and counts it), ending the streak
 * where the root or the parameters changed; after an agreement, `why`
 * (the host's reason; 0: kcoll ran it) starts the next streak of 1, 2,
 * 4 ... calls, at most KCOLL_HOST_STREAK, or ends it. The caller holds
 * whatever guards k. */
int kcoll_streak_take(kcoll_streak_t *k, int root);
void kcoll_streak_after(kcoll_streak_t *k, int root, int why);
void kcoll_call_streak_count(kcoll_coll_t c, kcoll_reason_t why, size_t bytes);
/* The bytes call c moves as far as this rank knows them alone (a
 * streak's calls are counted with them): its v side's blocks, else its
 * own block. */
size_t kcoll_call_own_bytes(const kcoll_call_t *c);
/* Count (and trace) a blocking call of c that goes to the host MPI for
 * `why` with `bytes`, where nothing described it (the streak's calls, the
 * v forms while kcoll is disabled: pmpi/run.c). */
void kcoll_call_host_count(kcoll_coll_t c, kcoll_reason_t why, size_t bytes);

/* Start a prepared (or, persistent, completed) request. done(r, ctx) is
 * called once it has completed (from the progress of whichever call
 * advances it), or NULL. */
void kcoll_req_start(kcoll_req_t *r, void (*done)(kcoll_req_t *r, void *ctx), void *ctx);
/* Run until r has completed, advancing every other request meanwhile.
 * Returns r's status (KCOLL_OK or an error, kcoll_req_error says what). */
kcoll_status_t kcoll_req_wait(kcoll_req_t *r);
kcoll_status_t kcoll_req_status(const kcoll_req_t *r);
const char *kcoll_req_error(const kcoll_req_t *r);
kcoll_coll_t kcoll_req_coll(const kcoll_req_t *r);
/* A reduction's operation as the request keeps it (NULL: none). */
const kcoll_op_t *kcoll_req_op(const kcoll_req_t *r);
/* Give a completed request back (a persistent one when it is freed). */
void kcoll_req_release(kcoll_req_t *r);
/* Release r by itself when it completes (a non-blocking request whose
 * owner only waits for the done callback). */
void kcoll_req_detach(kcoll_req_t *r);

/* Has r completed (status and error are then final)? */
int kcoll_req_completed(const kcoll_req_t *r);

/* Progress. kcoll_progress_inner advances every started request of kcoll
 * once: it is what the host MPI's own progress engine and the helper
 * thread may run (the host collectives of a call across nodes are then
 * left for the next caller that may call MPI: span/run.c). Both return
 * how many things moved on; kcoll_progress is kcoll_progress_inner where
 * MPI calls are allowed (kcoll's entry points and completion calls). */
int kcoll_progress_inner(void);
int kcoll_progress(void);
/* Requests started and not yet completed, in this process: read inline,
 * since the host MPI's progress loop asks at every turn (mpi/progress.c). */
extern _Atomic int kcoll_npending;
static inline int kcoll_pending(void)
{
    /* relaxed: a hint, ordering nothing */
    return atomic_load_explicit(&kcoll_npending, memory_order_relaxed);
}

/* A team the call layer no longer needs: frees its pooled requests (pass to
 * kcoll_team_unref). */
void kcoll_call_release_team(kcoll_team_t *t);

#endif
