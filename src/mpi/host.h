/* kcoll's side of the host MPI (src/mpi): what the entry points
 * (src/pmpi) and the cross-node layer (src/span) share of it, besides the
 * host's objects (mpi/objects.h):
 *   - the MPI handles a call's description keeps;
 *   - the records of communicators and their teams (mpi/teams.c);
 *   - advancing kcoll's requests while the host blocks (mpi/drive.c) or
 *     from the host's own progress engine (mpi/progress.c);
 *   - non-blocking collectives as the host's generalized requests
 *     (mpi/greq.c);
 *   - the tuning at start-up (mpi/tuning.c, mpi/quick.c);
 *   - packing the datatypes kcoll has no map for (mpi/pack.c);
 *   - reporting a failed collective (mpi/report.c);
 *   - counting the calls an entry point hands to the host undescribed
 *     (mpi/handed.c).
 * Nothing here knows the MPI_* entry points. The cross-node layer
 * (src/span) is below: the team records make its record of a communicator
 * that spans nodes, and give it what it asks of the host (span.h:
 * kcoll_span_host_t) when they start (kcoll_teams_init).
 */
#ifndef KCOLL_MPI_HOST_H
#define KCOLL_MPI_HOST_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "call/adapt.h"
#include "call/call.h"
#include "model/tuning.h"
#include "mpi/objects.h"
#include "sched/wait.h"
#include "span/span.h"

/* An MPI handle as a 64-bit word, whatever the MPI makes it (an int, a
 * pointer): what the fast paths compare. */
#define KCOLL_HANDLE_WORD(h)                                                             \
    __extension__({                                                                      \
        uint64_t w_ = 0;                                                                 \
        __typeof__(h) h_ = (h);                                                          \
        memcpy(&w_, &h_, sizeof h_ < sizeof w_ ? sizeof h_ : sizeof w_);                 \
        w_;                                                                              \
    })

/* ---- calls an entry point hands to the host undescribed (mpi/handed.c):
 * a blocking MPI_Gatherv, MPI_Scatterv or MPI_Alltoallv (collective c,
 * root; 0 for the all-to-all) of the int form that a host streak takes or
 * that goes to the host while kcoll is disabled. */
/* Its bytes on this rank (rank of p, as the statistics count them): the
 * blocks of vcounts of vtype where this rank has the v side (the root's,
 * an all-to-all's receive counts), else count of type. Keeps a predefined
 * type's size for the kept streak (call/shortcut.h). */
size_t kcoll_handed_bytes(kcoll_coll_t c, int p, int rank, int root, const int *vcounts,
                          MPI_Datatype vtype, int count, MPI_Datatype type);
/* While kcoll is disabled, with its fast path kept (call/shortcut.h:
 * kcoll_off_fast): count such a call on comm, 1; 0 where the host does
 * not know comm as an intra-communicator (the slow path describes the call
 * then, and the host reports what is wrong). */
int kcoll_off_count(kcoll_coll_t c, MPI_Comm comm, int root, const int *vcounts,
                    MPI_Datatype vtype, int count, MPI_Datatype type);

/* ---- the MPI handles a call keeps in its description (kcoll_call_t.handles):
 * the datatype and operation a reduction across nodes hands to the host's
 * collectives between the nodes, and the datatypes of its send and
 * receive sides that the packer (mpi/pack.c) packs (KCOLL_TYPE_HOSTPACK);
 * MPI_DATATYPE_NULL, MPI_OP_NULL: none, or not significant on this rank. */
typedef struct {
    MPI_Datatype dt; /* a reduction's; the send side's */
    MPI_Op op;
    MPI_Datatype rdt; /* the receive side's */
} kcoll_handles_t;
_Static_assert(sizeof(kcoll_handles_t) <= sizeof(((kcoll_call_t *)0)->handles),
               "a call's MPI handles fit its description");
static inline void kcoll_set_handles(kcoll_call_t *c, MPI_Datatype dt, MPI_Op op)
{
    const kcoll_handles_t h = {dt, op, dt};
    memcpy(c->handles, &h, sizeof h);
}
/* A call of the blocked collectives: its sides' datatypes. */
static inline void kcoll_set_types(kcoll_call_t *c, MPI_Datatype sdt, MPI_Datatype rdt)
{
    const kcoll_handles_t h = {sdt, MPI_OP_NULL, rdt};
    memcpy(c->handles, &h, sizeof h);
}
static inline kcoll_handles_t kcoll_handles_of(const kcoll_call_t *c)
{
    kcoll_handles_t h;
    memcpy(&h, c->handles, sizeof h);
    return h;
}
/* The packer of mpi/pack.c (the call layer's, set at start-up). */
extern const kcoll_packer_t kcoll_host_packer;

/* ---- communicators (mpi/teams.c) */
/* The team of comm for a call: NULL with the reason when kcoll cannot use
 * comm. create: set a team up if comm has none yet (only where every rank
 * of comm is in the same call: a blocking collective). */
kcoll_team_t *kcoll_comm_team(MPI_Comm comm, int create, kcoll_reason_t *why);
/* The team of comm for a collective call in mode (every rank of comm asks
 * once per collective call, in the same order): as kcoll_comm_team, set
 * up by a blocking call; a non-blocking or persistent one on a
 * communicator without a record begins its team's set-up in later calls
 * (mpi/later.c), and the calls go to the host (mpi:no_team) until every
 * rank turns the team on at the same call (team/team.h: kcoll_team_turn). */
kcoll_team_t *kcoll_comm_team_for(MPI_Comm comm, kcoll_mode_t mode, kcoll_reason_t *why);
/* Advance the set-ups in later calls (from the program's calls that reach
 * kcoll: its collectives, waits and tests). */
void kcoll_teams_later(void);
/* comm is an intra-communicator kcoll keeps a record for: 1 with its size
 * and this process's rank, from that record (no host call), or 0. */
int kcoll_comm_known(MPI_Comm comm, int *p, int *rank);
/* The same asked of the host (three calls, no record): 1 for an
 * intra-communicator, with its size and this process's rank; 0, both 0,
 * for MPI_COMM_NULL, an inter-communicator or one the host refuses. */
int kcoll_comm_place(MPI_Comm comm, int *p, int *rank);
/* A communicator was just made: set its team up while all its ranks are in
 * the call that made it, so that its first non-blocking collective finds
 * one. Nothing before kcoll is set up (kcoll_teams_init) or after. */
void kcoll_comm_created(MPI_Comm comm);
/* Map the nodes of MPI_COMM_WORLD (collective over it: at MPI_Init). */
void kcoll_nodes_init(void);
/* This process's rank among the world's ranks on its node (0: the lowest
 * world rank there), -1 where the node map is not known. */
int kcoll_node_rank(void);
/* Create the attribute keyval (after PMPI_Init) and give the cross-node
 * layer what it asks of the host. Returns 0 or -1. */
int kcoll_teams_init(void);
/* Let go of every team still held (before PMPI_Finalize). */
void kcoll_teams_finalize(void);
/* comm's record of the cross-node layer (a communicator that spans
 * nodes), or NULL. */
kcoll_span_t *kcoll_comm_span(MPI_Comm comm);

/* ---- progress while the host blocks (mpi/progress.c, mpi/drive.c) */
/* Is there a host progress hook that advances kcoll's requests inside the
 * host's own waiting (mpi/progress.c)? */
int kcoll_progress_hook_active(void);
/* The host's progress engine calls kcoll_progress (mpi/progress.c). */
void kcoll_progress_hook_init(void);
void kcoll_progress_hook_finalize(void);
/* Long waits inside kcoll advance the host's own pending operations
 * (mpi/progress.c); the host's calls into kcoll say so around themselves
 * (inside 1, then 0), since no MPI call may be made from there. */
void kcoll_host_poke_init(void);
void kcoll_host_poke_finalize(void);
void kcoll_host_calls_in(int inside);
/* Must this process advance its kcoll requests itself around a blocking
 * host collective? (requests pending, and no hook) */
static inline int kcoll_must_drive(void)
{
    return kcoll_pending() && !kcoll_progress_hook_active();
}
/* Must a blocking point-to-point call run as its non-blocking form,
 * waited for in a loop that advances kcoll's requests? Where there is no
 * hook, while kcoll requests are pending (the host collectives of a call
 * across nodes are MPI calls, which the helper thread must not make). */
static inline int kcoll_must_loop(void)
{
    return !kcoll_progress_hook_active() && kcoll_pending();
}
/* Around a blocking host collective: when kcoll_must_drive, a helper
 * thread advances kcoll's requests until kcoll_drive_end (mpi/drive.c).
 * begin returns whether it did; pass that to end. */
int kcoll_drive_begin(void);
void kcoll_drive_end(int began);
void kcoll_drive_finalize(void);
/* Is this thread the helper (mpi/progress.c)? It makes no MPI call. The
 * helper marks itself when it starts. */
int kcoll_progress_in_helper(void);
/* May this thread call MPI now: not the helper, not inside the host's own
 * calls into kcoll (mpi/progress.c)? */
int kcoll_host_may_call(void);
void kcoll_progress_mark_helper(void);

/* ---- non-blocking collectives as generalized requests (mpi/greq.c) */
/* Hand request r (prepared, not started) to the user as *request and start
 * it. Returns MPI_SUCCESS or an MPI error. */
int kcoll_greq_start(kcoll_req_t *r, MPI_Comm comm, MPI_Request *request);
/* Complete what the helper reached and handed back. */
void kcoll_requests_handed_back(void);
/* The request class (MPICH's MPIX_Grequest_class), at start-up: 0 or -1. */
int kcoll_greq_init(void);
/* What MPI_Wait reports for a completed collective: the status the host
 * MPIs give their own (source and tag 0, no elements, not cancelled). */
void kcoll_status_collective(MPI_Status *status);

/* ---- tuning at start-up (mpi/tuning.c, mpi/quick.c) */
/* Read the tuning file and set it for the process; collective: every rank
 * of MPI_COMM_WORLD calls it at once (MPI_Init), rank 0 reads and the
 * others receive its bytes. */
void kcoll_tuning_startup(int collective);
/* The quick calibration, from kcoll_tuning_startup on every rank of the
 * world at once: on world rank 0, *t becomes the cached or freshly
 * measured tuning of this machine (else it stays). */
void kcoll_quick_startup(kcoll_tuning_t *t);
/* What it did (for the statistics report; "" where it did not run). */
const char *kcoll_quick_report(void);

/* ---- failures (mpi/report.c) */
/* This process's rank in MPI_COMM_WORLD, for messages (set at start-up). */
extern int kcoll_world_rank;
/* One error line for a failed collective (form: "" or " (persistent)");
 * returns the MPI error class of st. */
int kcoll_report(kcoll_coll_t c, const char *form, kcoll_status_t st, const char *what);
/* Report a failure after the protocol started: kcoll_report, then the
 * communicator's error handler. Returns the MPI error code to return. */
int kcoll_fail(MPI_Comm comm, kcoll_coll_t c, kcoll_status_t st, const char *what);
/* The MPI error class of a kcoll status. */
int kcoll_mpi_error(kcoll_status_t st);

#endif
