/* Helpers shared by kcoll's MPI test programs: communicator shapes,
 * kcoll's statistics, failure counting and the closing line. */
#ifndef KCOLL_MPITEST_H
#define KCOLL_MPITEST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "kcoll.h"

/* The host MPI declares MPI-4's persistent collectives
 * (KCOLL_HAVE_PERSISTENT, from the build: Open MPI 5.0 has them although
 * its MPI_VERSION says 3.1): the forms a collective is tested in. */
#ifdef KCOLL_HAVE_PERSISTENT
#define KCOLL_PERSISTENT_FORMS 3
#else
#define KCOLL_PERSISTENT_FORMS 2
#endif

/* The host MPIs whose own bugs the tests and the fuzzer steer around,
 * each use saying which bug: MPICH before 4.1 (Debian's 4.0.2; Intel MPI
 * 2021 is built on MPICH 3.4 and gets the same care) and Open MPI before
 * 5 (Debian's 4.1.4). The current ones (MPICH 5.0, Open MPI 5.0) get none.
 * Through the MPI-5 standard ABI the host is not known when compiling:
 * none either. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define KCOLL_HOST_OLD_MPICH 1
#endif
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
#define KCOLL_HOST_OLD_OMPI 1
#endif
/* The MPICH family's own persistent collectives complete wrongly up to
 * MPICH 5.0.2 at least (checked with KCOLL_DISABLE=1: MPI_Testall reports
 * MPI_ERR_IN_STATUS for completed ones, MPI_Testany and MPI_Waitany
 * return the wrong index, MPI_Waitsome the wrong indices; kcoll-fuzz
 * seed 2 at 2 ranks), and so Intel MPI's, and the standard ABI's whose
 * header does not say the MPI (MPICH 5 is the one that has it): there the
 * tests do not compare the host's persistent requests. */
#if (defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 50100000) || defined(MPI_ABI_VERSION)
#define KCOLL_HOST_PERSISTENT_BROKEN 1
#endif

/* Is the host MPI (asked at run time: through the MPI-5 ABI the header
 * does not say) Open MPI, whose progress engine advances kcoll's requests
 * inside any of its calls? */
int mt_host_is_ompi(void);

#define MT_NSHAPES 4
/* MPI_COMM_WORLD, a duplicate, an odd/even split, a split with the rank
 * order reversed. */
void mt_shapes(MPI_Comm comms[MT_NSHAPES], const char *names[MT_NSHAPES]);
void mt_free_shapes(MPI_Comm comms[MT_NSHAPES]);

/* This process's calls on one statistics row (0 if the row is empty). */
uint64_t mt_calls(const char *coll, const char *path);

/* Calls on any kcoll algorithm of algos[1..n-1] ("kcoll:<name>"); names
 * with a parameter (":") repeat an algorithm listed without one and are
 * skipped. */
uint64_t mt_calls_any(const char *coll, const char *const *algos, int n);

/* The statistics rows around one call: its forced algorithm's, any kcoll
 * algorithm's and mpi:bad_algo. */
typedef struct {
    uint64_t path, any, bad;
} mt_rows_t;

/* Why a call (rc2, result in got) compared with the host MPI's (rc1, ref)
 * failed, or NULL: an error returned, any of the span bytes differing
 * (canaries and gaps included), kcoll running where it should not or not
 * running where it should, a forced algorithm's row not counting the call,
 * an invalid algorithm (bad) not counted as mpi:bad_algo. */
const char *mt_verdict(int rc1, int rc2, const void *ref, const void *got, size_t span,
                       int expect_kcoll, int forced, int bad, mt_rows_t before, mt_rows_t after);

/* The options of the matrix programs: -q, the thinner matrix (MPICH
 * above 3 ranks, the topology-levels runs), and --only NAMES, "auto" and
 * the forced algorithms with a name in the comma-separated list NAMES
 * only (the topology-levels runs: --only hier,ring_levels). */
typedef struct {
    int quick;
    const char *only;
} mt_opts_t;
mt_opts_t mt_options(int argc, char **argv);
/* Is forced algorithm spec ("name" or "name:param=N"; ai 0 is "auto",
 * always wanted) in o's matrix? Without --only, every one but those
 * named in the comma-separated list `levels_only` (NULL: none), which
 * the topology-levels runs cover. */
int mt_algo_wanted(const mt_opts_t *o, const char *spec, int ai, const char *levels_only);

/* A non-contiguous datatype kcoll does not map (a darray: every second
 * int of four, extent four ints), so its calls go to the host MPI as
 * mpi:noncontig_datatype; committed. */
MPI_Datatype mt_unmapped_type(void);

/* The fallback reasons every size > 1 run must have counted on coll or
 * collv (mpi:noncontig_datatype on coll, mpi:below_min_bytes on collv),
 * and mpi:one_rank on coll on one rank. */
void mt_check_fallbacks(const char *coll, const char *collv);

/* A 64-bit hash (the MurmurHash3 finalizer): reproducible test data from
 * the numbers of a case. */
uint64_t mt_mix(uint64_t x);

/* A reproducible generator: mt_seed, then 24-bit numbers from mt_rnd. */
void mt_seed(unsigned seed);
unsigned mt_rnd(void);
/* Displacements for p blocks of counts[q] elements in a shuffled order
 * (order: p ints of scratch), with a gap of 0-2 elements before the first
 * block and after every block. Returns the end, in elements. */
int mt_shuffle(int p, const int *counts, int *displs, int *order);

/* Every rank of comm made n calls and took the same path at each
 * (paths[i]: 1 kcoll, 0 the host); a failure recorded (what names the
 * list) otherwise. */
void mt_paths_alike(const unsigned char *paths, int n, MPI_Comm comm, const char *what);

/* Open file descriptors of this process. */
int mt_open_fds(void);
/* Lines of /proc/self/maps that contain `what` (mappings of a file). */
int mt_maps_of(const char *what);

/* Record a failure (printed for the first few) or a pass. */
void mt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mt_pass(void);
/* This rank's failures so far. */
long mt_failures(void);
/* Sum over MPI_COMM_WORLD; rank 0 prints "<name>: N passed, M failed".
 * Returns the exit status for main. */
int mt_finish(const char *name);

#endif
