/* Topology through hwloc (DESIGN.md section 6). KCOLL_TOPO_SYNTHETIC
 * replaces the machine's topology with an hwloc synthetic description. */
#ifndef KCOLL_TOPO_H
#define KCOLL_TOPO_H

#include <stddef.h>

/* One line such as
 *   "1 package, 1 NUMA node, 2 cores, 2 PUs; L3 32 MiB x1, L2 1 MiB x2, L1d 48 KiB x2"
 * written to out. Returns 0, or -1 (out then holds the reason). */
int kcoll_topo_summary(char *out, size_t outlen);

/* Size in bytes of the largest cache of the machine (last level), or 0 if
 * unknown. Used by the benchmark to size off-cache buffer rotation. */
size_t kcoll_topo_llc_bytes(void);

/* Where this process runs, at each level named in KCOLL_HIER_LEVELS
 * (comma-separated, innermost first: l1, l2, l3, numa, package or
 * socket): ids[l] is the logical index of the object of that level that
 * holds it, or -1 where it spans several (a process whose binding covers
 * more than one) or the machine has no such object.
 * index is this process's rank among its node's processes (for
 * KCOLL_TOPO_PLACE compact and scatter). Returns the number of levels
 * (at most max), or -1 with the reason in err (an unknown level name, a
 * topology hwloc refused). *pu gets the PU's logical index, or -1. */
int kcoll_topo_place(int index, int *ids, int max, int *pu, char *err, size_t errlen);
/* Where the answers above come from, one line into out (returned):
 * "read from PATH" (the kept file of this machine), "loaded by hwloc, kept
 * in PATH", "hwloc synthetic '...'", or "none: <reason>". */
const char *kcoll_topo_source(char *out, size_t outlen);
/* Hardware threads (PUs) of the topology, or 0 if unknown. */
int kcoll_topo_npus(void);
/* This machine's facts from the kept file where there is one (a fraction
 * of a millisecond), else start loading its topology on a thread of its
 * own, for the first of the questions above to take over (at MPI_Init,
 * right after the host MPI has started: never while anything may
 * setenv(), as hwloc getenv()s; nothing if it is loaded or loading
 * already). */
void kcoll_topo_prefetch(void);
/* The prefetch's thread joined (its topology kept): before MPI_Init
 * returns, whether or not anything asked. */
void kcoll_topo_settle(void);

#endif
