/* MPI_Scatter, MPI_Scatterv, MPI_Gather and MPI_Gatherv through kcoll
 * against the host MPI's PMPI_* calls, byte for byte.
 *
 * Matrix: communicator shapes (world, dup, odd/even split, reversed split)
 * x collective x algorithm (auto and every one forced, the throttled ones
 * with k = 1 and 2) x block size (0, 1, 4095, 16 KiB + 3, 1 MiB + 5) x
 * every root x the root's MPI_IN_PLACE or not x datatype (MPI_BYTE; at
 * 4095 bytes also MPI_INT, a contiguous derived type and a non-contiguous
 * vector, which must fall back and still be right). The v-variants get
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
#define NALGOS 5
static const char *const algos[2][NALGOS] = {
    {"auto", "parallel_read", "sequential_write", "throttled_read:k=1", "throttled_read:k=2"},
    {"auto", "parallel_write", "sequential_read", "throttled_write:k=1", "throttled_write:k=2"}};
static const size_t sizes[] = {0, 1, 4095, 16384 + 3, (1 << 20) + 5};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define SMALL 16384
#define CANARY 64
#define MAXP 8

enum { DT_BYTE, DT_INT, DT_CONTIG, DT_VECTOR, NDT };
static const char *const dt_names[NDT] = {"MPI_BYTE", "MPI_INT", "contig(3 x int)",
                                          "vector(2,1,2 x int)"};

static uint64_t kcoll_calls_any(int c)
{
    uint64_t sum = 0;
    for (int a = 1; a < 4; a++) {
        char path[64];
        snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algos[c >= GATHER][a], ":"),
                 algos[c >= GATHER][a]);
        sum += mt_calls(coll_names[c], path);
    }
    return sum;
}

/* -q (quick): roots 0 and p-1, no derived datatypes, fewer algorithms,
 * no duplicate of MPI_COMM_WORLD.
 * For MPICH beyond a few ranks: its own collectives busy-poll, which
 * costs milliseconds per call when ranks outnumber cores. */
static int quick;

static int wanted(int si, int dt, int root, int p, int shape, int ai)
{
    size_t n = sizes[si];
    if (quick && ((root != 0 && root != p - 1) || dt == DT_INT || dt == DT_CONTIG || ai == 3 ||
                  shape == 1))
        return 0;
    if (dt != DT_BYTE && n != 4095)
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    quick = argc > 1 && !strcmp(argv[1], "-q");
    MPI_Datatype types[NDT] = {MPI_BYTE, MPI_INT};
    MPI_Type_contiguous(3, MPI_INT, &types[DT_CONTIG]);
    MPI_Type_commit(&types[DT_CONTIG]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[DT_VECTOR]);
    MPI_Type_commit(&types[DT_VECTOR]);

    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);
    size_t maxlen = (size_t)MAXP * ((1u << 20) + 64) + 2 * CANARY;
    char *ref_b = malloc(maxlen), *got_b = malloc(maxlen); /* the root's blocked buffer */
    char *ref_o = malloc(maxlen), *got_o = malloc(maxlen); /* each rank's own block */
    int counts[MAXP], displs[MAXP];
    long case_no = 0;

    for (int shape = 0; shape < MT_NSHAPES; shape++) {
        MPI_Comm comm = comms[shape];
        int p, rank;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &rank);
        for (int c = 0; c < NCOLL; c++) {
            const int v = c == SCATTERV || c == GATHERV, scatter = c <= SCATTERV;
            for (int ai = 0; ai < NALGOS; ai++) {
                const char *algo = algos[!scatter][ai];
                kcoll_param_set(coll_env[c], algo);
                char path[64];
                snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algo, ":"), algo);
                for (int si = 0; si < NSIZES; si++)
                    for (int pass = 0; pass < (sizes[si] < SMALL && ai == 0 ? 2 : 1); pass++) {
                        kcoll_param_set("MIN_BYTES", pass ? "16384" : "0");
                        for (int dt = 0; dt < NDT; dt++)
                            for (int root = 0; root < p; root++)
                                for (int in_place = 0; in_place < 2; in_place++, case_no++) {
                                    if (!wanted(si, dt, root, p, shape, ai))
                                        continue;
                                    int tsize;
                                    MPI_Aint lb, extent;
                                    MPI_Type_size(types[dt], &tsize);
                                    MPI_Type_get_extent(types[dt], &lb, &extent);
                                    int count = (int)((sizes[si] + (size_t)tsize - 1) / (size_t)tsize);
                                    size_t span = layout(v, p, count, case_no, counts, displs);
                                    int mine = counts[rank];
                                    size_t blen = span * (size_t)extent + CANARY;
                                    size_t olen = (size_t)count * (size_t)extent + CANARY;
                                    int is_root = rank == root;
                                    fill(ref_b, blen, (unsigned)case_no);
                                    fill(ref_o, olen, (unsigned)(case_no + rank * 13 + 1));
                                    memcpy(got_b, ref_b, blen);
                                    memcpy(got_o, ref_o, olen);
                                    const char *what = NULL;
                                    uint64_t before_path = mt_calls(coll_names[c], path);
                                    uint64_t before_any = kcoll_calls_any(c);
                                    int rc1 = MPI_SUCCESS, rc2 = MPI_SUCCESS;
                                    for (int run = 0; run < 2; run++) {
                                        char *b = run ? got_b : ref_b, *o = run ? got_o : ref_o;
                                        void *ob = is_root && in_place ? MPI_IN_PLACE : o;
                                        int rc;
                                        MPI_Datatype t = types[dt];
                                        switch (c) {
                                        case SCATTER:
                                            rc = run ? MPI_Scatter(b, count, t, ob, count, t, root, comm)
                                                     : PMPI_Scatter(b, count, t, ob, count, t, root, comm);
                                            break;
                                        case SCATTERV:
                                            rc = run ? MPI_Scatterv(b, counts, displs, t, ob, mine, t, root, comm)
                                                     : PMPI_Scatterv(b, counts, displs, t, ob, mine, t, root, comm);
                                            break;
                                        case GATHER:
                                            rc = run ? MPI_Gather(ob, count, t, b, count, t, root, comm)
                                                     : PMPI_Gather(ob, count, t, b, count, t, root, comm);
                                            break;
                                        default:
                                            rc = run ? MPI_Gatherv(ob, mine, t, b, counts, displs, t, root, comm)
                                                     : PMPI_Gatherv(ob, mine, t, b, counts, displs, t, root, comm);
                                        }
                                        *(run ? &rc2 : &rc1) = rc;
                                    }
                                    uint64_t after_path = mt_calls(coll_names[c], path);
                                    uint64_t after_any = kcoll_calls_any(c);
                                    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS)
                                        what = "an MPI call returned an error";
                                    else if (memcmp(ref_b, got_b, blen))
                                        what = scatter ? "the root's send buffer differs"
                                                       : "the root's receive buffer differs from PMPI's";
                                    else if (memcmp(ref_o, got_o, olen))
                                        what = scatter ? "the receive buffer differs from PMPI's"
                                                       : "the send buffer differs";
                                    else {
                                        size_t largest = 0;
                                        for (int j = 0; j < p; j++)
                                            if ((size_t)counts[j] * (size_t)tsize > largest)
                                                largest = (size_t)counts[j] * (size_t)tsize;
                                        int expect_kcoll = p > 1 && largest >= (pass ? SMALL : 0) &&
                                                           dt != DT_VECTOR;
                                        int took_kcoll = after_any == before_any + 1;
                                        if (expect_kcoll != took_kcoll)
                                            what = expect_kcoll ? "kcoll did not run"
                                                                : "kcoll ran where the host MPI should";
                                        else if (expect_kcoll && ai > 0 && after_path != before_path + 1)
                                            what = "statistics do not show the forced algorithm";
                                    }
                                    if (what)
                                        mt_fail("%s: %s %s, %s, %d x %s per block, root %d%s, min_bytes %s",
                                                what, coll_names[c], names[shape], algo, count,
                                                dt_names[dt], root, in_place ? " in place" : "",
                                                pass ? "16384" : "0");
                                    else
                                        mt_pass();
                                }
                    }
            }
            kcoll_param_set(coll_env[c], "auto");
        }
    }
    /* invalid arguments on every rank (negative counts) reach the host MPI,
     * which reports the same error class as when called directly */
    {
        MPI_Comm comm;
        int p, cls1, cls2;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        MPI_Comm_size(comm, &p);
        for (int j = 0; j < p && j < MAXP; j++)
            counts[j] = -1, displs[j] = 0;
        for (int c = 0; c < NCOLL; c++) {
            int rc[2];
            for (int run = 0; run < 2; run++) {
                switch (c) {
                case SCATTER:
                    rc[run] = run ? MPI_Scatter(ref_b, -1, MPI_BYTE, ref_o, -1, MPI_BYTE, 0, comm)
                                  : PMPI_Scatter(ref_b, -1, MPI_BYTE, ref_o, -1, MPI_BYTE, 0, comm);
                    break;
                case SCATTERV:
                    rc[run] = run ? MPI_Scatterv(ref_b, counts, displs, MPI_BYTE, ref_o, -1, MPI_BYTE, 0, comm)
                                  : PMPI_Scatterv(ref_b, counts, displs, MPI_BYTE, ref_o, -1, MPI_BYTE, 0, comm);
                    break;
                case GATHER:
                    rc[run] = run ? MPI_Gather(ref_o, -1, MPI_BYTE, ref_b, -1, MPI_BYTE, 0, comm)
                                  : PMPI_Gather(ref_o, -1, MPI_BYTE, ref_b, -1, MPI_BYTE, 0, comm);
                    break;
                default:
                    rc[run] = run ? MPI_Gatherv(ref_o, -1, MPI_BYTE, ref_b, counts, displs, MPI_BYTE, 0, comm)
                                  : PMPI_Gatherv(ref_o, -1, MPI_BYTE, ref_b, counts, displs, MPI_BYTE, 0, comm);
                }
            }
            MPI_Error_class(rc[0], &cls1);
            MPI_Error_class(rc[1], &cls2);
            if (rc[0] == MPI_SUCCESS || cls1 != cls2)
                mt_fail("%s with negative counts: host error class %d, through kcoll %d",
                        coll_names[c], cls1, cls2);
            else
                mt_pass();
        }
        MPI_Comm_free(&comm);
    }

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
    int rc = mt_finish("test_rooted");
    MPI_Finalize();
    return rc;
}
