/* The PMPI layer: the intercepted MPI_* functions. Each translates its MPI
 * arguments into an MPI-free description of the call (call/call.h) and
 * hands it to the call layer; what kcoll does not take goes to the host
 * MPI's PMPI_* function. Nothing here decides about algorithms. What the
 * entry points share with the rest of kcoll's side of the host MPI
 * (communicator records, progress, generalized requests) is src/mpi
 * (mpi/host.h); calls on communicators that span nodes go through
 * src/span.
 *
 * The shape of every intercepted collective:
 *
 *   MPI_Bcast:  the shortcut (a kept streak for Gatherv, Scatterv,
 *               Alltoallv) asked inline: the host's PMPI_Bcast returned
 *               as a tail call (through KCOLL_HOST_CALL, below); else
 *               kcoll_bcast_slow (KCOLL_SLOW, below):
 *               kcoll_call_t c; describe c (sides from the datatypes);
 *               if (kcoll_pmpi_blocking(&c, comm, &rc)) return rc;
 *               host: PMPI_Bcast, driven while kcoll requests are pending;
 *   MPI_Ibcast: the same description;
 *               if (kcoll_pmpi_nonblocking(&c, comm, request, &rc)) return rc;
 *               return PMPI_Ibcast(...);
 *   MPI_Bcast_init (where the host declares it): the host's own persistent
 *               request is made first (it is the handle the user gets);
 *               kcoll_pmpi_persistent(&c, &comm, *request) then decides
 *               once whether kcoll runs its starts (on a private copy of
 *               comm: see run.c).
 *
 * The MPI-4 large-count forms (MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c,
 * where the host declares them: KCOLL_HAVE_LARGE_COUNT) sit beside their
 * int forms with the same shape and the same describing function, which
 * takes its counts as 64-bit values and its v arrays as either width
 * (kcoll_pmpi_side's wide); they hand to the host's PMPI_..._c.
 */
#ifndef KCOLL_PMPI_H
#define KCOLL_PMPI_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "call/adapt.h"
#include "call/call.h"
#include "call/shortcut.h"
#include "model/machine.h"
#include "mpi/host.h"
#include "mpi/objects.h"
#include "sched/wait.h"

/* The MPI entry points and the public API keep default visibility; the
 * rest of the library is hidden (-fvisibility=hidden). */
#define KCOLL_PUBLIC __attribute__((visibility("default")))

/* 1 once kcoll is set up (MPI_Init went through it, or lazily after a
 * PMPI_Init it did not see); 0 before MPI_Init and after MPI_Finalize. */
int kcoll_ready(void);

/* Start a description: collective, root, and the communicator's size and
 * rank (0, 0 if comm is not a usable intra-communicator); no MPI handles. */
void kcoll_pmpi_describe(kcoll_call_t *c, kcoll_coll_t coll, int root, MPI_Comm comm);
/* One buffer side from MPI arguments (count, or counts and displs for a v
 * side: int arrays, or with wide the MPI_Count and MPI_Aint arrays of the
 * large-count _c forms). buf is moved to the datatype's first byte. like:
 * a side of the same call already described with the same datatype,
 * whose answers are taken instead of asking the host again; or NULL. */
void kcoll_pmpi_side(kcoll_side_t *s, const void *buf, int64_t count, const void *counts,
                     const void *displs, int wide, MPI_Datatype dt, const kcoll_side_t *like);
/* The whole description of a collective without a root in which every
 * rank sends and receives (Allgather(v): no send counts; Alltoall(v)).
 * MPI_IN_PLACE as sendbuf: the send side is not looked at. wide: the v
 * arrays are the _c forms' (MPI_Count counts, MPI_Aint displacements). */
void kcoll_pmpi_describe_all(kcoll_call_t *c, kcoll_coll_t coll, const void *sendbuf,
                             int64_t sendcount, const void *sendcounts, const void *sdispls,
                             MPI_Datatype sendtype, void *recvbuf, int64_t recvcount,
                             const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                             int wide, MPI_Comm comm);

/* Run a blocking call through kcoll if it takes it: KCOLL_PMPI_DONE with
 * the MPI result in *rc, or KCOLL_PMPI_HOST when the host MPI must do it.
 * On a communicator that spans nodes a call runs as one schedule across
 * them where kcoll has a layout for it (span/run.c, with the
 * description's MPI handles). */
#define KCOLL_PMPI_HOST 0
#define KCOLL_PMPI_DONE 1
int kcoll_pmpi_blocking(const kcoll_call_t *c, MPI_Comm comm, int *rc);
/* Start a non-blocking call through kcoll if it takes it: KCOLL_PMPI_DONE
 * with *request set and the MPI result in *rc, or KCOLL_PMPI_HOST. */
int kcoll_pmpi_nonblocking(const kcoll_call_t *c, MPI_Comm comm, MPI_Request *request, int *rc);
/* A persistent request the host made (request): decide once whether kcoll
 * runs its starts (KCOLL_PMPI_DONE, across nodes as one schedule where it
 * can) or the host does (KCOLL_PMPI_HOST); recorded either way. */
int kcoll_pmpi_persistent(const kcoll_call_t *c, MPI_Comm comm, MPI_Request request);
/* The large-count (_c) forms take the same three: across nodes too, where
 * the host collectives between nodes fit their int counts (span/run.c). */
/* The descriptions of the intercepted calls (bcast.c, reduce.c,
 * gather.c, scatter.c), as their entry points make them. */
void kcoll_pmpi_bcast_call(kcoll_call_t *c, void *buffer, int64_t count, MPI_Datatype datatype,
                           int root, MPI_Comm comm);
void kcoll_pmpi_reduce_call(kcoll_call_t *c, kcoll_op_t *op, kcoll_coll_t coll,
                            const void *sendbuf, void *recvbuf, int64_t count,
                            const void *recvcounts, int wide, MPI_Datatype datatype, MPI_Op mop,
                            int root, MPI_Comm comm);
void kcoll_pmpi_gather_call(kcoll_call_t *c, kcoll_coll_t coll, const void *sendbuf,
                            int64_t sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int64_t recvcount, const void *recvcounts, const void *displs,
                            int wide, MPI_Datatype recvtype, int root, MPI_Comm comm);
void kcoll_pmpi_scatter_call(kcoll_call_t *c, kcoll_coll_t coll, const void *sendbuf,
                             int64_t sendcount, const void *sendcounts, const void *displs,
                             int wide, MPI_Datatype sendtype, void *recvbuf, int64_t recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm);
/* The blocking wrappers' shape. Below the crossover the host MPI does
 * the call, and what the wrapper adds is all kcoll costs there: so each
 * blocking MPI_* entry point that has a shortcut or a kept streak is a
 * few lines that ask it (inline, loads and compares only) and then call
 * the host's PMPI_* as their tail call (KCOLL_HOST_CALL, below), so
 * that the compiler sets up no room for the call's description there (a
 * shortcut's wrapper saves no register either; a kept streak's, holding
 * nine arguments, a few);
 * everything else, the call described, agreed, run or handed over
 * driven, is a function of its own, KCOLL_SLOW. */
#define KCOLL_SLOW static __attribute__((noinline))
/* A blocking MPI_Gatherv, MPI_Scatterv or MPI_Alltoallv (collective c,
 * root; 0 for the all-to-all) on comm: 1 when its team's host streak
 * (call/call.c) sends it to the host MPI now, counted with this rank's
 * own bytes (vcounts of vtype where it has them: the root's blocks, an
 * all-to-all's receive counts; else count of type), before the call is
 * even described; the caller then runs the host's call, driven. So does a
 * call while kcoll is disabled (KCOLL_DISABLE), counted as such. */
int kcoll_pmpi_streak(kcoll_coll_t c, MPI_Comm comm, int root, const int *vcounts,
                      MPI_Datatype vtype, int count, MPI_Datatype type);
/* The same, inline, for the entry point's tail call: 1 when the kept
 * streak (call/shortcut.h) takes the call and its bytes count with the
 * datatype size the kept streak holds (the type its previous call
 * counted, a predefined one), or, kcoll disabled, its fast path takes it;
 * 0, with nothing taken, where anything else is needed (then
 * kcoll_pmpi_streak decides). */
static inline int kcoll_pmpi_streak_quick(kcoll_coll_t c, MPI_Comm comm, int root,
                                          const int *vcounts, MPI_Datatype vtype, int count,
                                          MPI_Datatype type)
{
    kcoll_streak_fast_t *f = &kcoll_streak_fasts[c];
    /* (f->rank is read before the take checks f: a streak not kept
     * takes nothing, whatever it read) */
    const int v = kcoll_streak_v(c, f->rank, root, vcounts);
    const int none = !v && count <= 0; /* no bytes, whatever the type */
    if ((!none && (!f->size || KCOLL_HANDLE_WORD(v ? vtype : type) != f->type)) ||
        !kcoll_streak_fast_take(c, KCOLL_HANDLE_WORD(comm), root))
        return kcoll_off_fast.cells[c] && kcoll_off_fast.gen == kcoll_params_generation() &&
               kcoll_off_count(c, comm, root, vcounts, vtype, count, type);
    kcoll_streak_fast_count(f, kcoll_streak_sum(v, f->p, vcounts, count, f->size));
    return 1;
}
/* The host's PMPI_name, the blocking function of collective c, as the
 * entry points' tail calls reach it (call/shortcut.h, kcoll_host_fns) */
#define KCOLL_HOST_CALL(c, name) ((__typeof__(&PMPI_##name))kcoll_host_fns[c])
/* Return the blocking host call `call` (an int expression), driven. */
#define KCOLL_RETURN_DRIVEN(call)                                                        \
    do {                                                                                 \
        int drive_ = kcoll_drive_begin();                                                \
        int rc_ = (call);                                                                \
        kcoll_drive_end(drive_);                                                         \
        kcoll_adapt_end(); /* a timed call of a decision under check ends */            \
        return rc_;                                                                      \
    } while (0)
/* The same for a communicator constructor: the new communicator *newcomm
 * gets its record (mpi/teams.c) when the call succeeded (kcoll set up
 * first, where the program called PMPI_Init itself). */
#define KCOLL_RETURN_MADE(call, newcomm)                                                 \
    do {                                                                                 \
        int drive_ = kcoll_drive_begin();                                                \
        int rc_ = (call);                                                                \
        kcoll_drive_end(drive_);                                                         \
        if (rc_ == MPI_SUCCESS && kcoll_ready())                                         \
            kcoll_comm_created(*(newcomm));                                              \
        return rc_;                                                                      \
    } while (0)
/* Persistent requests' plans (pmpi/request.c), let go of at the end. */
void kcoll_plans_finalize(void);

/* The shortcut (call/shortcut.h) of the blocking collectives whose v
 * arrays, if any, decide before an agreement: the arguments the decision
 * reads as 8 words (handles by value, whatever the MPI makes them; of the
 * buffers only whether they are MPI_IN_PLACE, as the memo's key:
 * call/call.c), ... */
#define KCOLL_SHORTCUT_KEY(comm, sbuf, rbuf, stype, rtype, op, scount, rcount, root)     \
    {KCOLL_HANDLE_WORD(comm),                                                            \
     (uint64_t)((sbuf) == MPI_IN_PLACE) | (uint64_t)((rbuf) == MPI_IN_PLACE) << 1,       \
     KCOLL_HANDLE_WORD(stype),                                                           \
     KCOLL_HANDLE_WORD(rtype),                                                           \
     KCOLL_HANDLE_WORD(op),                                                              \
     (uint64_t)(int64_t)(scount),                                                        \
     (uint64_t)(int64_t)(rcount),                                                        \
     (uint64_t)(int64_t)(root)}
/* (The word of a handle a collective does not have: the operation of one
 * that is not a reduction, a barrier's datatypes. A constant, not the
 * host's null handle: under Open MPI a predefined handle is the address
 * of its object in libmpi, which the entry point would read from the
 * library's global offset table, a line on a page of its own, on every
 * call. The shortcut's key of a collective is only ever compared with
 * keys of the same collective.) */
#define KCOLL_SHORTCUT_NONE 0
/* ... a call that takes it goes to the host MPI at once (none when kcoll
 * requests are pending: the host call must then be driven) ... */
static inline int kcoll_pmpi_shortcut(kcoll_coll_t coll, const uint64_t key[KCOLL_SHORTCUT_WORDS])
{
    return !kcoll_pending() && kcoll_shortcut_take(coll, key, NULL, NULL);
}
/* (MPI_Reduce_scatter, MPI_Allgatherv: their count and displacement
 * arrays compared too; displs NULL: none) */
static inline int kcoll_pmpi_shortcut_v(kcoll_coll_t coll,
                                        const uint64_t key[KCOLL_SHORTCUT_WORDS], const int *counts,
                                        const int *displs)
{
    return !kcoll_pending() && kcoll_shortcut_take(coll, key, counts, displs);
}
/* Is this rank comm's root (or is comm not known: then as if it were)? */
static inline int kcoll_pmpi_is_root(MPI_Comm comm, int root)
{
    int p, rank;
    return !kcoll_comm_known(comm, &p, &rank) || rank == root;
}
/* ... and a call that went to the host arms it, where the datatypes it
 * looks at (stype, rtype: MPI_BYTE for one that MPI_IN_PLACE or the rank
 * makes insignificant) and its operation (MPI_OP_NULL: none) are
 * predefined ones: never freed, so a handle compared says the same layout
 * and operation. */
static inline void kcoll_pmpi_shortcut_arm(kcoll_coll_t coll,
                                           const uint64_t key[KCOLL_SHORTCUT_WORDS],
                                           MPI_Datatype stype, MPI_Datatype rtype, MPI_Op op)
{
    if (kcoll_shortcut_rests[coll].offer)
        kcoll_shortcut_arm(coll, key,
                           kcoll_dtype_plain(stype) && kcoll_dtype_plain(rtype) &&
                               kcoll_pmpi_op_predefined(op));
}

#endif
