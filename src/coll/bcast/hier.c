/* MPI_Bcast inside a node along its topology levels, pipelined (paper 000
 * section IV: a two-level NUMA tree, one leader per NUMA node, segments
 * pipelined; paper 002: distance-aware trees).
 *
 * The tree is the team's levels' (coll/levels.h): the root leads every
 * group it is in; another group's leader is its lowest rank. Each rank
 * reads from its parent: a group's members from their leader, leaders
 * from the leader one level up, the top leaders from the root. So every
 * copy but the top level's stays inside a NUMA domain (or cache), and
 * each process is read by its own children only: at most as many readers
 * as its group has members, not p - 1.
 *
 * The message moves in segments of `chunk` KiB (0: 16 KiB below 1 MiB,
 * 512 KiB from 1 MiB, paper 000's measured choices): a rank raises its
 * DATA flag to i+1 once it holds segment i, so its children read segment
 * i while it reads segment i+1 from its parent. Each rank raises DONE once
 * it holds everything and returns once its children are DONE (they read
 * from its buffer until then).
 *
 * Cost (depth d <= levels + 1, S segments of m = n/S bytes, c_max the most
 * children of one rank):
 *   T = (d + S - 1) * (alpha + m*beta + l*gamma_{c_max}*ceil(m/s))
 * against direct read's alpha + n*beta + l*gamma_{p-1}*ceil(n/s) with its
 * p - 1 readers crossing the interconnect. With no levels (one NUMA
 * domain) the tree is flat: every rank reads from the root, in segments.
 * Any p, root and size.
 */
#include "coll/coll.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

kcoll_status_t kcoll_bcast_hier(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int r = a->rank, parent = kcoll_levels_parent(a->lv, r, a->root);
    size_t seg = a->prm.chunk > 0 ? (size_t)a->prm.chunk * KiB : a->bytes < MiB ? 16 * KiB : 512 * KiB;
    size_t nseg = (a->bytes + seg - 1) / seg;
    int nchild = 0;
    for (int q = 0; q < a->p; q++)
        nchild += kcoll_levels_parent(a->lv, q, a->root) == r;
    if (nseg > KCOLL_FLAG_VALUE_MAX) { /* fewer, larger segments */
        nseg = KCOLL_FLAG_VALUE_MAX;
        seg = (a->bytes + nseg - 1) / nseg;
    }

    kcoll_sched_expose(s, KCOLL_BUF_RECV);
    if (parent < 0) {
        if (nchild && nseg)
            kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)nseg);
    } else {
        for (size_t i = 0; i < nseg; i++) {
            const size_t off = i * seg, len = a->bytes - off < seg ? a->bytes - off : seg;
            kcoll_sched_wait(s, parent, KCOLL_FLAG_DATA, (uint32_t)(i + 1));
            kcoll_sched_read(s, parent, KCOLL_BUF_RECV, off, KCOLL_BUF_RECV, off, len);
            if (nchild)
                kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(i + 1));
        }
        kcoll_sched_signal(s, KCOLL_FLAG_DONE, 1);
    }
    for (int q = 0; q < a->p; q++)
        if (kcoll_levels_parent(a->lv, q, a->root) == r)
            kcoll_sched_wait(s, q, KCOLL_FLAG_DONE, 1);
    return s->err;
}
