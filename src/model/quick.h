/* The quick calibration (docs/tuning.md, "Quick calibration"): what kcoll
 * measures of a machine at MPI_Init where no tuning file is given, and how
 * it lands in the cost model.
 *
 * The built-in defaults come from one machine. On another, the terms that
 * decide small and middle calls move most: the host MPI's own time for a
 * few-kilobyte collective, and what a cross-memory-attach system call
 * costs. kcoll measures those two where it runs, in a few milliseconds,
 * and keeps the result per machine in a cache file (mpi/quick.c), so a
 * machine pays once. The full kcoll-calibrate measures every term (copy
 * rates, contention, flags, the host at every size) and writes a tuning
 * file; a tuning file, where there is one, is used instead.
 */
#ifndef KCOLL_MODEL_QUICK_H
#define KCOLL_MODEL_QUICK_H

#include <stdint.h>

#include "base/cache.h"
#include "model/machine.h"

/* The sizes measured (as the selector sizes a call: per block, per
 * vector), and the collectives. */
#define KCOLL_QUICK_SIZES 4
/* How the measurement is made, part of the machine's identity: a file
 * measured another way is measured again (2: the host's calls warmed up
 * before they are timed; 3: nothing kept from ranks sharing a CPU or
 * waiting for one; 4: 128 warm-up calls, not 48). */
#define KCOLL_QUICK_METHOD 4
extern const double kcoll_quick_bytes[KCOLL_QUICK_SIZES];
#define KCOLL_QUICK_COLLS 9
extern const kcoll_coll_t kcoll_quick_colls[KCOLL_QUICK_COLLS];

typedef struct {
    int p;          /* the processes of the node that measured */
    double alpha;   /* s per cross-memory-attach call (0: not measured) */
    /* the largest share of the measurement's time a rank waited for its
     * CPU (-1: the kernel does not say) */
    double busy;
    /* the host MPI's median completion time, s, of kcoll_quick_colls[i]
     * at kcoll_quick_bytes[k] (0: not measured; Barrier: k 0 only) */
    double host[KCOLL_QUICK_COLLS][KCOLL_QUICK_SIZES];
} kcoll_quick_t;

/* Lay q over machine m: its alpha, and its host times in place of m's at
 * q->p processes for sizes up to the largest measured (m's larger sizes
 * and other process counts stay). */
void kcoll_quick_apply(kcoll_machine_t *m, const kcoll_quick_t *q);

/* The cache file of the quick calibration for this machine with p ranks
 * on the node under the MPI library `mpi` (MPI_Get_library_version's first
 * line): KCOLL_CACHE_DIR, else $XDG_CACHE_HOME/kcoll, else
 * $HOME/.cache/kcoll, then machine-<hash of the identity>.json. The
 * identity (into ident): CPU model, online CPUs, kernel release, the MPI
 * library, p, kcoll's version and a hash of its built-in defaults (new
 * defaults measure again). 0, or -1 when there is no folder to name. */
int kcoll_quick_path(int p, const char *mpi, char *path, size_t len, char *ident, size_t ilen);


#endif
