/* The channel: how the two-sided engines (shm, vmsplice) move the bytes of
 * one READ or WRITE between a requester and the owner of the exposed
 * buffer, both acting (paper 001's two-copy pipeline and its vmsplice
 * transfer; DESIGN.md section 5).
 *
 * A one-sided engine (cma) reaches the peer's memory by itself. Where that
 * is not permitted, or costs more than it saves, the owner must move its
 * bytes itself: the requester asks, the owner serves. The algorithms need
 * not know: every peer access to a rank's exposed buffer is ordered before
 * that rank's last step (the simulator checks it for every algorithm), so
 * the owner is still inside the collective, executing or waiting, while a
 * peer reads or writes its buffer, and the executor serves whenever it
 * runs (sched/exec.c).
 *
 * The shared part is one mailbox per rank in the team's control segment.
 * Rank m's mailbox carries m's one outstanding request: the owner, the
 * direction, the collective, and up to KCOLL_CHAN_SEGS ranges of the
 * owner's exposed buffers (buffer, logical offset, length: the owner turns
 * them into its memory pieces, so the requester needs neither the owner's
 * addresses nor its datatype maps), then a byte ring of two cells. Bytes
 * flow through the ring from the producer to the consumer: for a READ the
 * owner produces and the requester consumes, for a WRITE the other way
 * round. The producer fills a cell while the consumer empties the other,
 * so both copies run at once and a transfer of n bytes costs about one
 * copy of n plus one cell (the pipeline's fill). The vmsplice path moves
 * the bytes through a pipe instead of the ring (xfer/vmsplice.c): the
 * producer splices its pages in, the consumer reads them out, one copy.
 *
 * Positions. The mailbox holds two byte counters, prod and cons, that only
 * grow over its whole life; byte x of the stream lies at x % (2 cells) of
 * the ring. A transfer of n bytes covers positions [base, base + n), base
 * being where the last one ended (prod = cons at rest). The producer may
 * write up to cons + ring size and publishes prod with release order after
 * each piece of at most one cell; the consumer copies out up to prod and
 * publishes cons with release order. So each counter has one writer at a
 * time, and transfers on one mailbox never overlap: the requester posts
 * its next one only after the last has ended on both sides (a READ when it
 * has consumed everything, which the owner produced; a WRITE when the
 * owner has consumed everything).
 *
 * Posting. The request is written under a sequence word (a seqlock): req
 * odd while the requester rewrites it, then 2 * tid with release order;
 * the owner copies the request and keeps it only if req was even and the
 * same before and after the copy. Then the requester rings the owner's
 * doorbell (a 32-bit counter in the owner's mailbox, release): an owner
 * whose bell has not moved and that serves nothing returns at once, so
 * serving costs one load when nobody asks.
 *
 * Serving never blocks: it moves what the ring (or pipe) lets it move and
 * returns. Two ranks reading from each other therefore both progress, and
 * a rank's own transfers wait (as "in progress" to the executor) while
 * its serving goes on between them. An owner that cannot serve a request
 * (a collective or buffer it has not exposed, a range beyond it) answers
 * with a failure word and a one-line reason, and the requester's step
 * fails with it.
 *
 * Bounce memory: 2 cells per rank of the team, KCOLL_SHM_CELL each (the
 * creator's value, recorded in the segment), touched only when used.
 */
#ifndef KCOLL_XFER_CHAN_H
#define KCOLL_XFER_CHAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/status.h"
#include "xfer/iovs.h"

/* Ranges one request names: the executor's batch of steps. */
#define KCOLL_CHAN_SEGS 64

typedef enum { KCOLL_CHAN_READ = 0, KCOLL_CHAN_WRITE = 1 } kcoll_chan_dir_t;
/* How the bytes travel: the ring in the segment (shm), or a pipe (vmsplice). */
typedef enum { KCOLL_PATH_RING = 0, KCOLL_PATH_PIPE = 1 } kcoll_chan_path_t;

typedef struct {
    uint32_t buf;  /* the owner's buffer (kcoll_buf_t) */
    uint32_t pad;
    uint64_t off;  /* logical offset in it */
    uint64_t len;
} kcoll_chan_seg_t;

/* The owner's memory pieces of bytes [off, off + len) of its buffer buf
 * exposed for collective seq, appended to out. KCOLL_OK, or an error with
 * a one-line reason in why. */
typedef kcoll_status_t (*kcoll_chan_resolve_fn)(void *ctx, uint64_t seq, int buf, size_t off,
                                                size_t len, kcoll_iovs_t *out, char *why,
                                                size_t whylen);

typedef struct kcoll_chan kcoll_chan_t;

/* Bytes of the shared area of p mailboxes with cells of `cell` bytes (a
 * multiple of the page size) and where, from the segment's start at a
 * page-aligned offset, it may lie. */
size_t kcoll_chan_area_len(int p, size_t cell);

/* This rank's channel over a mapped, zero-filled area. NULL when out of
 * memory. The resolver serves this rank's exposures. */
kcoll_chan_t *kcoll_chan_attach(void *area, int p, int rank, size_t cell,
                                kcoll_chan_resolve_fn resolve, void *ctx);
void kcoll_chan_detach(kcoll_chan_t *ch);
/* Make this rank's part of the shared area resident now (its mailbox
 * page and its ring; rank 0 also every mailbox), so that a /dev/shm too
 * small for it shows as an error here, not as SIGBUS at a transfer's
 * first touch. 0, or -1 with a reason (a kernel without
 * MADV_POPULATE_WRITE, before 5.14, cannot tell: 0). */
int kcoll_chan_reserve(kcoll_chan_t *ch, char *why, size_t whylen);
/* Bytes of this rank's ring (two cells): what kcoll_chan_reserve makes
 * resident for it. */
size_t kcoll_chan_ring_bytes(const kcoll_chan_t *ch);
/* The vmsplice path's pipes (xfer/vmsplice.c): fds[q] is an fd of rank
 * q's pipe (this rank's own at fds[rank]), each open for reading and
 * writing; the channel owns them from now on. */
void kcoll_chan_set_pipes(kcoll_chan_t *ch, int *fds);
int kcoll_chan_has_pipes(const kcoll_chan_t *ch);

/* One transfer of a requester, in flight. */
typedef struct {
    int active;
    int peer, dir, path;
    uint64_t tid, base, total;
    uint64_t pos;        /* this side's own position in the stream (chan.c) */
    kcoll_iovcur_t cur;  /* the local pieces still to move */
    size_t piped;        /* WRITE through a pipe: bytes spliced in so far */
} kcoll_chan_xfer_t;

/* Post a transfer: dir of the owner's ranges seg[0..nseg) (at most
 * KCOLL_CHAN_SEGS, lengths adding up to the local pieces' bytes) of
 * collective seq at rank peer, the local side local[0..nlocal) (which
 * must stay valid until the transfer ends). KCOLL_IN_PROGRESS when this
 * rank's mailbox is busy with another of its transfers (nothing posted;
 * try again), KCOLL_OK when posted (then poll), or an error. */
kcoll_status_t kcoll_chan_start(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf, int peer, int dir,
                                int path, uint64_t seq, const kcoll_chan_seg_t *seg, int nseg,
                                const struct iovec *local, int nlocal, char *why, size_t whylen);
/* Move what can be moved now: KCOLL_OK once the transfer has ended on
 * both sides (the mailbox is free again), KCOLL_IN_PROGRESS, or an error
 * (the owner's reason in why). Serves this rank's own requesters too. */
kcoll_status_t kcoll_chan_poll(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf, char *why, size_t whylen);
/* Give up a transfer in flight (its collective failed): the mailbox is
 * not used again by this process (its ring may hold stray bytes). */
void kcoll_chan_abandon(kcoll_chan_t *ch, kcoll_chan_xfer_t *xf);

/* The owner's side: move what the requesters' rings and pipes let move
 * now, never waiting. Returns 1 if anything moved. Cheap when nobody
 * asks (one load). Safe to call from several threads (one serves). */
int kcoll_chan_serve(kcoll_chan_t *ch);

#endif
