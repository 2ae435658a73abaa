/* MPI_Alltoall and MPI_Alltoallv through kcoll against the host MPI's
 * PMPI_* calls, byte for byte.
 *
 * Matrix: communicator shapes x algorithm (auto, every one forced, and a
 * parameter no algorithm takes, which must fall back as mpi:bad_algo) x
 * uniform and v (random counts with zeros from every rank to every rank,
 * per-rank shuffled displacements with gaps on both sides) x in place or
 * not x size per block (0, 1, 4095 bytes, 16 KiB + 3, 1 MiB + 5) x
 * datatype (MPI_BYTE, MPI_INT, a non-contiguous vector, which kcoll
 * moves through its datatype map, and a darray, which it does not map:
 * it must fall back and still be right). Both calls start from identical buffers
 * including canary tails and gaps; whole allocations are compared. Small
 * sizes also run with the default KCOLL_MIN_BYTES (host MPI). The
 * statistics must show the path each call took. -q thins the matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static const char *const algos[] = {"auto", "pairwise", "bruck", "pairwise_write", "pairwise:k=2"};
#define NALGOS (int)(sizeof algos / sizeof algos[0])
static const size_t sizes[] = {0, 1, 4095, 16384 + 3, (1 << 20) + 5};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define SMALL 16384
#define CANARY 64

enum { DT_BYTE, DT_INT, DT_VECTOR, DT_DARRAY, NDT };
static const char *const dt_names[NDT] = {"MPI_BYTE", "MPI_INT", "vector(2,1,2 x int)",
                                          "darray(cyclic)"};
static int quick;

/* Elements rank q sends to rank j in case c (in place: symmetric). */
static int vcount(long c, int q, int j, int cnt, int in_place)
{
    if (in_place && j < q) {
        int t = q;
        q = j;
        j = t;
    }
    unsigned h = (unsigned)c * 2654435761u ^ (unsigned)q * 40503u ^ (unsigned)j * 9973u;
    h = h * 1103515245u + 12345u;
    h = (h >> 8) & 0xffffff;
    return h % 4 == 0 ? 0 : (int)(h % (unsigned)(2 * cnt + 1));
}

/* The matrix, thinned where a dimension does not change what is tested:
 * the default KCOLL_MIN_BYTES (host path) only with "auto", MPI_INT only
 * with "auto" on MPI_COMM_WORLD; forced algorithms on MPI_COMM_WORLD and
 * the reversed split (the vector type on MPI_COMM_WORLD only), without
 * the 4095-byte size; -q (MPICH
 * above 3 ranks, where each host collective costs milliseconds): two
 * communicator shapes, forced algorithms at 16 KiB + 3 bytes with
 * MPI_BYTE only. */
static int wanted(int ai, int shape, int si, int pass, int dt, int v, int ip)
{
    if (ai > 0 && (pass || dt == DT_INT || (dt == DT_VECTOR && shape > 0)))
        return 0;
    if (dt == DT_DARRAY && (ai > 0 || shape > 0 || si > 2)) /* a fallback: small, auto */
        return 0;
    if (ai > 0 && (si == 2 || shape == 1 || shape == 2))
        return 0;
    if (dt == DT_INT && shape > 0)
        return 0;
    if (quick && (dt == DT_INT || shape == 1 || shape == 2 || (ip && v && shape)))
        return 0;
    if (quick && ai > 0 && (dt != DT_BYTE || si != 3))
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    quick = argc > 1 && !strcmp(argv[1], "-q");
    MPI_Datatype types[NDT] = {MPI_BYTE, MPI_INT};
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[DT_VECTOR]);
    MPI_Type_commit(&types[DT_VECTOR]);
    types[DT_DARRAY] = mt_unmapped_type();

    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);
    long case_no = 0;

    for (int shape = 0; shape < MT_NSHAPES; shape++) {
        MPI_Comm comm = comms[shape];
        int p, rank;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &rank);
        size_t ps = (size_t)p * sizeof(int);
        int *sc = malloc(ps), *sd = malloc(ps), *rc = malloc(ps), *rd = malloc(ps);
        int *order = malloc(ps);
        for (int ai = 0; ai < NALGOS; ai++) {
            kcoll_param_set("ALLTOALL_ALGO", algos[ai]);
            const int bad = strchr(algos[ai], ':') != NULL;
            char path[64];
            snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algos[ai], ":"), algos[ai]);
            for (int si = 0; si < NSIZES; si++)
                for (int pass = 0; pass < (sizes[si] < SMALL ? 2 : 1); pass++)
                    for (int v = 0; v < 2; v++)
                        for (int ip = 0; ip < 2; ip++)
                            for (int dt = 0; dt < NDT; dt++, case_no++) {
                                const size_t n = sizes[si];
                                if (!wanted(ai, shape, si, pass, dt, v, ip))
                                    continue;
                                if (n >= SMALL && (dt == DT_INT || shape == 1 || shape == 2))
                                    continue;
                                if (n >= (1 << 20) && (ip != v || dt != DT_BYTE || p > 4))
                                    continue;
                                if (bad && (n != 16384 + 3 || dt != DT_BYTE || ip || v))
                                    continue;
                                kcoll_param_set("MIN_BYTES", pass ? "16384" : "0");
                                int tsize;
                                MPI_Aint lb, ext;
                                MPI_Type_size(types[dt], &tsize);
                                MPI_Type_get_extent(types[dt], &lb, &ext);
                                const int cnt = (int)((n + (size_t)tsize - 1) / (size_t)tsize);
                                int send_end = p * cnt, recv_end = p * cnt, largest = 0;
                                /* every fifth v case uniform: the v call runs the uniform schedule */
                                const int uni = v && case_no % 5 == 0;
                                for (int q = 0; q < p; q++) {
                                    sc[q] = v && !uni ? vcount(case_no, rank, q, cnt, ip) : cnt;
                                    rc[q] = v && !uni ? vcount(case_no, q, rank, cnt, ip) : cnt;
                                    sd[q] = rd[q] = q * cnt;
                                }
                                /* the largest block of all ranks decides KCOLL_MIN_BYTES */
                                for (int q = 0; q < p; q++)
                                    for (int j = 0; j < p; j++) {
                                        int c = v && !uni ? vcount(case_no, q, j, cnt, ip) : cnt;
                                        if (c > largest)
                                            largest = c;
                                    }
                                if (v && !uni) {
                                    mt_seed((unsigned)case_no * 31u + (unsigned)rank * 1009u + 5);
                                    send_end = mt_shuffle(p, sc, sd, order);
                                    recv_end = mt_shuffle(p, rc, rd, order);
                                }
                                const size_t rspan = (size_t)recv_end * (size_t)ext + CANARY;
                                const size_t sspan = (size_t)send_end * (size_t)ext + CANARY;
                                char *sbuf = malloc(sspan), *ref = malloc(rspan), *got = malloc(rspan);
                                for (size_t i = 0; i < sspan; i++)
                                    sbuf[i] = (char)(i * 13 + (size_t)rank * 29 + (size_t)case_no);
                                if (ip)
                                    for (size_t i = 0; i < rspan; i++)
                                        ref[i] = (char)(i * 17 + (size_t)rank * 31 + (size_t)case_no);
                                else
                                    memset(ref, 0xc5, rspan);
                                memcpy(got, ref, rspan);
                                const void *sarg = ip ? MPI_IN_PLACE : sbuf;
                                const char *cname = v ? "MPI_Alltoallv" : "MPI_Alltoall";

                                const mt_rows_t before = {mt_calls(cname, path), mt_calls_any(cname, algos, NALGOS),
                                                          mt_calls(cname, "mpi:bad_algo")};
                                int rc1, rc2;
                                if (v) {
                                    rc1 = PMPI_Alltoallv(sarg, sc, sd, types[dt], ref, rc, rd, types[dt], comm);
                                    rc2 = MPI_Alltoallv(sarg, sc, sd, types[dt], got, rc, rd, types[dt], comm);
                                } else {
                                    rc1 = PMPI_Alltoall(sarg, cnt, types[dt], ref, cnt, types[dt], comm);
                                    rc2 = MPI_Alltoall(sarg, cnt, types[dt], got, cnt, types[dt], comm);
                                }
                                const mt_rows_t after = {mt_calls(cname, path), mt_calls_any(cname, algos, NALGOS),
                                                         mt_calls(cname, "mpi:bad_algo")};

                                int expect_kcoll = p > 1 && (size_t)largest * (size_t)tsize >= (pass ? SMALL : 0) &&
                                                   dt != DT_DARRAY && !bad;
                                const char *why = mt_verdict(rc1, rc2, ref, got, rspan, expect_kcoll, ai > 0,
                                                             p > 1 && bad, before, after);
                                if (why)
                                    mt_fail("%s: %s %s, %s, %zu bytes/block of %s%s, min_bytes %s", why,
                                            cname, names[shape], algos[ai], n, dt_names[dt],
                                            ip ? ", in place" : "", pass ? "16384" : "0");
                                else
                                    mt_pass();
                                free(sbuf);
                                free(ref);
                                free(got);
                            }
        }
        free(sc);
        free(sd);
        free(rc);
        free(rd);
        free(order);
    }
    kcoll_param_set("ALLTOALL_ALGO", "auto");
    kcoll_param_set("MIN_BYTES", "16384");
    mt_check_fallbacks("MPI_Alltoall", "MPI_Alltoallv");

    mt_free_shapes(comms);
    MPI_Type_free(&types[DT_VECTOR]);
    MPI_Type_free(&types[DT_DARRAY]);
    int rc = mt_finish("test_alltoall");
    MPI_Finalize();
    return rc;
}
