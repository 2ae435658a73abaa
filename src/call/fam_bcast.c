/* MPI_Bcast as a family of the call layer.
 *
 * Everything it decides on is known alike to every rank (the root, the
 * message size in bytes, which MPI requires to match) except the layout
 * of the datatype, which kcoll assumes alike on all ranks (README
 * "Limitations"): no agreement. The buffer is RECV on every rank, the
 * root's included. */
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
    r->noncontig = !kcoll_side_contig(b, (size_t)b->count);
}

static void bcast_buffers(kcoll_req_t *r)
{
    r->bufs[KCOLL_BUF_RECV] = (void *)(uintptr_t)r->call.recv.buf;
    r->lens[KCOLL_BUF_RECV] = r->args.bytes;
}

const kcoll_family_t kcoll_fam_bcast = {
    .shared = bcast_shared,
    .buffers = bcast_buffers,
};
