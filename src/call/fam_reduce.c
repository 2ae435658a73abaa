/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block and
 * MPI_Reduce_scatter as a family of the call layer.
 *
 * Every rank knows alike what decides (the counts, the datatype and the
 * operation, which MPI requires to be identical everywhere): no
 * agreement. The PMPI layer maps the MPI operation and datatype to kcoll's
 * (op/op.h), or passes none when no kernel applies (MPI_REPLACE, an
 * operation MPI does not define on that datatype, a user operation on a
 * type with gaps): then the host MPI does the call. The datatype rides on
 * the receive side; the send side holds only the send buffer. MPI_IN_PLACE
 * means every rank's contribution is in its receive buffer (Reduce: the
 * root's; Reduce_scatter(_block): the whole vector, the rank's block at
 * its start on return).
 */
#include <limits.h>
#include <stdint.h>

#include "call/fam.h"
#include "coll/reduce/common.h"

static void reduce_shared(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const kcoll_side_t *d = &c->recv;
    const kcoll_coll_t coll = c->coll;
    const int p = c->p;
    size_t bytes = 0, total = 0, esize = d->size;
    if (!(d->type & KCOLL_TYPE_VALID) || esize == 0) {
        r->invalid = 1;
        return;
    }
    if (coll == KCOLL_COLL_REDUCE_SCATTER) {
        if (!d->counts) {
            r->invalid = 1;
            return;
        }
        for (int q = 0; q < p; q++) {
            const int64_t n = kcoll_side_vcount(d, q);
            if (!kcoll_side_count_ok(d, n)) {
                r->invalid = 1;
                return;
            }
            r->counts[q] = (size_t)n;
            total += (size_t)n;
        }
        bytes = p ? total / (size_t)p * esize : 0; /* the mean block */
    } else {
        if (!kcoll_side_count_ok(d, d->count)) {
            r->invalid = 1;
            return;
        }
        bytes = (size_t)d->count * esize;
        total = coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK ? (size_t)d->count * (size_t)p
                                                        : (size_t)d->count;
    }
    r->policy_bytes = r->stat_bytes = bytes;
    if (coll == KCOLL_COLL_REDUCE && p && (c->root < 0 || c->root >= p)) {
        r->invalid = 1;
        return;
    }
    r->bad_op = !c->op;
    if (c->op)
        r->op = *c->op;
    r->noncontig = !kcoll_side_contig(d, total > INT_MAX ? INT_MAX : total);
    r->args.count = (size_t)d->count;
    r->args.esize = esize;
    r->args.counts = coll == KCOLL_COLL_REDUCE_SCATTER ? r->counts : NULL;
    r->args.op = &r->op;
    r->args.bytes = bytes;
    r->args.in_place = c->in_place && (coll != KCOLL_COLL_REDUCE || c->rank == c->root);
}

static void reduce_buffers(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const kcoll_coll_t coll = c->coll;
    const size_t vec = kcoll_red_vector(&r->args);
    char *recv = (char *)(uintptr_t)c->recv.buf;
    char *send = r->args.in_place ? recv : (char *)(uintptr_t)c->send.buf;
    size_t recv_len = vec, off, mine;
    if (coll == KCOLL_COLL_REDUCE_SCATTER || coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        /* in place the receive buffer holds the whole vector on entry */
        kcoll_red_slice(&r->args, c->rank, &off, &mine);
        recv_len = r->args.in_place ? vec : mine;
    }
    if (coll == KCOLL_COLL_REDUCE && c->rank != c->root) {
        recv = NULL;
        recv_len = 0;
    }
    r->bufs[KCOLL_BUF_SEND] = send;
    r->lens[KCOLL_BUF_SEND] = vec;
    r->maps[KCOLL_BUF_SEND] = r->args.in_place ? c->recv.map : c->send.map;
    r->bufs[KCOLL_BUF_RECV] = recv;
    r->lens[KCOLL_BUF_RECV] = recv_len;
    r->maps[KCOLL_BUF_RECV] = recv ? c->recv.map : NULL;
}

const kcoll_family_t kcoll_fam_reduce = {
    .shared = reduce_shared,
    .buffers = reduce_buffers,
};
