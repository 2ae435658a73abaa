/* kcoll's public interface beyond the intercepted MPI_* functions.
 *
 * Everything here is optional: kcoll works through LD_PRELOAD with no
 * change to the program. Tools and tests that want to steer or inspect it
 * at run time declare these functions (or find them with dlsym).
 */
#ifndef KCOLL_H
#define KCOLL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KCOLL_VERSION "0.1.0"

/* "0.1.0" */
const char *kcoll_version(void);

/* Set a KCOLL_* parameter at run time, e.g. ("BCAST_ALGO", "knomial:k=4").
 * Every rank must make the same settings at the same point of the program.
 * Returns 0, or -1 for an unknown name or an invalid value. */
int kcoll_param_set(const char *name, const char *value);
/* Current value as text, or NULL for an unknown name. */
const char *kcoll_param_get(const char *name);

/* This process's statistics so far for one row of the KCOLL_STATS table:
 * coll is the collective's name ("MPI_Bcast"), path is "kcoll:<algorithm>",
 * "kcoll:hier(<on-node>|host)" or "mpi:<reason>"; a path ending in '*'
 * sums every path it begins ("kcoll:hier(*"). Returns 0, or -1 if no such
 * row and path exist. */
int kcoll_stats_get(const char *coll, const char *path, uint64_t *calls, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
