/* MPI_Scatter, MPI_Scatterv, MPI_Gather and MPI_Gatherv through kcoll
 * against the host MPI's PMPI_* calls, byte for byte.
 *
 * Matrix: communicator shapes (world, dup, odd/even split, reversed split)
 * x collective x algorithm (auto and every one forced, the throttled ones
 * with k = 1 and 2; hier only with --only hier, in the topology-levels
 * runs) x block size (0, 1, 4095, 16 KiB + 3, 1 MiB + 5) x
 * every root x the root's MPI_IN_PLACE or not x datatype (MPI_BYTE; at
 * 4095 bytes also MPI_INT, a contiguous derived type, a non-contiguous
 * vector, which kcoll moves through its datatype map, and a darray, which
 * it does not map: it must fall back and still be right). The v-variants get
 * counts that differ per rank, some zero, and blocks placed in rotated,
 * reversed order with gaps between them. Small sizes also run with the
 * default KCOLL_MIN_BYTES (the host MPI does them). Both calls start from
 * identical buffers with canary bytes around and between the blocks, and
 * every rank compares its whole allocations afterwards (a non-root's
 * receive bytes outside its block, the gaps of the root's buffer). The
 * statistics must show the path each call took. The 1 MiB blocks run on
 * two shapes only to keep the oversubscribed run short. Negative counts
 * must give the host MPI's own error class. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { SCATTER, SCATTERV, GATHER, GATHERV, NCOLL };
static const char *const coll_names[NCOLL] = {"MPI_Scatter", "MPI_Scatterv", "MPI_Gather",
                                              "MPI_Gatherv"};
static const char *const coll_env[NCOLL] = {"SCATTER_ALGO", "SCATTER_ALGO", "GATHER_ALGO",
                                            "GATHER_ALGO"};
#define NALGOS 6
static const char *const algos[2][NALGOS] = {
    {"auto", "parallel_read", "sequential_write", "throttled_read:k=1", "throttled_read:k=2",
     "hier"},
    {"auto", "parallel_write", "sequential_read", "throttled_write:k=1", "throttled_write:k=2",
     "hier"}};
static const size_t sizes[] = {0, 1, 4095, 16384 + 3, (1 << 20) + 5};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define SMALL 16384
#define CANARY 64
#define MAXP 8

enum { DT_BYTE, DT_INT, DT_CONTIG, DT_VECTOR, DT_DARRAY, NDT };
static const char *const dt_names[NDT] = {"MPI_BYTE", "MPI_INT", "contig(3 x int)",
                                          "vector(2,1,2 x int)", "darray(cyclic)"};

static uint64_t kcoll_calls_any(int c)
{
    uint64_t sum = 0;
    for (int a = 1; a < NALGOS; a++) {
        if (a == 4) /* throttled with k = 2: the row of k = 1 */
            continue;
        char path[64];
        snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algos[c >= GATHER][a], ":"),
                 algos[c >= GATHER][a]);
        sum += mt_calls(coll_names[c], path);
    }
    return sum;
}

/* -q (quick): roots 0 and p-1, no derived datatypes, fewer algorithms,
 * no duplicate of MPI_COMM_WORLD. --only hier (the topology-levels runs,
 * which alone run the hierarchical algorithms): auto and hier only.
 * For MPICH beyond a few ranks: its own collectives busy-poll, which
 * costs milliseconds per call when ranks outnumber cores. */
static int quick;

static int wanted(int si, int dt, int root, int p, int shape, int ai)
{
    size_t n = sizes[si];
    if (quick && ((root != 0 && root != p - 1) || dt == DT_INT || dt == DT_CONTIG || ai == 3 ||
                  shape == 1))
        return 0;
    if ((dt != DT_BYTE && n != 4095) || (dt == DT_DARRAY && ai > 0))
        return 0;
    /* 1 byte: auto and one forced algorithm (and the tree); 16 KiB + 3:
     * the throttled ones with k = 2 only (k = 1 differs only in its chains) */
    if ((n == 1 && ai > 1 && ai != NALGOS - 1) || (n == 16384 + 3 && ai == 3))
        return 0;
    if (n >= (1u << 20))
        return dt == DT_BYTE && (shape == 0 || shape == 3) && (root == 0 || root == p - 1);
    return 1;
}

/* Counts and displacements (in elements) of the p blocks of a call with
 * `count` elements per block: uniform, or (v) per rank different, some
 * zero, placed in rotated reversed order with gaps. Returns the span. */
static size_t layout(int v, int p, int count, long case_no, int *counts, int *displs)
{
    for (int j = 0; j < p; j++) {
        if (!v) {
            counts[j] = count;
            displs[j] = j * count;
            continue;
        }
        int slot = (int)((p - 1 - j + case_no) % p);
        counts[j] = (j + case_no) % 4 == 1 ? 0 : count - (count > 0 ? j % 3 % (count + 1) : 0);
        if (counts[j] < 0)
            counts[j] = 0;
        displs[j] = slot * (count + 2) + 1;
    }
    return v ? (size_t)p * (size_t)(count + 2) + 1 : (size_t)p * (size_t)count;
}

static void fill(char *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (char)(i * 31 + seed * 7 + 3);
}

/* One call of collective c, through kcoll (MPI_*) or the host (PMPI_*).
 * b is the root's blocked buffer, o this rank's own block (or
 * MPI_IN_PLACE at the root); count/t describe a uniform block, counts/
 * displs the v-layout, mine this rank's count in it. */
static int call(int c, int kcoll, void *b, void *o, int count, const int *counts,
                const int *displs, int mine, MPI_Datatype t, int root, MPI_Comm comm)
{
    switch (c) {
    case SCATTER:
        return kcoll ? MPI_Scatter(b, count, t, o, count, t, root, comm)
                     : PMPI_Scatter(b, count, t, o, count, t, root, comm);
    case SCATTERV:
        return kcoll ? MPI_Scatterv(b, counts, displs, t, o, mine, t, root, comm)
                     : PMPI_Scatterv(b, counts, displs, t, o, mine, t, root, comm);
    case GATHER:
        return kcoll ? MPI_Gather(o, count, t, b, count, t, root, comm)
                     : PMPI_Gather(o, count, t, b, count, t, root, comm);
    default:
        return kcoll ? MPI_Gatherv(o, mine, t, b, counts, displs, t, root, comm)
                     : PMPI_Gatherv(o, mine, t, b, counts, displs, t, root, comm);
    }
}

static MPI_Datatype types[NDT];
static char *ref_b, *got_b; /* the root's blocked buffer */
static char *ref_o, *got_o; /* each rank's own block */

/* One case of the matrix: returns NULL or what went wrong. */
static const char *one_case(MPI_Comm comm, int c, int ai, size_t n, int dt, int root,
                            int in_place, int min_bytes, long case_no)
{
    int p, rank, tsize, counts[MAXP], displs[MAXP];
    MPI_Aint lb, extent;
    const int v = c == SCATTERV || c == GATHERV, scatter = c <= SCATTERV;
    const char *algo = algos[!scatter][ai];
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    MPI_Type_size(types[dt], &tsize);
    MPI_Type_get_extent(types[dt], &lb, &extent);
    int count = (int)((n + (size_t)tsize - 1) / (size_t)tsize);
    size_t span = layout(v, p, count, case_no, counts, displs);
    size_t blen = span * (size_t)extent + CANARY;
    size_t olen = (size_t)count * (size_t)extent + CANARY;
    fill(ref_b, blen, (unsigned)case_no);
    fill(ref_o, olen, (unsigned)(case_no + rank * 13 + 1));
    memcpy(got_b, ref_b, blen);
    memcpy(got_o, ref_o, olen);

    char path[64];
    snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algo, ":"), algo);
    uint64_t before_path = mt_calls(coll_names[c], path), before_any = kcoll_calls_any(c);
    int own_inplace = rank == root && in_place;
    int rc1 = call(c, 0, ref_b, own_inplace ? MPI_IN_PLACE : ref_o, count, counts, displs,
                   counts[rank], types[dt], root, comm);
    int rc2 = call(c, 1, got_b, own_inplace ? MPI_IN_PLACE : got_o, count, counts, displs,
                   counts[rank], types[dt], root, comm);
    uint64_t after_path = mt_calls(coll_names[c], path), after_any = kcoll_calls_any(c);

    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS)
        return "an MPI call returned an error";
    if (memcmp(ref_b, got_b, blen))
        return scatter ? "the root's send buffer differs"
                       : "the root's receive buffer differs from PMPI's";
    if (memcmp(ref_o, got_o, olen))
        return scatter ? "the receive buffer differs from PMPI's" : "the send buffer differs";
    size_t largest = 0;
    for (int j = 0; j < p; j++)
        if ((size_t)counts[j] * (size_t)tsize > largest)
            largest = (size_t)counts[j] * (size_t)tsize;
    int expect_kcoll = p > 1 && largest >= (size_t)min_bytes && dt != DT_DARRAY;
    int took_kcoll = after_any == before_any + 1;
    if (expect_kcoll != took_kcoll)
        return expect_kcoll ? "kcoll did not run" : "kcoll ran where the host MPI should";
    if (expect_kcoll && ai > 0 && after_path != before_path + 1)
        return "statistics do not show the forced algorithm";
    return NULL;
}

/* Invalid arguments on every rank (negative counts) reach the host MPI,
 * which reports the same error class as when called directly. */
static void bad_args(void)
{
    MPI_Comm comm;
    int p, counts[MAXP], displs[MAXP];
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_size(comm, &p);
    for (int j = 0; j < p && j < MAXP; j++) {
        counts[j] = -1;
        displs[j] = 0;
    }
    for (int c = 0; c < NCOLL; c++) {
        int cls[2];
        int rc0 = call(c, 0, ref_b, ref_o, -1, counts, displs, -1, MPI_BYTE, 0, comm);
        int rc1 = call(c, 1, ref_b, ref_o, -1, counts, displs, -1, MPI_BYTE, 0, comm);
        MPI_Error_class(rc0, &cls[0]);
        MPI_Error_class(rc1, &cls[1]);
        if (rc0 == MPI_SUCCESS || cls[0] != cls[1])
            mt_fail("%s with negative counts: host error class %d, through kcoll %d",
                    coll_names[c], cls[0], cls[1]);
        else
            mt_pass();
    }
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const mt_opts_t opts = mt_options(argc, argv);
    quick = opts.quick;
    types[DT_BYTE] = MPI_BYTE;
    types[DT_INT] = MPI_INT;
    MPI_Type_contiguous(3, MPI_INT, &types[DT_CONTIG]);
    MPI_Type_commit(&types[DT_CONTIG]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[DT_VECTOR]);
    MPI_Type_commit(&types[DT_VECTOR]);
    types[DT_DARRAY] = mt_unmapped_type();

    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);
    size_t maxlen = (size_t)MAXP * ((1u << 20) + 64) + 2 * CANARY;
    ref_b = malloc(maxlen);
    got_b = malloc(maxlen);
    ref_o = malloc(maxlen);
    got_o = malloc(maxlen);
    long case_no = 0;

    for (int shape = 0; shape < MT_NSHAPES; shape++) {
        int p;
        MPI_Comm_size(comms[shape], &p);
        for (int c = 0; c < NCOLL; c++) {
            for (int ai = 0; ai < NALGOS; ai++) {
                const char *algo = algos[c >= GATHER][ai];
                if (!mt_algo_wanted(&opts, algo, ai, "hier"))
                    continue;
                kcoll_param_set(coll_env[c], algo);
                for (int si = 0; si < NSIZES; si++)
                    for (int pass = 0; pass < (sizes[si] < SMALL && ai == 0 ? 2 : 1); pass++) {
                        kcoll_param_set("MIN_BYTES", pass ? "16384" : "0");
                        for (int dt = 0; dt < NDT; dt++)
                            for (int root = 0; root < p; root++)
                                for (int in_place = 0; in_place < 2; in_place++, case_no++) {
                                    if (!wanted(si, dt, root, p, shape, ai))
                                        continue;
                                    const char *what =
                                        one_case(comms[shape], c, ai, sizes[si], dt, root,
                                                 in_place, pass ? SMALL : 0, case_no);
                                    if (what)
                                        mt_fail("%s: %s %s, %s, %zu bytes of %s per block, "
                                                "root %d%s, min_bytes %d",
                                                what, coll_names[c], names[shape], algo,
                                                sizes[si], dt_names[dt], root,
                                                in_place ? " in place" : "", pass ? SMALL : 0);
                                    else
                                        mt_pass();
                                }
                    }
            }
            kcoll_param_set(coll_env[c], "auto");
        }
    }
    bad_args();

    /* the reasons for falling back are counted */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int c = 0; c < NCOLL; c++) {
        if (size > 1 && mt_calls(coll_names[c], "mpi:noncontig_datatype") == 0)
            mt_fail("%s: no call counted as mpi:noncontig_datatype", coll_names[c]);
        if (size > 1 && mt_calls(coll_names[c], "mpi:below_min_bytes") == 0)
            mt_fail("%s: no call counted as mpi:below_min_bytes", coll_names[c]);
        if (size == 1 && mt_calls(coll_names[c], "mpi:one_rank") == 0)
            mt_fail("%s: no call counted as mpi:one_rank", coll_names[c]);
    }

    free(ref_b);
    free(got_b);
    free(ref_o);
    free(got_o);
    mt_free_shapes(comms);
    MPI_Type_free(&types[DT_CONTIG]);
    MPI_Type_free(&types[DT_VECTOR]);
    MPI_Type_free(&types[DT_DARRAY]);
    int rc = mt_finish("test_rooted");
    MPI_Finalize();
    return rc;
}
