/* Teams set up in later calls (mpi/later.c, mpi/teams.c): a communicator
 * that kcoll did not see being made (PMPI_Comm_dup, as another tool or a
 * binding would make it), or made by MPI_Comm_idup, whose collectives are
 * non-blocking, gets its team without a blocking call: the set-up runs in
 * the calls that follow, and every rank turns the team on at the same
 * call. Each call's result is compared with what it must be and the path
 * it took (kcoll or the host) written down; every rank's list must be the
 * same, and monotone (the host's, then kcoll's from one call on).
 *  1. a PMPI_Comm_dup of MPI_COMM_WORLD, 300 rounds of a non-blocking
 *     Bcast (an algorithm forced, so that kcoll takes every call it can)
 *     each waited for, with a blocking Barrier now and then and a
 *     non-blocking Allreduce of one int in every tenth round: kcoll runs
 *     the calls from some round on;
 *  2. racing ranks: rank 0 starts 64 Bcasts before it waits for any,
 *     the others wait for each, odd ranks sleeping now and then;
 *  3. MPI_Comm_idup: the same as 1 on its duplicate;
 *  4. a duplicate freed while its set-up is under way (its first call
 *     only), then the other communicators' calls go on: nothing hangs,
 *     and MPI_Finalize ends the set-up;
 *  5. three set-ups under way at once, begun in one order on even ranks
 *     and in the other on odd ones: two duplicates (led by the same
 *     process) and one in reversed rank order (its rank 0 is another
 *     process), while the program's own wildcard receive (MPI_ANY_SOURCE,
 *     MPI_ANY_TAG) waits on the first: each team turns on at one call on
 *     every rank, and the receive gets the program's message, not one of
 *     the set-up's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define N 4096 /* bytes of a Bcast */
/* the rounds before this one make no blocking call */
#define BLOCKING_FROM 150

static unsigned char *path;
static int npath, cap;

static void path_add(int kcoll)
{
    if (npath == cap) {
        cap = cap ? 2 * cap : 1024;
        if (!(path = realloc(path, (size_t)cap))) {
            fprintf(stderr, "test_later: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    path[npath++] = (unsigned char)kcoll;
}

static unsigned char byte_of(int call, int j)
{
    return (unsigned char)mt_mix((uint64_t)call << 20 ^ (uint64_t)j);
}

static void fill(unsigned char *b, int call, int root_me)
{
    for (int j = 0; j < N; j++)
        b[j] = root_me ? byte_of(call, j) : 0;
}

static int check(const unsigned char *b, int call)
{
    for (int j = 0; j < N; j++)
        if (b[j] != byte_of(call, j))
            return 0;
    return 1;
}

/* Ibcasts handed to the host MPI so far. A call's path is read from this
 * count: a call the host does is counted (mpi:<reason>) in the call, one
 * kcoll runs (kcoll:<algorithm>) when it starts running, which for a
 * non-blocking call queued behind a team's 16 outstanding ones is in a
 * later call. */
static uint64_t host_calls(void)
{
    return mt_calls("MPI_Ibcast", "mpi:*");
}

/* Rounds of non-blocking calls on comm (part 1 and 3): the first round
 * from which kcoll ran the Bcasts on this rank, or -1. */
static int rounds(MPI_Comm comm, const char *what, int *call, int fresh)
{
    int me, p, first = -1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    unsigned char *b = malloc(N);
    for (int i = 0; i < 300; i++) {
        const int c = (*call)++, root = i % p;
        fill(b, c, me == root);
        const uint64_t h0 = host_calls();
        MPI_Request q;
        MPI_Ibcast(b, N, MPI_BYTE, root, comm, &q);
        const int kc = host_calls() == h0;
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        path_add(kc);
        if (kc && first < 0)
            first = i;
        if (!kc && first >= 0)
            mt_fail("%s: round %d went to the host after kcoll ran round %d", what, i, first);
        if (!check(b, c))
            mt_fail("%s: round %d's Bcast differs", what, i);
        else
            mt_pass();
        if (i % 10 == 5) {
            int v = me + i, sum = 0;
            MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            if (sum != p * (p - 1) / 2 + p * i)
                mt_fail("%s: round %d's Allreduce gave %d", what, i, sum);
        }
        if (i >= BLOCKING_FROM && i % 25 == 0) /* a blocking call sets a team up at once */
            MPI_Barrier(comm);
    }
    free(b);
    /* a fresh communicator: kcoll's from a round before the first blocking call */
    if (fresh && (first < 0 || first >= BLOCKING_FROM))
        mt_fail("%s: kcoll ran no Bcast before the first blocking call (from round %d)", what,
                first);
    if (!fresh && first != 0)
        mt_fail("%s: a communicator with a team: kcoll ran the Bcasts from round %d", what, first);
    return first;
}

/* Part 5: rounds of an Ibcast on each of three fresh communicators: two
 * duplicates (the first with the program's wildcard receive waiting on
 * it; both set-ups led by the same process) and one in reversed rank
 * order, begun in the order 0, 1, 2 on even ranks and 2, 1, 0 on odd
 * ones. */
#define NCOMM 3
static void at_once(int *call)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm cm[NCOMM];
    PMPI_Comm_dup(MPI_COMM_WORLD, &cm[0]);
    PMPI_Comm_split(MPI_COMM_WORLD, 0, p - me, &cm[1]);
    PMPI_Comm_dup(MPI_COMM_WORLD, &cm[2]);
    int got = -1, first[NCOMM] = {-1, -1, -1};
    MPI_Request wild, q[NCOMM];
    MPI_Status st[NCOMM];
    MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cm[0], &wild);
    unsigned char *b = malloc(NCOMM * (size_t)N);
    for (int i = 0; i < 300; i++) {
        const int c0 = *call;
        *call += NCOMM;
        for (int k = 0; k < NCOMM; k++) {
            const int w = me % 2 ? NCOMM - 1 - k : k; /* which communicator now */
            int r;
            MPI_Comm_rank(cm[w], &r);
            fill(b + (size_t)w * N, c0 + w, r == i % p);
            const uint64_t h0 = host_calls();
            MPI_Ibcast(b + (size_t)w * N, N, MPI_BYTE, i % p, cm[w], &q[w]);
            const int kc = host_calls() == h0;
            if (kc && first[w] < 0)
                first[w] = i;
            if (!kc && first[w] >= 0)
                mt_fail("at once: round %d on communicator %d went to the host after kcoll ran "
                        "round %d",
                        i, w, first[w]);
        }
        /* in one order on every rank, for the list of paths */
        for (int w = 0; w < NCOMM; w++)
            path_add(first[w] >= 0 && first[w] <= i);
        MPI_Waitall(NCOMM, q, st);
        for (int w = 0; w < NCOMM; w++)
            if (!check(b + (size_t)w * N, c0 + w))
                mt_fail("at once: round %d's Bcast on communicator %d differs", i, w);
            else
                mt_pass();
    }
    for (int w = 0; w < NCOMM; w++)
        if (first[w] < 0)
            mt_fail("at once: kcoll ran no Bcast on communicator %d", w);
    const int token = 1000 + me;
    MPI_Send(&token, 1, MPI_INT, (me + 1) % p, 7, cm[0]);
    MPI_Wait(&wild, MPI_STATUS_IGNORE);
    if (got != 1000 + (me + p - 1) % p)
        mt_fail("at once: the program's wildcard receive got %d, not %d", got,
                1000 + (me + p - 1) % p);
    free(b);
    for (int w = 0; w < NCOMM; w++)
        MPI_Comm_free(&cm[w]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p, call = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    kcoll_param_set("BCAST_ALGO", "split_rw");
    if (p > 1) {
        /* 1 */
        MPI_Comm a;
        PMPI_Comm_dup(MPI_COMM_WORLD, &a);
        const int first = rounds(a, "PMPI_Comm_dup", &call, 1);
        if (mt_calls("MPI_Ibcast", "mpi:no_team") == 0 && first > 0)
            mt_fail("the host's Bcasts before the team were not counted as mpi:no_team");
        /* 2: racing, on another duplicate */
        MPI_Comm b;
        PMPI_Comm_dup(MPI_COMM_WORLD, &b);
        unsigned char *bufs = malloc((size_t)64 * N);
        MPI_Request q[64];
        MPI_Status sts[64];
        for (int i = 0; i < 64; i++) {
            const int c = call + i;
            fill(bufs + (size_t)i * N, c, me == 0);
            const uint64_t h0 = host_calls();
            MPI_Ibcast(bufs + (size_t)i * N, N, MPI_BYTE, 0, b, &q[i]);
            path_add(host_calls() == h0);
            if (me != 0) {
                if (me % 2 && i % 8 == 0)
                    usleep(2000);
                MPI_Wait(&q[i], MPI_STATUS_IGNORE);
            }
        }
        MPI_Waitall(64, q, sts);
        for (int i = 0; i < 64; i++)
            if (!check(bufs + (size_t)i * N, call + i))
                mt_fail("racing: Bcast %d differs on rank %d", i, me);
        call += 64;
        free(bufs);
        rounds(b, "PMPI_Comm_dup, after racing", &call, 1);
        /* 3 */
        MPI_Comm c;
        MPI_Request rq;
        MPI_Comm_idup(MPI_COMM_WORLD, &c, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        rounds(c, "MPI_Comm_idup", &call, 1);
        /* 4: freed while its set-up is under way */
        MPI_Comm d;
        PMPI_Comm_dup(MPI_COMM_WORLD, &d);
        unsigned char *one = malloc(N);
        fill(one, call, me == 0);
        MPI_Ibcast(one, N, MPI_BYTE, 0, d, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (!check(one, call++))
            mt_fail("the freed communicator's Bcast differs");
        free(one);
        MPI_Comm_free(&d);
        rounds(a, "PMPI_Comm_dup, again", &call, 0);
        at_once(&call);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
        MPI_Comm_free(&c);
    }
    /* one path per call on every rank */
    mt_paths_alike(path, npath, MPI_COMM_WORLD, "test_later");
    free(path);
    const int rc = mt_finish("test_later");
    MPI_Finalize();
    return rc;
}
