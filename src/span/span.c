/* A communicator that spans nodes (see span.h): its node
 * communicator and groups, made once, and the layout a call takes. */
#include <stdlib.h>
#include <string.h>

#include "base/params.h"
#include "cluster/cluster.h"
#include "model/nodes.h"
#include "model/select.h"
#include "sched/wait.h"
#include "span/span.h"

static void kcoll_span_destroy(kcoll_span_t *h);

kcoll_span_host_t kcoll_span_host;

int kcoll_host_wait(int rc, MPI_Request *q, MPI_Status *status)
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

void kcoll_span_set_host(const kcoll_span_host_t *host)
{
    kcoll_span_host = *host;
}

/* The communicators of calls run as one schedule (span.h: xgroups, xall),
 * made by every rank of comm. Lane l's member on a node of pn ranks is
 * local rank l % pn (src/cluster/cluster.h): on a smaller node a rank
 * carries several lanes, pn apart, and each split makes one communicator
 * per rank, so the lanes are made in rounds, every member of a lane in
 * the same round: lane l in round l / m, m the smallest node's ranks. A
 * rank's lanes, at least m apart, fall in different rounds, and in round
 * j local rank i joins the one lane of [j*m, (j+1)*m) that is i mod pn,
 * if there is one. Nodes join in node order (key: the node index). h->xok
 * stays 0 where any of it failed, on some rank (the caller agrees on it
 * afterwards). */
static void kcoll_span_groups(kcoll_span_t *h, MPI_Comm comm)
{
    int m = h->maxpn, ok;
    h->nxgroups = 1 + h->maxpn; /* the leaders, then L = maxpn lanes */
    h->xgroups = malloc((size_t)h->nxgroups * sizeof *h->xgroups);
    h->xpeer = malloc((size_t)h->pn * sizeof *h->xpeer);
    h->xrank_of = malloc((size_t)h->nn * (size_t)h->maxpn * sizeof *h->xrank_of);
    ok = h->xgroups && h->xpeer && h->xrank_of;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        free(h->xgroups);
        h->xgroups = NULL;
        h->nxgroups = 0;
        return;
    }
    for (int g = 0; g < h->nxgroups; g++)
        h->xgroups[g] = MPI_COMM_NULL;
    for (int i = 0; i < h->pn; i++)
        h->xpeer[i] = i; /* xnode is the node communicator's order: local ranks */
    for (int i = 0; i < h->nn * h->maxpn; i++)
        h->xrank_of[i] = -1;
    for (int r = 0; r < h->p; r++)
        h->xrank_of[h->node_of[r] * h->maxpn + h->lrank_of[r]] = r;
    for (int k = 0; k < h->nn; k++)
        m = h->nsize[k] < m ? h->nsize[k] : m;
    const int rounds = (h->maxpn + m - 1) / m;
    ok = PMPI_Comm_dup(comm, &h->xall) == MPI_SUCCESS;
    if (!ok)
        h->xall = MPI_COMM_NULL;
    else /* its calls' errors are the call's, reported on the program's communicator */
        PMPI_Comm_set_errhandler(h->xall, MPI_ERRORS_RETURN);
    if (PMPI_Comm_split(comm, h->lr == 0 ? 0 : MPI_UNDEFINED, h->me,
                        &h->xgroups[KCOLL_CLUSTER_LEADERS]) != MPI_SUCCESS)
        ok = 0;
    for (int j = 0; j < rounds; j++) {
        const int base = j * m;
        const int lane = base + ((h->lr - base) % h->pn + h->pn) % h->pn;
        const int mine = lane < base + m && lane < h->maxpn;
        MPI_Comm lc = MPI_COMM_NULL;
        if (PMPI_Comm_split(comm, mine ? lane : MPI_UNDEFINED, h->me, &lc) != MPI_SUCCESS)
            ok = 0;
        else if (mine)
            h->xgroups[KCOLL_CLUSTER_LANE(lane)] = lc;
    }
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    h->xok = ok;
}

/* The host calls of kcoll_span_make: blocking collectives over comm,
 * while kcoll's pending requests are advanced beside them (mpi/drive.c). */
static kcoll_span_t *kcoll_span_build(MPI_Comm comm)
{
    kcoll_span_t *h = calloc(1, sizeof *h);
    int ok = h != NULL, *pairs = NULL, *index = NULL;
    if (h) {
        atomic_init(&h->refs, 1); /* the communicator's */
        h->xnode = h->xall = MPI_COMM_NULL;
        PMPI_Comm_size(comm, &h->p);
        PMPI_Comm_rank(comm, &h->rank);
    }
    /* every rank must take part in the collective calls below, or none */
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        free(h);
        return NULL;
    }
    /* the node communicator, in comm's rank order */
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, h->rank, MPI_INFO_NULL, &h->xnode) !=
        MPI_SUCCESS)
        h->xnode = MPI_COMM_NULL;
    if (h->xnode != MPI_COMM_NULL) {
        PMPI_Comm_size(h->xnode, &h->pn);
        PMPI_Comm_rank(h->xnode, &h->lr);
    }
    const int p = h->p;
    h->node_of = malloc((size_t)p * sizeof *h->node_of);
    h->lrank_of = malloc((size_t)p * sizeof *h->lrank_of);
    h->nsize = calloc((size_t)p, sizeof *h->nsize);
    pairs = malloc(2 * (size_t)p * sizeof *pairs);
    index = malloc((size_t)p * sizeof *index);
    ok = h->xnode != MPI_COMM_NULL && h->node_of && h->lrank_of && h->nsize && pairs && index;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        goto fail;

    /* every rank's (node's lowest rank, local rank) */
    int mine[2] = {h->rank, h->lr};
    PMPI_Allreduce(MPI_IN_PLACE, &mine[0], 1, MPI_INT, MPI_MIN, h->xnode);
    PMPI_Allgather(mine, 2, MPI_INT, pairs, 2, MPI_INT, comm);
    /* node k is the node of the k-th lowest leader (local rank 0): number
     * the leaders in rank order, then every rank by its node's leader */
    for (int q = 0; q < p; q++)
        if (pairs[2 * q + 1] == 0)
            index[q] = h->nn++;
    for (int q = 0; q < p; q++) {
        h->node_of[q] = index[pairs[2 * q]];
        h->lrank_of[q] = pairs[2 * q + 1];
        h->nsize[h->node_of[q]]++;
    }
    for (int k = 0; k < h->nn; k++)
        h->maxpn = h->nsize[k] > h->maxpn ? h->nsize[k] : h->maxpn;
    h->me = h->node_of[h->rank];
    /* nodes are numbered by their lowest rank: they hold runs of ranks in
     * node order exactly when the node numbers never fall */
    h->blocked = 1;
    for (int q = 1; q < p; q++)
        h->blocked &= h->node_of[q] >= h->node_of[q - 1];
    free(pairs);
    free(index);
    kcoll_span_groups(h, comm);
    return h;
fail:
    free(pairs);
    free(index);
    kcoll_span_destroy(h);
    return NULL;
}

kcoll_span_t *kcoll_span_make(MPI_Comm comm)
{
    const int drive = kcoll_span_host.drive_begin();
    kcoll_span_t *h = kcoll_span_build(comm);
    kcoll_span_host.drive_end(drive);
    return h;
}

kcoll_nodes_layout_t kcoll_span_layout(kcoll_span_t *h, kcoll_coll_t c, size_t bytes,
                                       size_t *segment)
{
    const int mode = kcoll_call_across_mode();
    *segment = kcoll_nodes_segment(kcoll_param_int(KCOLL_P_HIER_SEGMENT));
    if (mode == 0)
        return KCOLL_NODES_HOST;
    if (mode == 2)
        return KCOLL_NODES_LEADERS;
    /* of the layouts the model prices, the ones the runtime runs for c on
     * these nodes (asked only where no cached pick answers) */
    if (mode == 3)
        return kcoll_nodes_runs(c, h->nsize, h->nn) & KCOLL_NODES_BIT(KCOLL_NODES_LANES)
                   ? KCOLL_NODES_LANES
                   : KCOLL_NODES_LEADERS;
    const uint64_t gen = kcoll_params_generation_model();
    const int sc = kcoll_size_class(bytes);
    if (h->pick_gen != gen) {
        memset(h->pick, -1, sizeof h->pick);
        h->pick_gen = gen;
    }
    if (h->pick[c][sc] < 0) {
        size_t cut;
        h->pick[c][sc] = (signed char)kcoll_nodes_pick(&kcoll_tuning()->m, c, h->nsize, h->nn,
                                                       bytes, *segment,
                                                       kcoll_nodes_runs(c, h->nsize, h->nn), &cut);
        h->cut[c][sc] = cut != 0;
    }
    if (h->pick[c][sc] == KCOLL_NODES_LANES && !h->cut[c][sc])
        *segment = 0;
    return (kcoll_nodes_layout_t)h->pick[c][sc];
}

/* Free h and its communicators (the node communicator's record and team
 * go with it). */
static void kcoll_span_destroy(kcoll_span_t *h)
{
    if (h->xnode != MPI_COMM_NULL)
        PMPI_Comm_free(&h->xnode);
    if (h->xall != MPI_COMM_NULL)
        PMPI_Comm_free(&h->xall);
    for (int g = 0; g < h->nxgroups; g++)
        if (h->xgroups[g] != MPI_COMM_NULL)
            PMPI_Comm_free(&h->xgroups[g]);
    free(h->xgroups);
    free(h->xpeer);
    free(h->xrank_of);
    free(h->node_of);
    free(h->lrank_of);
    free(h->nsize);
    free(h);
}

void kcoll_span_hold(kcoll_span_t *h)
{
    /* relaxed: whoever holds h already keeps it alive */
    atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
}

void kcoll_span_release(kcoll_span_t *h)
{
    /* acq_rel: every use of h by the holders before their release happens
     * before the last one frees it */
    if (atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) == 1)
        kcoll_span_destroy(h);
}
