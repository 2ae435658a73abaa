/* The cache state the call layer estimates (call/call.c): a call that
 * repeats the team's previous call of its collective (same size, same
 * root) with every rank's buffers fitting in the last-level cache is
 * on-cache, anything else off-cache, and a tuning rule with "cache":
 * "hot" decides only the on-cache ones. The tuning file this test writes
 * sends on-cache Alltoalls to the pairwise algorithm and on-cache Bcasts
 * to the host MPI; the model decides every off-cache call (neither of
 * those at 2 ranks and 64 KiB). Results are checked against the host.
 * (The bound by the last-level cache is not exercised: the cache hwloc
 * reports differs between machines, up to hundreds of MiB in a VM.)
 *
 * The same rule checks the call layer's memo of host decisions: repeated
 * host-bound Bcasts, then a changed parameter (KCOLL_MIN_BYTES, a forced
 * algorithm) must move the next identical call to kcoll; a call that no
 * longer repeats its predecessor (another size or root in between) must
 * be decided off-cache again; calls sent to the host by KCOLL_MIN_BYTES
 * must not count as predecessors; alternating datatypes of equal size
 * count every call with its bytes. */
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

/* One Bcast of `count` elements of `type` (`bytes` in all) from root,
 * checked. */
static void bcast(int rank, size_t bytes, int count, MPI_Datatype type, int root, int round)
{
    for (size_t i = 0; i < bytes; i++)
        sbuf[i] = rank == root ? (char)mt_mix(i ^ (uint64_t)round << 32) : 0;
    MPI_Bcast(sbuf, count, type, root, MPI_COMM_WORLD);
    for (size_t i = 0; i < bytes; i++)
        if (sbuf[i] != (char)mt_mix(i ^ (uint64_t)round << 32)) {
            mt_fail("Bcast round %d: byte %zu differs", round, i);
            break;
        }
}

/* Bcasts so far: to the host MPI by a rule or KCOLL_MIN_BYTES (calls and
 * bytes), and on any of kcoll's algorithms. */
typedef struct {
    uint64_t host, bytes, kcoll;
} tally_t;
static tally_t tally(void)
{
    tally_t t = {0, 0, 0};
    uint64_t b;
    if (kcoll_stats_get("MPI_Bcast", "mpi:below_min_bytes", &t.host, &t.bytes))
        t.host = t.bytes = 0;
    if (kcoll_stats_get("MPI_Bcast", "kcoll:*", &t.kcoll, &b))
        t.kcoll = 0;
    return t;
}

/* Since t0: host calls, their bytes and kcoll calls as wanted. */
static void expect(const char *what, tally_t t0, uint64_t host, uint64_t bytes, uint64_t kc)
{
    tally_t t = tally();
    if (t.host - t0.host != host || t.bytes - t0.bytes != bytes || t.kcoll - t0.kcoll != kc)
        mt_fail("%s: %llu Bcasts to the host MPI (%llu bytes), %llu on kcoll; want %llu (%llu "
                "bytes), %llu",
                what, (unsigned long long)(t.host - t0.host),
                (unsigned long long)(t.bytes - t0.bytes), (unsigned long long)(t.kcoll - t0.kcoll),
                (unsigned long long)host, (unsigned long long)bytes, (unsigned long long)kc);
    else
        mt_pass();
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
    /* the cache-state estimate and the rules it picks are under test here;
     * the checks by measurement that may override them are test_adapt's */
    kcoll_param_set("ADAPT", "0");
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
    for (int round = 0; round < 3; round++)
        bcast(rank, small, (int)small, MPI_BYTE, 0, round);
    uint64_t host = mt_calls("MPI_Bcast", "mpi:below_min_bytes") - host0;
    kcoll_predict("MPI_Bcast", "auto", p, small, NULL, &t, pick, sizeof pick);
    if (p > 1 && strcmp(pick, "host") && host != 2)
        mt_fail("3 equal Bcasts: %llu to the host MPI, want 2 (the on-cache ones)",
                (unsigned long long)host);
    else
        mt_pass();

    /* the memo (call/call.c): the model must take both sizes off-cache
     * to kcoll for the counts below to tell a stale decision */
    const size_t half = small / 2;
    char pick2[64] = "";
    kcoll_predict("MPI_Bcast", "auto", p, half, NULL, &t, pick2, sizeof pick2);
    const char *algos = "";
    char list[512] = "";
    if (kcoll_algorithms("MPI_Bcast", p, list, sizeof list) > 0)
        algos = strtok(list, ",");
    if (p > 1 && strcmp(pick, "host") && strcmp(pick2, "host") && algos && *algos) {
        int round = 100;
        tally_t t0 = tally();
        for (int i = 0; i < 4; i++) /* on-cache repeats: the host MPI */
            bcast(rank, small, (int)small, MPI_BYTE, 0, round++);
        expect("4 more equal Bcasts", t0, 4, 4 * small, 0);

        t0 = tally(); /* MIN_BYTES 0: the host is no candidate, the rule does not apply */
        kcoll_param_set("MIN_BYTES", "0");
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++);
        expect("the same Bcast with KCOLL_MIN_BYTES=0", t0, 0, 0, 1);
        t0 = tally();
        kcoll_param_set("MIN_BYTES", "auto");
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++);
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++);
        expect("the same Bcasts with KCOLL_MIN_BYTES=auto again", t0, 2, 2 * small, 0);

        t0 = tally(); /* a forced algorithm comes before the rules */
        const uint64_t forced0 = mt_calls("MPI_Bcast", (snprintf(pick2, sizeof pick2, "kcoll:%s",
                                                                 algos), pick2));
        kcoll_param_set("BCAST_ALGO", algos);
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++);
        const uint64_t forced = mt_calls("MPI_Bcast", pick2) - forced0;
        kcoll_param_set("BCAST_ALGO", "auto");
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++);
        expect("a Bcast with KCOLL_BCAST_ALGO forced, one with auto", t0, 1, small, 1);
        if (forced != 1)
            mt_fail("forced %s: %llu calls on it, want 1", algos, (unsigned long long)forced);

        /* below KCOLL_MIN_BYTES: the host MPI, and not the predecessor of
         * the next call (the previous one, `small`, stays it) */
        t0 = tally();
        kcoll_param_set("MIN_BYTES", "1M");
        for (int i = 0; i < 3; i++)
            bcast(rank, half, (int)half, MPI_BYTE, 0, round++);
        kcoll_param_set("MIN_BYTES", "auto");
        bcast(rank, half, (int)half, MPI_BYTE, 0, round++);
        expect("3 Bcasts below KCOLL_MIN_BYTES, then the same above (off-cache)", t0, 3,
               3 * half, 1);

        /* a repeat that no longer repeats its predecessor: off-cache */
        t0 = tally();
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++); /* off-cache: kcoll */
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++); /* on-cache: host */
        bcast(rank, half, (int)half, MPI_BYTE, 0, round++);   /* off-cache: kcoll */
        bcast(rank, small, (int)small, MPI_BYTE, 0, round++); /* off-cache again: kcoll */
        expect("sizes small, small, half, small", t0, 1, small, 3);

        /* alternating roots: every call off-cache */
        t0 = tally();
        for (int i = 0; i < 4; i++)
            bcast(rank, small, (int)small, MPI_BYTE, 1 - i % 2, round++);
        expect("roots 1, 0, 1, 0", t0, 0, 0, 4);

        /* alternating datatypes of one size: each a repeat, on-cache, counted with its bytes */
        t0 = tally();
        for (int i = 0; i < 4; i++)
            bcast(rank, small, i % 2 ? (int)(small / sizeof(int)) : (int)small,
                  i % 2 ? MPI_INT : MPI_BYTE, 0, round++);
        expect("MPI_BYTE and MPI_INT Bcasts of one size", t0, 4, 4 * small, 0);
    }

    free(sbuf);
    free(rbuf);
    free(ref);
    int rc = mt_finish("test_cache");
    MPI_Finalize();
    return rc;
}
