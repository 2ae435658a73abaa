/* From MPI arguments to the call layer and back (see pmpi.h): describing
 * a call, and running it in each of the three modes. */
#include <stdint.h>

#include "base/log.h"

#include "pmpi/pmpi.h"
#include "pmpi/request.h"
#include "span/span.h"

/* This rank's place in comm: *p ranks (0 where kcoll cannot use comm: not
 * set up, an invalid or an inter-communicator), this one *rank. */
static void kcoll_pmpi_where(MPI_Comm comm, int *p, int *rank)
{
    *p = *rank = 0;
    if (kcoll_ready() && !kcoll_comm_known(comm, p, rank))
        kcoll_comm_place(comm, p, rank);
}

void kcoll_pmpi_describe(kcoll_call_t *c, kcoll_coll_t coll, int root, MPI_Comm comm)
{
    kcoll_adapt_note_entry(); /* while a check runs: call/adapt.h */
    c->coll = coll;
    c->root = root;
    c->p = c->rank = 0;
    c->in_place = 0;
    c->op = NULL;
    c->send = c->recv = (kcoll_side_t){0};
    kcoll_set_handles(c, MPI_DATATYPE_NULL, MPI_OP_NULL);
    kcoll_pmpi_where(comm, &c->p, &c->rank);
}

#ifdef KCOLL_HAVE_LARGE_COUNT
/* The _c forms' arrays are read as 64-bit integers (kcoll_side_vcount). */
_Static_assert(sizeof(MPI_Count) == sizeof(int64_t) && sizeof(MPI_Aint) == sizeof(int64_t),
               "MPI_Count and MPI_Aint must be 64 bits wide");
#endif

void kcoll_pmpi_side(kcoll_side_t *s, const void *buf, int64_t count, const void *counts,
                     const void *displs, int wide, MPI_Datatype dt, const kcoll_side_t *like)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    s->buf = buf;
    s->count = count;
    s->counts = counts;
    s->displs = displs;
    s->wide = wide;
    size_t plain;
    if (like && like->type) { /* the same datatype, asked about already */
        s->size = like->size;
        s->extent = like->extent;
        s->lb = like->lb;
        s->type = like->type;
        s->map = like->map;
    } else if ((plain = kcoll_dtype_plain(dt)) != 0) { /* predefined: asked at start-up */
        s->size = s->extent = plain;
        s->lb = 0;
        s->type = KCOLL_TYPE_VALID | KCOLL_TYPE_DENSE | KCOLL_TYPE_PACKED;
        s->map = NULL;
    } else {
        s->size = s->extent = 0;
        s->lb = 0;
        s->type = 0;
        s->map = NULL;
        if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
            PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS ||
            PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
            return;
        s->size = (size_t)size;
        s->extent = (size_t)extent;
        s->lb = (ptrdiff_t)tlb;
        s->type = KCOLL_TYPE_VALID | (textent == size ? KCOLL_TYPE_DENSE : 0) |
                  (extent == size ? KCOLL_TYPE_PACKED : 0);
        if (size > 0 && (textent != size || extent != size) &&
            !(s->map = kcoll_dtype_map(dt, (size_t)size, extent, tlb)))
            s->type |= KCOLL_TYPE_HOSTPACK; /* across nodes: PMPI_Pack (span/run.c) */
    }
    if (buf && s->size)
        s->buf = (const char *)buf + s->lb;
}

void kcoll_pmpi_describe_all(kcoll_call_t *c, kcoll_coll_t coll, const void *sendbuf,
                             int64_t sendcount, const void *sendcounts, const void *sdispls,
                             MPI_Datatype sendtype, void *recvbuf, int64_t recvcount,
                             const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                             int wide, MPI_Comm comm)
{
    kcoll_pmpi_describe(c, coll, 0, comm);
    c->in_place = sendbuf == MPI_IN_PLACE;
    kcoll_pmpi_side(&c->recv, recvbuf, recvcount, recvcounts, rdispls, wide, recvtype, NULL);
    if (!c->in_place)
        kcoll_pmpi_side(&c->send, sendbuf, sendcount, sendcounts, sdispls, wide, sendtype,
                        sendtype == recvtype ? &c->recv : NULL);
    kcoll_set_types(c, c->in_place ? MPI_DATATYPE_NULL : sendtype, recvtype);
}

/* The team for a call in a mode, or NULL with the reason. */
static kcoll_team_t *kcoll_pmpi_team(const kcoll_call_t *c, MPI_Comm comm, kcoll_mode_t mode,
                                     kcoll_reason_t *why)
{
    if (c->p < 2) /* not usable, or one process: the call layer says which */
        return NULL;
    return kcoll_comm_team_for(comm, mode, why);
}

/* Why the communicator is not usable at all (the host MPI does the call),
 * or KCOLL_R_NONE. */
static kcoll_reason_t kcoll_pmpi_unusable(const kcoll_call_t *c, MPI_Comm comm)
{
    int inter = 0;
    if (c->p > 0)
        return KCOLL_R_NONE;
    if (!kcoll_ready())
        return KCOLL_R_DISABLED;
    if (comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
        return KCOLL_R_INTERCOMM;
    return KCOLL_R_INVALID;
}

int kcoll_pmpi_streak(kcoll_coll_t c, MPI_Comm comm, int root, const int *vcounts,
                      MPI_Datatype vtype, int count, MPI_Datatype type)
{
    const uint64_t word = KCOLL_HANDLE_WORD(comm);
    kcoll_streak_fast_t *f = kcoll_streak_fast_take(c, word, root);
    if (f) { /* the kept streak took it (call/shortcut.h) */
        kcoll_streak_fast_count(
            f, kcoll_handed_bytes(c, f->p, f->rank, root, vcounts, vtype, count, type));
        return 1;
    }
    /* kcoll disabled (KCOLL_DISABLE: alike on every rank, as every
     * parameter): the host MPI at once, counted, and not described first:
     * the p counts and displacements of a v form make describing a call
     * the costliest part of handing it over, and a disabled kcoll has no
     * team to keep a streak in */
    if (kcoll_param_int(KCOLL_P_DISABLE)) {
        int p, rank;
        kcoll_pmpi_where(comm, &p, &rank);
        if (p < 1) /* described: the host does it (and reports what is wrong) */
            return 0;
        kcoll_call_host_count(c, KCOLL_R_DISABLED, kcoll_handed_bytes(c, p, rank, root,
                                                                           vcounts, vtype,
                                                                           count, type));
        kcoll_off_fast_keep(c);
        return 1;
    }
    kcoll_reason_t why;
    kcoll_team_t *t = kcoll_comm_team(comm, 0, &why);
    if (!t || (why = kcoll_call_streak_take(t, c, root)) == KCOLL_R_NONE)
        return 0;
    /* the team's ranks are comm's */
    kcoll_call_streak_count(c, why, kcoll_handed_bytes(c, t->ctl.p, t->ctl.rank, root,
                                                            vcounts, vtype, count, type));
    kcoll_streak_fast_keep(t, c, word);
    return 1;
}

/* Call c (mode) on comm as one schedule across nodes (span/run.c), with
 * comm's span record, its node team and the call's MPI handles. */
static kcoll_call_result_t kcoll_pmpi_across(const kcoll_call_t *c, kcoll_mode_t mode,
                                             MPI_Comm comm, kcoll_req_t **r, kcoll_reason_t *why,
                                             char *err, size_t errlen)
{
    const kcoll_handles_t hd = kcoll_handles_of(c);
    kcoll_span_call_t w = {.h = kcoll_comm_span(comm), .dt = hd.dt, .rdt = hd.rdt, .op = hd.op,
                           .comm = comm};
    return kcoll_across_prepare(c, mode, &w, r, why, err, errlen);
}

/* Hand a call to the call layer: 0 when the host MPI must do it (counted);
 * 1 with *rc when it failed; 2 with *r to run or start. On a
 * communicator that spans nodes it may run as one schedule across nodes
 * (span/run.c); where kcoll has no layout for it, the host MPI does it
 * whole (mpi:multinode). */
static int kcoll_pmpi_take(const kcoll_call_t *c, MPI_Comm comm, kcoll_mode_t mode,
                           kcoll_req_t **r, int *rc)
{
    kcoll_reason_t why = KCOLL_R_TEAM_FAILED, host_why = kcoll_pmpi_unusable(c, comm);
    char err[256];
    if (host_why != KCOLL_R_NONE) {
        kcoll_call_host(c, mode, host_why);
        return 0;
    }
    kcoll_team_t *team = kcoll_pmpi_team(c, comm, mode, &why);
    kcoll_call_result_t res = kcoll_call_prepare(c, mode, team, why, r, &host_why, err, sizeof err);
    if (res == KCOLL_CALL_ACROSS)
        res = kcoll_pmpi_across(c, mode, comm, r, &host_why, err, sizeof err);
    switch (res) {
    case KCOLL_CALL_HOST:
        return 0;
    case KCOLL_CALL_FAILED:
        kcoll_adapt_end();
        *rc = kcoll_fail(comm, c->coll, KCOLL_ERR_PROTO, err);
        return 1;
    case KCOLL_CALL_KCOLL:
        return 2;
    case KCOLL_CALL_ACROSS: /* no layout across nodes of kcoll's own */
        break;
    }
    kcoll_call_host(c, mode, KCOLL_R_MULTINODE);
    return 0;
}

int kcoll_pmpi_blocking(const kcoll_call_t *c, MPI_Comm comm, int *rc)
{
    kcoll_req_t *r;
    int took = kcoll_pmpi_take(c, comm, KCOLL_MODE_BLOCKING, &r, rc);
    if (took != 2)
        return took; /* KCOLL_PMPI_HOST, or KCOLL_PMPI_DONE with the failure */
    kcoll_req_start(r, NULL, NULL);
    kcoll_status_t st = kcoll_req_wait(r);
    kcoll_adapt_end(); /* a timed call of a decision under check ends */
    *rc = st == KCOLL_OK ? MPI_SUCCESS : kcoll_fail(comm, c->coll, st, kcoll_req_error(r));
    kcoll_req_release(r);
    return KCOLL_PMPI_DONE;
}

int kcoll_pmpi_nonblocking(const kcoll_call_t *c, MPI_Comm comm, MPI_Request *request, int *rc)
{
    kcoll_req_t *r;
    switch (kcoll_pmpi_take(c, comm, KCOLL_MODE_NONBLOCKING, &r, rc)) {
    case 1: return KCOLL_PMPI_DONE;
    case 2: *rc = kcoll_greq_start(r, comm, request); return KCOLL_PMPI_DONE;
    default: return KCOLL_PMPI_HOST;
    }
}

/* A persistent request's own duplicate of comm, set up (its team, or
 * across nodes its span record) while every rank is in the initialization;
 * MPI_COMM_NULL (alike on every rank) when it cannot be made. The
 * duplicate is made with PMPI_Comm_idup, waited for in a loop that
 * advances everything of kcoll's: a rank may reach the initialization
 * while a peer still waits for one of its pending collectives (ones
 * across nodes too), which must move on meanwhile, as MPI's progress
 * rule says. Once the duplicate is there every rank is in the
 * initialization, and the set-up's blocking host calls on it wait for
 * nobody outside. */
static MPI_Comm kcoll_pmpi_private(MPI_Comm comm)
{
    MPI_Comm own = MPI_COMM_NULL;
    MPI_Request q = MPI_REQUEST_NULL;
    if (kcoll_host_wait(PMPI_Comm_idup(comm, &own, &q), &q, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return MPI_COMM_NULL;
    kcoll_comm_created(own);
    return own;
}

/* The identity of a persistent collective comes from its initialization.
 * MPI orders the initializations of persistent collectives on a
 * communicator like any collectives, but lets every rank start the
 * requests in an order of its own (MPI_Start, MPI_Startall): a start
 * cannot take the next number of the communicator's team, as a
 * non-blocking call does, or ranks that start A, B and B, A would run
 * each other's collectives. So every persistent request kcoll runs gets,
 * at its initialization (a collective call: every rank is in it, in the
 * same order), a duplicate of the communicator of its own, with its own
 * team (or, across nodes, its own node communicator, team and groups): its
 * starts are the only collectives numbered there, one after the other,
 * whatever else the ranks start meanwhile. A request the host runs needs
 * none: the host orders its own. */
int kcoll_pmpi_persistent(const kcoll_call_t *c, MPI_Comm comm, MPI_Request request)
{
    kcoll_reason_t why = KCOLL_R_TEAM_FAILED, host_why = kcoll_pmpi_unusable(c, comm);
    kcoll_req_t *r = NULL;
    MPI_Comm own = MPI_COMM_NULL;
    char err[256];
    if (host_why == KCOLL_R_DISABLED && !kcoll_ready())
        return KCOLL_PMPI_HOST; /* kcoll keeps no plans (nor statistics) outside MPI_Init..MPI_Finalize */
    /* the starts are counted, not the initialization (pmpi/request.c) */
    if (host_why == KCOLL_R_NONE) {
        /* a communicator without a team yet does not get one here (its
         * set-up blocks): the init may begin a set-up in later calls
         * (mpi/later.c), and meanwhile the host runs the request, as a
         * non-blocking call */
        kcoll_team_t *team = kcoll_comm_team_for(comm, KCOLL_MODE_PERSISTENT, &why);
        kcoll_call_result_t res = kcoll_call_prepare(c, KCOLL_MODE_PERSISTENT, team, why, &r,
                                                     &host_why, err, sizeof err);
        if (res == KCOLL_CALL_KCOLL || res == KCOLL_CALL_ACROSS) {
            /* kcoll takes it (alike on every rank): on a private copy */
            if (r)
                kcoll_req_release(r);
            r = NULL;
            host_why = res == KCOLL_CALL_ACROSS ? KCOLL_R_MULTINODE : KCOLL_R_TEAM_FAILED;
            own = kcoll_pmpi_private(comm);
        }
        if (own != MPI_COMM_NULL && res == KCOLL_CALL_ACROSS) {
            /* as one schedule across nodes (a failure to set it up is
             * reported here and the host runs the starts) */
            switch (kcoll_comm_span(own) ? kcoll_pmpi_across(c, KCOLL_MODE_PERSISTENT, own, &r,
                                                               &host_why, err, sizeof err)
                                         : KCOLL_CALL_HOST) {
            case KCOLL_CALL_KCOLL: break;
            case KCOLL_CALL_FAILED:
                kcoll_error("%s_init: %s", kcoll_coll_name(c->coll), err); /* fall through */
            default: r = NULL;
            }
        } else if (own != MPI_COMM_NULL) {
            team = kcoll_comm_team(own, 1, &why);
            if (kcoll_call_prepare(c, KCOLL_MODE_PERSISTENT, team, why, &r, &host_why, err,
                                   sizeof err) != KCOLL_CALL_KCOLL)
                r = NULL;
        }
    }
    kcoll_plan_add(request, r, c, host_why, &own);
    return r ? KCOLL_PMPI_DONE : KCOLL_PMPI_HOST;
}


