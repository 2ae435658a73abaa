/* kcoll's public interface beyond the intercepted MPI_* functions.
 *
 * Everything here is optional: kcoll works through LD_PRELOAD with no
 * change to the program. Tools and tests that want to steer or inspect it
 * at run time declare these functions (or find them with dlsym).
 */
#ifndef KCOLL_H
#define KCOLL_H

#include <stddef.h>
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
 * "kcoll:leaders" or "kcoll:lanes" (a call across nodes, by its layout) or
 * "mpi:<reason>"; a path ending in '*' sums every path it begins
 * ("mpi:*"). Returns 0, or -1 if no such row and path exist. */
int kcoll_stats_get(const char *coll, const char *path, uint64_t *calls, uint64_t *bytes);

/* kcoll's scratch memory in this process (docs/resources.md): the bytes it
 * holds now for collectives' temporary buffers (an algorithm's TMP, packed
 * derived datatypes), which finished requests keep for reuse until their
 * communicator is freed, and the most it held at once since the peak was
 * last reset. reset_peak: start the peak again from what is held now. */
void kcoll_scratch_get(uint64_t *held, uint64_t *peak, int reset_peak);

/* The cost model's prediction for one call of collective coll
 * ("MPI_Bcast") by nranks processes of one node, with no levels inside
 * it, of `bytes` sized as kcoll sizes a call (one rank's block for
 * Scatter, Gather, Allgather, Alltoall, their v forms and the
 * Reduce_scatter pair; the vector for Reduce and Allreduce; the message
 * for Bcast; 0 for Barrier). algo: "auto" (or NULL) for what kcoll would
 * do with the parameters and tuning in force (KCOLL_<FAMILY>_ALGO, the
 * tuning file's rules, KCOLL_MIN_BYTES, the model), "host" for the host
 * MPI, or an algorithm spec ("knomial:k=4"). rclass prices reductions:
 * "int" (32-bit elements), "float", "double" or "user" (NULL: "double").
 * Sets *seconds and, when chosen is not NULL, the spec that was priced
 * ("host" for the host MPI; "spec@shm" where the call would run on another
 * engine than the team's, KCOLL_ENGINE=auto: docs/engines.md). The
 * engine is the one a communicator made now would use with
 * cross-memory attach permitted. Returns 0, or -1 for an unknown collective,
 * class, or an algorithm that is invalid or cannot run at nranks. */
int kcoll_predict(const char *coll, const char *algo, int nranks, uint64_t bytes,
                  const char *rclass, double *seconds, char *chosen, size_t chosen_len);

/* kcoll's algorithms for collective coll that can run at nranks on one
 * node, comma-separated ("direct_read,knomial,..."), into out. Returns the
 * count, or -1 for an unknown collective. */
int kcoll_algorithms(const char *coll, int nranks, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif

#endif
