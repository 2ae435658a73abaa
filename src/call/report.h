/* What the statistics count (call/report.c): a call's mode and, where
 * the host MPI does it, the reason; the table's rows (collective x mode)
 * and paths (algorithms, reasons, hierarchical paths, engines, checks of
 * decisions, the shortcut), named; and the table printed (KCOLL_STATS).
 * The call layer counts into it (call.h); this file needs nothing of it.
 */
#ifndef KCOLL_CALL_REPORT_H
#define KCOLL_CALL_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "sched/exec.h"
#include "xfer/engine.h"

typedef enum {
    KCOLL_MODE_BLOCKING = 0, /* MPI_Bcast */
    KCOLL_MODE_NONBLOCKING,  /* MPI_Ibcast */
    KCOLL_MODE_PERSISTENT,   /* MPI_Bcast_init, then MPI_Start */
    KCOLL_NMODES
} kcoll_mode_t;

/* Why a call goes to the host MPI: the statistics path "mpi:<name>". */
typedef enum {
    KCOLL_R_NONE = 0,    /* no reason: kcoll does the call */
    KCOLL_R_DISABLED,    /* KCOLL_DISABLE=1, or kcoll not initialized */
    KCOLL_R_INVALID,     /* invalid arguments: the host MPI reports them */
    KCOLL_R_INTERCOMM,   /* inter-communicator */
    KCOLL_R_ONE_RANK,    /* communicator of one process: nothing to move */
    KCOLL_R_SMALL,       /* below KCOLL_MIN_BYTES, or a rule prefers the host MPI there */
    KCOLL_R_NONCONTIG,   /* non-contiguous datatype */
    KCOLL_R_MULTINODE,   /* communicator spans more than one node */
    KCOLL_R_NO_CMA,      /* no transfer engine permitted */
    KCOLL_R_TEAM_FAILED, /* team set-up failed for another reason */
    KCOLL_R_BAD_ALGO,    /* forced algorithm invalid (here) */
    KCOLL_R_OP,          /* reduction operation/datatype kcoll does not apply */
    KCOLL_R_NO_TEAM,     /* a non-blocking call on a communicator without a team yet */
    KCOLL_R_SPANS,       /* not a reason: the communicator spans nodes and has a span record
                          * (team_why of kcoll_call_prepare; never counted) */
    KCOLL_NREASON
} kcoll_reason_t;

const char *kcoll_reason_name(kcoll_reason_t r);

/* The statistics table's names (call/report.c). Row r is collective
 * r / KCOLL_NMODES in mode r % KCOLL_NMODES; paths are the algorithms
 * (kcoll_algos indices), then the reasons. */
#define KCOLL_MAX_ALGOS 64
#define KCOLL_PATH_REASON(r) (KCOLL_MAX_ALGOS + (int)(r))
#define KCOLL_NPATHS (KCOLL_MAX_ALGOS + KCOLL_NREASON)
/* One more row, "transfers", counts the engines (paths "engine:<name>",
 * after the others): per rank, the collectives that moved data through
 * each engine, and the bytes it moved. */
#define KCOLL_ROW_TRANSFERS (KCOLL_NCOLL * KCOLL_NMODES)
#define KCOLL_NROWS (KCOLL_ROW_TRANSFERS + 1)
#define KCOLL_PATH_ENGINE(e) (KCOLL_NPATHS + (int)(e))
/* the checks of decisions (call/adapt.h), per collective: closed, and
 * those that switched */
#define KCOLL_PATH_ADAPT_CHECK KCOLL_PATH_ENGINE(KCOLL_NENGINES)
#define KCOLL_PATH_ADAPT_SWITCH (KCOLL_PATH_ADAPT_CHECK + 1)
/* the calls the shortcut took (call/shortcut.h), counted again: they are
 * in their memo's path too */
#define KCOLL_PATH_SHORTCUT (KCOLL_PATH_ADAPT_SWITCH + 1)
/* calls across nodes run as one schedule in a layout (call/request.c):
 * "kcoll:leaders", "kcoll:lanes" */
#define KCOLL_PATH_LEADERS (KCOLL_PATH_SHORTCUT + 1)
#define KCOLL_PATH_LANES (KCOLL_PATH_LEADERS + 1)
/* the calls a host streak sent to the host MPI without an agreement
 * (call/call.c), counted again: they are in their reason's path too */
#define KCOLL_PATH_STREAK (KCOLL_PATH_LANES + 1)
#define KCOLL_NPATHS_ALL (KCOLL_PATH_STREAK + 1)
const char *kcoll_stats_row_name(int row, char *buf, size_t buflen);   /* "MPI_Ibcast" */
const char *kcoll_stats_path_name(int path, char *buf, size_t buflen); /* "kcoll:knomial" */
/* Count the engines' bytes of one run of the executor (row "transfers"). */
void kcoll_stats_engines(const kcoll_exec_t *x);
/* Print a summed table, one line per non-empty (row, path). */
void kcoll_stats_print(const uint64_t *table, int nranks, void *file);
/* The statistics row of collective c in a mode. */
static inline int kcoll_stats_row(kcoll_coll_t c, kcoll_mode_t mode)
{
    return (int)c * KCOLL_NMODES + (int)mode;
}

#endif
