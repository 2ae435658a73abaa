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

#endif
