/* MPI_Bcast as a family of the call layer.
 *
 * Everything it decides on is known alike to every rank (the root, the
 * message size in bytes, which MPI requires to match): no agreement. Each
 * rank's datatype may lay the bytes out differently: each addresses its
 * own through its map (sched/dmap.h), so only a datatype kcoll cannot map
 * on some ranks and not on others would split the ranks (README
 * "Limitations"). The buffer is RECV on every rank, the root's included. */
#include <stdint.h>

#include "call/fam.h"

static void bcast_shared(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const kcoll_side_t *b = &c->recv;
    if (!(b->type & KCOLL_TYPE_VALID) || !kcoll_side_count_ok(b, b->count)) {
        r->invalid = 1;
        return;
    }
    size_t bytes = (size_t)b->count * b->size;
    if (c->p && (c->root < 0 || c->root >= c->p)) {
        r->invalid = 1;
        return; /* counted without bytes */
    }
    r->policy_bytes = r->stat_bytes = r->args.bytes = bytes;
    /* the vector in bytes, where a builder counts elements (the layouts
     * across nodes cut it into shares): the ranks' datatypes may cut the
     * same bytes into different elements */
    r->args.count = bytes;
    r->args.esize = 1;
    r->noncontig = !kcoll_side_contig(b, (size_t)b->count);
}

static void bcast_buffers(kcoll_req_t *r)
{
    r->bufs[KCOLL_BUF_RECV] = (void *)(uintptr_t)r->call.recv.buf;
    r->lens[KCOLL_BUF_RECV] = r->args.bytes;
    r->maps[KCOLL_BUF_RECV] = r->call.recv.map;
}

const kcoll_family_t kcoll_fam_bcast = {
    .shared = bcast_shared,
    .buffers = bcast_buffers,
};
