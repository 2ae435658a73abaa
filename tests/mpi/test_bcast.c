/* MPI_Bcast through kcoll against the host MPI's PMPI_Bcast, byte for byte.
 *
 * Matrix: communicator shapes (world, dup, odd/even split, reversed split)
 * x algorithm (auto and every one forced) x size (0, 1, 4095, 16 KiB + 3,
 * 1 MiB + 5, 8 MiB) x every root x datatype (MPI_BYTE, MPI_INT,
 * MPI_DOUBLE, a contiguous derived type, a non-contiguous vector, which
 * kcoll moves through its datatype map, the vector on odd ranks and
 * twice the ints on even ones (one signature, two layouts), and a darray,
 * which kcoll does not map: it must fall back and still be right). Small
 * sizes run twice: with
 * KCOLL_MIN_BYTES=0 (kcoll does them) and with the default (host MPI).
 * Both calls start from identical buffers, including the gaps of the
 * vector type and a canary tail, and the whole allocation is compared.
 * The statistics must show the path each call took. The largest sizes use
 * fewer datatypes and shapes (and roots beyond 4 ranks) to keep the
 * oversubscribed run short. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static const char *const algos[] = {"auto", "direct_read", "direct_write", "knomial:k=2",
                                    "knomial:k=3", "scatter_allgather", "split_rw", "hier",
                                    "hier:chunk=4"};
#define NALGOS (int)(sizeof algos / sizeof algos[0])
static const size_t sizes[] = {0, 1, 4095, 16384 + 3, (1 << 20) + 5, 8 << 20};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define SMALL 16384
#define CANARY 64

enum { DT_BYTE, DT_INT, DT_DOUBLE, DT_CONTIG, DT_VECTOR, DT_MIXED, DT_DARRAY, NDT };
static const char *const dt_names[NDT] = {"MPI_BYTE", "MPI_INT", "MPI_DOUBLE", "contig(3 x int)",
                                          "vector(2,1,2 x int)", "vector or 2 x int",
                                          "darray(cyclic)"};

static uint64_t kcoll_calls_any(void)
{
    uint64_t sum = 0;
    for (int a = 1; a < NALGOS; a++) {
        char path[64], name[48];
        snprintf(name, sizeof name, "%s", algos[a]);
        char *colon = strchr(name, ':');
        if (colon)
            *colon = '\0';
        snprintf(path, sizeof path, "kcoll:%s", name);
        if (a > 1 && !strncmp(algos[a], algos[a - 1], strlen(name)))
            continue; /* knomial listed twice */
        sum += mt_calls("MPI_Bcast", path);
    }
    return sum;
}

/* -q (quick): roots 0 and p-1 and three datatypes only, and the tree's
 * 4 KiB segments left out; --only NAME leaves out every forced algorithm
 * but NAME (the topology-levels runs: auto and hier). For MPICH beyond a
 * few ranks: its own PMPI_Bcast busy-polls, which costs milliseconds per
 * call when ranks outnumber cores. */
static int quick;

static int wanted(int si, int dt, int root, int p, int shape)
{
    size_t n = sizes[si];
    if (quick && ((root != 0 && root != p - 1) || dt == DT_INT || dt == DT_DOUBLE))
        return 0;
    /* the mixed layouts and the fallback: one size each in the thin matrix */
    if (quick && ((dt == DT_MIXED && n != 16387) || (dt == DT_DARRAY && n != 1)))
        return 0;
    /* beyond 4 ranks the MiB sizes at four roots (the first, second,
     * middle and last rank: the algorithms' rotations by the root are
     * the simulator's, at every root up to 64 ranks) */
    if (n >= (1u << 20) && p > 4 && root > 1 && root != p / 2 && root != p - 1)
        return 0;
    if (n >= (8u << 20))
        return dt == DT_BYTE && (shape == 0 || shape == 3);
    if (n >= (1u << 20))
        return dt == DT_BYTE || dt == DT_DOUBLE || dt == DT_VECTOR || dt == DT_MIXED;
    return dt != DT_DARRAY || n < 4096;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* -q, and --only NAME: "auto" and the algorithms called NAME only */
    const mt_opts_t opts = mt_options(argc, argv);
    const char *only = opts.only;
    quick = opts.quick;
    MPI_Datatype types[NDT] = {MPI_BYTE, MPI_INT, MPI_DOUBLE};
    MPI_Type_contiguous(3, MPI_INT, &types[DT_CONTIG]);
    MPI_Type_commit(&types[DT_CONTIG]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[DT_VECTOR]);
    MPI_Type_commit(&types[DT_VECTOR]);
    types[DT_MIXED] = types[DT_VECTOR];
    types[DT_DARRAY] = mt_unmapped_type();

    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);
    char *ref = malloc((8u << 20) * 2 + 4 * CANARY);
    char *got = malloc((8u << 20) * 2 + 4 * CANARY);
    long case_no = 0;

    for (int shape = 0; shape < MT_NSHAPES; shape++) {
        MPI_Comm comm = comms[shape];
        int p, rank;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &rank);
        for (int ai = 0; ai < NALGOS; ai++) {
            const size_t nlen = strcspn(algos[ai], ":");
            if (!mt_algo_wanted(&opts, algos[ai], ai, NULL))
                continue;
            /* the tree's 4 KiB segments: in the full matrix only */
            if (quick && !only && strchr(algos[ai], ':') && !strncmp(algos[ai], "hier", nlen))
                continue;
            kcoll_param_set("BCAST_ALGO", algos[ai]);
            char path[64];
            snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algos[ai], ":"), algos[ai]);
            for (int si = 0; si < NSIZES; si++)
                for (int pass = 0; pass < (sizes[si] < SMALL ? 2 : 1); pass++) {
                    kcoll_param_set("MIN_BYTES", pass ? "16384" : "0");
                    for (int dt = 0; dt < NDT; dt++)
                        for (int root = 0; root < p; root++, case_no++) {
                            if (!wanted(si, dt, root, p, shape))
                                continue;
                            int tsize;
                            MPI_Aint lb, extent;
                            MPI_Type_size(types[dt], &tsize);
                            MPI_Type_get_extent(types[dt], &lb, &extent);
                            int count = (int)((sizes[si] + (size_t)tsize - 1) / (size_t)tsize);
                            /* the mixed case: even ranks the same bytes as 2 x count ints */
                            MPI_Datatype type = types[dt];
                            int mycount = count;
                            if (dt == DT_MIXED && rank % 2 == 0) {
                                type = MPI_INT;
                                mycount = 2 * count;
                                extent = 2 * (MPI_Aint)sizeof(int); /* bytes per count */
                            }
                            size_t bytes = (size_t)count * (size_t)tsize;
                            size_t span = (size_t)count * (size_t)extent + CANARY;
                            size_t misalign = dt == DT_BYTE ? (size_t)(case_no % 4) : 0;
                            for (size_t i = 0; i < span; i++)
                                ref[misalign + i] = rank == root
                                    ? (char)(i * 31 + (size_t)case_no * 7 + 3)
                                    : (char)0xc5;
                            memcpy(got + misalign, ref + misalign, span);

                            const mt_rows_t before = {mt_calls("MPI_Bcast", path), kcoll_calls_any(), 0};
                            int rc1 = PMPI_Bcast(ref + misalign, mycount, type, root, comm);
                            int rc2 = MPI_Bcast(got + misalign, mycount, type, root, comm);
                            const mt_rows_t after = {mt_calls("MPI_Bcast", path), kcoll_calls_any(), 0};

                            int expect_kcoll = p > 1 && bytes >= (pass ? SMALL : 0) &&
                                               (dt != DT_DARRAY || bytes == 0);
                            const char *why = mt_verdict(rc1, rc2, ref + misalign, got + misalign, span,
                                                         expect_kcoll, ai > 0, 0, before, after);
                            if (why)
                                mt_fail("%s: %s, %s, %zu bytes of %s, root %d, min_bytes %s", why,
                                        names[shape], algos[ai], bytes, dt_names[dt], root,
                                        pass ? "16384" : "0");
                            else
                                mt_pass();
                        }
                }
        }
    }
    /* the reasons for falling back are counted */
    mt_check_fallbacks("MPI_Bcast", "MPI_Bcast");

    free(ref);
    free(got);
    mt_free_shapes(comms);
    MPI_Type_free(&types[DT_CONTIG]);
    MPI_Type_free(&types[DT_VECTOR]);
    MPI_Type_free(&types[DT_DARRAY]);
    int rc = mt_finish("test_bcast");
    MPI_Finalize();
    return rc;
}
