/* Statistics: per collective and path, calls and bytes of this process.
 * A path is "kcoll:<algorithm>" or "mpi:<reason>" (KCOLL_STATS). */
#ifndef KCOLL_STATS_H
#define KCOLL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"

typedef enum {
    KCOLL_R_DISABLED,    /* KCOLL_DISABLE=1, or kcoll not initialized */
    KCOLL_R_INVALID,     /* invalid arguments: the host MPI reports them */
    KCOLL_R_INTERCOMM,   /* inter-communicator */
    KCOLL_R_ONE_RANK,    /* communicator of one process: nothing to move */
    KCOLL_R_SMALL,       /* below KCOLL_MIN_BYTES */
    KCOLL_R_NONCONTIG,   /* non-contiguous datatype */
    KCOLL_R_MULTINODE,   /* communicator spans more than one node */
    KCOLL_R_NO_CMA,      /* cross-memory attach not permitted */
    KCOLL_R_TEAM_FAILED, /* team setup failed for another reason */
    KCOLL_R_BAD_ALGO,    /* forced algorithm could not be parsed */
    KCOLL_R_OP,          /* reduction operation/datatype kcoll does not apply */
    KCOLL_NREASON
} kcoll_reason_t;

#define KCOLL_MAX_ALGOS 64
#define KCOLL_NPATH (KCOLL_MAX_ALGOS + KCOLL_NREASON)

const char *kcoll_reason_name(kcoll_reason_t r);

void kcoll_stats_count_kcoll(kcoll_coll_t c, int algo_index, size_t bytes);
void kcoll_stats_count_mpi(kcoll_coll_t c, kcoll_reason_t r, size_t bytes);

/* The whole table as a flat array [KCOLL_NCOLL][KCOLL_NPATH][2] of
 * (calls, bytes), for summing over ranks. */
#define KCOLL_STATS_LEN (KCOLL_NCOLL * KCOLL_NPATH * 2)
void kcoll_stats_snapshot(uint64_t out[KCOLL_STATS_LEN]);
/* Name of path index i ("kcoll:knomial" / "mpi:below_min_bytes") or NULL. */
const char *kcoll_stats_path_name(int i, char *buf, size_t buflen);
/* Print a summed table (one row per non-empty (collective, path)). */
void kcoll_stats_print(const uint64_t table[KCOLL_STATS_LEN], int nranks, void *file);

#endif
