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

    return check_report("test_sim");
}
