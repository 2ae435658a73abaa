/* The channel of the two-sided engines (see chan.h for the protocol).
 *
 * Walk-through of one READ of n bytes by rank R from rank O's buffer:
 *  1. R takes its own mailbox (one transfer of this process at a time),
 *     writes the request under the seqlock (owner O, READ, collective,
 *     ranges, base = where the last transfer ended, n) and rings O's bell.
 *  2. O, whenever its executor runs, sees its bell moved, scans the
 *     mailboxes, copies R's request, turns the ranges into its memory
 *     pieces through the resolver (its own exposures and maps) and keeps
 *     it as active.
 *  3. O copies bytes from its pieces into R's ring, a cell at a time, as
 *     long as the ring has room (cons + 2 cells); R copies out what O has
 *     published, a cell behind. Both go on whenever they run, until R has
 *     consumed base + n: the transfer is over for both, R's mailbox is free.
 * A WRITE is the same with the roles of producer and consumer swapped: R
 * fills the ring, O empties it into its buffer, and R's step ends when O
 * has consumed everything (the bytes are in O's buffer before R signals).
 *
 * Cost: alpha_shm (a request seen by a running owner: a few cache-line
 * transfers) + n * beta_copy + one cell at beta_copy (the pipeline's
 * fill), and the owner's core copies n too (paper 001: two copies, which
 * two processors partly hide, and both caches see the data).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vmsplice */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "xfer/chan.h"

#define KCOLL_CHAN_LINE 64
#define KCOLL_CHAN_PAGE 4096
/* Pieces per system call of the pipe path (the kernel's UIO_MAXIOV). */
#define KCOLL_CHAN_IOV_MAX 1024

/* The request, as 64-bit words (the owner copies it word by word under
 * the seqlock). */
typedef struct {
    uint64_t owner, dir, path, nseg;
    uint64_t seq, base, total;
    kcoll_chan_seg_t seg[KCOLL_CHAN_SEGS];
} kcoll_chan_req_t;

typedef struct {
    /* seqlock word of the request: odd while rewritten, 2 * tid once
     * readable (tid counts the mailbox's transfers from 1) */
    _Alignas(KCOLL_CHAN_LINE) _Atomic uint64_t req;
    kcoll_chan_req_t body;
    /* the stream's positions: bytes produced and consumed, ever */
    _Alignas(KCOLL_CHAN_LINE) _Atomic uint64_t prod;
    _Alignas(KCOLL_CHAN_LINE) _Atomic uint64_t cons;
    /* the owner's refusal: the tid it could not serve, why stored before */
    _Alignas(KCOLL_CHAN_LINE) _Atomic uint64_t fail;
    char why[192];
    /* requests posted to this mailbox's rank as owner (its doorbell) */
    _Alignas(KCOLL_CHAN_LINE) _Atomic uint32_t bell;
} kcoll_mbox_t;

/* What the owner keeps of a requester's request it serves. */
typedef struct {
    uint64_t tid;  /* the last request of that mailbox it took */
    int active, dir, path;
    uint64_t end;  /* base + total */
    uint64_t pos;  /* this side's own position in the stream */
    kcoll_iovs_t mine;
    kcoll_iovcur_t cur;
} kcoll_chan_srv_t;

struct kcoll_chan {
    kcoll_mbox_t *mb; /* [p] */
    char *ring;       /* [p][2 * cell] */
    size_t cell, rsize;
    int p, rank;
    kcoll_chan_resolve_fn resolve;
    void *ctx;
    int *fds;           /* the vmsplice path: an fd of every rank's pipe, or NULL */
    /* the requester side: 1 while a transfer of this process has the mailbox */
    _Atomic int holder;
    _Atomic int broken; /* a transfer was abandoned: the mailbox is not used again */
    uint64_t tid;       /* the last transfer posted (the holder's) */
    /* the owner side, under `serving` */
    _Atomic int serving;
    _Atomic uint32_t bell_seen;
    _Atomic int nactive;
    kcoll_chan_srv_t *srv; /* [p] */
};

static size_t kcoll_chan_mbox_bytes(int p)
{
    size_t b = (size_t)p * sizeof(kcoll_mbox_t);
    return (b + KCOLL_CHAN_PAGE - 1) / KCOLL_CHAN_PAGE * KCOLL_CHAN_PAGE;
}

size_t kcoll_chan_area_len(int p, size_t cell)
{
    return kcoll_chan_mbox_bytes(p) + (size_t)p * 2 * cell;
}

kcoll_chan_t *kcoll_chan_attach(void *area, int p, int rank, size_t cell,
                                kcoll_chan_resolve_fn resolve, void *ctx)
{
    kcoll_chan_t *ch = calloc(1, sizeof *ch);
    if (!ch || !(ch->srv = calloc((size_t)p, sizeof *ch->srv))) {
        free(ch);
        return NULL;
    }
    ch->mb = area;
    ch->ring = (char *)area + kcoll_chan_mbox_bytes(p);
    ch->cell = cell;
    ch->rsize = 2 * cell;
    ch->p = p;
    ch->rank = rank;
    ch->resolve = resolve;
    ch->ctx = ctx;
    /* relaxed: a fresh area is all zeros; the requests start from there */
    ch->tid = atomic_load_explicit(&ch->mb[rank].req, memory_order_relaxed) / 2;
    /* relaxed: as above */
    atomic_store_explicit(&ch->bell_seen,
                          atomic_load_explicit(&ch->mb[rank].bell, memory_order_relaxed),
                          memory_order_relaxed);
    return ch;
}

void kcoll_chan_detach(kcoll_chan_t *ch)
{
    if (!ch)
        return;
    for (int q = 0; q < ch->p; q++)
        kcoll_iovs_free(&ch->srv[q].mine);
    if (ch->fds)
        for (int q = 0; q < ch->p; q++)
            if (ch->fds[q] >= 0)
                close(ch->fds[q]);
    free(ch->fds);
    free(ch->srv);
    free(ch);
}

static char *kcoll_chan_ring(const kcoll_chan_t *ch, int m)
{
    return ch->ring + (size_t)m * ch->rsize;
}

int kcoll_chan_reserve(kcoll_chan_t *ch, char *why, size_t whylen)
{
#ifdef MADV_POPULATE_WRITE
    struct {
        void *at;
        size_t len;
    } part[2] = {{kcoll_chan_ring(ch, ch->rank), ch->rsize},
                 {ch->mb, ch->rank == 0 ? kcoll_chan_mbox_bytes(ch->p) : 0}};
    for (int i = 0; i < 2; i++)
        if (part[i].len && madvise(part[i].at, part[i].len, MADV_POPULATE_WRITE) != 0 &&
            errno != EINVAL) {
            kcoll_fmt(why, whylen,
                      "the team's %zu bytes of bounce cells could not be reserved in /dev/shm "
                      "(%s): give it more room (docker run --shm-size) or smaller cells "
                      "(KCOLL_SHM_CELL)",
                      kcoll_chan_area_len(ch->p, ch->cell), strerror(errno));
            return -1;
        }
#else
    (void)ch;
    (void)why;
    (void)whylen;
#endif
    return 0;
}

size_t kcoll_chan_ring_bytes(const kcoll_chan_t *ch)
{
    return ch->rsize;
}

void kcoll_chan_set_pipes(kcoll_chan_t *ch, int *fds)
{
    ch->fds = fds;
}

int kcoll_chan_has_pipes(const kcoll_chan_t *ch)
{
    return ch->fds != NULL;
}

/* ---------------------------------------------------------------------- */
/* Moving bytes: the producer's and the consumer's half of a stream up to
 * position `end`, through mailbox m's ring or pipe. Each returns the bytes
 * it moved now (0: nothing possible yet), or -1 with errno (a pipe call
 * failed). */

static ssize_t kcoll_chan_put(kcoll_chan_t *ch, int m, int path, uint64_t end, kcoll_iovcur_t *cur,
                              uint64_t *pos)
{
    kcoll_mbox_t *mb = &ch->mb[m];
    /* this side's position, kept here, not read back from prod: on the
     * pipe path the last transfer's producer (another process) stores prod
     * after the bytes are in the pipe, and its consumer, which reads the
     * pipe and not prod, may already have started this transfer: prod can
     * still hold an older value here */
    uint64_t p = *pos;
    size_t moved = 0;
    if (path == KCOLL_PATH_PIPE) {
        /* vmsplice hands the pages to the pipe; the consumer's read copies
         * them, so the producer's memory stays as it is until cons says
         * so (the transfer's end) */
        struct iovec win[KCOLL_CHAN_IOV_MAX];
        while (p < end) {
            size_t bytes;
            int k = kcoll_iovcur_window(cur, win, KCOLL_CHAN_IOV_MAX, end - p, &bytes);
            ssize_t n = vmsplice(ch->fds[m], win, (unsigned long)k, SPLICE_F_NONBLOCK);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN)
                break; /* the pipe is full: the consumer drains it */
            if (n <= 0)
                return -1;
            kcoll_iovcur_advance(cur, (size_t)n);
            p += (uint64_t)n;
            *pos = p;
            moved += (size_t)n;
            /* release: orders nothing in memory (the bytes are in the
             * pipe); tells the consumer how far the stream is */
            atomic_store_explicit(&mb->prod, p, memory_order_release);
        }
        return (ssize_t)moved;
    }
    /* acquire: pairs with the consumer's release of cons: it has copied
     * out every byte below c, so that part of the ring may be overwritten */
    uint64_t c = atomic_load_explicit(&mb->cons, memory_order_acquire);
    uint64_t lim = c + ch->rsize < end ? c + ch->rsize : end;
    char *ring = kcoll_chan_ring(ch, m);
    while (p < lim) {
        /* a cell at a time (pieces end at cell boundaries): the consumer
         * starts on one while this side fills the other */
        size_t n = ch->cell - (size_t)(p % ch->cell);
        if (n > lim - p)
            n = (size_t)(lim - p);
        kcoll_iovcur_copy(cur, ring + p % ch->rsize, n, 1);
        p += n;
        *pos = p;
        moved += n;
        /* release: publishes the bytes just copied into the ring */
        atomic_store_explicit(&mb->prod, p, memory_order_release);
    }
    return (ssize_t)moved;
}

static ssize_t kcoll_chan_get(kcoll_chan_t *ch, int m, int path, uint64_t end, kcoll_iovcur_t *cur,
                              uint64_t *pos)
{
    kcoll_mbox_t *mb = &ch->mb[m];
    uint64_t c = *pos; /* this side's position (see kcoll_chan_put) */
    size_t moved = 0;
    if (path == KCOLL_PATH_PIPE) {
        struct iovec win[KCOLL_CHAN_IOV_MAX];
        while (c < end) {
            size_t bytes;
            int k = kcoll_iovcur_window(cur, win, KCOLL_CHAN_IOV_MAX, end - c, &bytes);
            ssize_t n = readv(ch->fds[m], win, k);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN)
                break; /* nothing in the pipe yet */
            if (n <= 0)
                return -1;
            kcoll_iovcur_advance(cur, (size_t)n);
            c += (uint64_t)n;
            *pos = c;
            moved += (size_t)n;
            /* release: the producer's pages (vmsplice) are no longer
             * referenced up to c: it may reuse them once c reaches end */
            atomic_store_explicit(&mb->cons, c, memory_order_release);
        }
        return (ssize_t)moved;
    }
    /* acquire: pairs with the producer's release of prod: the bytes below
     * it are in the ring */
    uint64_t p = atomic_load_explicit(&mb->prod, memory_order_acquire);
    uint64_t lim = p < end ? p : end;
    char *ring = kcoll_chan_ring(ch, m);
    while (c < lim) {
        size_t off = (size_t)(c % ch->rsize), n = ch->rsize - off;
        if (n > lim - c)
            n = (size_t)(lim - c);
        kcoll_iovcur_copy(cur, ring + off, n, 0);
        c += n;
        *pos = c;
        moved += n;
        /* release: this side has copied the bytes out: the producer may
         * overwrite them */
        atomic_store_explicit(&mb->cons, c, memory_order_release);
    }
    return (ssize_t)moved;
}

/* ---------------------------------------------------------------------- */
/* The requester */

kcoll_status_t kcoll_chan_start(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf, int peer, int dir,
                                int path, uint64_t seq, const kcoll_chan_seg_t *seg, int nseg,
                                const struct iovec *local, int nlocal, char *why, size_t whylen)
{
    size_t total = 0, ltotal;
    xf->active = 0;
    if (peer < 0 || peer >= ch->p || peer == ch->rank || nseg < 1 || nseg > KCOLL_CHAN_SEGS ||
        (path == KCOLL_PATH_PIPE && !ch->fds))
        return KCOLL_ERR_ARG;
    for (int i = 0; i < nseg; i++)
        total += seg[i].len;
    if (kcoll_iovs_total(local, nlocal, &ltotal) || ltotal != total)
        return KCOLL_ERR_ARG;
    /* relaxed: a flag of this process, set once */
    if (atomic_load_explicit(&ch->broken, memory_order_relaxed)) {
        kcoll_fmt(why, whylen, "an earlier transfer of this rank was abandoned mid-way; its "
                               "mailbox is out of use");
        return KCOLL_ERR_PROTO;
    }
    /* acquire: pairs with the release when the last holder let go; its
     * stream positions are visible */
    if (atomic_exchange_explicit(&ch->holder, 1, memory_order_acquire))
        return KCOLL_IN_PROGRESS;
    kcoll_mbox_t *me = &ch->mb[ch->rank];
    /* relaxed: the last transfer has ended, observed through acquire
     * loads of these very words (poll) */
    uint64_t base = atomic_load_explicit(&me->cons, memory_order_relaxed);
    const uint64_t tid = ++ch->tid;
    /* relaxed: the fence below orders it before the request's words */
    atomic_store_explicit(&me->req, 2 * tid - 1, memory_order_relaxed);
    /* release: an owner that copies any word written below also sees req
     * odd (or newer) when it checks again after its copy */
    atomic_thread_fence(memory_order_release);
    kcoll_chan_req_t b = {.owner = (uint64_t)peer, .dir = (uint64_t)dir, .path = (uint64_t)path,
                          .nseg = (uint64_t)nseg, .seq = seq, .base = base, .total = total};
    memcpy(b.seg, seg, (size_t)nseg * sizeof *seg);
    const uint64_t *src = (const uint64_t *)&b;
    uint64_t *dst = (uint64_t *)&me->body;
    const size_t words = (offsetof(kcoll_chan_req_t, seg) + (size_t)nseg * sizeof *seg) / 8;
    for (size_t i = 0; i < words; i++)
        /* relaxed: published by the release store of req below */
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
    /* release: publishes the request's words to the owner */
    atomic_store_explicit(&me->req, 2 * tid, memory_order_release);
    /* release: an owner that sees the bell moved sees the request */
    atomic_fetch_add_explicit(&ch->mb[peer].bell, 1, memory_order_release);
    xf->active = 1;
    xf->peer = peer;
    xf->dir = dir;
    xf->path = path;
    xf->tid = tid;
    xf->base = base;
    xf->pos = base;
    xf->total = total;
    xf->piped = 0;
    kcoll_iovcur_init(&xf->cur, local, nlocal);
    return KCOLL_OK;
}

static void kcoll_chan_release(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf)
{
    xf->active = 0;
    /* release: the next holder sees this transfer's end */
    atomic_store_explicit(&ch->holder, 0, memory_order_release);
}

void kcoll_chan_abandon(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf)
{
    if (!xf->active)
        return;
    /* relaxed: read only by this process's later starts */
    atomic_store_explicit(&ch->broken, 1, memory_order_relaxed);
    kcoll_chan_release(ch, xf);
}

kcoll_status_t kcoll_chan_poll(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf, char *why, size_t whylen)
{
    kcoll_mbox_t *me = &ch->mb[ch->rank];
    const uint64_t end = xf->base + xf->total;
    /* acquire: pairs with the owner's release of fail; its reason is visible */
    if (atomic_load_explicit(&me->fail, memory_order_acquire) == xf->tid) {
        kcoll_fmt(why, whylen, "rank %d refused the transfer: %.*s", xf->peer,
                  (int)sizeof me->why, me->why);
        kcoll_chan_abandon(ch, xf);
        return KCOLL_ERR_PROTO;
    }
    ssize_t n = xf->dir == KCOLL_CHAN_READ
                    ? kcoll_chan_get(ch, ch->rank, xf->path, end, &xf->cur, &xf->pos)
                    : kcoll_chan_put(ch, ch->rank, xf->path, end, &xf->cur, &xf->pos);
    if (n < 0) {
        int e = errno;
        kcoll_fmt(why, whylen, "%s on this rank's pipe failed: %s",
                  xf->dir == KCOLL_CHAN_READ ? "readv" : "vmsplice", strerror(e));
        kcoll_chan_abandon(ch, xf);
        errno = e;
        return KCOLL_ERR_SYS;
    }
    /* acquire: pairs with the consumer's release of cons: for a WRITE,
     * the owner has copied everything into its buffer (and no longer
     * needs this side's spliced pages) */
    if (atomic_load_explicit(&me->cons, memory_order_acquire) != end)
        return KCOLL_IN_PROGRESS;
    kcoll_chan_release(ch, xf);
    return KCOLL_OK;
}

/* ---------------------------------------------------------------------- */
/* The owner */

/* Refuse request tid of mailbox m with a reason. */
static void kcoll_chan_refuse(kcoll_chan_t *ch, int m, uint64_t tid, const char *why)
{
    kcoll_mbox_t *mb = &ch->mb[m];
    snprintf(mb->why, sizeof mb->why, "%s", why);
    /* release: publishes why with the refusal */
    atomic_store_explicit(&mb->fail, tid, memory_order_release);
}

/* Take mailbox m's request if it is new and for this rank. */
static void kcoll_chan_take(kcoll_chan_t *ch, int m)
{
    kcoll_mbox_t *mb = &ch->mb[m];
    kcoll_chan_srv_t *s = &ch->srv[m];
    /* acquire: pairs with the requester's release of req; the request's
     * words are visible */
    uint64_t r1 = atomic_load_explicit(&mb->req, memory_order_acquire);
    if ((r1 & 1) || r1 / 2 <= s->tid)
        return;
    if (s->active) {
        /* a newer request: the requester posts one only after its last
         * has ended on both sides, which this side has not noticed yet */
        s->active = 0;
        /* relaxed: see below */
        atomic_fetch_sub_explicit(&ch->nactive, 1, memory_order_relaxed);
    }
    kcoll_chan_req_t b;
    uint64_t *dst = (uint64_t *)&b;
    const uint64_t *src = (const uint64_t *)&mb->body;
    const size_t head = offsetof(kcoll_chan_req_t, seg) / 8;
    for (size_t i = 0; i < head; i++)
        /* relaxed: checked by the seqlock below */
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    if (b.owner != (uint64_t)ch->rank)
        return; /* someone else's */
    const uint64_t nseg = b.nseg <= KCOLL_CHAN_SEGS ? b.nseg : KCOLL_CHAN_SEGS;
    for (size_t i = head; i < head + nseg * sizeof(kcoll_chan_seg_t) / 8; i++)
        /* relaxed: checked by the seqlock below */
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    /* acquire: if a word above came from a newer request, req has moved */
    atomic_thread_fence(memory_order_acquire);
    /* relaxed: ordered by the fence above */
    if (atomic_load_explicit(&mb->req, memory_order_relaxed) != r1)
        return; /* rewritten meanwhile: its bell rings again */
    const uint64_t tid = r1 / 2;
    s->tid = tid;
    char why[192] = "";
    uint64_t total = 0;
    if (b.nseg < 1 || b.nseg > KCOLL_CHAN_SEGS || b.dir > KCOLL_CHAN_WRITE ||
        b.path > KCOLL_PATH_PIPE || (b.path == KCOLL_PATH_PIPE && !ch->fds)) {
        kcoll_chan_refuse(ch, m, tid, "a malformed request");
        return;
    }
    s->mine.n = 0;
    for (uint64_t i = 0; i < b.nseg; i++) {
        total += b.seg[i].len;
        if (ch->resolve(ch->ctx, b.seq, (int)b.seg[i].buf, b.seg[i].off, b.seg[i].len, &s->mine,
                        why, sizeof why)) {
            kcoll_chan_refuse(ch, m, tid, why);
            return;
        }
    }
    if (total != b.total) {
        kcoll_chan_refuse(ch, m, tid, "the request's ranges do not add up to its length");
        return;
    }
    s->active = 1;
    s->dir = (int)b.dir;
    s->path = (int)b.path;
    s->end = b.base + b.total;
    s->pos = b.base;
    kcoll_iovcur_init(&s->cur, s->mine.v, s->mine.n);
    /* relaxed: read by the quick check of serve, ordering nothing */
    atomic_fetch_add_explicit(&ch->nactive, 1, memory_order_relaxed);
}

/* Move what request m lets move now; 1 if anything moved. */
static int kcoll_chan_serve_one(kcoll_chan_t *ch, int m)
{
    kcoll_chan_srv_t *s = &ch->srv[m];
    /* the requester produces for a WRITE: this side consumes, and the
     * other way round */
    ssize_t n = s->dir == KCOLL_CHAN_WRITE ? kcoll_chan_get(ch, m, s->path, s->end, &s->cur, &s->pos)
                                           : kcoll_chan_put(ch, m, s->path, s->end, &s->cur, &s->pos);
    const uint64_t mine = s->pos;
    if (n < 0) {
        char why[160];
        snprintf(why, sizeof why, "%s on its pipe failed: %s",
                 s->dir == KCOLL_CHAN_WRITE ? "readv" : "vmsplice", strerror(errno));
        kcoll_chan_refuse(ch, m, s->tid, why);
    }
    if (n < 0 || mine == s->end) {
        s->active = 0;
        /* relaxed: see kcoll_chan_take */
        atomic_fetch_sub_explicit(&ch->nactive, 1, memory_order_relaxed);
    }
    return n > 0;
}

int kcoll_chan_serve(kcoll_chan_t *ch)
{
    kcoll_mbox_t *me = &ch->mb[ch->rank];
    /* acquire: pairs with a requester's release on the bell; its request
     * is visible to the scan */
    uint32_t bell = atomic_load_explicit(&me->bell, memory_order_acquire);
    /* relaxed: hints for the quick way out, re-read under `serving` */
    if (bell == atomic_load_explicit(&ch->bell_seen, memory_order_relaxed) &&
        !atomic_load_explicit(&ch->nactive, memory_order_relaxed))
        return 0;
    /* acquire: pairs with the release below; the last server's state of
     * the requests is visible */
    if (atomic_exchange_explicit(&ch->serving, 1, memory_order_acquire))
        return 0; /* another thread of this process serves */
    int moved = 0;
    /* relaxed: only changed under `serving` */
    if (bell != atomic_load_explicit(&ch->bell_seen, memory_order_relaxed)) {
        /* relaxed: as above */
        atomic_store_explicit(&ch->bell_seen, bell, memory_order_relaxed);
        for (int m = 0; m < ch->p; m++)
            if (m != ch->rank)
                kcoll_chan_take(ch, m);
    }
    for (int m = 0; m < ch->p; m++)
        if (ch->srv[m].active)
            moved |= kcoll_chan_serve_one(ch, m);
    /* release: this server's state of the requests is visible to the next */
    atomic_store_explicit(&ch->serving, 0, memory_order_release);
    return moved;
}
