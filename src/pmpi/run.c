/* From MPI arguments to the call layer and back (see pmpi.h): describing
 * a call, and running it in each of the three modes. */
#include <stdint.h>

#include "base/log.h"

#include "pmpi/pmpi.h"
#include "pmpi/request.h"

void kcoll_pmpi_describe(kcoll_call_t *c, kcoll_coll_t coll, int root, MPI_Comm comm)
{
    int inter = 1;
    c->coll = coll;
    c->root = root;
    c->p = c->rank = 0;
    c->in_place = 0;
    c->op = NULL;
    c->send = c->recv = (kcoll_side_t){0};
    if (!kcoll_ready() || kcoll_comm_known(comm, &c->p, &c->rank))
        return;
    if (comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter) {
        PMPI_Comm_size(comm, &c->p);
        PMPI_Comm_rank(comm, &c->rank);
    }
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
        if (size > 0 && (textent != size || extent != size))
            s->map = kcoll_dtype_map(dt, (size_t)size, extent, tlb);
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
}

/* The team for a call in a mode, or NULL with the reason. */
static kcoll_team_t *kcoll_pmpi_team(const kcoll_call_t *c, MPI_Comm comm, kcoll_mode_t mode,
                                     kcoll_reason_t *why)
{
    if (c->p < 2) /* not usable, or one process: the call layer says which */
        return NULL;
    return kcoll_comm_team(comm, mode == KCOLL_MODE_BLOCKING, why);
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

/* Hand a call to the call layer: 0 when the host MPI must do it; 1 with
 * *rc when it failed; 2 with *r to run or start; 3 when it runs
 * hierarchically (composed: pmpi/hier.h). */
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
    switch (kcoll_call_prepare(c, mode, team, why, r, &host_why, err, sizeof err)) {
    case KCOLL_CALL_HOST:
        return 0;
    case KCOLL_CALL_FAILED:
        *rc = kcoll_fail(comm, c->coll, KCOLL_ERR_PROTO, err);
        return 1;
    case KCOLL_CALL_HIER:
        return 3;
    case KCOLL_CALL_KCOLL:
        break;
    }
    return 2;
}

int kcoll_pmpi_blocking(const kcoll_call_t *c, MPI_Comm comm, int *rc)
{
    kcoll_req_t *r;
    int took = kcoll_pmpi_take(c, comm, KCOLL_MODE_BLOCKING, &r, rc);
    if (took == 3)
        return KCOLL_PMPI_HIER;
    if (took != 2)
        return took; /* KCOLL_PMPI_HOST, or KCOLL_PMPI_DONE with the failure */
    kcoll_req_start(r, NULL, NULL);
    kcoll_status_t st = kcoll_req_wait(r);
    *rc = st == KCOLL_OK ? MPI_SUCCESS : kcoll_fail(comm, c->coll, st, kcoll_req_error(r));
    kcoll_req_release(r);
    return KCOLL_PMPI_DONE;
}

/* A large-count call on a communicator that spans nodes: the host MPI
 * (the composed forms take int counts). */
static int kcoll_pmpi_not_composed(const kcoll_call_t *c, kcoll_mode_t mode, int took)
{
    if (took != KCOLL_PMPI_HIER)
        return took;
    kcoll_call_host(c, mode, KCOLL_R_MULTINODE);
    return KCOLL_PMPI_HOST;
}

int kcoll_pmpi_blocking_c(const kcoll_call_t *c, MPI_Comm comm, int *rc)
{
    return kcoll_pmpi_not_composed(c, KCOLL_MODE_BLOCKING, kcoll_pmpi_blocking(c, comm, rc));
}

int kcoll_pmpi_nonblocking(const kcoll_call_t *c, MPI_Comm comm, MPI_Request *request, int *rc)
{
    kcoll_req_t *r;
    switch (kcoll_pmpi_take(c, comm, KCOLL_MODE_NONBLOCKING, &r, rc)) {
    case 1: return KCOLL_PMPI_DONE;
    case 2: *rc = kcoll_greq_start(r, comm, request); return KCOLL_PMPI_DONE;
    case 3: return KCOLL_PMPI_HIER;
    default: return KCOLL_PMPI_HOST;
    }
}

int kcoll_pmpi_nonblocking_c(const kcoll_call_t *c, MPI_Comm comm, MPI_Request *request, int *rc)
{
    return kcoll_pmpi_not_composed(c, KCOLL_MODE_NONBLOCKING,
                                   kcoll_pmpi_nonblocking(c, comm, request, rc));
}

int kcoll_pmpi_istart(const kcoll_call_t *c, MPI_Comm comm,
                      void (*done)(kcoll_req_t *r, void *ctx), void *ctx, int *rc)
{
    kcoll_req_t *r;
    *rc = MPI_SUCCESS;
    switch (kcoll_pmpi_take(c, comm, KCOLL_MODE_NONBLOCKING, &r, rc)) {
    case 1: return KCOLL_PMPI_DONE;
    case 2:
        kcoll_req_detach(r);
        kcoll_req_start(r, done, ctx);
        return KCOLL_PMPI_DONE;
    default: return KCOLL_PMPI_HOST;
    }
}

int kcoll_pmpi_persistent(const kcoll_call_t *c, MPI_Comm comm, MPI_Request request)
{
    kcoll_reason_t why = KCOLL_R_TEAM_FAILED, host_why = kcoll_pmpi_unusable(c, comm);
    kcoll_req_t *r = NULL;
    char err[256];
    if (host_why == KCOLL_R_DISABLED && !kcoll_ready())
        return KCOLL_PMPI_HOST; /* kcoll keeps no plans (nor statistics) outside MPI_Init..MPI_Finalize */
    /* the starts are counted, not the initialization (pmpi/request.c) */
    if (host_why == KCOLL_R_NONE) {
        kcoll_team_t *team = kcoll_pmpi_team(c, comm, KCOLL_MODE_PERSISTENT, &why);
        switch (kcoll_call_prepare(c, KCOLL_MODE_PERSISTENT, team, why, &r, &host_why, err,
                                   sizeof err)) {
        case KCOLL_CALL_HIER: return KCOLL_PMPI_HIER;
        case KCOLL_CALL_KCOLL: break;
        default: r = NULL;
        }
    }
    kcoll_plan_add(request, r, c, host_why);
    return r ? KCOLL_PMPI_DONE : KCOLL_PMPI_HOST;
}

void kcoll_pmpi_persistent_c(const kcoll_call_t *c, MPI_Comm comm, MPI_Request request)
{
    if (kcoll_pmpi_persistent(c, comm, request) == KCOLL_PMPI_HIER)
        kcoll_plan_add(request, NULL, c, KCOLL_R_MULTINODE);
}

int kcoll_pmpi_host_wait(int rc, MPI_Request *q, MPI_Status *status)
{
    kcoll_pause_t pause;
    int flag = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    kcoll_pause_init(&pause);
    for (;;) {
        int moved = kcoll_progress();
        if ((rc = PMPI_Test(q, &flag, status)) != MPI_SUCCESS || flag)
            return rc;
        kcoll_pause_unless(&pause, moved);
    }
}

int kcoll_mpi_error(kcoll_status_t st)
{
    switch (st) {
    case KCOLL_OK: return MPI_SUCCESS;
    case KCOLL_ERR_ARG: return MPI_ERR_ARG;
    case KCOLL_ERR_NOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_OTHER;
    }
}

int kcoll_report(kcoll_coll_t c, const char *form, kcoll_status_t st, const char *what)
{
    kcoll_error("%s%s failed on MPI_COMM_WORLD rank %d: %s", kcoll_coll_name(c), form,
                kcoll_world_rank, what);
    return kcoll_mpi_error(st);
}

int kcoll_fail(MPI_Comm comm, kcoll_coll_t c, kcoll_status_t st, const char *what)
{
    int err = kcoll_report(c, "", st, what);
    PMPI_Comm_call_errhandler(comm, err);
    return err;
}
