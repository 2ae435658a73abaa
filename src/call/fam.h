/* Helpers the families of the call layer share (call/fam_*.c). */
#ifndef KCOLL_CALL_FAM_H
#define KCOLL_CALL_FAM_H

#include <stddef.h>

#include "call/request.h"

/* Can kcoll address n elements of side s: one run of bytes, or laid out
 * by a map (sched/dmap.h)? */
static inline int kcoll_side_contig(const kcoll_side_t *s, size_t n)
{
    return s->size == 0 || n == 0 || s->map ||
           ((s->type & KCOLL_TYPE_DENSE) && (n == 1 || (s->type & KCOLL_TYPE_PACKED)));
}

/* Is n a count of side s's elements kcoll can take: not negative, and its
 * bytes well inside 64 bits (below 2^56: the agreement's votes carry byte
 * counts shifted by up to 8 bits)? A larger count names no buffer any
 * process has: the host MPI judges it. */
static inline int kcoll_side_count_ok(const kcoll_side_t *s, int64_t n)
{
    return n >= 0 && (uint64_t)n <= ((uint64_t)1 << 56) / (s->size ? s->size : 1);
}

/* Can kcoll address every block of a blocked buffer of side s: each one
 * run, the blocks packed by the element extent (any count: size == extent
 * == true extent), or laid out by a map? */
static inline int kcoll_side_blocked(const kcoll_side_t *s)
{
    return s->size == 0 || s->map ||
           ((s->type & KCOLL_TYPE_DENSE) && (s->type & KCOLL_TYPE_PACKED));
}
/* ...or, across nodes, packed by the layer above (KCOLL_TYPE_HOSTPACK) */
static inline int kcoll_side_across(const kcoll_side_t *s)
{
    return kcoll_side_blocked(s) || (s->type & KCOLL_TYPE_HOSTPACK);
}

#endif
