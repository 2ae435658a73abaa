/* Datatype maps: logical byte ranges to memory pieces (see dmap.h). */
#include <stdlib.h>
#include <string.h>

#include "sched/dmap.h"

/* The segment of m holding logical position w of an element (w < size) */
static uint64_t kcoll_dmap_find(const kcoll_dmap_t *m, uint64_t w)
{
    uint64_t lo = 0, hi = m->nseg - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (m->seg[mid].at <= w)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Memory of piece i of segment s of element e */
static inline char *kcoll_dmap_piece(const kcoll_dmap_t *m, char *base, uint64_t e,
                                     const kcoll_dseg_t *s, uint64_t i)
{
    return base + (int64_t)e * m->extent + s->off + (int64_t)i * s->stride;
}

/* A place in a buffer laid out by a map: element e, segment j, piece i,
 * byte in of that piece */
typedef struct {
    uint64_t e, j, i, in;
} kcoll_dmap_pos_t;

static kcoll_dmap_pos_t kcoll_dmap_at(const kcoll_dmap_t *m, size_t off)
{
    kcoll_dmap_pos_t c = {off / m->size, 0, 0, 0};
    const uint64_t w = off % m->size;
    c.j = kcoll_dmap_find(m, w);
    c.i = (w - m->seg[c.j].at) / m->seg[c.j].len;
    c.in = (w - m->seg[c.j].at) % m->seg[c.j].len;
    return c;
}

/* The next run of the buffer from c, at most len bytes: its memory and
 * length; c moves past it */
static char *kcoll_dmap_next(const kcoll_dmap_t *m, char *base, kcoll_dmap_pos_t *c, size_t len,
                             size_t *got)
{
    const kcoll_dseg_t *s = &m->seg[c->j];
    char *p = kcoll_dmap_piece(m, base, c->e, s, c->i) + c->in;
    uint64_t take = s->len - c->in;
    if (take > len) {
        c->in += len;
        *got = len;
        return p;
    }
    *got = take;
    c->in = 0;
    if (++c->i == s->count) { /* the segment ends: the next, or the next element */
        c->i = 0;
        if (++c->j == m->nseg) {
            c->j = 0;
            c->e++;
        }
    }
    return p;
}

int kcoll_dmap_iov(const kcoll_dmap_t *m, char *base, size_t off, size_t len, kcoll_iovs_t *out)
{
    if (!m)
        return kcoll_iovs_push(out, base + off, len);
    kcoll_dmap_pos_t c = kcoll_dmap_at(m, off);
    while (len > 0) {
        size_t got;
        char *p = kcoll_dmap_next(m, base, &c, len, &got);
        if (kcoll_iovs_push(out, p, got))
            return -1;
        len -= got;
    }
    return 0;
}

/* Pieces [0, n) of a map whose pieces all have N bytes, element after
 * element: a copy of a size the compiler knows, in a loop (a column of
 * doubles packs at memory speed instead of a library call per piece) */
#define KCOLL_DMAP_UNIFORM(N)                                                      \
    do {                                                                           \
        uint64_t k = 0;                                                            \
        for (uint64_t e = 0; k < n; e++)                                           \
            for (uint64_t j = 0; j < m->nseg && k < n; j++) {                       \
                const kcoll_dseg_t *s = &m->seg[j];                                \
                char *p = kcoll_dmap_piece(m, base, e, s, 0);                      \
                for (uint64_t i = 0; i < s->count && k < n; i++, k++, p += s->stride) { \
                    if (out)                                                       \
                        memcpy(packed + k * (N), p, (N));                          \
                    else                                                           \
                        memcpy(p, packed + k * (N), (N));                          \
                }                                                                  \
            }                                                                      \
    } while (0)

/* Walk logical bytes [0, len) piece by piece: copy between memory at base
 * (through m) and packed memory, in the direction `out` says */
static void kcoll_dmap_walk(const kcoll_dmap_t *m, char *base, size_t len, char *packed, int out)
{
    size_t done = 0;
    const uint64_t n = m->seglen ? len / m->seglen : 0; /* whole pieces */
    switch (m->seglen) {
    case 4: KCOLL_DMAP_UNIFORM(4); done = n * 4; break;
    case 8: KCOLL_DMAP_UNIFORM(8); done = n * 8; break;
    case 16: KCOLL_DMAP_UNIFORM(16); done = n * 16; break;
    case 32: KCOLL_DMAP_UNIFORM(32); done = n * 32; break;
    case 64: KCOLL_DMAP_UNIFORM(64); done = n * 64; break;
    }
    if (done == len)
        return;
    /* the rest, from where the loop above stopped */
    kcoll_dmap_pos_t c = kcoll_dmap_at(m, done);
    while (done < len) {
        size_t got;
        char *p = kcoll_dmap_next(m, base, &c, len - done, &got);
        if (out)
            memcpy(packed + done, p, got);
        else
            memcpy(p, packed + done, got);
        done += got;
    }
}

void kcoll_dmap_pack(const kcoll_dmap_t *m, const char *base, size_t len, char *packed)
{
    kcoll_dmap_walk(m, (char *)(uintptr_t)base, len, packed, 1);
}

void kcoll_dmap_unpack(const kcoll_dmap_t *m, char *base, size_t len, const char *packed)
{
    kcoll_dmap_walk(m, base, len, (char *)(uintptr_t)packed, 0);
}

int kcoll_dmap_seal(kcoll_dmap_t *m)
{
    uint64_t at = 0;
    m->magic = KCOLL_DMAP_MAGIC;
    m->pieces = 0;
    if (m->nseg == 0 || m->nseg > KCOLL_DMAP_MAX_SEG)
        return -1;
    m->seglen = m->seg[0].len;
    for (uint64_t i = 0; i < m->nseg; i++) {
        kcoll_dseg_t *s = &m->seg[i];
        if (s->len == 0 || s->count == 0)
            return -1;
        if (s->len != m->seglen)
            m->seglen = 0;
        s->at = at;
        at += s->len * s->count;
        m->pieces += s->count;
    }
    return at == m->size ? 0 : -1;
}

int kcoll_dmap_valid(const kcoll_dmap_t *m)
{
    uint64_t at = 0, pieces = 0;
    if (m->magic != KCOLL_DMAP_MAGIC || m->nseg == 0 || m->nseg > KCOLL_DMAP_MAX_SEG)
        return 0;
    for (uint64_t i = 0; i < m->nseg; i++) {
        const kcoll_dseg_t *s = &m->seg[i];
        if (s->len == 0 || s->count == 0 || s->at != at)
            return 0;
        at += s->len * s->count;
        pieces += s->count;
    }
    return at == m->size && pieces == m->pieces;
}
