/* The checks of decisions by measurement (call/adapt.h, docs/adapt.md):
 * for several collectives and sizes, on a fresh communicator each, a loop
 * of blocking calls (with a non-blocking one of the same pattern now and
 * then) whose every result is compared with the expected bytes (after
 * one call that makes the pattern's data "in cache", so that every call
 * of the loop is one pattern: call/call.c's estimate), while the
 * path each call took on this rank (kcoll or the host MPI, from kcoll's
 * statistics) is written down. Then:
 *  - every rank took the same path at every call (all ranks switch at the
 *    same call, whatever each measured; odd ranks use other buffers every
 *    other call, which neither the call layer's memo of repeated calls
 *    nor its shortcut may take for another call);
 *  - with KCOLL_ADAPT=0 every call took one path: the model's choice;
 *  - by default the first calls tried both kinds (the choice and its
 *    runner-up), one check was closed, at the call its counts say (the
 *    runner-up warmed with 128 calls where it is the host MPI, 8 where it
 *    is kcoll's algorithm; a 512 KiB pattern's lead 8 calls, not 64), and
 *    the calls after it took one path;
 *  - with KCOLL_TEST_ADAPT_SLOW making the choice slow on one rank
 *    (30 ms per call), the runner-up (the other kind than the model's
 *    choice) ran every call after the check, on every rank, and the
 *    switch was counted (adapt:switched);
 *  - with a call of the same collective forced to an algorithm
 *    (KCOLL_<FAMILY>_ALGO=hier, Alltoall's pairwise, then back to auto)
 *    after every call of the pattern, as kcoll-bench's columns alternate,
 *    the pattern's check closed all the same, at the same call, and every
 *    forced call ran kcoll's algorithm (a forced family bypasses the
 *    team's decisions and leaves them as they were).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define NCALLS 260
/* the calls of a first check with KCOLL_ADAPT_CALLS=8 (every pattern here
 * is small enough for the runner-up's warm-up): 64 to settle, 8 timed,
 * 128 (the host) or 8 (kcoll) + 8 timed, then the one that closes it; the
 * loop's calls after SETTLED are all past it (a call before the loop may
 * belong to the pattern) */
#define SETTLED 211

typedef struct {
    const char *name; /* statistics row */
    int bytes;        /* per block / vector, as kcoll sizes the call */
} acase_t;

static const acase_t cases[] = {
    {"MPI_Allreduce", 8},     {"MPI_Allreduce", 4096}, {"MPI_Bcast", 8},
    {"MPI_Bcast", 4096},      {"MPI_Allgather", 1024}, {"MPI_Alltoall", 2048},
    {"MPI_Reduce", 65536},    {"MPI_Barrier", 0},      {"MPI_Bcast", 1 << 19},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static uint64_t kcoll_calls(const char *row)
{
    return mt_calls(row, "kcoll:*");
}

/* One blocking call of case c on comm, round `it`; checks its result.
 * Returns 1 if it ran on kcoll on this rank. */
static int run_one(const acase_t *c, MPI_Comm comm, int it, char *a, char *b)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const int n = c->bytes;
    const uint64_t before = kcoll_calls(c->name);
    int bad = 0;
    if (!strcmp(c->name, "MPI_Allreduce") || !strcmp(c->name, "MPI_Reduce")) {
        const int cnt = n / 4;
        int *s = (int *)a, *r = (int *)b;
        for (int i = 0; i < cnt; i++)
            s[i] = (int)(mt_mix((uint64_t)(it * 7919 + i * 31 + me)) & 0xffff);
        memset(r, 0xa5, (size_t)n);
        if (c->name[4] == 'A')
            MPI_Allreduce(s, r, cnt, MPI_INT, MPI_SUM, comm);
        else
            MPI_Reduce(s, r, cnt, MPI_INT, MPI_SUM, p - 1, comm);
        if (c->name[4] == 'A' || me == p - 1)
            for (int i = 0; i < cnt && !bad; i++) {
                int want = 0;
                for (int q = 0; q < p; q++)
                    want += (int)(mt_mix((uint64_t)(it * 7919 + i * 31 + q)) & 0xffff);
                bad = r[i] != want;
            }
    } else if (!strcmp(c->name, "MPI_Bcast")) {
        /* a word of the pattern per 8 bytes (n is a multiple of 8): the
         * large case's half MiB costs a fraction of a millisecond */
        const int root = p - 1;
        for (int i = 0; i < n; i += 8) {
            const uint64_t w = me == root ? mt_mix((uint64_t)(it * 131 + i)) : 0;
            memcpy(a + i, &w, 8);
        }
        MPI_Bcast(a, n, MPI_BYTE, root, comm);
        for (int i = 0; i < n && !bad; i += 8) {
            const uint64_t w = mt_mix((uint64_t)(it * 131 + i));
            bad = memcmp(a + i, &w, 8) != 0;
        }
    } else if (!strcmp(c->name, "MPI_Allgather")) {
        for (int i = 0; i < n; i++)
            a[i] = (char)mt_mix((uint64_t)(it * 131 + i + me * 100003));
        MPI_Allgather(a, n, MPI_BYTE, b, n, MPI_BYTE, comm);
        for (int q = 0; q < p && !bad; q++)
            for (int i = 0; i < n && !bad; i++)
                bad = b[q * n + i] != (char)mt_mix((uint64_t)(it * 131 + i + q * 100003));
    } else if (!strcmp(c->name, "MPI_Alltoall")) {
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++)
                a[q * n + i] = (char)mt_mix((uint64_t)(it * 131 + i + me * 1009 + q * 100003));
        MPI_Alltoall(a, n, MPI_BYTE, b, n, MPI_BYTE, comm);
        for (int q = 0; q < p && !bad; q++)
            for (int i = 0; i < n && !bad; i++)
                bad = b[q * n + i] != (char)mt_mix((uint64_t)(it * 131 + i + q * 1009 + me * 100003));
    } else {
        MPI_Barrier(comm);
    }
    if (bad)
        mt_fail("%s %d bytes call %d: wrong result", c->name, n, it);
    return kcoll_calls(c->name) > before;
}

/* A non-blocking call of the same pattern (Allreduce cases only): right,
 * and not counted in the blocking row's paths. */
static void run_nonblocking(const acase_t *c, MPI_Comm comm, int it, char *a, char *b)
{
    if (strcmp(c->name, "MPI_Allreduce"))
        return;
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const int cnt = c->bytes / 4;
    int *s = (int *)a, *r = (int *)b;
    for (int i = 0; i < cnt; i++)
        s[i] = me + i + it;
    MPI_Request q;
    MPI_Iallreduce(s, r, cnt, MPI_INT, MPI_SUM, comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < cnt; i++)
        if (r[i] != p * (i + it) + p * (p - 1) / 2) {
            mt_fail("%s %d bytes non-blocking call %d: wrong result", c->name, c->bytes, it);
            break;
        }
}

/* The path of each case with KCOLL_ADAPT=0: the model's choice. */
static char model_kind[16];

/* KCOLL_<FAMILY>_ALGO of the family of statistics row `name` set to v */
static void set_algo(const char *name, const char *v)
{
    char param[48];
    int n = snprintf(param, sizeof param, "%s_ALGO", name + 4);
    for (int i = 0; i < n; i++)
        param[i] = (char)toupper((unsigned char)param[i]);
    kcoll_param_set(param, v);
}

/* mode 0: default checks; 1: the choice slow on the last rank; 2: KCOLL_ADAPT=0;
 * 3: a forced call after each call of the pattern */
static void run_case(int ci, int mode)
{
    const acase_t *c = &cases[ci];
    int p, me;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* a fresh team: fresh decisions */
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    char slow[32];
    /* far beyond any noise: 30 ms a call. A host that spins while it
     * waits (MPICH 4.0) takes milliseconds per call on a crowded node
     * (more ranks than CPUs), and one that yields (Open MPI 5.0's Barrier,
     * oversubscribed) was seen at a median of over 3 ms a call at 2 ranks
     * on a busy machine */
    snprintf(slow, sizeof slow, "%d:%d", p - 1, 30000);
    kcoll_param_set("TEST_ADAPT_SLOW", mode == 1 ? slow : "");
    kcoll_param_set("ADAPT", mode == 2 ? "0" : "1");
    const size_t len = (size_t)(c->bytes ? c->bytes : 8) * (size_t)p;
    char *a = malloc(2 * len), *b = malloc(2 * len);
    char path[NCALLS + 1], *all = malloc((size_t)p * (NCALLS + 1));
    const uint64_t checked = mt_calls(c->name, "adapt:checked");
    const uint64_t switched = mt_calls(c->name, "adapt:switched");
    if (strcmp(c->name, "MPI_Barrier")) /* a Barrier is never "in cache": one pattern anyway */
        run_one(c, comm, -1, a, b);
    int closed_at = -1; /* the loop's call that closed the check */
    for (int it = 0; it < NCALLS; it++) {
        /* odd ranks move their buffers every other call, even ranks keep
         * theirs: a repeated call is then remembered (call/call.c, the
         * memo) on some ranks and not on others, which must not split
         * them while a decision is checked */
        const size_t shift = me % 2 && it % 2 ? len : 0;
        path[it] = run_one(c, comm, it, a + shift, b + shift) ? 'k' : 'h';
        if (mode == 3) { /* the same buffers: the pattern's data stays "in cache" */
            set_algo(c->name, strcmp(c->name, "MPI_Alltoall") ? "hier" : "pairwise");
            if (!run_one(c, comm, it, a + shift, b + shift))
                mt_fail("%s %d bytes call %d: the forced call went to the host MPI", c->name,
                        c->bytes, it);
            set_algo(c->name, "auto");
        }
        if (closed_at < 0 && mt_calls(c->name, "adapt:checked") != checked)
            closed_at = it;
        if (it % 5 == 3)
            run_nonblocking(c, comm, it, a, b);
    }
    path[NCALLS] = '\0';
    const uint64_t checked2 = mt_calls(c->name, "adapt:checked");
    const uint64_t switched2 = mt_calls(c->name, "adapt:switched");
    kcoll_param_set("TEST_ADAPT_SLOW", "");
    kcoll_param_set("ADAPT", "1");
    PMPI_Allgather(path, NCALLS + 1, MPI_CHAR, all, NCALLS + 1, MPI_CHAR, MPI_COMM_WORLD);
    const char *what = mode == 1   ? "slow choice"
                       : mode == 2 ? "off"
                       : mode == 3 ? "between forced calls"
                                   : "default";
    int same = 1;
    for (int q = 0; q < p; q++)
        same &= !memcmp(all + (size_t)q * (NCALLS + 1), path, NCALLS + 1);
    if (!same)
        mt_fail("%s %d bytes (%s): ranks took different paths: rank %d %s, rank 0 %s", c->name,
                c->bytes, what, me, path, all);
    else
        mt_pass();
    int settled = 1;
    for (int it = SETTLED; it < NCALLS; it++)
        settled &= path[it] == path[NCALLS - 1];
    if (p > 1 && mode != 2) {
        const int both = memchr(path, 'k', SETTLED) && memchr(path, 'h', SETTLED);
        if (!both || checked2 != checked + 1 || !settled)
            mt_fail("%s %d bytes (%s): no check (paths %s, %llu checks closed)", c->name,
                    c->bytes, what, path, (unsigned long long)(checked2 - checked));
        else
            mt_pass();
    }
    if (p > 1 && mode != 2) {
        /* the check closes at its call L + 2K + W of the pattern (one
         * call before the loop may be the pattern's first): L, the lead,
         * 64 calls, 8 from a quarter MiB; W, the runner-up's warm-up, 128
         * calls where it is the host MPI, 8 where it is kcoll's algorithm
         * (the model's choice the host), 1 for a call of no size (the
         * Barrier) or of more than a quarter MiB */
        const int large = c->bytes > 256 * 1024, lead = large ? 8 : 64;
        const int warm = !c->bytes || large ? 1 : model_kind[ci] == 'h' ? 8 : 128;
        const int at = lead + 2 * 8 + warm;
        if (closed_at != at && closed_at != at - 1)
            mt_fail("%s %d bytes (%s): the check closed at call %d of the loop, not %d "
                    "(the runner-up, %s, warmed with %d calls)",
                    c->name, c->bytes, what, closed_at, at,
                    model_kind[ci] == 'h' ? "kcoll" : "the host", warm);
        else
            mt_pass();
    }
    if (p > 1 && mode == 1) {
        if (path[NCALLS - 1] == model_kind[ci] || switched2 != switched + 1)
            mt_fail("%s %d bytes (slow choice): the runner-up did not take over "
                    "(paths %s, the model's choice %c, %llu switches)",
                    c->name, c->bytes, path, model_kind[ci],
                    (unsigned long long)(switched2 - switched));
        else
            mt_pass();
    }
    if (mode == 2) {
        model_kind[ci] = path[0];
        if (!settled || memchr(path, path[0] == 'k' ? 'h' : 'k', NCALLS) ||
            checked2 != checked)
            mt_fail("%s %d bytes (off): paths changed: %s", c->name, c->bytes, path);
        else
            mt_pass();
    }
    if (me == 0 && getenv("TEST_ADAPT_VERBOSE"))
        printf("%-14s %6d B %-12s %s\n", c->name, c->bytes, what, path);
    free(a);
    free(b);
    free(all);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    kcoll_param_set("ADAPT_CALLS", "8");
    kcoll_param_set("ADAPT_RECHECK", "0");
    static const int modes[] = {2, 1, 0, 3}; /* off first: the model's choices */
    for (int m = 0; m < 4; m++)
        for (int i = 0; i < NCASES; i++)
            run_case(i, modes[m]);
    const int rc = mt_finish("test_adapt");
    MPI_Finalize();
    return rc;
}
