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
#include <stdlib.h>
#include <string.h>

#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

kcoll_hier_t *kcoll_hier_create(MPI_Comm comm)
{
    kcoll_hier_t *h = calloc(1, sizeof *h);
    int ok = h != NULL, *pairs = NULL;
    if (h) {
        h->node = h->leaders = MPI_COMM_NULL;
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
    h->nfirst = calloc((size_t)p, sizeof *h->nfirst);
    h->members = malloc((size_t)(h->pn > 0 ? h->pn : 1) * sizeof *h->members);
    pairs = malloc(2 * (size_t)p * sizeof *pairs);
    ok = h->node != MPI_COMM_NULL && h->node_of && h->lrank_of && h->nsize && h->nfirst &&
         h->members && pairs;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        goto fail;

    /* this node's ranks; then every rank's (node's lowest rank, local rank) */
    PMPI_Allgather(&h->rank, 1, MPI_INT, h->members, 1, MPI_INT, h->node);
    int mine[2] = {h->members[0], h->lr};
    PMPI_Allgather(mine, 2, MPI_INT, pairs, 2, MPI_INT, comm);
    /* node k is the k-th lowest of the nodes' lowest ranks: the node of
     * rank q is the number of distinct leaders below q's leader */
    for (int q = 0; q < p; q++) {
        const int lead = pairs[2 * q];
        h->lrank_of[q] = pairs[2 * q + 1];
        h->node_of[q] = 0;
        for (int x = 0; x < p; x++)
            if (pairs[2 * x + 1] == 0 && pairs[2 * x] < lead)
                h->node_of[q]++;
        h->nsize[h->node_of[q]]++;
    }
    for (int q = 0; q < p; q++)
        if (pairs[2 * q + 1] == 0)
            h->nn++;
    for (int k = 1; k < h->nn; k++)
        h->nfirst[k] = h->nfirst[k - 1] + h->nsize[k - 1];
    for (int k = 0; k < h->nn; k++)
        h->maxpn = h->nsize[k] > h->maxpn ? h->nsize[k] : h->maxpn;
    h->me = h->node_of[h->rank];
    h->blocked = 1;
    for (int q = 0; q < p; q++)
        h->blocked &= kcoll_hier_pos(h, q) == q;

    /* the leaders, in node order (their ranks in comm increase with it) */
    if (PMPI_Comm_split(comm, h->lr == 0 ? 0 : MPI_UNDEFINED, h->rank, &h->leaders) !=
        MPI_SUCCESS)
        h->leaders = MPI_COMM_NULL;
    ok = h->lr != 0 || h->leaders != MPI_COMM_NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        goto fail;
    free(pairs);
    /* the node's own team, while every rank of it is here */
    kcoll_comm_created(h->node);
    return h;
fail:
    free(pairs);
    kcoll_hier_free(h);
    return NULL;
}

void kcoll_hier_free(kcoll_hier_t *h)
{
    if (!h)
        return;
    if (h->node != MPI_COMM_NULL)
        PMPI_Comm_free(&h->node); /* its record and team go with it */
    if (h->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&h->leaders);
    free(h->node_of);
    free(h->lrank_of);
    free(h->nsize);
    free(h->nfirst);
    free(h->members);
    free(h);
}

void *kcoll_hier_tmp(int count, MPI_Datatype dt, void **mem)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    size_t bytes = count > 0 ? (size_t)(count - 1) * (size_t)extent + (size_t)textent : 0;
    *mem = malloc(bytes ? bytes : 1);
    return *mem ? (char *)*mem - tlb : NULL;
}

int kcoll_hier_copy(const void *src, void *dst, int count, MPI_Datatype dt)
{
    return PMPI_Sendrecv(src, count, dt, 0, KCOLL_HIER_TAG, dst, count, dt, 0, KCOLL_HIER_TAG,
                         MPI_COMM_SELF, MPI_STATUS_IGNORE);
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

const char *kcoll_hier_bytes(const void *buf, int count, MPI_Datatype dt, size_t b, void **mem)
{
    const char *at = buf;
    int pos = 0;
    *mem = NULL;
    if (!b || kcoll_hier_contiguous(buf, dt, &at))
        return at;
    if (!(*mem = malloc(b)))
        return NULL;
    PMPI_Pack(buf, count, dt, *mem, (int)b, &pos, MPI_COMM_SELF);
    return *mem;
}

int kcoll_hier_unbytes(const char *src, size_t b, void *buf, int count, MPI_Datatype dt)
{
    const char *at;
    int pos = 0;
    if (!b)
        return MPI_SUCCESS;
    if (kcoll_hier_contiguous(buf, dt, &at)) {
        if (at != src)
            memmove((char *)at, src, b);
        return MPI_SUCCESS;
    }
    return PMPI_Unpack(src, (int)b, &pos, buf, count, dt, MPI_COMM_SELF);
}

/* The leaders' counts and displacements of node runs of b-byte blocks. */
int kcoll_hier_runs(const kcoll_hier_t *h, size_t b, int **cnt, int **dsp)
{
    *cnt = malloc((size_t)h->nn * sizeof **cnt);
    *dsp = malloc((size_t)h->nn * sizeof **dsp);
    if (!*cnt || !*dsp)
        return -1;
    for (int k = 0; k < h->nn; k++) {
        (*cnt)[k] = (int)((size_t)h->nsize[k] * b);
        (*dsp)[k] = (int)((size_t)h->nfirst[k] * b);
    }
    return 0;
}

int kcoll_hier_barrier(const kcoll_call_t *c, MPI_Comm comm)
{
    kcoll_hier_t *h = kcoll_comm_hier(comm);
    int rc = MPI_SUCCESS;
    kcoll_call_hier_begin();
    if (h->pn > 1)
        rc = MPI_Barrier(h->node);
    if (rc == MPI_SUCCESS && h->lr == 0)
        KCOLL_HIER_HOST(rc, PMPI_Barrier(h->leaders));
    if (rc == MPI_SUCCESS && h->pn > 1)
        rc = MPI_Barrier(h->node);
    kcoll_call_hier_end(c, h->pn == 1, KCOLL_R_NONE);
    return rc;
}
