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

#include "pmpi/hier.h"
#include "pmpi/pmpi.h"

/* The host calls of kcoll_hier_create: blocking collectives over comm,
 * while kcoll's pending requests are advanced beside them (pmpi/drive.c). */
static kcoll_hier_t *kcoll_hier_make(MPI_Comm comm)
{
    kcoll_hier_t *h = calloc(1, sizeof *h);
    int ok = h != NULL, *pairs = NULL, *index = NULL;
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
    return h;
fail:
    free(pairs);
    free(index);
    kcoll_hier_free(h);
    return NULL;
}

kcoll_hier_t *kcoll_hier_create(MPI_Comm comm)
{
    int drive = kcoll_drive_begin();
    kcoll_hier_t *h = kcoll_hier_make(comm);
    kcoll_drive_end(drive);
    /* the node's own team, while every rank of it is here (its set-up
     * drives its own host calls) */
    if (h)
        kcoll_comm_created(h->node);
    return h;
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

void kcoll_hier_blocks_free(kcoll_hier_blocks_t *k)
{
    free(k->b);
    free(k->at);
    free(k->ncnt);
    free(k->ndsp);
    free(k->lcnt);
    free(k->ldsp);
}

int kcoll_hier_blocks(const kcoll_hier_t *h, const int *counts, size_t uniform, size_t esize,
                      kcoll_hier_blocks_t *k)
{
    const int p = h->p;
    k->b = malloc((size_t)p * sizeof *k->b);
    k->at = malloc((size_t)p * sizeof *k->at);
    k->ncnt = malloc((size_t)h->nn * sizeof *k->ncnt);
    k->ndsp = malloc((size_t)h->nn * sizeof *k->ndsp);
    k->lcnt = malloc((size_t)h->pn * sizeof *k->lcnt);
    k->ldsp = malloc((size_t)h->pn * sizeof *k->ldsp);
    size_t *nsum = calloc((size_t)h->nn, sizeof *nsum);
    if (!k->b || !k->at || !k->ncnt || !k->ndsp || !k->lcnt || !k->ldsp || !nsum) {
        free(nsum);
        return -1;
    }
    for (int q = 0; q < p; q++) {
        k->b[q] = counts ? (size_t)(counts[q] > 0 ? counts[q] : 0) * esize : uniform;
        nsum[h->node_of[q]] += k->b[q];
    }
    k->total = 0;
    for (int n = 0; n < h->nn; n++) {
        k->ndsp[n] = (int)k->total;
        k->ncnt[n] = (int)nsum[n];
        k->total += nsum[n];
        nsum[n] = k->total - nsum[n]; /* from here: where the node's next block goes */
    }
    /* a node's ranks by local rank are its ranks in rank order */
    for (int q = 0; q < p; q++) {
        const int n = h->node_of[q];
        k->at[q] = nsum[n];
        nsum[n] += k->b[q];
        if (n == h->me) {
            k->lcnt[h->lrank_of[q]] = (int)k->b[q];
            k->ldsp[h->lrank_of[q]] = (int)(k->at[q] - (size_t)k->ndsp[n]);
        }
    }
    free(nsum);
    return k->total <= INT_MAX ? 0 : -1;
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
