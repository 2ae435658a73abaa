/* A communicator's hierarchy across nodes (see hier.h), the pieces the
 * composed collectives share, and the hierarchical MPI_Barrier.
 *
 * Barrier across nodes:
 *  1. the node's ranks meet in an on-node barrier (kcoll's dissemination
 *     barrier on the node's team): the leader knows its node has arrived;
 *  2. the leaders meet in a host barrier on the leaders' communicator:
 *     every node has arrived;
 *  3. a second on-node barrier lets the node's ranks go, none before its
 *     leader came back from step 2.
 * Cost: 2 T_barrier(node) + T_barrier(leaders, host). A node with one rank
 * skips its on-node steps.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/params.h"
#include "cluster/cluster.h"
#include "model/nodes.h"
#include "model/select.h"
#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

/* The communicators of calls run as one schedule (hier.h: xnode, xgroups),
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
static void kcoll_hier_groups(kcoll_hier_t *h, MPI_Comm comm)
{
    int m = h->maxpn, ok;
    h->xnode = MPI_COMM_NULL;
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
    ok = PMPI_Comm_dup(h->node, &h->xnode) == MPI_SUCCESS;
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

/* The host calls of kcoll_hier_create: blocking collectives over comm,
 * while kcoll's pending requests are advanced beside them (pmpi/drive.c). */
static kcoll_hier_t *kcoll_hier_make(MPI_Comm comm)
{
    kcoll_hier_t *h = calloc(1, sizeof *h);
    int ok = h != NULL, *pairs = NULL, *index = NULL;
    if (h) {
        h->refs = 1; /* the communicator's */
        h->node = h->leaders = h->xnode = MPI_COMM_NULL;
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
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, h->rank, MPI_INFO_NULL, &h->node) !=
        MPI_SUCCESS)
        h->node = MPI_COMM_NULL;
    if (h->node != MPI_COMM_NULL) {
        PMPI_Comm_size(h->node, &h->pn);
        PMPI_Comm_rank(h->node, &h->lr);
    }
    const int p = h->p;
    h->node_of = malloc((size_t)p * sizeof *h->node_of);
    h->lrank_of = malloc((size_t)p * sizeof *h->lrank_of);
    h->nsize = calloc((size_t)p, sizeof *h->nsize);
    h->members = malloc((size_t)(h->pn > 0 ? h->pn : 1) * sizeof *h->members);
    pairs = malloc(2 * (size_t)p * sizeof *pairs);
    index = malloc((size_t)p * sizeof *index);
    ok = h->node != MPI_COMM_NULL && h->node_of && h->lrank_of && h->nsize &&
         h->members && pairs && index;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        goto fail;

    /* this node's ranks; then every rank's (node's lowest rank, local rank) */
    PMPI_Allgather(&h->rank, 1, MPI_INT, h->members, 1, MPI_INT, h->node);
    int mine[2] = {h->members[0], h->lr};
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

    /* the leaders, in node order (their ranks in comm increase with it) */
    if (PMPI_Comm_split(comm, h->lr == 0 ? 0 : MPI_UNDEFINED, h->rank, &h->leaders) !=
        MPI_SUCCESS)
        h->leaders = MPI_COMM_NULL;
    ok = h->lr != 0 || h->leaders != MPI_COMM_NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        goto fail;
    free(pairs);
    free(index);
    kcoll_hier_groups(h, comm);
    return h;
fail:
    free(pairs);
    free(index);
    kcoll_hier_destroy(h);
    return NULL;
}

kcoll_hier_t *kcoll_hier_create(MPI_Comm comm)
{
    int drive = kcoll_drive_begin();
    kcoll_hier_t *h = kcoll_hier_make(comm);
    kcoll_drive_end(drive);
    /* the node's own team, while every rank of it is here (its set-up
     * drives its own host calls); the team of the calls run as one
     * schedule, even on a node of one rank (it numbers their calls), and
     * every rank learns whether every node has it */
    if (h) {
        kcoll_comm_created(h->node);
        if (h->xok) {
            kcoll_reason_t why;
            int ok = kcoll_comm_team(h->xnode, 1, &why) != NULL;
            drive = kcoll_drive_begin();
            PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
            kcoll_drive_end(drive);
            h->xok = ok;
        }
    }
    return h;
}

kcoll_nodes_layout_t kcoll_hier_layout(kcoll_hier_t *h, kcoll_coll_t c, size_t bytes,
                                       unsigned allowed)
{
    const int mode = kcoll_call_hier_mode();
    const unsigned lanes = KCOLL_NODES_BIT(KCOLL_NODES_LANES);
    if (mode == 0)
        return KCOLL_NODES_HOST;
    if (mode == 2)
        return KCOLL_NODES_LEADERS;
    if (mode == 3)
        return allowed & lanes ? KCOLL_NODES_LANES : KCOLL_NODES_LEADERS;
    const int64_t seg = kcoll_param_int(KCOLL_P_HIER_SEGMENT);
    const size_t segment = seg > 0 ? (size_t)seg : 0;
    if (allowed != kcoll_nodes_runs(c, h->nsize, h->nn)) /* a narrower choice: not cached */
        return kcoll_nodes_pick(&kcoll_tuning()->m, c, h->nsize, h->nn, bytes, segment, allowed);
    const uint64_t gen = kcoll_params_generation_model();
    const int sc = kcoll_size_class(bytes);
    if (h->pick_gen != gen) {
        memset(h->pick, -1, sizeof h->pick);
        h->pick_gen = gen;
    }
    if (h->pick[c][sc] < 0) /* of the layouts the model prices, the ones the runtime runs */
        h->pick[c][sc] = (signed char)kcoll_nodes_pick(&kcoll_tuning()->m, c, h->nsize, h->nn,
                                                       bytes, segment, allowed);
    return (kcoll_nodes_layout_t)h->pick[c][sc];
}

kcoll_reason_t kcoll_hier_pick(kcoll_hier_t *h, kcoll_coll_t c, size_t bytes)
{
    if (!kcoll_call_hier_mode())
        return KCOLL_R_MULTINODE;
    /* the composed requests run the leaders' layout: host or leaders */
    const kcoll_nodes_layout_t l =
        kcoll_hier_layout(h, c, bytes,
                          kcoll_nodes_runs(c, h->nsize, h->nn) & ~KCOLL_NODES_BIT(KCOLL_NODES_LANES));
    return l == KCOLL_NODES_HOST ? KCOLL_R_MULTINODE : KCOLL_R_NONE;
}

void kcoll_hier_free(kcoll_hier_t *h)
{
    if (h)
        kcoll_hier_release(h);
}

void kcoll_hier_destroy(kcoll_hier_t *h)
{
    kcoll_hreq_pool_free(h);
    if (h->node != MPI_COMM_NULL)
        PMPI_Comm_free(&h->node); /* its record and team go with it */
    if (h->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&h->leaders);
    if (h->xnode != MPI_COMM_NULL)
        PMPI_Comm_free(&h->xnode);
    for (int g = 0; g < h->nxgroups; g++)
        if (h->xgroups[g] != MPI_COMM_NULL)
            PMPI_Comm_free(&h->xgroups[g]);
    free(h->xgroups);
    free(h->xpeer);
    free(h->xrank_of);
    free(h->node_of);
    free(h->lrank_of);
    free(h->nsize);
    free(h->members);
    free(h);
}

int kcoll_hier_memcpy(kcoll_hreq_t *q, const kcoll_hop_t *o)
{
    (void)q;
    memcpy(o->rbuf, o->sbuf, (size_t)o->rcount);
    return MPI_SUCCESS;
}

size_t kcoll_hier_size(int count, MPI_Datatype dt)
{
    int size = 0;
    if (count <= 0 || PMPI_Type_size(dt, &size) != MPI_SUCCESS)
        return 0;
    return (size_t)count * (size_t)size;
}

int kcoll_hier_contiguous(const void *buf, MPI_Datatype dt, const char **at)
{
    MPI_Aint lb, extent, tlb, textent;
    int size;
    PMPI_Type_size(dt, &size);
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    *at = (const char *)buf + tlb;
    return extent == size && textent == size;
}

int kcoll_hier_pack(kcoll_hreq_t *q, const kcoll_hop_t *o)
{
    int pos = 0;
    (void)q;
    return PMPI_Pack(o->sbuf, o->count, o->dt, o->rbuf, o->rcount, &pos, MPI_COMM_SELF);
}

int kcoll_hier_unpack(kcoll_hreq_t *q, const kcoll_hop_t *o)
{
    const char *at;
    int pos = 0;
    (void)q;
    if (!o->rcount)
        return MPI_SUCCESS;
    if (kcoll_hier_contiguous(o->rbuf, o->dt, &at)) {
        if (at != o->sbuf)
            memmove((char *)at, o->sbuf, (size_t)o->rcount);
        return MPI_SUCCESS;
    }
    return PMPI_Unpack(o->sbuf, o->rcount, &pos, o->rbuf, o->count, o->dt, MPI_COMM_SELF);
}

const char *kcoll_hier_bytes(kcoll_hreq_t *q, const void *buf, int count, MPI_Datatype dt,
                             size_t b, int *last)
{
    const char *at = buf;
    if (!b || kcoll_hier_contiguous(buf, dt, &at))
        return at;
    char *mem = kcoll_hreq_mem(q, b);
    if (mem)
        *last = kcoll_hreq_add(q,
                               (kcoll_hop_t){.kind = KCOLL_HOP_LOCAL, .where = KCOLL_HOP_SELF,
                                             .fn = kcoll_hier_pack, .sbuf = buf, .count = count,
                                             .dt = dt, .rbuf = mem, .rcount = (int)b},
                               *last, -1);
    return mem;
}

int kcoll_hier_blocks(kcoll_hreq_t *q, const int *counts, size_t uniform, size_t esize,
                      kcoll_hier_blocks_t *k)
{
    const kcoll_hier_t *h = kcoll_hreq_hier(q);
    const int p = h->p;
    k->b = kcoll_hreq_mem(q, (size_t)p * sizeof *k->b);
    k->at = kcoll_hreq_mem(q, (size_t)p * sizeof *k->at);
    k->ncnt = kcoll_hreq_mem(q, (size_t)h->nn * sizeof *k->ncnt);
    k->ndsp = kcoll_hreq_mem(q, (size_t)h->nn * sizeof *k->ndsp);
    k->lcnt = kcoll_hreq_mem(q, (size_t)h->pn * sizeof *k->lcnt);
    k->ldsp = kcoll_hreq_mem(q, (size_t)h->pn * sizeof *k->ldsp);
    size_t *nsum = kcoll_hreq_mem(q, (size_t)h->nn * sizeof *nsum);
    if (!k->b || !k->at || !k->ncnt || !k->ndsp || !k->lcnt || !k->ldsp || !nsum) {
        kcoll_hreq_fail(q, MPI_ERR_NO_MEM);
        return -1;
    }
    memset(nsum, 0, (size_t)h->nn * sizeof *nsum);
    for (int r = 0; r < p; r++) {
        k->b[r] = counts ? (size_t)(counts[r] > 0 ? counts[r] : 0) * esize : uniform;
        nsum[h->node_of[r]] += k->b[r];
    }
    k->total = 0;
    for (int n = 0; n < h->nn; n++) {
        k->ndsp[n] = (int)k->total;
        k->ncnt[n] = (int)nsum[n];
        k->total += nsum[n];
        nsum[n] = k->total - nsum[n]; /* from here: where the node's next block goes */
    }
    /* a node's ranks by local rank are its ranks in rank order */
    for (int r = 0; r < p; r++) {
        const int n = h->node_of[r];
        k->at[r] = nsum[n];
        nsum[n] += k->b[r];
        if (n == h->me) {
            k->lcnt[h->lrank_of[r]] = (int)k->b[r];
            k->ldsp[h->lrank_of[r]] = (int)(k->at[r] - (size_t)k->ndsp[n]);
        }
    }
    if (k->total <= INT_MAX)
        return 0;
    kcoll_hreq_host(q, KCOLL_R_MULTINODE); /* the leaders' counts are ints */
    return -1;
}
