/* The host streak (call/call.c, docs/adapt.md): after an agreement sends
 * a blocking MPI_Gatherv, MPI_Scatterv or MPI_Alltoallv to the host MPI,
 * the collective's next calls on the communicator with the same root go
 * to the host without agreeing, 1, 2, 4 ... up to KCOLL_HOST_STREAK
 * calls. Every rank must take the same path at every call, or they would
 * wait for each other. Each call's result is compared byte for byte with
 * what it must be (gaps between blocks untouched), and the path it took on
 * this rank (kcoll or the host, from the statistics) written down; at the
 * end every rank's list of paths must be the same.
 *  1. lengths: 8-byte blocks below KCOLL_MIN_BYTES on a fresh
 *     communicator: the calls the streak took (path "host_streak") are
 *     exactly the rule's, for each of the three collectives;
 *  2. growth: after them, blocks above KCOLL_MIN_BYTES with an algorithm
 *     forced: exactly the calls left of the streak go to the host, then
 *     every call runs in kcoll;
 *  3. roots: a Gatherv whose root changes every call agrees every call
 *     (no streak); one whose root changes in the middle of a streak (its
 *     calls taken through the entry point's kept streak, call/shortcut.h)
 *     agrees at that call; a streak of a communicator that is freed does
 *     not take the first call of the next one made (MPI may give it the
 *     same handle); a communicator that some ranks alone free in the
 *     middle of another's streak changes nothing of that streak;
 *  4. parameters: a parameter changed during a streak is seen at the very
 *     next call (KCOLL_MIN_BYTES lowered: it runs in kcoll);
 *  5. a mix: random sizes per rank (zeros too), roots, the three
 *     collectives, blocking and non-blocking, on a duplicate of
 *     MPI_COMM_WORLD and an odd/even split, and where the MPI has them the
 *     large-count forms on even ranks against the int forms on odd ones
 *     (MPI matches them), with the model's decisions and their checks by
 *     measurement (KCOLL_ADAPT=1): no hang, every result right, one path
 *     per call on every rank;
 *  6. (run before 5) kcoll disabled at run time (KCOLL_DISABLE=1): every
 *     call goes to the host, counted as disabled with this rank's own
 *     bytes (the entry point hands them over undescribed, asking each
 *     communicator's size: pmpi/run.c; calls on a duplicate of the world
 *     and an odd/even split in turn), no streak; KCOLL_DISABLE=0 is seen
 *     at the next call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { GATHERV, SCATTERV, ALLTOALLV, NKINDS };
static const char *const row_of[NKINDS] = {"MPI_Gatherv", "MPI_Scatterv", "MPI_Alltoallv"};
static const char *const irow_of[NKINDS] = {"MPI_Igatherv", "MPI_Iscatterv", "MPI_Ialltoallv"};
static const char *const algo_param[NKINDS] = {"GATHER_ALGO", "SCATTER_ALGO", "ALLTOALL_ALGO"};
static const char *const algo_of[NKINDS] = {"parallel_write", "parallel_read", "pairwise_write"};

#define MAXP 64
#define GAP 3
#define SENTINEL 0xA5

/* the paths this rank took, one byte per call (1: kcoll), to compare
 * among the ranks of the communicator: list 0 for the calls every rank
 * makes, list 1 for those on the odd/even split */
static unsigned char *paths[2];
static int npaths[2], cap_paths[2];

static void path_add(int list, int kcoll)
{
    if (npaths[list] == cap_paths[list]) {
        cap_paths[list] = cap_paths[list] ? 2 * cap_paths[list] : 1024;
        paths[list] = realloc(paths[list], (size_t)cap_paths[list]);
        if (!paths[list]) {
            fprintf(stderr, "test_streak: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    paths[list][npaths[list]++] = (unsigned char)kcoll;
}

static unsigned char byte_of(int call, int from, int to, size_t j)
{
    return (unsigned char)mt_mix(((uint64_t)call << 40) ^ ((uint64_t)from << 28) ^
                                 ((uint64_t)to << 16) ^ j);
}

/* Block lengths of one call: len[from * p + to] bytes go from rank `from`
 * to rank `to` (rooted: only the root's row or column is used). */
typedef struct {
    int kind, root, nb, wide, p;
    int call;
    int len[MAXP * MAXP];
} vcall_t;

/* One call of v on comm, its result checked and its path added to list
 * `list`; returns 1 if it ran in kcoll on this rank. */
static int run(const vcall_t *v, MPI_Comm comm, int list)
{
    const int p = v->p;
    int me;
    MPI_Comm_rank(comm, &me);
    int scounts[MAXP], sdispls[MAXP], rcounts[MAXP], rdispls[MAXP];
    size_t send_end = 0, recv_end = 0;
    for (int q = 0; q < p; q++) {
        int s = 0, r = 0;
        if (v->kind == ALLTOALLV) {
            s = v->len[me * p + q];
            r = v->len[q * p + me];
        } else if (v->kind == GATHERV) {
            s = q == v->root ? v->len[me * p + v->root] : 0;
            r = me == v->root ? v->len[q * p + v->root] : 0;
        } else {
            s = me == v->root ? v->len[v->root * p + q] : 0;
            r = q == v->root ? v->len[v->root * p + me] : 0;
        }
        scounts[q] = s;
        sdispls[q] = (int)send_end + GAP;
        send_end += (size_t)s + GAP;
        rcounts[q] = r;
        rdispls[q] = (int)recv_end + GAP;
        recv_end += (size_t)r + GAP;
    }
    char *sb = malloc(send_end + 1), *rb = malloc(recv_end + 1);
    if (!sb || !rb) {
        fprintf(stderr, "test_streak: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sb, SENTINEL, send_end + 1);
    memset(rb, SENTINEL, recv_end + 1);
    for (int q = 0; q < p; q++)
        for (int j = 0; j < scounts[q]; j++)
            sb[sdispls[q] + j] = (char)byte_of(v->call, me, q, (size_t)j);
    const char *row = v->nb ? irow_of[v->kind] : row_of[v->kind];
    const uint64_t k0 = mt_calls(row, "kcoll:*");
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
#ifdef KCOLL_HAVE_LARGE_COUNT
    if (v->wide && !v->nb) {
        MPI_Count sc[MAXP], rcn[MAXP];
        MPI_Aint sd[MAXP], rd[MAXP];
        for (int q = 0; q < p; q++) {
            sc[q] = scounts[q];
            sd[q] = sdispls[q];
            rcn[q] = rcounts[q];
            rd[q] = rdispls[q];
        }
        if (v->kind == GATHERV)
            rc = MPI_Gatherv_c(sb + sdispls[v->root], sc[v->root], MPI_BYTE, rb, rcn, rd,
                               MPI_BYTE, v->root, comm);
        else if (v->kind == SCATTERV)
            rc = MPI_Scatterv_c(sb, sc, sd, MPI_BYTE, rb + rdispls[v->root], rcn[v->root],
                                MPI_BYTE, v->root, comm);
        else
            rc = MPI_Alltoallv_c(sb, sc, sd, MPI_BYTE, rb, rcn, rd, MPI_BYTE, comm);
    } else
#endif
    if (v->kind == GATHERV) {
        if (v->nb)
            rc = MPI_Igatherv(sb + sdispls[v->root], scounts[v->root], MPI_BYTE, rb, rcounts,
                              rdispls, MPI_BYTE, v->root, comm, &req);
        else
            rc = MPI_Gatherv(sb + sdispls[v->root], scounts[v->root], MPI_BYTE, rb, rcounts,
                             rdispls, MPI_BYTE, v->root, comm);
    } else if (v->kind == SCATTERV) {
        if (v->nb)
            rc = MPI_Iscatterv(sb, scounts, sdispls, MPI_BYTE, rb + rdispls[v->root],
                               rcounts[v->root], MPI_BYTE, v->root, comm, &req);
        else
            rc = MPI_Scatterv(sb, scounts, sdispls, MPI_BYTE, rb + rdispls[v->root],
                              rcounts[v->root], MPI_BYTE, v->root, comm);
    } else {
        if (v->nb)
            rc = MPI_Ialltoallv(sb, scounts, sdispls, MPI_BYTE, rb, rcounts, rdispls, MPI_BYTE,
                                comm, &req);
        else
            rc = MPI_Alltoallv(sb, scounts, sdispls, MPI_BYTE, rb, rcounts, rdispls, MPI_BYTE,
                               comm);
    }
    if (rc == MPI_SUCCESS && v->nb)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* what this rank must have received: the blocks at their places, the
     * gaps (and the root's buffer of a rooted call's non-roots) untouched */
    int bad = rc != MPI_SUCCESS;
    size_t at = 0;
    for (int q = 0; q < p && !bad; q++) {
        for (; at < (size_t)rdispls[q]; at++)
            bad |= (unsigned char)rb[at] != SENTINEL;
        /* block q came from rank q (the scatter's from the root) to me */
        const int from = v->kind == SCATTERV ? v->root : q;
        for (int j = 0; j < rcounts[q]; j++, at++)
            bad |= (unsigned char)rb[at] != byte_of(v->call, from, me, (size_t)j);
    }
    for (; at <= recv_end && !bad; at++)
        bad |= (unsigned char)rb[at] != SENTINEL;
    if (bad)
        mt_fail("%s call %d (root %d%s): rc %d or wrong bytes on rank %d", row, v->call, v->root,
                v->wide ? ", large-count" : "", rc, me);
    else
        mt_pass();
    free(sb);
    free(rb);
    const int kcoll = mt_calls(row, "kcoll:*") != k0;
    path_add(list, kcoll);
    return kcoll;
}

/* Every rank of comm gets `bytes` to or from every other (rooted: to or
 * from the root). */
static void uniform(vcall_t *v, int kind, int p, int root, int bytes, int call)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->p = p;
    v->root = root;
    v->call = call;
    for (int i = 0; i < p * p; i++)
        v->len[i] = bytes;
}

/* The rule: how many of n calls a streak takes (every call would go to
 * the host), and what is left of the streak after them. */
static int rule_taken(int n, int cap, int *left_after)
{
    int left = 0, next = 0, taken = 0;
    for (int i = 0; i < n; i++) {
        if (left) {
            left--;
            taken++;
            continue;
        }
        const int k = next ? next : 1;
        left = k < cap ? k : cap;
        next = 2 * left < cap ? 2 * left : cap;
    }
    *left_after = left;
    return taken;
}

#define SMALL 8
#define LARGE (128 * 1024)
#define NSMALL 300

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, me, call = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (p > MAXP) {
        if (!me)
            fprintf(stderr, "test_streak: at most %d ranks\n", MAXP);
        MPI_Finalize();
        return 2;
    }
    const char *cap_text = kcoll_param_get("HOST_STREAK");
    const int cap = cap_text ? atoi(cap_text) : 0;
    static vcall_t v;

    /* 1-4: the model aside: below KCOLL_MIN_BYTES the host, above it the
     * forced algorithm, whatever this machine's tuning says */
    kcoll_param_set("ADAPT", "0");
    kcoll_param_set("MIN_BYTES", "65536");
    for (int k = 0; k < NKINDS; k++)
        kcoll_param_set(algo_param[k], algo_of[k]);
    for (int k = 0; k < NKINDS && p > 1 && cap > 0; k++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        const uint64_t s0 = mt_calls(row_of[k], "host_streak");
        uint64_t n0 = 0, b0 = 0, n1 = 0, b1 = 0;
        kcoll_stats_get(row_of[k], "host_streak", &n0, &b0);
        int left, kc = 0;
        const int want = rule_taken(NSMALL, cap, &left);
        for (int i = 0; i < NSMALL; i++) {
            uniform(&v, k, p, 0, SMALL, call++);
            kc += run(&v, comm, 0);
        }
        const uint64_t got = mt_calls(row_of[k], "host_streak") - s0;
        if (kc || got != (uint64_t)want)
            mt_fail("%s: %d of %d small calls in kcoll, the streak took %llu (the rule: %d)",
                    row_of[k], kc, NSMALL, (unsigned long long)got, want);
        /* each call the streak took counted with this rank's own bytes: the
         * root's (rank 0) and an all-to-all's p blocks, else one */
        kcoll_stats_get(row_of[k], "host_streak", &n1, &b1);
        const uint64_t per = (uint64_t)SMALL * (k == ALLTOALLV || me == 0 ? (uint64_t)p : 1);
        if (b1 - b0 != (n1 - n0) * per)
            mt_fail("%s: the streak's %llu calls counted %llu bytes on rank %d (%llu each)",
                    row_of[k], (unsigned long long)(n1 - n0), (unsigned long long)(b1 - b0), me,
                    (unsigned long long)per);
        /* 2: growth: the calls left go to the host, then kcoll */
        int host_large = 0;
        for (int i = 0; i < cap + 2; i++) {
            uniform(&v, k, p, 0, LARGE, call++);
            host_large += !run(&v, comm, 0);
        }
        if (host_large != left)
            mt_fail("%s: %d large calls on the host after the small ones (the streak had %d "
                    "left)",
                    row_of[k], host_large, left);
        MPI_Comm_free(&comm);
    }
    if (p > 1 && cap > 0) {
        /* 3: a root that changes every call: no streak */
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        const uint64_t s0 = mt_calls("MPI_Gatherv", "host_streak");
        for (int i = 0; i < 100; i++) {
            uniform(&v, GATHERV, p, i % p, SMALL, call++);
            run(&v, comm, 0);
        }
        if (mt_calls("MPI_Gatherv", "host_streak") != s0)
            mt_fail("MPI_Gatherv: a streak took calls whose root changed every call");
        MPI_Comm_free(&comm);
        /* ... and in the middle of a streak of root 0, then a communicator
         * freed with its streak's calls left */
        for (int step = 0; step < 2; step++) {
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            int n = 3 * cap, left = 0;
            while (rule_taken(n, cap, &left), left < 2)
                n++;
            for (int i = 0; i < n; i++) {
                uniform(&v, GATHERV, p, 0, SMALL, call++);
                run(&v, comm, 0);
            }
            if (step == 1) {
                MPI_Comm_free(&comm);
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            }
            const uint64_t s1 = mt_calls("MPI_Gatherv", "host_streak");
            uniform(&v, GATHERV, p, step == 0 ? 1 : 0, SMALL, call++);
            run(&v, comm, 0);
            if (mt_calls("MPI_Gatherv", "host_streak") != s1)
                mt_fail("MPI_Gatherv: a streak took %s (%d of its calls were left)",
                        step == 0 ? "a call of another root" :
                                    "the first call of a communicator made after its own was "
                                    "freed",
                        left);
            MPI_Comm_free(&comm);
        }
        /* ... and a communicator of ranks 0 and 1 alone made and freed in
         * the middle of a streak on another one (a record's going sets
         * the kept streaks aside, at 3 ranks and more not on every rank):
         * the streak goes on alike on every rank, its calls left taken as
         * the rule says */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        {
            int n = 3 * cap, left = 0, after = 0;
            while (rule_taken(n, cap, &left), left < 2)
                n++;
            const uint64_t s1 = mt_calls("MPI_Gatherv", "host_streak");
            for (int i = 0; i < n; i++) {
                uniform(&v, GATHERV, p, 0, SMALL, call++);
                run(&v, comm, 0);
            }
            MPI_Comm pair;
            MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, 0, &pair);
            if (pair != MPI_COMM_NULL)
                MPI_Comm_free(&pair);
            for (int i = 0; i < left; i++) {
                uniform(&v, GATHERV, p, 0, SMALL, call++);
                run(&v, comm, 0);
            }
            const uint64_t got = mt_calls("MPI_Gatherv", "host_streak") - s1;
            const int want = rule_taken(n + left, cap, &after);
            if (got != (uint64_t)want)
                mt_fail("MPI_Gatherv: the streak took %llu of %d calls with a communicator of "
                        "ranks 0 and 1 freed after %d of them (the rule: %d)",
                        (unsigned long long)got, n + left, n, want);
        }
        MPI_Comm_free(&comm);
        /* 4: a parameter changed during a streak: the next call sees it */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        int n = 3 * cap, left = 0;
        while (rule_taken(n, cap, &left), left == 0)
            n++;
        for (int i = 0; i < n; i++) {
            uniform(&v, GATHERV, p, 0, SMALL, call++);
            run(&v, comm, 0);
        }
        kcoll_param_set("MIN_BYTES", "0");
        uniform(&v, GATHERV, p, 0, SMALL, call++);
        if (!run(&v, comm, 0))
            mt_fail("MPI_Gatherv: the call after KCOLL_MIN_BYTES was lowered went to the host "
                    "(%d calls of the streak were left)",
                    left);
        kcoll_param_set("MIN_BYTES", "65536");
        MPI_Comm_free(&comm);
    }

    /* 6: kcoll disabled at run time: every call (small and large, each
     * collective) goes to the host, right, counted as disabled with this
     * rank's own bytes and not as a streak; the first call after
     * KCOLL_DISABLE=0 runs in kcoll again */
    for (int k = 0; k < NKINDS && p > 1; k++) {
        /* (every third call on an odd/even split: the entry point asks
         * each communicator's size, it keeps none) */
        MPI_Comm comm, half;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
        int hp, hme;
        MPI_Comm_size(half, &hp);
        MPI_Comm_rank(half, &hme);
        uint64_t n0 = 0, b0 = 0, n1 = 0, b1 = 0;
        kcoll_stats_get(row_of[k], "mpi:disabled", &n0, &b0);
        const uint64_t s0 = mt_calls(row_of[k], "host_streak");
        kcoll_param_set("DISABLE", "1");
        int kc = 0;
        uint64_t want = 0;
        for (int i = 0; i < 40; i++) {
            const int bytes = i % 2 ? LARGE : SMALL, split = i % 3 == 2;
            const int cp = split ? hp : p, cme = split ? hme : me;
            uniform(&v, k, cp, 0, bytes, call++);
            kc += run(&v, split ? half : comm, split);
            want += (uint64_t)bytes * (k == ALLTOALLV || cme == 0 ? (uint64_t)cp : 1);
        }
        kcoll_stats_get(row_of[k], "mpi:disabled", &n1, &b1);
        if (kc || n1 - n0 != 40 || b1 - b0 != want)
            mt_fail("%s with kcoll disabled: %d of 40 calls in kcoll, %llu counted as disabled "
                    "with %llu bytes on rank %d (want 40, %llu)",
                    row_of[k], kc, (unsigned long long)(n1 - n0),
                    (unsigned long long)(b1 - b0), me, (unsigned long long)want);
        if (mt_calls(row_of[k], "host_streak") != s0)
            mt_fail("%s: a host streak took calls while kcoll was disabled", row_of[k]);
        kcoll_param_set("DISABLE", "0");
        uniform(&v, k, p, 0, LARGE, call++);
        if (!run(&v, comm, 0))
            mt_fail("%s: the call after KCOLL_DISABLE=0 went to the host", row_of[k]);
        MPI_Comm_free(&comm);
        MPI_Comm_free(&half);
    }

    /* 5: the mix, with the model's decisions and their checks */
    kcoll_param_set("ADAPT", "1");
    kcoll_param_set("MIN_BYTES", "auto");
    for (int k = 0; k < NKINDS; k++)
        kcoll_param_set(algo_param[k], "auto");
    MPI_Comm comms[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &comms[1]);
    mt_seed(11);
    for (int i = 0; i < 1500; i++) {
        /* every rank draws the same numbers: one call of every rank */
        const int c = mt_rnd() % 8 == 0; /* now and then the split */
        MPI_Comm comm = comms[c];
        int cp;
        MPI_Comm_size(comm, &cp);
        /* runs of one kind of call, so that streaks form and break */
        static int kind = GATHERV, root = 0, base = SMALL;
        if (mt_rnd() % 16 == 0)
            kind = (int)(mt_rnd() % NKINDS);
        if (mt_rnd() % 24 == 0)
            root = (int)(mt_rnd() % MAXP);
        if (mt_rnd() % 32 == 0)
            base = (int[]){0, 8, 64, 2048, 40000}[mt_rnd() % 5];
        memset(&v, 0, sizeof v);
        v.kind = kind;
        v.p = cp;
        v.root = root % cp;
        v.call = call++;
        v.nb = mt_rnd() % 6 == 0;
        /* per pair: zeros too; as many numbers whichever communicator, so
         * that the ranks of both halves of the split draw alike after it */
        for (int q = 0; q < p * p; q++) {
            const int zero = mt_rnd() % 5 == 0, add = (int)(mt_rnd() % 16);
            if (q < cp * cp)
                v.len[q] = zero ? 0 : base + add;
        }
#ifdef KCOLL_HAVE_LARGE_COUNT
        int wme;
        MPI_Comm_rank(MPI_COMM_WORLD, &wme);
        v.wide = wme % 2 == 0;
#endif
        run(&v, comm, c);
    }
    /* one path per call on every rank of each communicator */
    mt_paths_alike(paths[0], npaths[0], MPI_COMM_WORLD, "every rank's calls");
    mt_paths_alike(paths[1], npaths[1], comms[1], "the split's calls");
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    if (p > 1 && mt_calls("MPI_Gatherv", "host_streak") +
                         mt_calls("MPI_Scatterv", "host_streak") +
                         mt_calls("MPI_Alltoallv", "host_streak") ==
                     0)
        mt_fail("no streak took a call");
    free(paths[0]);
    free(paths[1]);
    const int rc = mt_finish("test_streak");
    MPI_Finalize();
    return rc;
}
