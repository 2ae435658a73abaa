/* MPI_Scatter(v) and MPI_Gather(v) as a family of the call layer.
 *
 * Both move one block between the root and each rank. Two buffers take
 * part: the root's blocked buffer, which holds every rank's block (the send
 * side of a scatter, the receive side of a gather; laid out by a count, or
 * by counts and displacements for the v-variants), and each rank's own
 * block (the other side; at the root MPI_IN_PLACE means its own block stays
 * where it is in the blocked buffer).
 *
 * Before the agreement only what every rank knows alike decides: the
 * root, and for MPI_Scatter/MPI_Gather the block size, which MPI requires
 * to match between the root's blocked signature and every rank's own
 * block. Everything else only one rank knows goes into the agreement: each
 * rank votes whether its datatypes are contiguous, whether its own
 * arguments are valid and consistent (negative counts, missing datatypes,
 * a non-root passing MPI_IN_PLACE are not; the root's own block must match
 * its entry in its blocked buffer) and how many bytes its block has (the
 * root: its entry in the blocked buffer); the root of MPI_Scatterv and
 * MPI_Gatherv also publishes its counts and displacements in bytes (the
 * send columns of the layout table for a scatter, the receive columns for
 * a gather), from its lowest non-empty block on. After the agreement all
 * ranks compute the same answer: kcoll runs only if every rank is
 * contiguous and consistent and every rank's block size matches the root's
 * entry for it (otherwise it is the user's error: the host MPI reports it,
 * on every rank, as without kcoll). Only the bytes of the blocks are
 * touched in the root's blocked buffer.
 */
#include <stdint.h>

#include "call/fam.h"

/* Vote bits: contiguous, valid and consistent; the block's bytes above. */
#define VOTE_CONTIG 1u
#define VOTE_MATCH 2u
#define VOTE_SHIFT 2

static int is_gather(const kcoll_req_t *r)
{
    return r->args.coll == KCOLL_COLL_GATHER || r->args.coll == KCOLL_COLL_GATHERV;
}

/* The root's blocked buffer and this rank's own block. */
static const kcoll_side_t *blocked(const kcoll_req_t *r)
{
    return is_gather(r) ? &r->call.recv : &r->call.send;
}
static const kcoll_side_t *own(const kcoll_req_t *r)
{
    return is_gather(r) ? &r->call.send : &r->call.recv;
}

/* The lowest displacement of a non-empty block of the root's v-layout. */
static int64_t lowest(const kcoll_side_t *b, int p)
{
    int64_t lo = 0;
    int any = 0;
    for (int j = 0; j < p; j++)
        if (kcoll_side_vcount(b, j) > 0 && (!any || kcoll_side_vdispl(b, j) < lo)) {
            lo = kcoll_side_vdispl(b, j);
            any = 1;
        }
    return lo;
}

/* The root's v-layout in bytes from its lowest non-empty block on: each
 * block's length and place (cnt, dsp: room for p each, or NULL) and the
 * span they cover; returns the lowest block's displacement (elements). */
static int64_t v_layout(const kcoll_side_t *b, int p, size_t *cnt, size_t *dsp, size_t *span)
{
    const int64_t lo = lowest(b, p);
    *span = 0;
    for (int j = 0; j < p; j++) {
        const size_t n = (size_t)kcoll_side_vcount(b, j) * b->size;
        const size_t at = n ? (size_t)(kcoll_side_vdispl(b, j) - lo) * kcoll_side_step(b) : 0;
        if (cnt) {
            cnt[j] = n;
            dsp[j] = at;
        }
        if (n && at + n > *span)
            *span = at + n;
    }
    return lo;
}

/* The root's own judgment of its arguments (rooted_shared's, and across
 * nodes kcoll_rooted_sides's): 1 where they are valid. */
static int root_valid(const kcoll_call_t *c, const kcoll_side_t *b, const kcoll_side_t *o,
                      int v)
{
    int valid = c->in_place || ((o->type & KCOLL_TYPE_VALID) && kcoll_side_count_ok(o, o->count));
    valid = valid && (b->type & KCOLL_TYPE_VALID) &&
            (v ? b->counts != NULL && b->displs != NULL : kcoll_side_count_ok(b, b->count));
    for (int j = 0; valid && v && j < c->p; j++)
        valid = kcoll_side_count_ok(b, kcoll_side_vcount(b, j));
    return valid;
}

static void rooted_shared(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const int v = kcoll_coll_is_v(c->coll), p = c->p, root = c->root;
    const kcoll_side_t *b = blocked(r), *o = own(r);
    if (root < 0 || root >= p) {
        r->invalid = 1;
        return;
    }
    const int is_root = c->rank == root, in_place = is_root && c->in_place;
    r->args.in_place = in_place;

    /* this rank's own arguments, as far as it can judge them alone; an
     * invalid one goes into the vote, so that all ranks still take the
     * same path (the host MPI's, which reports the error) */
    int valid = is_root ? root_valid(c, b, o, v)
                        : !c->in_place && (o->type & KCOLL_TYPE_VALID) &&
                              kcoll_side_count_ok(o, o->count);
    r->own_valid = valid;
    /* my block: what this rank receives or sends (the root: its own entry
     * in the blocked buffer) */
    r->mine = !valid ? 0
              : is_root ? (size_t)(v ? kcoll_side_vcount(b, root) : b->count) * b->size
                        : (size_t)o->count * o->size;
    r->stat_bytes = r->mine;
    r->policy_bytes = v || !valid ? KCOLL_BYTES_UNKNOWN : r->mine;

    /* this rank's layout: contiguous own block; the root's blocked buffer
     * packed, from its lowest non-empty block on. A non-blocking or
     * persistent call decides from this alone on every rank, so there the
     * own block's datatype is judged for any count: a rank of a v-variant
     * with nothing to move must not take a datatype kcoll cannot address
     * for one it can, and so run kcoll's protocol while the ranks that
     * move data with that datatype call the host MPI (a blocking call's
     * agreement settles it for every rank alike) */
    int contig = !valid || in_place || kcoll_side_blocked(o) ||
                 (r->mode == KCOLL_MODE_BLOCKING && kcoll_side_contig(o, (size_t)o->count));
    r->base[0] = r->base[1] = NULL;
    r->span[0] = r->span[1] = 0;
    if (is_root && valid) {
        contig = contig && kcoll_side_blocked(b);
        const char *tbase = (const char *)b->buf;
        size_t span = 0;
        if (contig && v) {
            tbase += (ptrdiff_t)v_layout(b, p, NULL, NULL, &span) * (ptrdiff_t)b->extent;
        } else if (contig) {
            span = (size_t)p * r->mine;
        }
        r->base[is_gather(r)] = tbase;
        r->span[is_gather(r)] = span;
    }
    r->noncontig = !contig;
}

static uint64_t rooted_vote(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const kcoll_side_t *o = own(r);
    int match = r->own_valid;
    if (c->rank == c->root && r->own_valid && !r->args.in_place)
        match = (size_t)o->count * o->size == r->mine;
    return (uint64_t)r->mine << VOTE_SHIFT | (uint64_t)match << 1 | (uint64_t)!r->noncontig;
}

/* The root of a v-variant publishes its counts and displacements in bytes:
 * the send columns for a scatter, the receive columns for a gather. */
static void rooted_fill(void *ctx, size_t *tab)
{
    kcoll_req_t *r = ctx;
    const kcoll_call_t *c = &r->call;
    const int p = c->p, gather = is_gather(r);
    if (!kcoll_coll_is_v(c->coll) || c->rank != c->root || !r->own_valid || r->noncontig)
        return;
    size_t *cnt = tab + (gather ? 2 * (size_t)p : 0), *dsp = cnt + p;
    size_t *other = tab + (gather ? 0 : 2 * (size_t)p), span;
    v_layout(blocked(r), p, cnt, dsp, &span);
    for (int j = 0; j < p; j++)
        other[j] = other[p + j] = 0;
}

static int rooted_decide(kcoll_req_t *r)
{
    const int p = r->call.p, root = r->call.root, v = kcoll_coll_is_v(r->call.coll);
    const uint64_t *votes = r->votes;
    const kcoll_layout_t *lay = v ? kcoll_req_layouts(r) : NULL;
    const size_t *entry = !v ? NULL : is_gather(r) ? lay[root].rcount : lay[root].scount;
    for (int q = 0; q < p; q++)
        if (!(votes[q] & VOTE_MATCH))
            return KCOLL_R_INVALID;
    for (int q = 0; q < p; q++)
        if (!(votes[q] & VOTE_CONTIG))
            return KCOLL_R_NONCONTIG;
    size_t bytes = (size_t)(votes[root] >> VOTE_SHIFT), largest = 0, total = 0;
    for (int q = 0; q < p; q++) {
        size_t want = v ? entry[q] : bytes;
        if (q != root && (size_t)(votes[q] >> VOTE_SHIFT) != want)
            return KCOLL_R_INVALID;
        if (want > largest)
            largest = want;
        total += want;
    }
    r->args.bytes = bytes;
    r->args.lay = lay;
    r->stat_bytes = total;
    r->policy_bytes = largest;
    return 0;
}

static void rooted_buffers(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const int gather = is_gather(r), is_root = c->rank == c->root;
    const int in_place = r->args.in_place;
    size_t blen = 0;
    if (!in_place)
        blen = is_root ? (r->args.lay ? (gather ? r->args.lay[c->root].rcount
                                                : r->args.lay[c->root].scount)[c->root]
                                      : r->args.bytes)
                       : (size_t)(r->votes[c->rank] >> VOTE_SHIFT);
    const char *bbase = in_place ? NULL : (const char *)own(r)->buf;
    /* the algorithms take the send buffer first, then the receive buffer */
    const kcoll_dmap_t *bmap = in_place ? NULL : own(r)->map, *tmap = blocked(r)->map;
    r->bufs[KCOLL_BUF_SEND] = (void *)(uintptr_t)(gather ? bbase : r->base[0]);
    r->lens[KCOLL_BUF_SEND] = gather ? blen : r->span[0];
    r->maps[KCOLL_BUF_SEND] = gather ? bmap : is_root ? tmap : NULL;
    r->bufs[KCOLL_BUF_RECV] = (void *)(uintptr_t)(gather ? r->base[1] : bbase);
    r->lens[KCOLL_BUF_RECV] = gather ? r->span[1] : blen;
    r->maps[KCOLL_BUF_RECV] = gather ? (is_root ? tmap : NULL) : bmap;
}

int kcoll_rooted_sides(const kcoll_call_t *c, size_t *cnt, size_t *dsp)
{
    const int gather = c->coll == KCOLL_COLL_GATHERV;
    const kcoll_side_t *b = gather ? &c->recv : &c->send, *o = gather ? &c->send : &c->recv;
    size_t span;
    if (!root_valid(c, b, o, 1))
        return KCOLL_R_INVALID;
    if (!kcoll_side_blocked(b) || (!c->in_place && !kcoll_side_across(o)))
        return KCOLL_R_NONCONTIG;
    v_layout(b, c->p, cnt, dsp, &span);
    return span && !b->buf ? KCOLL_R_INVALID : 0;
}

/* Across nodes: this rank's own vote says whether it can take part. The
 * block size of MPI_Gather and MPI_Scatter is one on every rank, as MPI
 * requires; the blocks of MPI_Gatherv and MPI_Scatterv come with the call
 * (kcoll_across_t.lay: the root's layout, agreed on before, span/run.c),
 * and this rank's own must be its entry there. */
static int rooted_across(kcoll_req_t *r)
{
    const kcoll_call_t *c = &r->call;
    const kcoll_side_t *b = blocked(r), *o = own(r);
    const int v = kcoll_coll_is_v(c->coll), is_root = c->rank == c->root;
    if (v && !r->xa.lay)
        return KCOLL_R_INVALID;
    /* a datatype kcoll has no map for moves packed (KCOLL_TYPE_HOSTPACK):
     * this rank's layout as rooted_shared finds it for a contiguous one
     * (the root's blocked buffer of a v-variant: agreed to be contiguous) */
    int contig = !r->own_valid || r->args.in_place || kcoll_side_across(o);
    size_t total = r->mine * (size_t)c->p;
    if (v) {
        total = 0;
        for (int q = 0; q < c->p; q++)
            total += r->xa.lay->rcount[q];
    }
    if (is_root && r->own_valid) {
        size_t span = (size_t)c->p * r->mine;
        const char *base = b->buf;
        if (v)
            base += (ptrdiff_t)v_layout(b, c->p, NULL, NULL, &span) * (ptrdiff_t)b->extent;
        contig = contig && (v ? kcoll_side_blocked(b) : kcoll_side_across(b));
        r->base[is_gather(r)] = base;
        r->span[is_gather(r)] = contig ? span : 0;
    }
    r->noncontig = !contig;
    uint64_t vote = rooted_vote(r);
    /* a v-variant's block: this rank's entry in the root's layout */
    if (v && !is_root && r->xa.lay->rcount[c->rank] != r->mine)
        vote &= ~(uint64_t)VOTE_MATCH;
    r->votes[r->call.rank] = vote; /* rooted_buffers reads a non-root's block from it */
    if (!(vote & VOTE_MATCH))
        return KCOLL_R_INVALID;
    if (!(vote & VOTE_CONTIG))
        return KCOLL_R_NONCONTIG;
    r->args.bytes = r->policy_bytes = v ? r->xa.largest : r->mine;
    r->args.lay = v ? r->xa.lay : NULL;
    r->stat_bytes = total;
    return 0;
}

const kcoll_family_t kcoll_fam_rooted = {
    .shared = rooted_shared,
    .vote = rooted_vote,
    .fill = rooted_fill,
    .decide = rooted_decide,
    .buffers = rooted_buffers,
    .across = rooted_across,
};
