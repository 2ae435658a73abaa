/* Datatype maps: where the bytes of a buffer described by a derived
 * datatype lie, so that steps can move them without packing.
 *
 * Schedules address a buffer by byte offsets in its *logical* stream: the
 * bytes of its elements in the datatype's type-map order, one element after
 * the other, with nothing between them (what MPI_Pack would produce). For a
 * contiguous buffer the stream is the memory itself. For any other, the
 * buffer carries a map: one element's data as a list of segments in
 * type-map order, the element's data size and its extent (where the next
 * element starts). A segment is `count` pieces of `len` bytes, the first at
 * `off` from the element's origin and each next one `stride` further (a
 * vector's blocks are one segment, however many there are). Logical byte L
 * then lies in element L / size, at position L % size of that element's
 * data, inside the segment whose logical start is at or before it (a
 * binary search), in its piece (L % size - at) / len.
 *
 * kcoll_dmap_iov turns a logical range into the memory pieces it covers,
 * as an iovec list (neighbouring pieces merged), which is what
 * process_vm_readv/writev take on both sides: a strided column moves from
 * one process's matrix into another's in one system call, no pack, no
 * unpack. A map is plain data with no pointers (segments follow the
 * header), so a peer can read it whole from its owner's memory with the
 * same engine (sched/exec.c).
 */
#ifndef KCOLL_SCHED_DMAP_H
#define KCOLL_SCHED_DMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "xfer/iovs.h"

typedef struct {
    int64_t off;    /* the first piece, from the element's origin (may be negative) */
    uint64_t len;   /* bytes of a piece, > 0 */
    uint64_t count; /* pieces, > 0 */
    int64_t stride; /* from one piece to the next (any sign; count 1: 0) */
    uint64_t at;    /* logical start of the segment within the element's data */
} kcoll_dseg_t;

typedef struct kcoll_dmap {
    uint64_t magic;  /* KCOLL_DMAP_MAGIC: a peer's map read whole is checked */
    uint64_t size;   /* data bytes of one element (> 0) */
    int64_t extent;  /* distance from one element's origin to the next's */
    uint64_t nseg;   /* segments of one element (> 0) */
    uint64_t pieces; /* pieces of one element (the segments' counts added up) */
    uint64_t seglen; /* the length of every piece, where they are all alike (else 0) */
    kcoll_dseg_t seg[];
} kcoll_dmap_t;

#define KCOLL_DMAP_MAGIC 0x6b636f6c6c646d31ull /* "kcolldm1" */
/* The most segments a map may have: the PMPI layer makes none larger
 * (that datatype goes to the host MPI), a peer's map claiming more is
 * refused */
#define KCOLL_DMAP_MAX_SEG ((uint64_t)1 << 20)

/* Bytes of a map of nseg segments. */
static inline size_t kcoll_dmap_bytes(uint64_t nseg)
{
    return sizeof(kcoll_dmap_t) + (size_t)nseg * sizeof(kcoll_dseg_t);
}

/* Append the memory pieces of logical bytes [off, off + len) of a buffer
 * whose elements start at base and are laid out by m (NULL: contiguous,
 * one piece base + off), merging a piece with the previous entry where it
 * continues it. Returns 0, or -1 when out of memory. */
int kcoll_dmap_iov(const kcoll_dmap_t *m, char *base, size_t off, size_t len, kcoll_iovs_t *out);

/* Copy logical bytes [0, len) of a buffer at base laid out by m into
 * packed (contiguous) memory, or back (unpack). */
void kcoll_dmap_pack(const kcoll_dmap_t *m, const char *base, size_t len, char *packed);
void kcoll_dmap_unpack(const kcoll_dmap_t *m, char *base, size_t len, const char *packed);
/* The mean data bytes of a piece: a map of short pieces is cheaper packed
 * than moved piece by piece (the kernel pins the pages of every remote
 * piece separately) */
static inline uint64_t kcoll_dmap_mean_piece(const kcoll_dmap_t *m)
{
    return m->size / m->pieces;
}

/* Fill m->seg[i].at, m->pieces and m->seglen and check a map: magic,
 * sizes, segments (positive lengths and counts adding up to size, at most
 * KCOLL_DMAP_MAX_SEG). 0 or -1. */
int kcoll_dmap_seal(kcoll_dmap_t *m);
/* Is a map (read from a peer) consistent: what kcoll_dmap_seal made? */
int kcoll_dmap_valid(const kcoll_dmap_t *m);

#endif
