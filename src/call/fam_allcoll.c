/* MPI_Allgather(v), MPI_Alltoall(v) and MPI_Barrier as families of the
 * call layer.
 *
 * What every rank knows alike decides first: the block size (MPI_Allgather
 * and MPI_Alltoall: recvcount * size of recvtype, equal on all ranks;
 * MPI_Allgatherv: all recvcounts; MPI_Alltoallv: nothing, every rank knows
 * only its own counts, so its size is learnt in the agreement, whose vote
 * carries this rank's largest block). What only this rank knows goes into
 * the agreement: whether its datatypes are contiguous, whether its send
 * size matches its block, whether it passed MPI_IN_PLACE (MPI requires all
 * or none) and, for the v-variants, where its blocks lie (the layout table,
 * in bytes). All ranks then take kcoll's path or all take the host's, with
 * the same view of every rank's layout. In place, an Alltoall's send
 * layout is its receive layout, and the algorithms read the send data from
 * a private copy (TMP), since the receive buffer is overwritten.
 *
 * MPI_Barrier decides on nothing but the communicator: no agreement, and
 * the minimum size does not apply.
 */
#include <stdint.h>

#include "call/fam.h"

/* Votes: bit 0 "I can", bit 1 "I pass MPI_IN_PLACE", bit 2 "my arguments
 * are inconsistent" (the host MPI reports them); bits 8.. this rank's
 * largest block in bytes (MPI_Alltoallv only). */
#define VOTE_OK 1u
#define VOTE_IN_PLACE 2u
#define VOTE_INVALID 4u
#define VOTE_SHIFT 8

/* One side of a v-layout in bytes: counts and displacements (NULL arrays:
 * only measure), the buffer's length into *len, the largest block into
 * *largest. Displacements are from the buffer's start, or with lo from
 * the lowest block's where that lies before it (*lo gets its offset from
 * the buffer: 0 or negative). 0, or -1 if kcoll cannot address it (a
 * negative displacement, without lo). */
static int v_side_from(const kcoll_side_t *s, int p, size_t *cnt, size_t *dsp, size_t *len,
                       size_t *largest, ptrdiff_t *lo)
{
    int64_t low = 0;
    for (int q = 0; q < p; q++) {
        const int64_t displ = kcoll_side_vcount(s, q) ? kcoll_side_vdispl(s, q) : 0;
        if (displ < 0 && !lo)
            return -1;
        const int64_t d = displ * (int64_t)kcoll_side_step(s);
        low = d < low ? d : low;
    }
    for (int q = 0; q < p; q++) {
        size_t c = (size_t)kcoll_side_vcount(s, q) * s->size;
        const int64_t displ = c ? kcoll_side_vdispl(s, q) : 0;
        size_t d = (size_t)(displ * (int64_t)kcoll_side_step(s) - low);
        if (cnt) {
            cnt[q] = c;
            dsp[q] = d;
        }
        if (d + c > *len)
            *len = d + c;
        if (c > *largest)
            *largest = c;
    }
    if (lo)
        *lo = (ptrdiff_t)low;
    return 0;
}

static int v_side(const kcoll_side_t *s, int p, size_t *cnt, size_t *dsp, size_t *len,
                  size_t *largest)
{
    return v_side_from(s, p, cnt, dsp, len, largest, NULL);
}

/* Are all of a v-side's counts given and non-negative? */
static int v_counts_ok(const kcoll_side_t *s, int p)
{
    if (!s->counts || !s->displs)
        return 0;
    for (int q = 0; q < p; q++)
        if (!kcoll_side_count_ok(s, kcoll_side_vcount(s, q)))
            return 0;
    return 1;
}

/* The vote of a call whose send side must carry `own` bytes in one block
 * of the receive datatype's layout (uniform calls, and Allgatherv). */
static uint64_t send_vote(const kcoll_req_t *r, size_t own)
{
    const kcoll_call_t *c = &r->call;
    const int in_place = c->in_place;
    uint64_t vote = VOTE_OK | (in_place ? VOTE_IN_PLACE : 0);
    if (!in_place && (!(c->send.type & KCOLL_TYPE_VALID) ||
                      !kcoll_side_count_ok(&c->send, c->send.count) ||
                      (size_t)c->send.count * c->send.size != own))
        return VOTE_INVALID;
    if (!kcoll_side_blocked(&c->recv) || (!in_place && !kcoll_side_blocked(&c->send)))
        vote &= ~(uint64_t)VOTE_OK;
    else if (own && !in_place && !c->send.buf)
        return VOTE_INVALID;
    return vote;
}

/* ---- MPI_Allgather, MPI_Alltoall (uniform) ---- */

static void uniform_shared(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    if (!(c->recv.type & KCOLL_TYPE_VALID) || !kcoll_side_count_ok(&c->recv, c->recv.count)) {
        r->invalid = 1;
        return;
    }
    size_t bytes = (size_t)c->recv.count * c->recv.size;
    r->args.bytes = r->policy_bytes = bytes;
    r->stat_bytes = bytes * (size_t)c->p;
    r->args.in_place = c->in_place;
    r->noncontig = !kcoll_side_blocked(&c->recv) ||
                   (!c->in_place && !kcoll_side_blocked(&c->send));
}

static uint64_t uniform_vote(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    uint64_t vote = send_vote(r, r->args.bytes);
    if ((vote & VOTE_OK) && r->args.bytes && !c->recv.buf)
        vote = VOTE_INVALID;
    return vote;
}

/* Do all ranks' layouts of a v-variant (in bytes) put b-byte blocks
 * side by side, block q at q * b, in every side the collective reads
 * (Allgatherv: the receive side; Alltoallv: both, or the receive side in
 * place)? Such a call runs the uniform collective's schedule, which the
 * team keeps between calls (call/request.c), instead of one built from the
 * layouts on every call. */
static int v_uniform(const kcoll_layout_t *lay, int p, size_t b, int sides)
{
    for (int q = 0; q < p; q++)
        for (int j = 0; j < p; j++) {
            if (lay[q].rcount[j] != b || lay[q].rdispl[j] != (size_t)j * b)
                return 0;
            if (sides == 2 && (lay[q].scount[j] != b || lay[q].sdispl[j] != (size_t)j * b))
                return 0;
        }
    return 1;
}

/* Everybody's votes: 0 (kcoll), or why the host MPI must do the call. */
static int allcoll_decide(kcoll_req_t *r)
{
    const uint64_t mine = r->votes[r->call.rank];
    int all_ok = 1, invalid = 0, mixed = 0;
    size_t top = 0;
    for (int q = 0; q < r->call.p; q++) {
        uint64_t v = r->votes[q];
        all_ok &= (v & VOTE_OK) != 0;
        invalid |= (v & VOTE_INVALID) != 0;
        mixed |= (v & VOTE_IN_PLACE) != (mine & VOTE_IN_PLACE);
        if ((size_t)(v >> VOTE_SHIFT) > top)
            top = (size_t)(v >> VOTE_SHIFT);
    }
    if (invalid || mixed)
        return KCOLL_R_INVALID;
    if (!all_ok)
        return KCOLL_R_NONCONTIG;
    if (kcoll_coll_is_v(r->args.coll))
        r->args.lay = kcoll_req_layouts(r);
    if (r->args.coll == KCOLL_COLL_ALLTOALLV)
        r->args.bytes = r->policy_bytes = top;
    if (r->args.lay &&
        v_uniform(r->args.lay, r->call.p, r->args.bytes,
                  r->args.coll == KCOLL_COLL_ALLTOALLV && !r->args.in_place ? 2 : 1))
        r->args.lay = NULL;
    return 0;
}

static void allgather_buffers(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const int v = kcoll_coll_is_v(c->coll), ip = r->args.in_place;
    size_t own = v ? (size_t)kcoll_side_vcount(&c->recv, c->rank) * c->recv.size : r->args.bytes;
    r->bufs[KCOLL_BUF_SEND] = ip ? NULL : (void *)(uintptr_t)c->send.buf;
    r->lens[KCOLL_BUF_SEND] = ip ? 0 : own;
    r->bufs[KCOLL_BUF_RECV] = (void *)(uintptr_t)((const char *)c->recv.buf + r->rshift);
    r->lens[KCOLL_BUF_RECV] = v ? r->span[1] : r->args.bytes * (size_t)c->p;
    r->maps[KCOLL_BUF_SEND] = ip ? NULL : c->send.map;
    r->maps[KCOLL_BUF_RECV] = c->recv.map;
}

/* ---- MPI_Allgatherv ---- */

static void allgatherv_shared(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const int p = c->p;
    if (!c->recv.counts || !(c->recv.type & KCOLL_TYPE_VALID)) {
        r->invalid = 1;
        return;
    }
    size_t total = 0, largest = 0;
    for (int q = 0; q < p; q++) {
        if (!kcoll_side_count_ok(&c->recv, kcoll_side_vcount(&c->recv, q))) {
            r->invalid = 1;
            return;
        }
        size_t b = (size_t)kcoll_side_vcount(&c->recv, q) * c->recv.size;
        total += b;
        if (b > largest)
            largest = b;
    }
    r->args.bytes = r->policy_bytes = largest;
    r->stat_bytes = total;
    r->args.in_place = c->in_place;
    r->noncontig = !kcoll_side_blocked(&c->recv) ||
                   (!c->in_place && !kcoll_side_blocked(&c->send));
}

static uint64_t allgatherv_vote(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const size_t own = (size_t)kcoll_side_vcount(&c->recv, c->rank) * c->recv.size;
    size_t largest = 0;
    r->span[1] = 0;
    if (!c->recv.displs || (r->stat_bytes && !c->recv.buf))
        return VOTE_INVALID;
    uint64_t vote = send_vote(r, own);
    /* kcoll addresses blocks from the buffer on: no negative displacements */
    if ((vote & VOTE_OK) && v_side(&c->recv, c->p, NULL, NULL, &r->span[1], &largest))
        vote &= ~(uint64_t)VOTE_OK;
    return vote;
}

static void allgatherv_fill(void *ctx, size_t *tab)
{
    kcoll_req_t *r = ctx;
    const int p = r->call.p;
    size_t len = 0, largest = 0;
    if (r->ag.vote & VOTE_OK)
        v_side(&r->call.recv, p, tab + 2 * (size_t)p, tab + 3 * (size_t)p, &len, &largest);
}

int kcoll_alltoallv_sides(const kcoll_call_t *c, size_t *tab, size_t len[2], size_t *largest)
{
    const int p = c->p, ip = c->in_place;
    const size_t up = (size_t)p;
    len[0] = len[1] = *largest = 0;
    if (!(c->recv.type & KCOLL_TYPE_VALID) || !v_counts_ok(&c->recv, p) ||
        (!ip && (!(c->send.type & KCOLL_TYPE_VALID) || !v_counts_ok(&c->send, p))))
        return KCOLL_R_INVALID;
    if (!kcoll_side_blocked(&c->recv) || (!ip && !kcoll_side_blocked(&c->send)))
        return KCOLL_R_NONCONTIG;
    /* the receive side, then the send side (the receive side's in place,
     * whose buffer is not the send buffer's: no length of its own) */
    int bad = v_side(&c->recv, p, tab ? tab + 2 * up : NULL, tab ? tab + 3 * up : NULL, &len[1],
                     largest);
    if (!bad && ip && tab)
        memcpy(tab, tab + 2 * up, 2 * up * sizeof *tab);
    else if (!bad && !ip)
        bad = v_side(&c->send, p, tab, tab ? tab + up : NULL, &len[0], largest);
    if ((len[1] && !c->recv.buf) || (len[0] && !c->send.buf))
        return KCOLL_R_INVALID;
    return bad || *largest > ((size_t)1 << 55) ? KCOLL_R_NONCONTIG : 0;
}

/* The bytes this rank receives (its statistics' bytes). */
static size_t alltoallv_received(const kcoll_call_t *c)
{
    size_t n = 0;
    for (int q = 0; q < c->p; q++)
        n += (size_t)kcoll_side_vcount(&c->recv, q) * c->recv.size;
    return n;
}

/* Across nodes, MPI_Allgather(v) and MPI_Alltoall(v): this rank's own
 * vote says whether it can take part; an Allgatherv's blocks are given as
 * this rank's one layout (every rank's counts, its own displacements, in
 * bytes: src/cluster/cluster.h). An Alltoall's sides are judged as an
 * Allgather's: blocks of one size. An Alltoallv's were judged and agreed
 * on before (span/run.c, kcoll_alltoallv_sides): its layouts are the
 * node's, given with the call (kcoll_across_t.lay). */
static int blocks_across(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    if (c->coll == KCOLL_COLL_ALLTOALLV) {
        const kcoll_layout_t *own = r->xa.lay ? &r->xa.lay[r->xa.cl.me] : NULL;
        if (!own)
            return KCOLL_R_INVALID;
        size_t largest;
        kcoll_alltoallv_sides(c, NULL, r->span, &largest); /* (agreed: valid) */
        r->stat_bytes = alltoallv_received(c);
        r->args.lay = r->xa.lay;
        r->args.bytes = r->xa.largest;
        r->args.in_place = c->in_place;
        return 0;
    }
    const int v = kcoll_coll_is_v(c->coll), ip = c->in_place;
    const size_t own = v ? (size_t)kcoll_side_vcount(&c->recv, c->rank) * c->recv.size
                         : r->args.bytes;
    /* as send_vote, with a datatype kcoll has no map for moved packed
     * (KCOLL_TYPE_HOSTPACK) */
    if (!ip && (!(c->send.type & KCOLL_TYPE_VALID) || !kcoll_side_count_ok(&c->send, c->send.count) ||
                (size_t)c->send.count * c->send.size != own || (own && !c->send.buf)))
        return KCOLL_R_INVALID;
    if ((v && !c->recv.displs) || (r->stat_bytes && !c->recv.buf))
        return KCOLL_R_INVALID;
    if (!kcoll_side_across(&c->recv) || (!ip && !kcoll_side_across(&c->send)))
        return KCOLL_R_NONCONTIG;
    r->args.lay = NULL;
    if (v) {
        size_t largest = 0;
        r->span[1] = 0;
        /* blocks before the buffer's address (negative displacements,
         * which MPI allows): addressed from the lowest one (this rank
         * cannot tell the others it would rather not). The displacements
         * count elements of the logical stream (kcoll_side_step), so the
         * lowest block's element, kmin, starts kmin extents from the
         * buffer in memory, where a map or the packer takes the
         * elements from */
        ptrdiff_t low = 0;
        const ptrdiff_t step = (ptrdiff_t)kcoll_side_step(&c->recv);
        if (v_side_from(&c->recv, c->p, r->counts, r->xdispl, &r->span[1], &largest, &low))
            return KCOLL_R_NONCONTIG;
        r->rshift = step ? low / step * (ptrdiff_t)c->recv.extent : 0;
        r->lay[0] = (kcoll_layout_t){.rcount = r->counts, .rdispl = r->xdispl};
        r->args.lay = &r->lay[0];
    }
    return 0;
}

/* ---- MPI_Alltoall(v) ---- */

static void alltoall_buffers(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const int v = kcoll_coll_is_v(c->coll), ip = r->args.in_place;
    size_t all = r->args.bytes * (size_t)c->p;
    r->bufs[KCOLL_BUF_SEND] = ip ? NULL : (void *)(uintptr_t)c->send.buf;
    r->lens[KCOLL_BUF_SEND] = ip ? 0 : v ? r->span[0] : all;
    r->bufs[KCOLL_BUF_RECV] = (void *)(uintptr_t)c->recv.buf;
    r->lens[KCOLL_BUF_RECV] = v ? r->span[1] : all;
    r->maps[KCOLL_BUF_SEND] = ip ? NULL : c->send.map;
    r->maps[KCOLL_BUF_RECV] = c->recv.map;
}

static void alltoallv_shared(kcoll_req_t *r)
{
    /* nothing of the counts is known alike: the size comes with the votes */
    r->policy_bytes = KCOLL_BYTES_UNKNOWN;
    r->args.in_place = r->call.in_place;
    r->noncontig = !kcoll_side_blocked(&r->call.recv) ||
                   (!r->call.in_place && !kcoll_side_blocked(&r->call.send));
}

static uint64_t alltoallv_vote(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    size_t mine = 0;
    r->stat_bytes = 0;
    const int why = kcoll_alltoallv_sides(c, NULL, r->span, &mine);
    if (why == KCOLL_R_INVALID)
        return VOTE_INVALID;
    if (why)
        return c->in_place ? VOTE_IN_PLACE : 0;
    r->stat_bytes = alltoallv_received(c);
    return VOTE_OK | (c->in_place ? VOTE_IN_PLACE : 0) | (uint64_t)mine << VOTE_SHIFT;
}

static void alltoallv_fill(void *ctx, size_t *tab)
{
    kcoll_req_t *r = ctx;
    size_t len[2], largest;
    if (r->ag.vote & VOTE_OK)
        kcoll_alltoallv_sides(&r->call, tab, len, &largest);
}

static void alltoall_shared(kcoll_req_t *r)
{
    if (kcoll_coll_is_v(r->call.coll))
        alltoallv_shared(r);
    else
        uniform_shared(r);
}

static uint64_t alltoall_vote(kcoll_req_t *r)
{
    return kcoll_coll_is_v(r->call.coll) ? alltoallv_vote(r) : uniform_vote(r);
}

static void allgather_shared(kcoll_req_t *r)
{
    if (kcoll_coll_is_v(r->call.coll))
        allgatherv_shared(r);
    else
        uniform_shared(r);
}

static uint64_t allgather_vote(kcoll_req_t *r)
{
    return kcoll_coll_is_v(r->call.coll) ? allgatherv_vote(r) : uniform_vote(r);
}

static void allgather_fill(void *ctx, size_t *tab)
{
    kcoll_req_t *r = ctx;
    if (kcoll_coll_is_v(r->call.coll))
        allgatherv_fill(ctx, tab);
}

static void alltoall_fill(void *ctx, size_t *tab)
{
    kcoll_req_t *r = ctx;
    if (kcoll_coll_is_v(r->call.coll))
        alltoallv_fill(ctx, tab);
}

const kcoll_family_t kcoll_fam_allgather = {
    .shared = allgather_shared,
    .vote = allgather_vote,
    .fill = allgather_fill,
    .decide = allcoll_decide,
    .buffers = allgather_buffers,
    .across = blocks_across,
};

const kcoll_family_t kcoll_fam_alltoall = {
    .shared = alltoall_shared,
    .vote = alltoall_vote,
    .fill = alltoall_fill,
    .decide = allcoll_decide,
    .buffers = alltoall_buffers,
    .across = blocks_across,
};

/* ---- MPI_Barrier ---- */

static void barrier_shared(kcoll_req_t *r)
{
    r->policy_bytes = KCOLL_BYTES_UNKNOWN; /* no bytes: the minimum size does not apply */
}

static void barrier_buffers(kcoll_req_t *r)
{
    (void)r;
}

const kcoll_family_t kcoll_fam_barrier = {
    .shared = barrier_shared,
    .buffers = barrier_buffers,
};
