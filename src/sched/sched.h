/* The schedule: one rank's part of a collective as a list of steps
 * (DESIGN.md section 3; the delegation framework of paper 002).
 *
 * An algorithm is a builder function that appends, for one rank, the steps
 * it performs. The same list is executed for real (sched/exec.c), checked
 * by the simulator for every rank of a p-process collective at once
 * (sched/sim.c) and, later, priced by the cost model.
 *
 * Buffers are named symbolically: SEND and RECV are the user's buffers of
 * the call, TMP a scratch buffer. A peer's buffer can be read or written
 * only after the peer has EXPOSEd it for the same collective; the executor
 * and the simulator both make READ/WRITE wait for that exposure.
 *
 * REDUCE combines two local byte ranges with the collective's reduction
 * operation (op/op.h): dst = src op dst, elementwise; it reads src and
 * reads and writes dst.
 *
 * Flags are single-writer, monotonically increasing counters: SIGNAL(f, v)
 * sets this rank's flag f to v (for this collective), WAIT(peer, f, v)
 * waits until the peer's flag f has reached at least v. Values a rank
 * signals on one flag within one collective never decrease.
 *
 * EXTERN(i) runs an operation outside the team's shared memory: the
 * collective's i-th external operation (kcoll_xop_t below), such as an
 * agreement or a host-MPI non-blocking call on a sub-communicator. The
 * executor starts it when it reaches the step and then tests it in later
 * progress calls until it is done, so a schedule can mix kcoll phases with
 * host phases. The simulator models an external operation as one event
 * shared by every rank of the collective that runs it: it completes on a
 * rank once every such rank has started it.
 *
 * A schedule may also own host collectives (kcoll_xcoll_t): a collective
 * of the host MPI between the members of a group of ranks, such as the
 * nodes' leaders or one lane of every node, described as plain data
 * (which collective, which group, the buffers by their symbolic names,
 * bytes). An EXTERN step with flag KCOLL_EXTERN_XCOLL names the schedule's
 * own descriptor number `value` (s->xc[value]); an EXTERN step without it
 * names the collective's operation `value` as before. The two numberings
 * are apart, so a schedule can hold an agreement and host collectives at
 * once, and appending a schedule renumbers only its own descriptors. The
 * runtime resolves a descriptor to a host non-blocking call on the group's
 * communicator; the simulator (kcoll_sim_set_nodes) matches the members'
 * calls and carries out their data semantics. Such a step runs its host
 * collective whole (start, then wait), or one half of a split one (BEGIN:
 * start and go on; END: wait), so a rank can copy on its node while its
 * messages cross the network (kcoll_sched_xbegin). This is how a call spanning
 * nodes becomes one schedule: on-node phases built by the one-node
 * builders, joined by host collectives between nodes (src/cluster/).
 */
#ifndef KCOLL_SCHED_H
#define KCOLL_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"

typedef enum {
    KCOLL_BUF_SEND = 0,
    KCOLL_BUF_RECV = 1,
    KCOLL_BUF_TMP = 2,
    KCOLL_NBUF = 3
} kcoll_buf_t;

typedef enum {
    KCOLL_FLAG_DATA = 0, /* "I hold data you may read" / progress of a producer */
    KCOLL_FLAG_DONE = 1, /* "I have finished with your buffers" */
    KCOLL_FLAG_AUX = 2,  /* a third chain for algorithms that need one */
    KCOLL_NFLAG = 3
} kcoll_flag_t;

/* Largest value a step may SIGNAL or WAIT for within one collective. */
#define KCOLL_FLAG_VALUE_MAX ((1u << 24) - 1)

typedef enum {
    KCOLL_STEP_EXPOSE, /* publish local buffer lbuf (address, length) */
    KCOLL_STEP_READ,   /* peer's pbuf[poff..+len) -> local lbuf[loff..+len);
                        * flag 1 (staged): the next step is the REDUCE of
                        * exactly these local bytes, and nothing else reads
                        * them before they are written again */
    KCOLL_STEP_WRITE,  /* local lbuf[loff..+len) -> peer's pbuf[poff..+len) */
    KCOLL_STEP_COPY,   /* local lbuf[loff..+len) -> local pbuf[poff..+len) */
    KCOLL_STEP_SIGNAL, /* own flag `flag` := value */
    KCOLL_STEP_WAIT,   /* until peer's flag `flag` >= value */
    KCOLL_STEP_REDUCE, /* local pbuf[poff..+len) = lbuf[loff..+len) op pbuf[poff..+len);
                        * flag 1 (reversed): pbuf = pbuf op lbuf */
    KCOLL_STEP_EXTERN  /* run external operation number `value` (kcoll_xop_t);
                        * flag KCOLL_EXTERN_XCOLL: the schedule's host
                        * collective number `value` (kcoll_xcoll_t) */
} kcoll_step_kind_t;

/* A step's fields, by kind. The local data steps (COPY, REDUCE) name
 * their two local buffers source (sbuf at soff) and destination (dbuf at
 * doff); they share their storage with the transfers' local and peer's
 * buffers (lbuf at loff, pbuf at poff), so code that treats every data
 * step alike (appending, mapping a phase, coalescing runs) reads one
 * pair: a local step's source is where a transfer's local side is, its
 * destination where the peer's side is. The one-bit modifiers share the
 * SIGNAL/WAIT flag's byte: a READ's `staged`, a REDUCE's `rev`. */
typedef struct {
    uint8_t kind;  /* kcoll_step_kind_t */
    union {
        uint8_t lbuf;  /* EXPOSE, READ, WRITE: the local buffer */
        uint8_t sbuf;  /* COPY, REDUCE: the source */
        uint8_t xpart; /* EXTERN naming a host collective: KCOLL_XPART_* */
    };
    union {
        uint8_t pbuf;  /* READ, WRITE: the peer's buffer */
        uint8_t dbuf;  /* COPY, REDUCE: the (local) destination */
    };
    union {
        uint8_t flag;   /* SIGNAL, WAIT: which flag */
        uint8_t staged; /* READ: its REDUCE follows (kcoll_sched_read_staged) */
        uint8_t rev;    /* REDUCE: dbuf = dbuf op sbuf (kcoll_sched_reduce_rev) */
    };
    int32_t peer;  /* READ/WRITE/WAIT: team rank of the peer */
    uint32_t value;/* SIGNAL/WAIT: flag value; EXTERN: operation or descriptor number */
    union {
        size_t loff; /* READ, WRITE */
        size_t soff; /* COPY, REDUCE */
    };
    union {
        size_t poff; /* READ, WRITE */
        size_t doff; /* COPY, REDUCE */
    };
    size_t len;
} kcoll_step_t;

/* EXTERN step flag: `value` names s->xc[value], not a kcoll_xop_t. */
#define KCOLL_EXTERN_XCOLL 1
/* Which part of its host collective such a step runs (kcoll_step_t.xpart):
 * the whole (start it, then wait until it is done), or a split one's start
 * (the rank moves on at once: kcoll_sched_xbegin) or end (wait until the
 * collective started by its BEGIN step is done: kcoll_sched_xend). */
enum { KCOLL_XPART_WHOLE = 0, KCOLL_XPART_BEGIN, KCOLL_XPART_END };
/* Does step st start a host collective (a WHOLE or BEGIN part)? */
#define KCOLL_STEP_XSTARTS(st)                                                          \
    ((st)->kind == KCOLL_STEP_EXTERN && (st)->flag == KCOLL_EXTERN_XCOLL &&             \
     (st)->xpart != KCOLL_XPART_END)

/* Host collectives a schedule can own (kcoll_xcoll_t.coll). */
typedef enum {
    KCOLL_XC_ALLREDUCE = 0,
    KCOLL_XC_REDUCE,
    KCOLL_XC_BCAST,
    KCOLL_XC_ALLGATHER,
    KCOLL_XC_REDUCE_SCATTER_BLOCK,
    KCOLL_XC_GATHER,
    KCOLL_XC_SCATTER,
    KCOLL_XC_BARRIER,
    KCOLL_XC_GATHERV,
    KCOLL_XC_ALLGATHERV,
    KCOLL_XC_SCATTERV,
    KCOLL_XC_REDUCE_SCATTER, /* the v form of REDUCE_SCATTER_BLOCK */
    KCOLL_XC_ALLTOALL,
    KCOLL_XC_ALLTOALLV,
    KCOLL_XC_CALL, /* the call itself, whole: its host MPI's collective with its own arguments */
    KCOLL_NXC
} kcoll_xcoll_kind_t;

/* One host collective between the members of a group, as this rank takes
 * part in it. Plain data, so it can be copied, renumbered and mapped with
 * the steps, and resolved by an executor to addresses (the buffers), a
 * communicator (the group) and counts (len / esize elements of the call's
 * datatype, the call's operation). Every member of the group must start
 * the group's host collectives in the same order with the same coll,
 * root, len and esize (MPI's rule for collectives on one communicator).
 *  - group: an id the caller's layout gives meaning to (src/cluster/:
 *    the nodes' leaders, lane l of every node); its members have ranks
 *    0..n-1 in it;
 *  - root: REDUCE, BCAST, GATHER, SCATTER: the root's rank in the group,
 *    else 0; BARRIER has no buffers (len 0, esize 1);
 *  - sbuf[soff..) is what this rank contributes, rbuf[roff..) where its
 *    result goes; sbuf == rbuf with soff == roff is in place
 *    (MPI_IN_PLACE; every member's or none's where MPI says so:
 *    kcoll_xcoll_in_place_alike): for ALLGATHER and GATHER the own block already lies
 *    at its place in rbuf, for REDUCE_SCATTER_BLOCK the n blocks are in
 *    rbuf and the result goes to its start. BCAST uses rbuf only (the
 *    root's is the source); a non-root's rbuf of REDUCE, the root's sbuf
 *    of GATHER and a non-root's rbuf of SCATTER are not used;
 *  - len, in bytes: the whole vector of ALLREDUCE, REDUCE and BCAST; one
 *    member's block of ALLGATHER and GATHER (n blocks received),
 *    REDUCE_SCATTER_BLOCK (n blocks contributed, one received) and
 *    SCATTER (n blocks sent by the root);
 *  - esize: bytes per element (len is a multiple): the reductions' unit;
 *  - the v forms GATHERV, ALLGATHERV, SCATTERV and REDUCE_SCATTER move
 *    blocks of their own length per member: member i's block is the
 *    schedule's xv[vat + i] bytes (nv = n of them, kcoll_sched_xcoll_v),
 *    and the blocks lie back to back in member order in the gathered
 *    (scattered, contributed) buffer, block i at the sum of the lengths
 *    before it; len is their sum, esize 1 (REDUCE_SCATTER: the element,
 *    every length a multiple of it). In place, as the uniform forms;
 *  - ALLTOALL sends member i the i-th of n blocks of len bytes from sbuf
 *    and receives member i's block for it as the i-th of n in rbuf;
 *    ALLTOALLV, each member's own lengths: xv[vat + i] bytes to member i
 *    and xv[vat + n + i] from it (nv = 2n), each side back to back in
 *    member order, len the sum of all 2n; member i's length to member j
 *    is member j's from member i (MPI's rule). Never in place;
 *  - CALL is the call the schedule runs, done whole by the host MPI with
 *    the call's own arguments, which the executor knows (no buffers, len
 *    0, group ignored: every rank of the call is a member): a layout that
 *    decided only after the call returned to give it back to the host
 *    (span/run.c). */
typedef struct {
    uint8_t coll; /* kcoll_xcoll_kind_t */
    uint8_t sbuf, rbuf;
    int32_t group, root;
    uint32_t vat, nv; /* the v forms' block lengths: s->xv[vat .. vat + nv) */
    size_t soff, roff, len, esize;
} kcoll_xcoll_t;

/* Is x in place (MPI_IN_PLACE)? */
static inline int kcoll_xcoll_in_place(const kcoll_xcoll_t *x)
{
    return x->sbuf == x->rbuf && x->soff == x->roff;
}
/* Does a host collective of kind coll combine its members' data with the
 * call's operation (its len counts elements of esize bytes)? */
static inline int kcoll_xcoll_reduces(int coll)
{
    return coll == KCOLL_XC_ALLREDUCE || coll == KCOLL_XC_REDUCE ||
           coll == KCOLL_XC_REDUCE_SCATTER_BLOCK || coll == KCOLL_XC_REDUCE_SCATTER;
}
/* How many lists of n members' lengths a v form of kind coll names
 * (nv = n times it): ALLTOALLV's sent and received, the others' one. */
static inline int kcoll_xcoll_sides(int coll)
{
    return coll == KCOLL_XC_ALLTOALLV ? 2 : 1;
}
/* Does MPI require MPI_IN_PLACE of every member of x's kind or of none
 * (Allreduce, Reduce_scatter(_block), Allgather(v)), where the rooted kinds
 * look at the root's alone? */
static inline int kcoll_xcoll_in_place_alike(int coll)
{
    return coll == KCOLL_XC_ALLREDUCE || coll == KCOLL_XC_REDUCE_SCATTER_BLOCK ||
           coll == KCOLL_XC_REDUCE_SCATTER || coll == KCOLL_XC_ALLGATHER ||
           coll == KCOLL_XC_ALLGATHERV;
}

typedef struct {
    kcoll_step_t *steps;
    int n, cap;
    kcoll_status_t err; /* sticky: first failure while appending */
    kcoll_xcoll_t *xc;  /* host collectives, named by EXTERN steps with KCOLL_EXTERN_XCOLL */
    int nxc, xccap;
    size_t *xv;         /* the v forms' block lengths (kcoll_xcoll_t.vat, nv) */
    int nxv, xvcap;
} kcoll_sched_t;

/* An external operation (EXTERN steps). Implementations embed it as
 * their first member. start is called once, when the step is reached;
 * test then until it returns KCOLL_OK (done) or an error (with a one-line
 * reason in err); KCOLL_IN_PROGRESS means "not yet". Neither may block. */
typedef struct kcoll_xop kcoll_xop_t;
struct kcoll_xop {
    const char *name; /* in traces: "agree", "PMPI_Ibcast" */
    int peer;         /* team rank a test is waiting for, or -1: for the watchdog */
    kcoll_status_t (*start)(kcoll_xop_t *op, char *err, size_t errlen);
    kcoll_status_t (*test)(kcoll_xop_t *op, char *err, size_t errlen);
};

/* What runs a schedule's host collectives (EXTERN steps with
 * KCOLL_EXTERN_XCOLL): the layer that knows the groups' communicators,
 * the call's datatype and operation; data is the run's own state for it.
 * start begins host collective *x on the run's buffers (bufs: SEND, RECV,
 * TMP as the executor has them; vlen: a v form's block lengths, x->nv of
 * them, else NULL): KCOLL_OK (started), KCOLL_IN_PROGRESS
 * (not now: not this call's turn on the group, or a thread that may not
 * call the host; the executor asks again on its next turn) or an error
 * with a one-line reason in err. test then until it returns KCOLL_OK
 * (done) or an error; KCOLL_IN_PROGRESS means "not yet". id is the
 * descriptor's number (s->xc[id]): a run may have several host
 * collectives in flight, those its BEGIN steps started (split: 1, the
 * host's non-blocking form whatever the call's, since the rank goes on
 * meanwhile) beside the one a WHOLE step runs (split 0). poll drives every
 * host collective in flight without waiting for any (the host MPI moves
 * its non-blocking collectives only inside its calls): KCOLL_OK, or an
 * error. None may block. */
typedef struct {
    kcoll_status_t (*start)(void *data, int id, const kcoll_xcoll_t *x, const size_t *vlen,
                            void *const bufs[KCOLL_NBUF], int split, char *err, size_t errlen);
    kcoll_status_t (*test)(void *data, int id, char *err, size_t errlen);
    kcoll_status_t (*poll)(void *data, char *err, size_t errlen);
} kcoll_xhost_t;

void kcoll_sched_init(kcoll_sched_t *s);
void kcoll_sched_reset(kcoll_sched_t *s); /* empty it, keep the memory */
void kcoll_sched_free(kcoll_sched_t *s);

/* Appenders. Zero-length data steps are dropped. Failures are remembered in
 * s->err, so a builder can append freely and return s->err at the end. */
void kcoll_sched_expose(kcoll_sched_t *s, kcoll_buf_t buf);
void kcoll_sched_read(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                      kcoll_buf_t lbuf, size_t loff, size_t len);
void kcoll_sched_write(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                       kcoll_buf_t lbuf, size_t loff, size_t len);
/* A READ into scratch whose only use is the REDUCE that the caller
 * appends next (dbuf[doff..+len) = lbuf[loff..+len) op dbuf[...]): where
 * the peer's buffer can be mapped (the direct engine), the executor
 * reduces straight from the peer's memory and leaves the scratch alone
 * (paper 004 IV.A, the peers' vectors read in place). The simulator holds
 * a builder to it: the next step must be that REDUCE, and the scratch
 * bytes are scrambled after it, so a later read of them shows. */
void kcoll_sched_read_staged(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                             kcoll_buf_t lbuf, size_t loff, size_t len);
void kcoll_sched_copy(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff,
                      kcoll_buf_t sbuf, size_t soff, size_t len);
/* dbuf[doff..+len) = sbuf[soff..+len) op dbuf[doff..+len): the operation
 * the executor (kcoll_exec_t.op) or the simulator (kcoll_sim_set_op) has. */
void kcoll_sched_reduce(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff,
                        kcoll_buf_t sbuf, size_t soff, size_t len);
/* dbuf = dbuf op sbuf (operands the other way round; not for user
 * functions, see kcoll_op_has_rev). */
void kcoll_sched_reduce_rev(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff,
                            kcoll_buf_t sbuf, size_t soff, size_t len);
void kcoll_sched_signal(kcoll_sched_t *s, kcoll_flag_t flag, uint32_t value);
void kcoll_sched_wait(kcoll_sched_t *s, int peer, kcoll_flag_t flag, uint32_t value);
/* Run the collective's external operation number `op`. */
void kcoll_sched_extern(kcoll_sched_t *s, int op);
/* Own host collective *x (a copy) and append the EXTERN step that runs it. */
void kcoll_sched_xcoll(kcoll_sched_t *s, const kcoll_xcoll_t *x);
/* The same for a v form (GATHERV, ALLGATHERV, SCATTERV, REDUCE_SCATTER):
 * member i's block is lens[i] bytes, n members (x->vat, nv and len are set
 * here; esize too: 1, or a reduction's x->esize). */
void kcoll_sched_xcoll_v(kcoll_sched_t *s, const kcoll_xcoll_t *x, const size_t *lens, int n);
/* A host collective that overlaps what follows it: xbegin owns *x (lens:
 * a v form's n block lengths, as kcoll_sched_xcoll_v; NULL: the uniform
 * form) and appends the step that starts it and moves on; it returns the
 * descriptor number (-1 on failure, in s->err) for the xend that appends
 * the step that waits until it is done. In between this rank leaves x's
 * buffers alone (its receive side unread, its send side unwritten: MPI's
 * rule for a pending non-blocking call; the simulator holds a builder to
 * it) and may start others. */
int kcoll_sched_xbegin(kcoll_sched_t *s, const kcoll_xcoll_t *x, const size_t *lens, int n);
void kcoll_sched_xend(kcoll_sched_t *s, int id);
/* A v form's block lengths (x->nv of them), or NULL for a uniform one. */
static inline const size_t *kcoll_sched_xlens(const kcoll_sched_t *s, const kcoll_xcoll_t *x)
{
    return x->nv ? s->xv + x->vat : NULL;
}
/* Copy src's steps to the end of dst (dst->err on failure); src's host
 * collectives come along, the EXTERN steps that name them renumbered to
 * their place in dst (the collective's operations keep their numbers). */
void kcoll_sched_append(kcoll_sched_t *dst, const kcoll_sched_t *src);
/* Where one phase's buffers lie in a composed schedule: the phase's buffer
 * b is buf[b], from byte off[b] on (a subgroup's SEND may be an earlier
 * phase's result in RECV, or a leader's partial result in TMP). */
typedef struct {
    uint8_t buf[KCOLL_NBUF];
    size_t off[KCOLL_NBUF];
} kcoll_bufmap_t;
/* Every buffer where it is; with send_is_recv, SEND is RECV. */
void kcoll_bufmap_init(kcoll_bufmap_t *m, int send_is_recv);

/* Append src, built for a subgroup, as one phase of a composed schedule:
 * peer i of src is team rank peer_of[i]; every SIGNAL and WAIT value v
 * becomes base + v, v below `values`, the phase's range (phases of one
 * collective take increasing bases, each a range of its own, so each
 * phase's values lie above the last's: flags keep growing; a value past
 * the range fails the append, dst->err); the
 * buffers of subgroup rank i lie as map[i] says (nmap == 1: map[0] for
 * every rank; map NULL: where they are), those of this rank as map[me]:
 * a step's local buffer and offset follow this rank's map, the peer's
 * buffer and offset of a READ or WRITE the peer's. Host collectives come
 * along as with kcoll_sched_append, their buffers and offsets mapped by
 * this rank's map (group ids and group ranks are the composer's already). */
#define KCOLL_PHASE_VALUES (1u << 20) /* values a phase may use; bases step by this */
void kcoll_sched_append_mapped(kcoll_sched_t *dst, const kcoll_sched_t *src, const int *peer_of,
                               uint32_t base, uint32_t values, const kcoll_bufmap_t *map,
                               int nmap, int me);

/* One line per step, prefixed with "rank R:" (KCOLL_TRACE). */
void kcoll_sched_print(const kcoll_sched_t *s, int rank, FILE *out);
const char *kcoll_buf_name(int buf);
const char *kcoll_flag_name(int flag);
const char *kcoll_xcoll_name(int coll); /* "ALLREDUCE" */

#endif
