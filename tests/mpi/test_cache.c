/* The cache state the call layer estimates (call/call.c): a call that
 * repeats the team's previous call of its collective (same size, same
 * root) with every rank's buffers fitting in the last-level cache is
 * on-cache, anything else off-cache, and a tuning rule with "cache":
 * "hot" decides only the on-cache ones. The tuning file this test writes
 * sends on-cache Alltoalls to the pairwise algorithm and on-cache Bcasts
 * to the host MPI; the model decides every off-cache call (neither of
 * those at 2 ranks and 64 KiB). Results are checked against the host.
 * (The bound by the last-level cache is not exercised: the cache hwloc
 * reports differs between machines, up to hundreds of MiB in a VM.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "kcoll.h"
#include "mpitest.h"

static char *sbuf, *rbuf, *ref;

/* One Alltoall of `block` bytes per rank pair, checked against the host's. */
static void alltoall(int p, int rank, size_t block, int round)
{
    for (size_t i = 0; i < block * (size_t)p; i++)
        sbuf[i] = (char)mt_mix((uint64_t)rank << 40 ^ (uint64_t)round << 32 ^ i);
    PMPI_Alltoall(sbuf, (int)block, MPI_BYTE, ref, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    memset(rbuf, 0x5a, block * (size_t)p);
    MPI_Alltoall(sbuf, (int)block, MPI_BYTE, rbuf, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    if (memcmp(rbuf, ref, block * (size_t)p))
        mt_fail("Alltoall of %zu bytes, round %d: differs from the host's", block, round);
}

/* kcoll's Alltoalls on pairwise and on any algorithm since *last. */
static void counts(uint64_t *pairwise, uint64_t *any)
{
    static const char *const algos[] = {"", "pairwise", "pairwise_write", "bruck"};
    *pairwise = mt_calls("MPI_Alltoall", "kcoll:pairwise");
    *any = mt_calls_any("MPI_Alltoall", algos, 4);
}

int main(int argc, char **argv)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/kcoll-test-cache-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fputs("{\"kcoll_tuning\": 1, \"rules\": [\n"
          "  {\"collective\": \"MPI_Alltoall\", \"cache\": \"hot\", \"algorithm\": \"pairwise\"},\n"
          "  {\"collective\": \"MPI_Bcast\", \"cache\": \"hot\", \"algorithm\": \"host\"}]}\n",
          f);
    fclose(f);
    setenv("KCOLL_TUNING", path, 1);
    setenv("KCOLL_ALLTOALL_ALGO", "auto", 1);
    setenv("KCOLL_BCAST_ALGO", "auto", 1);
    MPI_Init(&argc, &argv);
    unlink(path);
    int p, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const size_t small = 64 << 10;
    sbuf = malloc(small * (size_t)p);
    rbuf = malloc(small * (size_t)p);
    ref = malloc(small * (size_t)p);
    uint64_t pw0, any0, pw, any;
    char pick[64] = "";
    double t;
    /* the model's off-cache pick must not be pairwise for this test to
     * tell the rule's choice from it */
    kcoll_predict("MPI_Alltoall", "auto", p, small, NULL, &t, pick, sizeof pick);
    const int distinct = p > 1 && strcmp(pick, "pairwise") && strcmp(pick, "host");

    /* a run of equal calls: the first is off-cache, the others on-cache */
    counts(&pw0, &any0);
    for (int round = 0; round < 3; round++)
        alltoall(p, rank, small, round);
    counts(&pw, &any);
    if (distinct && (any - any0 != 3 || pw - pw0 != 2))
        mt_fail("3 equal Alltoalls: %llu on kcoll, %llu of them pairwise; want 3 and 2 (the "
                "first off-cache: the model's %s)",
                (unsigned long long)(any - any0), (unsigned long long)(pw - pw0), pick);
    else
        mt_pass();

    /* sizes that change every call: every call off-cache */
    counts(&pw0, &any0);
    for (int round = 0; round < 4; round++)
        alltoall(p, rank, round % 2 ? small : small / 2, round);
    counts(&pw, &any);
    if (distinct && (any - any0 != 4 || pw != pw0))
        mt_fail("alternating sizes: %llu pairwise calls, want none (off-cache)",
                (unsigned long long)(pw - pw0));
    else
        mt_pass();

    /* Bcast: a hot rule sends the repeats to the host MPI (counted as the
     * model's below_min_bytes) */
    uint64_t host0 = mt_calls("MPI_Bcast", "mpi:below_min_bytes");
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < small; i++)
            sbuf[i] = rank == 0 ? (char)mt_mix(i ^ (uint64_t)round << 32) : 0;
        MPI_Bcast(sbuf, (int)small, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (size_t i = 0; i < small; i++)
            if (sbuf[i] != (char)mt_mix(i ^ (uint64_t)round << 32)) {
                mt_fail("Bcast round %d: byte %zu differs", round, i);
                break;
            }
    }
    uint64_t host = mt_calls("MPI_Bcast", "mpi:below_min_bytes") - host0;
    kcoll_predict("MPI_Bcast", "auto", p, small, NULL, &t, pick, sizeof pick);
    if (p > 1 && strcmp(pick, "host") && host != 2)
        mt_fail("3 equal Bcasts: %llu to the host MPI, want 2 (the on-cache ones)",
                (unsigned long long)host);
    else
        mt_pass();

    free(sbuf);
    free(rbuf);
    free(ref);
    int rc = mt_finish("test_cache");
    MPI_Finalize();
    return rc;
}
