/* The simulator must accept a correct schedule and catch broken ones:
 * a missing copy, a deadlock, a read that is not ordered after the write
 * of the data it reads (also where the owner exposed the buffer twice), a peer access after the owner returned, a flag
 * that goes down, an access out of bounds, a buffer never exposed. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sched/sim.h"

#define N 64

typedef struct {
    kcoll_sim_t *sim;
    uint8_t buf[4][N];
} fixture_t;

static void fixture_init(fixture_t *f, int p)
{
    f->sim = kcoll_sim_new(p);
    for (int r = 0; r < p; r++) {
        memset(f->buf[r], r == 0 ? 0xab : 0, N);
        kcoll_sim_set_buffer(f->sim, r, KCOLL_BUF_RECV, f->buf[r], N);
    }
}

/* A correct 2-rank broadcast by reading: root exposes, waits DONE. */
static void good_bcast(kcoll_sim_t *sim)
{
    kcoll_sched_t *s0 = kcoll_sim_sched(sim, 0), *s1 = kcoll_sim_sched(sim, 1);
    kcoll_sched_expose(s0, KCOLL_BUF_RECV);
    kcoll_sched_wait(s0, 1, KCOLL_FLAG_DONE, 1);
    kcoll_sched_read(s1, 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N);
    kcoll_sched_signal(s1, KCOLL_FLAG_DONE, 1);
}

static int expect_finding(fixture_t *f, const char *needle, unsigned seed)
{
    kcoll_status_t st = kcoll_sim_run(f->sim, seed);
    int ok = st == KCOLL_ERR_SCHED && strstr(kcoll_sim_error(f->sim), needle) != NULL;
    if (!ok)
        fprintf(stderr, "expected a finding with '%s', got status %d: %s\n", needle, st,
                kcoll_sim_error(f->sim));
    kcoll_sim_free(f->sim);
    return ok;
}

int main(void)
{
    fixture_t f;

    /* correct, under several interleavings */
    for (unsigned seed = 0; seed < 8; seed++) {
        fixture_init(&f, 2);
        good_bcast(f.sim);
        kcoll_status_t st = kcoll_sim_run(f.sim, seed);
        CHECK(st == KCOLL_OK, "seed %u: %s", seed, kcoll_sim_error(f.sim));
        CHECK(memcmp(f.buf[0], f.buf[1], N) == 0, "data not delivered");
        const uint16_t *w = kcoll_sim_writes(f.sim, 1, KCOLL_BUF_RECV);
        int once = 1;
        for (int i = 0; i < N; i++)
            once &= w[i] == 1;
        CHECK(once, "each byte written exactly once");
        CHECK(kcoll_sim_writes(f.sim, 0, KCOLL_BUF_RECV)[0] == 0, "root written");
        kcoll_sim_free(f.sim);
    }

    /* missing copy: rank 1 reads only half. The run succeeds; the write
     * counts show the hole, which is what the algorithm tests check. */
    fixture_init(&f, 2);
    {
        kcoll_sched_t *s0 = kcoll_sim_sched(f.sim, 0), *s1 = kcoll_sim_sched(f.sim, 1);
        kcoll_sched_expose(s0, KCOLL_BUF_RECV);
        kcoll_sched_wait(s0, 1, KCOLL_FLAG_DONE, 1);
        kcoll_sched_read(s1, 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N / 2);
        kcoll_sched_signal(s1, KCOLL_FLAG_DONE, 1);
        CHECK(kcoll_sim_run(f.sim, 0) == KCOLL_OK, "%s", kcoll_sim_error(f.sim));
        const uint16_t *w = kcoll_sim_writes(f.sim, 1, KCOLL_BUF_RECV);
        CHECK(w[N / 2 - 1] == 1 && w[N / 2] == 0, "missing copy visible in write counts");
        CHECK(memcmp(f.buf[0], f.buf[1], N) != 0, "missing copy visible in data");
        kcoll_sim_free(f.sim);
    }

    /* deadlock: both wait for each other first */
    fixture_init(&f, 2);
    kcoll_sched_wait(kcoll_sim_sched(f.sim, 0), 1, KCOLL_FLAG_DATA, 1);
    kcoll_sched_signal(kcoll_sim_sched(f.sim, 0), KCOLL_FLAG_DATA, 1);
    kcoll_sched_wait(kcoll_sim_sched(f.sim, 1), 0, KCOLL_FLAG_DATA, 1);
    kcoll_sched_signal(kcoll_sim_sched(f.sim, 1), KCOLL_FLAG_DATA, 1);
    CHECK(expect_finding(&f, "deadlock", 0), "deadlock");

    /* a read from a buffer its owner never exposes blocks forever */
    fixture_init(&f, 2);
    kcoll_sched_read(kcoll_sim_sched(f.sim, 1), 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N);
    CHECK(expect_finding(&f, "to expose RECV", 0), "never exposed");

    /* race: rank 1 forwards what it got from 0, but rank 2 reads rank 1's
     * buffer without waiting for rank 1's DATA flag. Found under every
     * interleaving, including those where rank 2 happens to read late. */
    for (unsigned seed = 0; seed < 6; seed++) {
        fixture_init(&f, 3);
        kcoll_sched_t *s0 = kcoll_sim_sched(f.sim, 0), *s1 = kcoll_sim_sched(f.sim, 1),
                      *s2 = kcoll_sim_sched(f.sim, 2);
        kcoll_sched_expose(s0, KCOLL_BUF_RECV);
        kcoll_sched_wait(s0, 1, KCOLL_FLAG_DONE, 1);
        kcoll_sched_expose(s1, KCOLL_BUF_RECV);
        kcoll_sched_read(s1, 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N);
        kcoll_sched_signal(s1, KCOLL_FLAG_DATA, 1);
        kcoll_sched_signal(s1, KCOLL_FLAG_DONE, 1);
        kcoll_sched_wait(s1, 2, KCOLL_FLAG_DONE, 1);
        kcoll_sched_read(s2, 1, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N); /* no WAIT */
        kcoll_sched_signal(s2, KCOLL_FLAG_DONE, 1);
        CHECK(expect_finding(&f, "race", seed), "race, seed %u", seed);
    }

    /* race behind a second exposure: rank 0 exposes RECV, changes it,
     * exposes it again (a composed schedule's next phase), and rank 1
     * reads it without waiting. The executor lets the read happen from
     * the first exposure on, so it races with the change even when the
     * run happens to order it after the second. */
    for (unsigned seed = 0; seed < 6; seed++) {
        fixture_init(&f, 2);
        kcoll_sched_t *s0 = kcoll_sim_sched(f.sim, 0), *s1 = kcoll_sim_sched(f.sim, 1);
        kcoll_sched_expose(s0, KCOLL_BUF_RECV);
        kcoll_sched_copy(s0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, N / 2, N / 2);
        kcoll_sched_expose(s0, KCOLL_BUF_RECV);
        kcoll_sched_wait(s0, 1, KCOLL_FLAG_DONE, 1);
        kcoll_sched_read(s1, 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N); /* no WAIT */
        kcoll_sched_signal(s1, KCOLL_FLAG_DONE, 1);
        CHECK(expect_finding(&f, "race", seed), "race behind a second exposure, seed %u", seed);
    }

    /* use after return: the root does not wait for the reader */
    for (unsigned seed = 0; seed < 6; seed++) {
        fixture_init(&f, 2);
        kcoll_sched_expose(kcoll_sim_sched(f.sim, 0), KCOLL_BUF_RECV);
        kcoll_sched_read(kcoll_sim_sched(f.sim, 1), 0, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 0, N);
        CHECK(expect_finding(&f, "use after return", seed), "use after return, seed %u", seed);
    }

    /* flags only grow */
    fixture_init(&f, 2);
    kcoll_sched_signal(kcoll_sim_sched(f.sim, 0), KCOLL_FLAG_DATA, 2);
    kcoll_sched_signal(kcoll_sim_sched(f.sim, 0), KCOLL_FLAG_DATA, 1);
    CHECK(expect_finding(&f, "flags only grow", 0), "decreasing flag");

    /* out of bounds */
    fixture_init(&f, 2);
    good_bcast(f.sim);
    kcoll_sched_read(kcoll_sim_sched(f.sim, 1), 0, KCOLL_BUF_RECV, N - 4, KCOLL_BUF_RECV, 0, 8);
    CHECK(expect_finding(&f, "out of bounds", 0), "out of bounds");

    /* host collectives travel with their phase: appended after a schedule
     * that already owns one, the phase's host collective must be named by
     * the second descriptor, whose buffers follow this rank's map, while
     * the phase's EXTERN of the collective's operation 0 (an agreement)
     * keeps its number */
    {
        kcoll_sched_t a, ph;
        kcoll_sched_init(&a);
        kcoll_sched_init(&ph);
        kcoll_xcoll_t x = {.coll = KCOLL_XC_BCAST, .sbuf = KCOLL_BUF_RECV,
                           .rbuf = KCOLL_BUF_RECV, .group = 3, .root = 1, .len = 16, .esize = 1};
        kcoll_sched_xcoll(&a, &x);
        x.coll = KCOLL_XC_ALLREDUCE;
        x.sbuf = KCOLL_BUF_SEND;
        x.soff = 4;
        x.root = 0;
        kcoll_sched_extern(&ph, 0);
        kcoll_sched_xcoll(&ph, &x);
        kcoll_bufmap_t m;
        kcoll_bufmap_init(&m, 0);
        m.buf[KCOLL_BUF_SEND] = KCOLL_BUF_TMP;
        m.off[KCOLL_BUF_SEND] = 100;
        int peer_of[1] = {0};
        kcoll_sched_append_mapped(&a, &ph, peer_of, 0, KCOLL_PHASE_VALUES, &m, 1, 0);
        CHECK(a.err == KCOLL_OK && a.nxc == 2 && a.n == 3, "descriptors carried");
        CHECK(a.steps[1].kind == KCOLL_STEP_EXTERN && a.steps[1].flag == 0 &&
                  a.steps[1].value == 0,
              "the operation's EXTERN keeps its number");
        CHECK(a.steps[2].kind == KCOLL_STEP_EXTERN && a.steps[2].flag == KCOLL_EXTERN_XCOLL &&
                  a.steps[2].value == 1,
              "host collective's EXTERN renumbered");
        CHECK(a.xc[1].coll == KCOLL_XC_ALLREDUCE && a.xc[1].sbuf == KCOLL_BUF_TMP &&
                  a.xc[1].soff == 104 && a.xc[1].rbuf == KCOLL_BUF_RECV && a.xc[1].group == 3,
              "descriptor mapped");
        kcoll_sched_t b;
        kcoll_sched_init(&b);
        kcoll_sched_append(&b, &a);
        kcoll_sched_append(&b, &ph);
        CHECK(b.err == KCOLL_OK && b.n == 5 && b.nxc == 3 && b.steps[3].value == 0 &&
                  b.steps[4].value == 2,
              "plain append renumbers the same way");
        x.len = 3;
        x.esize = 2;
        kcoll_sched_xcoll(&b, &x);
        CHECK(b.err == KCOLL_ERR_ARG, "a length not a whole number of elements is refused");
        kcoll_sched_free(&a);
        kcoll_sched_free(&b);
        kcoll_sched_free(&ph);
    }
    /* a phase's values lie in its range: base + v for v below `values`,
     * and one at the range's end fails the append (the pieces of a lanes
     * layout give each phase a range of its own: cluster/lanes.c) */
    for (uint32_t v = 6; v <= 8; v++) {
        kcoll_sched_t a, ph;
        kcoll_sched_init(&a);
        kcoll_sched_init(&ph);
        kcoll_sched_signal(&ph, KCOLL_FLAG_DATA, 1);
        kcoll_sched_wait(&ph, 0, KCOLL_FLAG_DATA, v);
        int peer_of[1] = {3};
        kcoll_sched_append_mapped(&a, &ph, peer_of, 40, 8, NULL, 1, 0);
        if (v < 8)
            CHECK(a.err == KCOLL_OK && a.n == 2 && a.steps[0].value == 41 &&
                      a.steps[1].value == 40 + v && a.steps[1].peer == 3,
                  "a phase of 8 values at base 40: value %u becomes %u", v, 40 + v);
        else
            CHECK(a.err == KCOLL_ERR_ARG, "a phase of 8 values refuses value 8");
        kcoll_sched_free(&a);
        kcoll_sched_free(&ph);
    }

    return check_report("test_sim");
}
