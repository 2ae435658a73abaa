/* Calls across nodes run as one schedule (DESIGN.md section 2, "Across
 * nodes"; docs/hierarchy.md).
 *
 * A call on a communicator that spans nodes, in a layout of src/cluster/
 * (leaders or lanes), is one request of the call layer on the node team
 * of the communicator's span record (span.h: xnode), run by the one request
 * engine like any on-node call, blocking, non-blocking or persistent: its
 * on-node phases are the one-node builders' steps, its host collectives
 * between nodes EXTERN steps, which this file runs. A host collective
 * names a group (the leaders, or lane l: span.h's xgroups, where rank k is
 * node k) and its buffers by their place in the run's buffers; here it
 * becomes the host's non-blocking call on the group's communicator
 * (PMPI_Iallreduce, PMPI_Ireduce, ...; a blocking call's, the host's
 * blocking one: PMPI_Allreduce...), with the call's own datatype and
 * operation for a reduction (MPI requires both alike on every rank, so
 * the element is whole: lanes cut the vector between elements) and bytes
 * otherwise, and is tested with PMPI_Test until it completes.
 *
 * Host calls are made only where kcoll may call MPI: never on the helper
 * thread (mpi/drive.c; span.h: may_call), which then leaves the step for
 * the next caller.
 * The call layer starts the host collectives of the node team's calls in
 * call order (call/request.c, team->xturn), so every member of a group
 * starts them in the same order.
 *
 * Which collectives: those src/cluster/registry.c has a layout of
 * (MPI_Barrier, MPI_Bcast, the reductions with MPI_Reduce_scatter(_block),
 * MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v)), int
 * and large-count forms:
 * predefined operations and commutative user ones on any placement,
 * non-commutative user ones where every node's ranks are consecutive
 * (src/cluster/ combines per node, then over the nodes), while the host
 * collectives between nodes fit their int counts.
 * Where a layout cannot run a call of theirs the host MPI does it whole.
 *
 * An MPI_Gatherv or MPI_Scatterv, whose blocks only the root knows,
 * agrees first: the root broadcasts its layout (the host's MPI_Ibcast on
 * the call's communicator, in the call; a persistent one's at its
 * initialization), after which every rank holds every block's length and
 * place and picks alike (kcoll_across_rooted_v); a non-blocking one
 * begins the broadcast in the call and settles it as the MPI_Ialltoallv
 * does (below).
 * The blocking calls that agree (these and the Alltoallv) keep a host
 * streak under KCOLL_HIER=auto: an agreement that gives the call to the
 * host lets the next 1, 2, 4 ... calls with the same root go to the host
 * without agreeing, as on one node (call/call.c), until one runs in a
 * layout (kcoll_across_streak_take).
 *
 * A blocking MPI_Alltoallv (lanes) agrees first, since every rank knows
 * only its own counts: the host's MPI_Iallreduce (MAX) on the call's
 * communicator of every rank's largest block and of whether it can take
 * part (kcoll_alltoallv_sides) gives every rank the same size to decide
 * at; where the lanes run, the node's ranks then exchange their send
 * layouts (MPI_Iallgather on the node communicator), which the carriers
 * read (src/cluster/alltoall_lanes.c). Both are made inside the blocking
 * call, at the same place on every rank, so in the order of the program's
 * own collectives on those communicators (kcoll's between nodes use
 * others: the groups); while they run this rank's other requests advance,
 * whose host collectives another rank may be waiting for. Where the lanes
 * cannot pay at any size (the model's pick for a 1-byte block), there is
 * no agreement: the host MPI does the call whole, as before.
 * A persistent MPI_Alltoallv_init agrees the same way at its
 * initialization, where every rank is (on the request's own communicator:
 * pmpi/run.c); its starts run what it agreed. A non-blocking
 * MPI_Ialltoallv may not wait: it begins both host calls in the call (so
 * in the program's order on those communicators again) and settles them
 * in later progress (kcoll_across_settle, the request's turn of the
 * team's host collectives held meanwhile), deciding by the size classes
 * at which the model picks the lanes under the parameters of the call.
 * Where the outcome is the host, the host's MPI_Ialltoallv with the
 * program's own arguments runs as the request's one host collective
 * (KCOLL_XC_CALL) on a duplicate of the communicator that only these
 * calls use: started in the team's order of calls, where the program's
 * later collectives on its communicator cannot come between.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/params.h"
#include "model/select.h"
#include "span/span.h"

/* One host collective of a run as the host has it: its request while it
 * is in flight (MPI_REQUEST_NULL: none, or a blocking one, done on return),
 * or a non-blocking ALLTOALLV's nq messages (qs: kcoll_xrun_a2av), and a
 * v form's counts and displacements, kept until it is done. */
typedef struct {
    MPI_Request q;
    MPI_Request *qs;
    int nq;
    int *v;
} kcoll_xslot_t;

/* A call's state for its host collectives (the request keeps a copy:
 * kcoll_across_t.data). */
typedef struct {
    kcoll_span_t *h; /* held while the request is */
    MPI_Datatype dt; /* a reduction's datatype */
    MPI_Op op;
    MPI_Aint tlb;    /* dt's true lower bound: the buffers start at its first byte */
    kcoll_xslot_t *slot; /* by descriptor number (several may be in flight: split ones) */
    int nslot;
    int held;        /* dt, op and pdt are held (span.h: hold_type, hold_op) until the
                      * request goes */
    MPI_Datatype pdt[2]; /* the send and receive datatypes the packer packs (below), or null */
    int blocking;    /* a blocking call's: the host's blocking collectives */
    void *vlay;      /* a blocking Alltoallv's, Gatherv's or Scatterv's layouts
                      * (kcoll_across_t.lay), freed with the request */
    struct kcoll_xagree *ag; /* a non-blocking call's agreement (below), or NULL */
} kcoll_xrun_t;

/* An agreement of a non-blocking MPI_Alltoallv, MPI_Gatherv or
 * MPI_Scatterv, begun in the call and settled in later progress
 * (kcoll_across_settle), and the call's own arguments, for the host MPI
 * to do it whole where that is the outcome. */
typedef struct kcoll_xagree {
    kcoll_coll_t coll;
    /* Alltoallv: the vote (MPI_Iallreduce), the node's layouts
     * (MPI_Iallgather); Gatherv, Scatterv: the root's layout (MPI_Ibcast) */
    MPI_Request q[2];
    uint64_t vote[2];    /* Alltoallv: (MAX) the largest block; can't */
    size_t *tab;         /* Alltoallv: this rank's layout, sent; Gatherv, Scatterv: the
                          * root's, broadcast (kcoll_across_rooted_v) */
    kcoll_layout_t *lay; /* the layouts (kcoll_across_t.lay), with their storage */
    uint64_t picks;      /* the size classes that run in a layout (span.h: agreed) */
    const void *sbuf;    /* as the program passed them */
    void *rbuf;
    const void *scounts, *sdispls, *rcounts, *rdispls; /* copies (in varr), or NULL */
    void *varr;
    int64_t scount, rcount; /* Gatherv's send count, Scatterv's receive count */
    int root;
    int wide;            /* the large-count form's */
    MPI_Datatype stype, rtype;
} kcoll_xagree_t;

_Static_assert(sizeof(kcoll_xrun_t) <= sizeof(((kcoll_across_t *)0)->data),
               "a call's host state fits its request");

/* Free agreement a (NULL: none), not begun. */
static void kcoll_across_agree_free(kcoll_xagree_t *a)
{
    if (a) {
        free(a->tab);
        free(a->lay);
        free(a->varr);
        free(a);
    }
}

static kcoll_status_t kcoll_xrun_failed(int rc, const char *what, char *err, size_t errlen)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    snprintf(err, errlen, "the host MPI's %s between nodes failed: %s", what, msg);
    return KCOLL_ERR_PROTO;
}

/* Where the host call takes the bytes buf[off..): a reduction addresses
 * its datatype's elements from the lower bound. NULL stays NULL (a buffer
 * this rank does not have, as a non-root's result of a Reduce). */
static void *kcoll_xrun_at(void *const bufs[KCOLL_NBUF], int b, size_t off, MPI_Aint tlb)
{
    return bufs[b] ? (char *)bufs[b] + off - tlb : NULL;
}

/* A v form's member counts and displacements in units of `unit` bytes
 * (sides lists of n members' lengths in vlen, each side's blocks back to
 * back; a reduction's element, else 1) as the host takes them: d->v, for
 * each side n counts then n displacements, kept until the call is done.
 * 0, or -1 (err says why). */
static int kcoll_xrun_vcounts(kcoll_xslot_t *d, const size_t *vlen, int n, int sides,
                              size_t unit, char *err, size_t errlen)
{
    free(d->v);
    if (!(d->v = malloc(2 * (size_t)sides * (size_t)(n > 0 ? n : 1) * sizeof *d->v))) {
        snprintf(err, errlen, "out of memory for a host collective's counts");
        return -1;
    }
    for (int h = 0; h < sides; h++) {
        int *v = d->v + 2 * (size_t)h * (size_t)n;
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            const size_t len = vlen[(size_t)h * (size_t)n + (size_t)i];
            if (len > INT_MAX || at > INT_MAX) {
                snprintf(err, errlen,
                         "a host collective between nodes of more than INT_MAX bytes");
                return -1;
            }
            v[i] = (int)(len / unit);
            v[n + i] = (int)(at / unit);
            at += len;
        }
    }
    return 0;
}

/* The slot of descriptor id, made on first use (NULL: out of memory). */
static kcoll_xslot_t *kcoll_xrun_slot(kcoll_xrun_t *d, int id)
{
    if (id >= d->nslot) {
        const int n = id + 1 > 2 * d->nslot ? id + 1 : 2 * d->nslot;
        kcoll_xslot_t *t = realloc(d->slot, (size_t)n * sizeof *t);
        if (!t)
            return NULL;
        for (int i = d->nslot; i < n; i++)
            t[i] = (kcoll_xslot_t){MPI_REQUEST_NULL, NULL, 0, NULL};
        d->slot = t;
        d->nslot = n;
    }
    return &d->slot[id];
}

/* The call whole (KCOLL_XC_CALL: a non-blocking call's agreement gave it
 * back to the host): the host's own non-blocking call with the program's
 * arguments, on the communicator's duplicate (span.h: xall), which only
 * these calls use, each in the team's order of calls. */
static kcoll_status_t kcoll_xrun_call(kcoll_xrun_t *d, kcoll_xslot_t *sl, char *err,
                                      size_t errlen)
{
    const kcoll_xagree_t *a = d->ag;
    const MPI_Comm all = d->h->xall;
    int rc;
    if (!a) {
        snprintf(err, errlen, "a host call whole without the call's arguments");
        return KCOLL_ERR_ARG;
    }
    const char *what = a->coll == KCOLL_COLL_GATHERV    ? "MPI_Igatherv"
                       : a->coll == KCOLL_COLL_SCATTERV ? "MPI_Iscatterv"
                                                        : "MPI_Ialltoallv";
#ifdef KCOLL_HAVE_LARGE_COUNT
    if (a->wide && a->coll == KCOLL_COLL_GATHERV)
        rc = PMPI_Igatherv_c(a->sbuf, (MPI_Count)a->scount, a->stype, a->rbuf, a->rcounts,
                             a->rdispls, a->rtype, a->root, all, &sl->q);
    else if (a->wide && a->coll == KCOLL_COLL_SCATTERV)
        rc = PMPI_Iscatterv_c(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
                              (MPI_Count)a->rcount, a->rtype, a->root, all, &sl->q);
    else if (a->wide)
        rc = PMPI_Ialltoallv_c(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcounts,
                               a->rdispls, a->rtype, all, &sl->q);
    else
#endif
        if (a->coll == KCOLL_COLL_GATHERV)
        rc = PMPI_Igatherv(a->sbuf, (int)a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls,
                           a->rtype, a->root, all, &sl->q);
    else if (a->coll == KCOLL_COLL_SCATTERV)
        rc = PMPI_Iscatterv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, (int)a->rcount,
                            a->rtype, a->root, all, &sl->q);
    else
        rc = PMPI_Ialltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcounts,
                             a->rdispls, a->rtype, all, &sl->q);
    if (rc != MPI_SUCCESS) {
        sl->q = MPI_REQUEST_NULL;
        return kcoll_xrun_failed(rc, what, err, errlen);
    }
    return KCOLL_OK;
}

/* The tag of kcoll_xrun_a2av's messages (its groups' communicators carry
 * no other point-to-point traffic). */
#define KCOLL_XRUN_TAG 1

/* A non-blocking ALLTOALLV between nodes (member i's sc[i] bytes at
 * s + sd[i] to it, rc[i] bytes from it to r + rd[i]), as the messages it
 * is, on the group's communicator g: what the host's MPI_Ialltoallv does,
 * but Open MPI 4.1.4's left a lane's third call between uneven fake nodes
 * (2, 1 and 2 ranks; tests/mpi/test_hier.c) waiting for a block its
 * sender had sent, every member's counts matching, after two calls in
 * which the one-rank node's member moved nothing (the same three calls
 * alone on one node completed; Open MPI 5.0's, MPICH 5.0's and the
 * blocking MPI_Alltoallv were right). The members start a group's calls
 * in the same order (the team's turn: call/request.c), and messages
 * between two of them on one communicator and tag arrive in the order
 * they were sent, so every call's blocks meet their own. The block for
 * itself is copied. An MPI error code. */
static int kcoll_xrun_a2av(kcoll_xslot_t *sl, const char *s, const int *sc, const int *sd,
                           char *r, const int *rc, const int *rd, int me, int gn, MPI_Comm g)
{
    int err = MPI_SUCCESS;
    if (!(sl->qs = malloc(2 * (size_t)gn * sizeof *sl->qs)))
        return MPI_ERR_NO_MEM;
    sl->nq = 0;
    for (int i = 0; i < gn && err == MPI_SUCCESS; i++)
        if (i != me && rc[i])
            err = PMPI_Irecv(r + rd[i], rc[i], MPI_BYTE, i, KCOLL_XRUN_TAG, g, &sl->qs[sl->nq++]);
    for (int i = 0; i < gn && err == MPI_SUCCESS; i++)
        if (i != me && sc[i])
            err = PMPI_Isend(s + sd[i], sc[i], MPI_BYTE, i, KCOLL_XRUN_TAG, g, &sl->qs[sl->nq++]);
    if (err == MPI_SUCCESS && sc[me])
        memcpy(r + rd[me], s + sd[me], (size_t)sc[me]);
    return err;
}

static kcoll_status_t kcoll_xrun_start(void *data, int id, const kcoll_xcoll_t *x,
                                       const size_t *vlen, void *const bufs[KCOLL_NBUF], int split,
                                       char *err, size_t errlen)
{
    kcoll_xrun_t *d = data;
    const kcoll_span_t *h = d->h;
    if (!kcoll_span_host.may_call())
        return KCOLL_IN_PROGRESS; /* no MPI calls on the helper thread */
    kcoll_xslot_t *sl = id >= 0 ? kcoll_xrun_slot(d, id) : NULL;
    if (!sl) {
        snprintf(err, errlen, "out of memory for a host collective's state");
        return KCOLL_ERR_NOMEM;
    }
    if (x->coll == KCOLL_XC_CALL)
        return kcoll_xrun_call(d, sl, err, errlen);
    if (x->group < 0 || x->group >= h->nxgroups || h->xgroups[x->group] == MPI_COMM_NULL) {
        snprintf(err, errlen, "a host collective names group %d, of which this rank is not a member",
                 (int)x->group);
        return KCOLL_ERR_ARG;
    }
    const MPI_Comm g = h->xgroups[x->group];
    const int reduces = kcoll_xcoll_reduces(x->coll);
    const MPI_Aint tlb = reduces ? d->tlb : 0;
    const MPI_Datatype dt = reduces ? d->dt : MPI_BYTE;
    const int n = (int)(reduces ? x->len / x->esize : x->len);
    const int in_place = kcoll_xcoll_in_place(x);
    const void *s = kcoll_xrun_at(bufs, x->sbuf, x->soff, tlb);
    void *r = kcoll_xrun_at(bufs, x->rbuf, x->roff, tlb);
    int me = 0, rc, gn = 0;
    PMPI_Comm_rank(g, &me);
    PMPI_Comm_size(g, &gn);
    /* an ALLTOALLV's lengths: n sent, then n received */
    const int sides = kcoll_xcoll_sides(x->coll);
    if (x->nv && (!vlen || x->nv != (uint32_t)(sides * gn))) {
        snprintf(err, errlen, "a host %s between nodes with %u block lengths on a group of %d",
                 kcoll_xcoll_name(x->coll), x->nv, gn);
        return KCOLL_ERR_ARG;
    }
    if (x->nv && kcoll_xrun_vcounts(sl, vlen, gn, sides, reduces ? x->esize : 1, err, errlen))
        return KCOLL_ERR_NOMEM;
    const int *vc = sl->v, *vd = sl->v ? sl->v + gn : NULL, mine = x->nv ? (vc ? vc[me] : 0) : 0;
    const int *rvc = sides == 2 ? sl->v + 2 * gn : NULL, *rvd = rvc ? rvc + gn : NULL;
    const int root = me == x->root;
    const char *what = "?";
    MPI_Request *q = &sl->q;
    /* a blocking call takes the host's blocking form, done on return, while
     * the helper thread advances kcoll's other requests (as around any
     * blocking host collective): polling the non-blocking one from kcoll's
     * wait loop ran a 64 KiB Allreduce between two nodes at half the
     * host's speed (docs/hierarchy.md, "Overhead of the layer"). Every
     * member of the group chooses alike (MPI matches a blocking collective
     * with blocking ones only): by the call's form, not by what else this
     * rank has pending; a split one (the rank goes on meanwhile) takes the
     * non-blocking form on every member alike */
    const int blocking = d->blocking && !split, drive = blocking && kcoll_span_host.drive_begin();
#define KCOLL_XRUN(B, I, ...) (blocking ? PMPI_##B(__VA_ARGS__) : PMPI_##I(__VA_ARGS__, q))
    switch ((kcoll_xcoll_kind_t)x->coll) {
    case KCOLL_XC_ALLREDUCE:
        what = "MPI_Allreduce";
        rc = KCOLL_XRUN(Allreduce, Iallreduce, in_place ? MPI_IN_PLACE : s, r, n, dt, d->op, g);
        break;
    case KCOLL_XC_REDUCE:
        what = "MPI_Reduce";
        /* a member that is not the group's root gives no receive buffer:
         * MPI does not read it there, but a host may use it as scratch
         * for its tree (Intel MPI 2021 on Intel CPUs does), and the
         * layouts name the send side for it (a rank alone on its node
         * sends its own SEND, which the host would then overwrite) */
        rc = KCOLL_XRUN(Reduce, Ireduce, in_place && root ? MPI_IN_PLACE : s, root ? r : NULL, n,
                        dt, d->op, x->root, g);
        break;
    case KCOLL_XC_REDUCE_SCATTER_BLOCK:
        what = "MPI_Reduce_scatter_block";
        rc = KCOLL_XRUN(Reduce_scatter_block, Ireduce_scatter_block, in_place ? MPI_IN_PLACE : s,
                        r, n, dt, d->op, g);
        break;
    case KCOLL_XC_REDUCE_SCATTER:
        what = "MPI_Reduce_scatter";
        rc = KCOLL_XRUN(Reduce_scatter, Ireduce_scatter, in_place ? MPI_IN_PLACE : s, r, vc, dt,
                        d->op, g);
        break;
    case KCOLL_XC_BCAST:
        what = "MPI_Bcast";
        rc = KCOLL_XRUN(Bcast, Ibcast, r, n, MPI_BYTE, x->root, g);
        break;
    case KCOLL_XC_ALLGATHER:
        what = "MPI_Allgather";
        rc = KCOLL_XRUN(Allgather, Iallgather, in_place ? MPI_IN_PLACE : s, n, MPI_BYTE, r, n,
                        MPI_BYTE, g);
        break;
    case KCOLL_XC_GATHER:
        what = "MPI_Gather";
        rc = KCOLL_XRUN(Gather, Igather, in_place && root ? MPI_IN_PLACE : s, n, MPI_BYTE, r, n,
                        MPI_BYTE, x->root, g);
        break;
    case KCOLL_XC_SCATTER:
        what = "MPI_Scatter";
        rc = KCOLL_XRUN(Scatter, Iscatter, s, n, MPI_BYTE, in_place && root ? MPI_IN_PLACE : r, n,
                        MPI_BYTE, x->root, g);
        break;
    case KCOLL_XC_BARRIER:
        what = "MPI_Barrier";
        rc = KCOLL_XRUN(Barrier, Ibarrier, g);
        break;
    case KCOLL_XC_GATHERV:
        what = "MPI_Gatherv";
        rc = KCOLL_XRUN(Gatherv, Igatherv, in_place && root ? MPI_IN_PLACE : s, mine, MPI_BYTE,
                        r, vc, vd, MPI_BYTE, x->root, g);
        break;
    case KCOLL_XC_ALLGATHERV:
        what = "MPI_Allgatherv";
        rc = KCOLL_XRUN(Allgatherv, Iallgatherv, in_place ? MPI_IN_PLACE : s, mine, MPI_BYTE, r,
                        vc, vd, MPI_BYTE, g);
        break;
    case KCOLL_XC_SCATTERV:
        what = "MPI_Scatterv";
        rc = KCOLL_XRUN(Scatterv, Iscatterv, s, vc, vd, MPI_BYTE,
                        in_place && root ? MPI_IN_PLACE : r, mine, MPI_BYTE, x->root, g);
        break;
    case KCOLL_XC_ALLTOALL:
        what = "MPI_Alltoall";
        rc = KCOLL_XRUN(Alltoall, Ialltoall, s, n, MPI_BYTE, r, n, MPI_BYTE, g);
        break;
    case KCOLL_XC_ALLTOALLV:
        what = "MPI_Alltoallv";
        rc = blocking ? PMPI_Alltoallv(s, vc, vd, MPI_BYTE, r, rvc, rvd, MPI_BYTE, g)
                      : kcoll_xrun_a2av(sl, s, vc, vd, r, rvc, rvd, me, gn, g);
        break;
    default:
        snprintf(err, errlen, "a host collective of unknown kind %d", (int)x->coll);
        rc = MPI_ERR_ARG;
    }
#undef KCOLL_XRUN
    if (blocking)
        kcoll_span_host.drive_end(drive);
    if (blocking || rc != MPI_SUCCESS) {
        *q = MPI_REQUEST_NULL; /* done: its test finds it so */
        free(sl->v);
        sl->v = NULL;
    }
    if (rc != MPI_SUCCESS && !strcmp(what, "?"))
        return KCOLL_ERR_ARG;
    return rc == MPI_SUCCESS ? KCOLL_OK : kcoll_xrun_failed(rc, what, err, errlen);
}

/* Are kcoll_xrun_a2av's messages done (*flag)? An MPI result. (Each
 * tested alone: MPICH 4.0's declaration of MPI_Testall makes GCC 12 warn
 * of MPI_STATUSES_IGNORE as an array too small.) */
static int kcoll_xrun_test_msgs(kcoll_xslot_t *sl, int *flag)
{
    *flag = 0;
    for (int i = 0; i < sl->nq; i++) {
        int done = 0;
        const int rc = sl->qs[i] == MPI_REQUEST_NULL
                           ? MPI_SUCCESS
                           : PMPI_Test(&sl->qs[i], &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || (sl->qs[i] != MPI_REQUEST_NULL && !done))
            return rc;
    }
    *flag = 1;
    return MPI_SUCCESS;
}

static kcoll_status_t kcoll_xrun_test(void *data, int id, char *err, size_t errlen)
{
    kcoll_xrun_t *d = data;
    int flag = 0;
    kcoll_xslot_t *sl = id >= 0 && id < d->nslot ? &d->slot[id] : NULL;
    if (!sl || (sl->q == MPI_REQUEST_NULL && !sl->qs)) /* done (a blocking one's on return) */
        return KCOLL_OK;
    if (!kcoll_span_host.may_call())
        return KCOLL_IN_PROGRESS;
    const int rc = sl->qs ? kcoll_xrun_test_msgs(sl, &flag)
                          : PMPI_Test(&sl->q, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || flag) {
        free(sl->v);
        sl->v = NULL;
        free(sl->qs);
        sl->qs = NULL;
        sl->nq = 0;
    }
    if (rc != MPI_SUCCESS)
        return kcoll_xrun_failed(rc, "collective", err, errlen);
    return flag ? KCOLL_OK : KCOLL_IN_PROGRESS;
}

static kcoll_status_t kcoll_xrun_poll(void *data, char *err, size_t errlen)
{
    kcoll_xrun_t *d = data;
    for (int id = 0; id < d->nslot; id++) {
        const kcoll_status_t rc = kcoll_xrun_test(d, id, err, errlen);
        if (rc != KCOLL_OK && rc != KCOLL_IN_PROGRESS)
            return rc;
    }
    return KCOLL_OK;
}

/* Keep (1) or let go of (0) the handles d's host collectives use. */
static void kcoll_xrun_hold(const kcoll_xrun_t *d, int hold)
{
    kcoll_span_host.hold_type(d->dt, hold);
    kcoll_span_host.hold_op(d->op, hold);
    kcoll_span_host.hold_type(d->pdt[0], hold);
    kcoll_span_host.hold_type(d->pdt[1], hold);
    if (d->ag) {
        kcoll_span_host.hold_type(d->ag->stype, hold);
        kcoll_span_host.hold_type(d->ag->rtype, hold);
    }
}

static void kcoll_xrun_drop(void *data)
{
    kcoll_xrun_t *d = data;
    /* a host collective a failed run left in flight keeps its counts: MPI
     * may still read them, and a collective's request can be neither
     * cancelled nor freed */
    for (int id = 0; id < d->nslot; id++)
        if (d->slot[id].q == MPI_REQUEST_NULL && !d->slot[id].qs)
            free(d->slot[id].v);
    free(d->slot);
    free(d->vlay);
    if (d->held)
        kcoll_xrun_hold(d, 0);
    /* an agreement a failed run left in flight keeps its buffers, as above */
    if (d->ag && d->ag->q[0] == MPI_REQUEST_NULL && d->ag->q[1] == MPI_REQUEST_NULL)
        kcoll_across_agree_free(d->ag);
    kcoll_span_release(d->h);
}

static const kcoll_xhost_t kcoll_xrun = {kcoll_xrun_start, kcoll_xrun_test, kcoll_xrun_poll};

/* The host MPI does the call whole: counted now, a persistent one at
 * every start (pmpi/request.c). */
static void kcoll_across_host(const kcoll_call_t *c, kcoll_mode_t mode)
{
    if (mode != KCOLL_MODE_PERSISTENT)
        kcoll_call_host(c, mode, KCOLL_R_MULTINODE);
}

/* A call of a collective this file runs, but not this call: the host MPI
 * does it whole (and reports what is wrong with it). */
static kcoll_call_result_t kcoll_across_decline(const kcoll_call_t *c, kcoll_mode_t mode,
                                                kcoll_reason_t *why)
{
    kcoll_across_host(c, mode);
    *why = KCOLL_R_MULTINODE;
    return KCOLL_CALL_HOST;
}

/* The host's request q started with result rc, done (kcoll_host_wait):
 * 0, or -1 with err naming what failed. */
static int kcoll_across_wait(int rc, MPI_Request *q, const char *what, char *err, size_t errlen)
{
    if ((rc = kcoll_host_wait(rc, q, MPI_STATUS_IGNORE)) == MPI_SUCCESS)
        return 0;
    kcoll_xrun_failed(rc, what, err, errlen);
    return -1;
}

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "layouts travel as MPI_UINT64_T");

/* Keep call c's own arguments in agreement a (what a non-blocking call
 * gives the host where that is the outcome: kcoll_xrun_call): the
 * addresses the program passed (kcoll_side_t.buf has the lower bound
 * applied) and copies of its counts and displacements, which the host may
 * read after the call returned, when the program may have reused them
 * (mpi4py lets them go then; the host MPIs read them at the start); a
 * rooted call's blocked side only at its root, where MPI says they are
 * significant. 0, or -1 where memory ran out. */
static int kcoll_across_keep(kcoll_xagree_t *a, const kcoll_call_t *c,
                             const kcoll_span_call_t *w)
{
    const size_t p = (size_t)w->h->p;
    const int scatter = c->coll == KCOLL_COLL_SCATTERV;
    a->coll = c->coll;
    a->root = c->root;
    a->sbuf = c->in_place && !scatter ? MPI_IN_PLACE
              : c->send.buf           ? (const char *)c->send.buf - c->send.lb
                                      : NULL;
    a->rbuf = c->in_place && scatter ? MPI_IN_PLACE
              : c->recv.buf          ? (char *)c->recv.buf - c->recv.lb
                                     : NULL;
    a->scount = c->send.count;
    a->rcount = c->recv.count;
    a->wide = c->recv.wide || c->send.wide;
    a->stype = c->in_place && !scatter ? MPI_DATATYPE_NULL : w->dt;
    a->rtype = c->in_place && scatter ? MPI_DATATYPE_NULL : w->rdt;
    const size_t es = a->wide ? sizeof(int64_t) : sizeof(int);
    const void *from[4] = {c->send.counts, c->send.displs, c->recv.counts, c->recv.displs};
    const void **to[4] = {&a->scounts, &a->sdispls, &a->rcounts, &a->rdispls};
    const int rooted = c->coll != KCOLL_COLL_ALLTOALLV;
    if (!(a->varr = malloc(4 * p * es)))
        return -1;
    for (int i = 0; i < 4; i++)
        if (from[i] && (!rooted || c->rank == c->root))
            *to[i] = memcpy((char *)a->varr + (size_t)i * p * es, from[i], p * es);
    return 0;
}

/* An MPI_Alltoallv's agreement (see the header), not begun yet: this
 * rank's vote and layout (send side, for every rank of the node; receive
 * side, its own), room for the node's layouts, and, for a non-blocking
 * call (nb), the size classes it runs in lanes (picks) and the call's own
 * arguments. NULL with err where memory ran out. */
static kcoll_xagree_t *kcoll_across_agree_new(const kcoll_call_t *c, const kcoll_span_call_t *w,
                                              int nb, uint64_t picks, char *err, size_t errlen)
{
    const kcoll_span_t *h = w->h;
    const size_t p = (size_t)h->p, pn = (size_t)h->pn;
    kcoll_xagree_t *a = calloc(1, sizeof *a);
    if (a) {
        a->tab = malloc(4 * p * sizeof *a->tab);
        a->lay = malloc(pn * sizeof *a->lay + (2 * pn + 2) * p * sizeof(size_t));
    }
    if (!a || !a->tab || !a->lay || (nb && kcoll_across_keep(a, c, w))) {
        kcoll_across_agree_free(a);
        snprintf(err, errlen, "out of memory for an MPI_Alltoallv's agreement");
        return NULL;
    }
    a->coll = c->coll;
    a->q[0] = a->q[1] = MPI_REQUEST_NULL;
    size_t largest = 0, len[2];
    const int why = kcoll_alltoallv_sides(c, a->tab, len, &largest);
    a->vote[0] = why ? 0 : largest;
    a->vote[1] = why != 0;
    a->picks = picks;
    return a;
}

/* A non-blocking MPI_Gatherv's or MPI_Scatterv's agreement, not begun
 * yet: the root's table (its layout, to broadcast: kcoll_across_rooted_v),
 * room for the layouts, the size classes it runs in a layout (picks) and
 * the call's own arguments. NULL with err where memory ran out. */
static kcoll_xagree_t *kcoll_across_agree_rooted(const kcoll_call_t *c,
                                                 const kcoll_span_call_t *w, uint64_t picks,
                                                 char *err, size_t errlen)
{
    const size_t p = (size_t)w->h->p;
    kcoll_xagree_t *a = calloc(1, sizeof *a);
    if (a) {
        a->tab = malloc((2 * p + 1) * sizeof *a->tab);
        a->lay = malloc(p * sizeof *a->lay);
    }
    if (!a || !a->tab || !a->lay || kcoll_across_keep(a, c, w)) {
        kcoll_across_agree_free(a);
        snprintf(err, errlen, "out of memory for an %s's agreement", kcoll_coll_name(c->coll));
        return NULL;
    }
    a->q[0] = a->q[1] = MPI_REQUEST_NULL;
    a->picks = picks;
    if (c->rank == c->root)
        a->tab[0] = kcoll_rooted_sides(c, a->tab + 1, a->tab + 1 + p) != 0;
    return a;
}

/* Begin a's vote over comm (the host's request a->q[0]): an MPI result. */
static int kcoll_across_vote(kcoll_xagree_t *a, MPI_Comm comm)
{
    return PMPI_Iallreduce(MPI_IN_PLACE, a->vote, 2, MPI_UINT64_T, MPI_MAX, comm, &a->q[0]);
}

/* Begin sharing the node's send layouts for a (a->q[1]): an MPI result. */
static int kcoll_across_share(kcoll_xagree_t *a, const kcoll_span_t *h)
{
    const size_t p = (size_t)h->p, pn = (size_t)h->pn;
    size_t *all = (size_t *)(a->lay + pn); /* [pn][2p] the send sides, then [2p] mine received */
    memcpy(all + 2 * pn * p, a->tab + 2 * p, 2 * p * sizeof *a->tab);
    return PMPI_Iallgather(a->tab, (int)(2 * p), MPI_UINT64_T, all, (int)(2 * p), MPI_UINT64_T,
                           h->xnode, &a->q[1]);
}

/* The node's layouts of a, shared: by local rank (kcoll_across_t.lay). */
static void kcoll_across_fill(kcoll_xagree_t *a, const kcoll_span_t *h)
{
    const size_t p = (size_t)h->p, pn = (size_t)h->pn;
    size_t *all = (size_t *)(a->lay + pn);
    for (size_t i = 0; i < pn; i++)
        a->lay[i] = (kcoll_layout_t){.scount = all + 2 * i * p, .sdispl = all + 2 * i * p + p};
    a->lay[h->lr].rcount = all + 2 * pn * p;
    a->lay[h->lr].rdispl = all + 2 * pn * p + p;
}

/* What kcoll_across_alltoallv and kcoll_across_rooted_v return for a
 * call their host streak gives to the host MPI (not a layout of
 * model/nodes.h). */
#define KCOLL_NODES_STREAK (-2)

/* The index of a collective that agrees first (span.h: agreed). */
static int kcoll_across_agreed(kcoll_coll_t c)
{
    return c == KCOLL_COLL_ALLTOALLV ? 0 : c == KCOLL_COLL_GATHERV ? 1 : 2;
}

/* What the model picks for collective c on h (an MPI_Alltoallv, Gatherv
 * or Scatterv: the calls that agree first), under the parameters in force
 * at the call: the size classes at which it picks a layout of kcoll's
 * (span.h: agreed.picks; 0: none, and no agreement), with *segment the
 * lowest such class's. A non-blocking call decides by them when its
 * agreement is in, since the program may change the parameters, alike on
 * every rank, before then, and the ranks settle at different times.
 * Walked once per parameter generation (the picks' own), then kept in
 * the span record: a call reads a few words. */
static uint64_t kcoll_across_bound(kcoll_span_t *h, kcoll_coll_t c, size_t *segment)
{
    kcoll_span_agreed_t *g = &h->agreed[kcoll_across_agreed(c)];
    const uint64_t gen = kcoll_params_generation_model();
    if (g->gen != gen) {
        uint64_t picks = 0;
        size_t first = 0;
        for (int k = 63; k >= 1; k--) {
            size_t seg;
            const kcoll_nodes_layout_t l = kcoll_span_layout(h, c, (size_t)1 << (k - 1), &seg);
            if (l == KCOLL_NODES_HOST || !kcoll_cluster_find(c, l == KCOLL_NODES_LANES))
                continue;
            picks |= (uint64_t)1 << k | (k == 1 ? 1u : 0u);
            first = seg;
        }
        g->picks = picks;
        g->segment = first;
        g->gen = gen;
    }
    *segment = g->segment;
    return g->picks;
}

/* Does `picks` (kcoll_across_bound) run blocks of `bytes` in a layout? */
static int kcoll_across_picked(uint64_t picks, size_t bytes)
{
    return (picks >> kcoll_size_class(bytes)) & 1u;
}

/* The host streak of a blocking call that agrees first: an agreement that
 * gives the call to the host MPI lets the collective's next 1, then 2, 4
 * ... calls with the same root (at most KCOLL_HOST_STREAK) go to the host
 * without agreeing, until an agreement runs one in a layout
 * (docs/hierarchy.md). Every rank of the communicator makes the same calls
 * in the same order and sees the same outcomes, so every rank's streak is
 * the same (MPI lets no two threads call collectives on one communicator at
 * once: no lock). 1 where this call goes to the host on the streak. */
static int kcoll_across_streak_take(kcoll_span_t *h, const kcoll_call_t *c)
{
    /* (a layout forced: every call agrees) */
    return kcoll_call_across_mode() == 1 &&
           kcoll_streak_take(&h->agreed[kcoll_across_agreed(c->coll)].streak, c->root);
}

/* After an agreement: the host's outcome (host) starts the next streak,
 * a layout's ends them. */
static void kcoll_across_streak_after(kcoll_span_t *h, const kcoll_call_t *c, int host)
{
    kcoll_streak_after(&h->agreed[kcoll_across_agreed(c->coll)].streak, c->root,
                       host && kcoll_call_across_mode() == 1 ? KCOLL_R_MULTINODE : 0);
}

/* A blocking MPI_Alltoallv (see the header), or a persistent one's
 * initialization: the layout every rank runs it in (KCOLL_NODES_HOST: the
 * host whole; KCOLL_NODES_STREAK: the host whole on its streak, a
 * blocking call's where `streak`, without agreeing), with *bytes the
 * largest block; for the lanes *lay the node's layouts
 * (kcoll_across_t.lay, one allocation the caller frees). -1 with err
 * where the host's calls failed. */
static int kcoll_across_alltoallv(const kcoll_call_t *c, const kcoll_span_call_t *w, int streak,
                                  size_t *bytes, kcoll_layout_t **lay, char *err, size_t errlen)
{
    kcoll_span_t *h = w->h;
    size_t segment;
    *lay = NULL;
    *bytes = 0;
    /* no agreement where the lanes cannot pay (KCOLL_HIER=auto: one rank
     * on every node, too few on a node...), alike on every rank (the
     * nodes' shape and the parameters are) */
    if (!kcoll_across_bound(h, c->coll, &segment))
        return KCOLL_NODES_HOST;
    if (streak && kcoll_across_streak_take(h, c))
        return KCOLL_NODES_STREAK;
    kcoll_xagree_t *a = kcoll_across_agree_new(c, w, 0, 0, err, errlen);
    if (!a)
        return -1;
    if (kcoll_across_wait(kcoll_across_vote(a, w->comm), &a->q[0],
                          "MPI_Iallreduce of an MPI_Alltoallv's agreement", err, errlen))
        goto fail;
    /* the host's runs between nodes count bytes in ints: a lane carries at
     * most N runs of the fullest node's blocks each way */
    const int layout = a->vote[1] || (double)a->vote[0] * h->nn * h->maxpn > INT_MAX
                           ? KCOLL_NODES_HOST
                           : (int)kcoll_span_layout(h, c->coll, (size_t)a->vote[0], &segment);
    if (streak)
        kcoll_across_streak_after(h, c, layout != KCOLL_NODES_LANES);
    if (layout != KCOLL_NODES_LANES) {
        kcoll_across_agree_free(a);
        return KCOLL_NODES_HOST;
    }
    if (kcoll_across_wait(kcoll_across_share(a, h), &a->q[1],
                          "MPI_Iallgather of an MPI_Alltoallv's layouts", err, errlen))
        goto fail;
    kcoll_across_fill(a, h);
    *lay = a->lay;
    *bytes = (size_t)a->vote[0];
    a->lay = NULL; /* the caller's now */
    kcoll_across_agree_free(a);
    return KCOLL_NODES_LANES;
fail:
    kcoll_across_agree_free(a);
    return -1;
}

/* The outcome of an MPI_Gatherv's or MPI_Scatterv's agreement, alike on
 * every rank, from the root's table tab (kcoll_across_rooted_v, 2p + 1
 * words): KCOLL_NODES_LEADERS, their layout, with lay (p layouts that
 * share the table's counts and displacements, as the builders of
 * src/cluster/ read them) and *largest the largest block, where the root
 * can lay its buffer out, the blocks together fit the leaders' host call
 * between nodes (it counts bytes in ints) and `picks` runs their mean
 * block (the model's size) in a layout; else KCOLL_NODES_HOST. */
static int kcoll_across_rooted_outcome(size_t *tab, size_t p, uint64_t picks,
                                       kcoll_layout_t *lay, size_t *largest)
{
    size_t *cnt = tab + 1, *dsp = cnt + p, total = 0;
    *largest = 0;
    for (size_t i = 0; i < p; i++) {
        total += cnt[i];
        *largest = cnt[i] > *largest ? cnt[i] : *largest;
    }
    if (tab[0] || total > INT_MAX || !kcoll_across_picked(picks, total / p))
        return KCOLL_NODES_HOST;
    for (size_t i = 0; i < p; i++)
        lay[i] = (kcoll_layout_t){.scount = cnt, .sdispl = dsp, .rcount = cnt, .rdispl = dsp};
    return KCOLL_NODES_LEADERS;
}

/* A blocking MPI_Gatherv or MPI_Scatterv, or a persistent one's
 * initialization (see the header; its streak as the Alltoallv's): the
 * root's layout of its blocked buffer, broadcast from it over the call's
 * communicator (the host's MPI_Ibcast, waited for: in the program's order
 * of collectives there), gives every rank every block's length and place (a
 * leader reads a Scatterv's blocks from the root's buffer): the layout
 * every rank runs it in (KCOLL_NODES_HOST: the host whole; also where the
 * root cannot lay its buffer out, or the blocks together pass the host's
 * int counts), with *bytes the largest block and *lay the root's layout in
 * bytes (one allocation the caller frees: p layouts that share the counts
 * and the displacements, as the builders of src/cluster/ read them). -1
 * with err where the host's call failed. */
static int kcoll_across_rooted_v(const kcoll_call_t *c, const kcoll_span_call_t *w, int streak,
                                 size_t *bytes, size_t *segment, kcoll_layout_t **lay,
                                 char *err, size_t errlen)
{
    kcoll_span_t *h = w->h;
    const size_t p = (size_t)h->p;
    *lay = NULL;
    *bytes = 0;
    /* no agreement where no layout can pay, or the root is not a rank
     * (the host reports it): alike on every rank */
    const uint64_t picks = kcoll_across_bound(h, c->coll, segment);
    if (!picks || c->root < 0 || c->root >= h->p)
        return KCOLL_NODES_HOST;
    if (streak && kcoll_across_streak_take(h, c))
        return KCOLL_NODES_STREAK;
    kcoll_layout_t *l = malloc(p * sizeof *l + (2 * p + 1) * sizeof(size_t));
    if (!l) {
        snprintf(err, errlen, "out of memory for an %s's agreement", kcoll_coll_name(c->coll));
        return -1;
    }
    /* [0]: the root cannot lay its buffer out; the counts; the
     * displacements */
    size_t *tab = (size_t *)(void *)(l + p);
    if (c->rank == c->root)
        tab[0] = kcoll_rooted_sides(c, tab + 1, tab + 1 + p) != 0;
    MPI_Request q = MPI_REQUEST_NULL;
    const int rc = PMPI_Ibcast(tab, 2 * (int)p + 1, MPI_UINT64_T, c->root, w->comm, &q);
    if (kcoll_across_wait(rc, &q, "MPI_Ibcast of the root's layout", err, errlen)) {
        free(l);
        return -1;
    }
    const int layout = kcoll_across_rooted_outcome(tab, p, picks, l, bytes);
    if (streak)
        kcoll_across_streak_after(h, c, layout == KCOLL_NODES_HOST);
    if (layout == KCOLL_NODES_HOST) {
        free(l);
        return KCOLL_NODES_HOST;
    }
    *lay = l;
    return layout;
}

/* Begin agreement a in the call, so in the order of the program's
 * collectives on the communicators it uses: an Alltoallv's vote over the
 * call's communicator and its layouts over the node's (which carries only
 * these and the blocking Alltoallv's, all made in calls); a Gatherv's or
 * Scatterv's broadcast of the root's layout over the call's. 0, or -1 with
 * err. */
static int kcoll_across_agree_begin(kcoll_xagree_t *a, const kcoll_span_call_t *w, char *err,
                                    size_t errlen)
{
    if (a->coll != KCOLL_COLL_ALLTOALLV) {
        const int n = 2 * w->h->p + 1;
        const int rc = PMPI_Ibcast(a->tab, n, MPI_UINT64_T, a->root, w->comm, &a->q[0]);
        if (rc != MPI_SUCCESS) {
            a->q[0] = MPI_REQUEST_NULL;
            kcoll_xrun_failed(rc, "MPI_Ibcast of the root's layout", err, errlen);
            return -1;
        }
        return 0;
    }
    int rc = kcoll_across_vote(a, w->comm);
    if (rc != MPI_SUCCESS) {
        a->q[0] = MPI_REQUEST_NULL;
        kcoll_xrun_failed(rc, "MPI_Iallreduce of an MPI_Alltoallv's agreement", err, errlen);
        return -1;
    }
    if ((rc = kcoll_across_share(a, w->h)) != MPI_SUCCESS) {
        a->q[1] = MPI_REQUEST_NULL;
        kcoll_xrun_failed(rc, "MPI_Iallgather of an MPI_Alltoallv's layouts", err, errlen);
        return -1;
    }
    return 0;
}

/* kcoll_across_t.settle of a non-blocking MPI_Alltoallv, MPI_Gatherv or
 * MPI_Scatterv: once its host calls are done, the Alltoallv's lanes where
 * every rank can take part, the largest block's size class is one the
 * lanes run (a->picks) and the lanes' host calls fit their int counts;
 * the Gatherv's or Scatterv's leaders as kcoll_across_rooted_outcome
 * says; else the host MPI whole. Alike on every rank. */
static kcoll_status_t kcoll_across_settle(kcoll_across_t *x, char *err, size_t errlen)
{
    kcoll_xrun_t *d = (kcoll_xrun_t *)(void *)x->data;
    kcoll_xagree_t *a = d->ag;
    const kcoll_span_t *h = d->h;
    if (!kcoll_span_host.may_call())
        return KCOLL_IN_PROGRESS; /* no MPI calls on the helper thread */
    for (int i = 0; i < 2; i++) {
        int flag = 0;
        if (a->q[i] == MPI_REQUEST_NULL)
            continue;
        const int rc = PMPI_Test(&a->q[i], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            char what[64];
            snprintf(what, sizeof what, "agreement of an %s", kcoll_coll_name(a->coll));
            return kcoll_xrun_failed(rc, what, err, errlen);
        }
        if (!flag)
            return KCOLL_IN_PROGRESS;
    }
    if (a->coll != KCOLL_COLL_ALLTOALLV) {
        x->layout = kcoll_across_rooted_outcome(a->tab, (size_t)h->p, a->picks, a->lay,
                                                &x->largest);
        x->lay = a->lay;
        return KCOLL_OK;
    }
    if (a->vote[1] || !kcoll_across_picked(a->picks, (size_t)a->vote[0]) ||
        (double)a->vote[0] * h->nn * h->maxpn > INT_MAX) {
        x->layout = KCOLL_NODES_HOST;
        return KCOLL_OK;
    }
    kcoll_across_fill(a, h);
    x->lay = a->lay;
    x->largest = (size_t)a->vote[0];
    return KCOLL_OK;
}

kcoll_call_result_t kcoll_across_prepare(const kcoll_call_t *c, kcoll_mode_t mode,
                                         const kcoll_span_call_t *w, kcoll_req_t **r,
                                         kcoll_reason_t *why, char *err, size_t errlen)
{
    kcoll_span_t *h = w->h;
    const MPI_Datatype dt = w->dt, rdt = w->rdt;
    const MPI_Op op = w->op;
    kcoll_across_t x;
    kcoll_xagree_t *ag = NULL;
    size_t segment = 0;
    uint64_t picks = 0; /* a non-blocking call's that agrees: see kcoll_across_bound */
    if (!kcoll_call_across_has(c->coll))
        return KCOLL_CALL_ACROSS;
    /* an Alltoallv, Gatherv or Scatterv needs its agreement (an
     * Alltoallv's vote and layouts; the root's layout, whose blocks only
     * it knows): a blocking or persistent call (its initialization, on the
     * request's own communicator: pmpi/run.c) makes it before it returns
     * (kcoll_across_alltoallv, kcoll_across_rooted_v), a non-blocking one
     * begins it and settles it later (kcoll_across_settle), where a layout
     * could pay at all; the host's otherwise, as the collectives without
     * a layout */
    const int v = c->coll == KCOLL_COLL_ALLTOALLV;
    const int rv = c->coll == KCOLL_COLL_GATHERV || c->coll == KCOLL_COLL_SCATTERV;
    const int nb = (v || rv) && mode == KCOLL_MODE_NONBLOCKING;
    if (nb && (!h || !h->xok || h->xall == MPI_COMM_NULL ||
               (rv && (c->root < 0 || c->root >= h->p)) ||
               !(picks = kcoll_across_bound(h, c->coll, &segment))))
        return KCOLL_CALL_ACROSS;
    if (!h || !h->xok)
        return kcoll_across_decline(c, mode, why);
    /* a reduction's host collectives take its datatype and operation; the
     * others move bytes (the call layer packs a datatype's data first) */
    const int reduces = kcoll_coll_reduces(c->coll);
    /* the blocked collectives' sides are each rank's own: the call layer
     * judges them (a rank that cannot take part fails, saying why) */
    const int gather = c->coll == KCOLL_COLL_GATHER || c->coll == KCOLL_COLL_GATHERV;
    const int scatter = c->coll == KCOLL_COLL_SCATTER || c->coll == KCOLL_COLL_SCATTERV;
    const int blocks = gather || scatter || c->coll == KCOLL_COLL_ALLGATHER ||
                       c->coll == KCOLL_COLL_ALLGATHERV || c->coll == KCOLL_COLL_ALLTOALL || v;
    if (c->coll != KCOLL_COLL_BARRIER && !blocks &&
        ((reduces && dt == MPI_DATATYPE_NULL) || !(c->recv.type & KCOLL_TYPE_VALID) ||
         c->recv.count < 0))
        return kcoll_across_decline(c, mode, why);
    /* the model's size: the vector, one block (Reduce_scatter_block,
     * Gather, Scatter, Allgather, Alltoall: a rank's own, one size everywhere), the
     * mean block (Reduce_scatter, Allgatherv), the message (Bcast) */
    const int root = (gather || scatter) && c->rank == c->root;
    const kcoll_side_t *side = gather    ? (root && c->in_place ? &c->recv : &c->send)
                               : scatter ? (root ? &c->send : &c->recv)
                                         : &c->recv;
    size_t bytes = c->coll == KCOLL_COLL_BARRIER ? 0
                   : side->count > 0             ? (size_t)side->count * side->size
                                                 : 0;
    int64_t total = 0; /* a v form's elements */
    if (c->coll == KCOLL_COLL_REDUCE_SCATTER || c->coll == KCOLL_COLL_ALLGATHERV) {
        for (int q = 0; c->recv.counts && q < h->p; q++)
            total += kcoll_side_ventry(c->recv.counts, c->recv.wide, q);
        bytes = total > 0 ? (size_t)total / (size_t)h->p * c->recv.size : 0;
    }
    /* the host collectives between nodes count in ints: a reduction's
     * elements, else bytes. A call whose whole (a reduction's vector in
     * elements; the message, or every rank's blocks, in bytes) does not
     * fit one goes to the host whole, alike on every rank: MPI makes these
     * sizes alike (a root's blocks are every rank's; an Alltoall lane's
     * host call takes up to N runs of the fullest node's blocks each way) */
    const double whole = c->coll == KCOLL_COLL_BARRIER ? 0
                         : c->coll == KCOLL_COLL_ALLREDUCE || c->coll == KCOLL_COLL_REDUCE
                             ? (double)side->count
                         : c->coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK
                             ? (double)side->count * h->p
                         : c->coll == KCOLL_COLL_REDUCE_SCATTER ? (double)total
                         : c->coll == KCOLL_COLL_ALLGATHERV
                             ? (double)total * (double)c->recv.size
                         : c->coll == KCOLL_COLL_BCAST          ? (double)bytes
                         : c->coll == KCOLL_COLL_ALLTOALL
                             ? (double)bytes * h->nn * h->maxpn
                                                                : (double)bytes * h->p;
    if (whole > INT_MAX && !v && !rv) /* (those agree on it: below) */
        return kcoll_across_decline(c, mode, why);
    kcoll_layout_t *vlay = NULL;
    const int streak = mode == KCOLL_MODE_BLOCKING; /* (a persistent call agrees once) */
    /* (a non-blocking call's: or the host's whole, settled later) */
    x.layout = nb   ? (v ? KCOLL_NODES_LANES : KCOLL_NODES_LEADERS)
               : v  ? kcoll_across_alltoallv(c, w, streak, &bytes, &vlay, err, errlen)
               : rv ? kcoll_across_rooted_v(c, w, streak, &bytes, &segment, &vlay, err, errlen)
                    : (int)kcoll_span_layout(h, c->coll, bytes, &segment);
    if (x.layout == KCOLL_NODES_STREAK) { /* the host's, without agreeing */
        kcoll_call_streak_count(c->coll, KCOLL_R_MULTINODE, kcoll_call_own_bytes(c));
        *why = KCOLL_R_MULTINODE;
        return KCOLL_CALL_HOST;
    }
    if (x.layout < 0)
        return KCOLL_CALL_FAILED;
    x.lay = vlay;
    x.largest = bytes;
    if (x.layout == KCOLL_NODES_HOST) {
        kcoll_across_host(c, mode);
        *why = KCOLL_R_MULTINODE;
        return KCOLL_CALL_HOST;
    }
    x.cl = (kcoll_cluster_t){.nodes = h->nn, .node = h->me, .pn = h->pn, .me = h->lr,
                             .peer_of = h->xpeer, .lanes = h->maxpn, .ordered = h->blocked,
                             .rank_of = h->xrank_of, .segment = segment};
    /* what the layouts cannot run, alike on every rank: a non-commutative
     * user operation on nodes whose ranks are not consecutive (the layouts
     * combine per node, then over the nodes: not MPI's rank order there)
     * goes to the host whole */
    if (c->op && c->op->kind == KCOLL_OP_USER && !c->op->commute && !h->blocked)
        return kcoll_across_decline(c, mode, why);
    /* a layout src/cluster/ has no builder for: the host (an Alltoallv's
     * lanes are there: it runs them or the host) */
    if (!kcoll_cluster_find(c->coll, x.layout == KCOLL_NODES_LANES))
        return kcoll_across_decline(c, mode, why);
    x.root_node = x.root_local = 0;
    if ((c->coll == KCOLL_COLL_REDUCE || c->coll == KCOLL_COLL_BCAST || gather || scatter) &&
        c->root >= 0 && c->root < h->p) {
        x.root_node = h->node_of[c->root];
        x.root_local = h->lrank_of[c->root];
    }
    kcoll_team_t *team = kcoll_span_host.node_team(h->xnode);
    if (!team) { /* xok says every rank has it */
        free(vlay);
        snprintf(err, errlen, "the node team of a call across nodes is gone");
        return KCOLL_CALL_FAILED;
    }
    x.settle = NULL;
    if (nb) {
        ag = v ? kcoll_across_agree_new(c, w, 1, picks, err, errlen)
               : kcoll_across_agree_rooted(c, w, picks, err, errlen);
        if (!ag)
            return KCOLL_CALL_FAILED;
        x.settle = kcoll_across_settle;
    }
    /* a non-blocking or persistent call starts its host collectives after
     * it returned: MPI lets the program free its datatype and operation
     * meanwhile */
    kcoll_xrun_t d = {.h = h, .dt = reduces ? dt : MPI_DATATYPE_NULL,
                      .op = reduces ? op : MPI_OP_NULL,
                      .held = mode != KCOLL_MODE_BLOCKING, .blocking = mode == KCOLL_MODE_BLOCKING,
                      .pdt = {c->send.type & KCOLL_TYPE_HOSTPACK ? dt : MPI_DATATYPE_NULL,
                              c->recv.type & KCOLL_TYPE_HOSTPACK ? rdt : MPI_DATATYPE_NULL},
                      .vlay = vlay, .ag = ag};
    MPI_Aint extent;
    d.tlb = 0;
    if (d.dt != MPI_DATATYPE_NULL)
        PMPI_Type_get_true_extent(d.dt, &d.tlb, &extent);
    x.xhost = &kcoll_xrun;
    x.drop = kcoll_xrun_drop;
    memcpy(x.data, &d, sizeof d);
    kcoll_call_result_t res =
        kcoll_call_prepare_across(c, mode, team, &x, r, why, err, errlen);
    if (res == KCOLL_CALL_KCOLL) { /* given back by kcoll_xrun_drop with the request */
        kcoll_span_hold(h);
        if (d.held)
            kcoll_xrun_hold(&d, 1);
        if (ag && kcoll_across_agree_begin(ag, w, err, errlen)) {
            kcoll_req_release(*r);
            *r = NULL;
            return KCOLL_CALL_FAILED;
        }
    } else {
        free(vlay);
        kcoll_across_agree_free(ag);
    }
    return res;
}
