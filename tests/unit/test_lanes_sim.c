/* Several collectives outstanding on one team, in the simulator.
 *
 * A program of many collectives of every family (different algorithms,
 * roots, sizes, in place or not), some blocking and some non-blocking, is
 * simulated as one run: every rank starts them in order, each in its lane,
 * and advances its started ones in a random interleaving; with fewer
 * lanes than collectives, lanes are reused while others are in flight.
 * Each collective's buffers must end exactly as when the same collective
 * is simulated alone (the per-family simulator tests check those), with
 * no race, deadlock or cross-talk between lanes.
 *
 * And the simulator must catch what lanes can get wrong: a rank that
 * reuses a lane while a peer still wants its buffer of the lane's previous
 * collective (cross-talk), and an EXTERN step orders accesses only when
 * every rank of the collective runs it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/coll.h"
#include "sched/ctl.h"
#include "sched/sim.h"

/* One collective of a program. */
typedef struct {
    kcoll_coll_t coll;
    const kcoll_algo_t *algo;
    int root, in_place, blocking;
    size_t n; /* bytes: message, block, or vector */
} prog_t;

static const kcoll_op_t isum = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_INT32, .esize = 4};

/* Buffers of one collective for every rank: [rank][buf]. */
typedef struct {
    uint8_t *b[64][KCOLL_NBUF];
    size_t len[64][KCOLL_NBUF];
} bufs_t;

static uint8_t val(int ci, int r, size_t i)
{
    return (uint8_t)(ci * 31 + r * 7 + (int)(i % 251) + 1);
}

static kcoll_args_t args_of(const prog_t *c, int p, int r)
{
    kcoll_args_t a = {.coll = c->coll, .p = p, .rank = r, .root = c->root, .bytes = c->n};
    kcoll_algo_defaults(c->algo, &a.prm);
    if (c->coll == KCOLL_COLL_ALLGATHER && !strcmp(c->algo->name, "ring_neighbor"))
        a.prm.j = 1;
    a.in_place = c->in_place && (kcoll_coll_family(c->coll) == KCOLL_COLL_ALLGATHER ||
                                 c->coll == KCOLL_COLL_ALLTOALL || r == c->root);
    if (kcoll_coll_family(c->coll) >= KCOLL_COLL_REDUCE) {
        a.esize = 4;
        a.count = c->n / 4;
        a.op = &isum;
        a.in_place = 0;
    }
    return a;
}

/* Give rank r its buffers of collective ci (inputs filled) and build its
 * schedule into sim's addressed collective. */
static int setup(kcoll_sim_t *sim, const prog_t *c, int ci, int p, bufs_t *B)
{
    for (int r = 0; r < p; r++) {
        kcoll_args_t a = args_of(c, p, r);
        size_t sl = 0, rl = 0, n = c->n;
        switch (c->coll) {
        case KCOLL_COLL_BCAST: rl = n; break;
        case KCOLL_COLL_SCATTER: sl = r == c->root ? (size_t)p * n : 0; rl = n; break;
        case KCOLL_COLL_GATHER: sl = n; rl = r == c->root ? (size_t)p * n : 0; break;
        case KCOLL_COLL_ALLGATHER: sl = a.in_place ? 0 : n; rl = (size_t)p * n; break;
        case KCOLL_COLL_ALLTOALL: sl = a.in_place ? 0 : (size_t)p * n; rl = (size_t)p * n; break;
        case KCOLL_COLL_REDUCE: sl = n; rl = r == c->root ? n : 0; break;
        case KCOLL_COLL_ALLREDUCE: sl = rl = n; break;
        case KCOLL_COLL_REDUCE_SCATTER_BLOCK: sl = (size_t)p * n; rl = n; break;
        default: break;
        }
        size_t tl = c->algo->tmp ? c->algo->tmp(&a) : 0;
        size_t lens[KCOLL_NBUF] = {sl, rl, tl};
        for (int b = 0; b < KCOLL_NBUF; b++) {
            B->len[r][b] = lens[b];
            B->b[r][b] = malloc(lens[b] + 1);
            for (size_t i = 0; i < lens[b]; i++)
                B->b[r][b][i] = b == KCOLL_BUF_SEND || (b == KCOLL_BUF_RECV && a.in_place) ||
                                        (c->coll == KCOLL_COLL_BCAST && r == c->root)
                                    ? val(ci, r, i)
                                    : 0xee;
            kcoll_sim_set_buffer(sim, r, (kcoll_buf_t)b, B->b[r][b], lens[b]);
        }
        kcoll_sim_set_op(sim, &isum);
        if (c->algo->build(&a, kcoll_sim_sched(sim, r)) != KCOLL_OK)
            return -1;
    }
    return 0;
}

static void free_bufs(bufs_t *B, int p)
{
    for (int r = 0; r < p; r++)
        for (int b = 0; b < KCOLL_NBUF; b++)
            free(B->b[r][b]);
}

/* A program of ncoll collectives drawn from the seed. */
static void make_program(prog_t *prog, int ncoll, int p, unsigned seed)
{
    static const struct {
        kcoll_coll_t coll;
        const char *algo;
    } menu[] = {
        {KCOLL_COLL_BCAST, "split_rw"},           {KCOLL_COLL_BCAST, "knomial"},
        {KCOLL_COLL_BCAST, "scatter_allgather"},  {KCOLL_COLL_BCAST, "direct_write"},
        {KCOLL_COLL_SCATTER, "throttled_read"},   {KCOLL_COLL_SCATTER, "sequential_write"},
        {KCOLL_COLL_GATHER, "parallel_write"},    {KCOLL_COLL_GATHER, "throttled_write"},
        {KCOLL_COLL_ALLGATHER, "ring_source_read"}, {KCOLL_COLL_ALLGATHER, "bruck"},
        {KCOLL_COLL_ALLGATHER, "ring_neighbor"},  {KCOLL_COLL_ALLTOALL, "pairwise"},
        {KCOLL_COLL_ALLTOALL, "bruck"},           {KCOLL_COLL_ALLTOALL, "pairwise_write"},
        {KCOLL_COLL_BARRIER, "dissemination"},    {KCOLL_COLL_REDUCE, "partitioned"},
        {KCOLL_COLL_ALLREDUCE, "partitioned"},    {KCOLL_COLL_ALLREDUCE, "reduce_bcast"},
        {KCOLL_COLL_REDUCE_SCATTER_BLOCK, "partitioned"},
    };
    const int nmenu = (int)(sizeof menu / sizeof menu[0]);
    unsigned rng = seed * 2654435761u + 7;
    for (int i = 0; i < ncoll; i++) {
        rng = rng * 1103515245u + 12345u;
        unsigned x = rng >> 8;
        int m = (int)(x % (unsigned)nmenu);
        prog[i].coll = menu[m].coll;
        prog[i].algo = kcoll_algo_find(menu[m].coll, menu[m].algo);
        prog[i].root = (int)((x >> 5) % (unsigned)p);
        prog[i].in_place = (x >> 9) & 1;
        prog[i].blocking = ((x >> 10) % 4) == 0;
        prog[i].n = 4 * (1 + (size_t)((x >> 12) % 300));
    }
}

/* Run the program together with `lanes` lanes and compare with each
 * collective alone. Returns 1 if all is well. */
static int run_program(int p, int ncoll, int lanes, unsigned seed)
{
    prog_t *prog = calloc((size_t)ncoll, sizeof *prog);
    bufs_t *together = calloc((size_t)ncoll, sizeof *together);
    make_program(prog, ncoll, p, seed);
    kcoll_sim_t *sim = kcoll_sim_new(p);
    int ok = 1;
    kcoll_sim_set_lanes(sim, lanes);
    for (int ci = 0; ci < ncoll && ok; ci++) {
        if (ci > 0)
            kcoll_sim_add(sim, prog[ci].blocking);
        else
            kcoll_sim_set_blocking(sim, prog[ci].blocking);
        ok = setup(sim, &prog[ci], ci, p, &together[ci]) == 0;
        CHECK(ok, "p=%d seed=%u collective %d (%s %s): builder failed", p, seed, ci,
              kcoll_coll_name(prog[ci].coll), prog[ci].algo->name);
    }
    if (ok && kcoll_sim_run(sim, seed) != KCOLL_OK) {
        CHECK(0, "p=%d lanes=%d seed=%u, %d collectives: %s", p, lanes, seed, ncoll,
              kcoll_sim_error(sim));
        ok = 0;
    }
    for (int ci = 0; ci < ncoll && ok; ci++) {
        /* the same collective alone */
        bufs_t alone;
        kcoll_sim_t *one = kcoll_sim_new(p);
        memset(&alone, 0, sizeof alone);
        if (setup(one, &prog[ci], ci, p, &alone) || kcoll_sim_run(one, 0) != KCOLL_OK) {
            CHECK(0, "collective %d alone: %s", ci, kcoll_sim_error(one));
            ok = 0;
        }
        for (int r = 0; r < p && ok; r++)
            for (int b = 0; b < KCOLL_NBUF - 1 && ok; b++) /* TMP's contents are the algorithm's */
                if (memcmp(alone.b[r][b], together[ci].b[r][b], alone.len[r][b])) {
                    CHECK(0, "p=%d lanes=%d seed=%u collective %d (%s %s root %d%s): rank %d's %s "
                             "differs from the collective alone",
                          p, lanes, seed, ci, kcoll_coll_name(prog[ci].coll), prog[ci].algo->name,
                          prog[ci].root, prog[ci].in_place ? " in place" : "", r,
                          kcoll_buf_name(b));
                    ok = 0;
                }
        free_bufs(&alone, p);
        kcoll_sim_free(one);
    }
    for (int ci = 0; ci < ncoll; ci++)
        free_bufs(&together[ci], p);
    free(together);
    free(prog);
    kcoll_sim_free(sim);
    return ok;
}

/* Cross-talk: with one lane, rank 0 completes collective 0 without waiting
 * for rank 1's read of its buffer (a schedule that returns too early) and
 * reuses the lane for collective 1; rank 1's read must be caught in every
 * interleaving: as a read of an exposure that belongs to collective 1, or
 * as a use after return. */
static void crosstalk(unsigned seed)
{
    uint8_t a0[8] = {1}, b0[8], a1[8] = {2}, b1[8];
    kcoll_sim_t *sim = kcoll_sim_new(2);
    kcoll_sim_set_lanes(sim, 1);
    kcoll_sim_set_blocking(sim, 0);
    kcoll_sim_set_buffer(sim, 0, KCOLL_BUF_SEND, a0, 8);
    kcoll_sim_set_buffer(sim, 1, KCOLL_BUF_RECV, b0, 8);
    kcoll_sched_expose(kcoll_sim_sched(sim, 0), KCOLL_BUF_SEND);
    kcoll_sched_signal(kcoll_sim_sched(sim, 0), KCOLL_FLAG_DATA, 1); /* and returns */
    kcoll_sched_wait(kcoll_sim_sched(sim, 1), 0, KCOLL_FLAG_DATA, 1);
    kcoll_sched_read(kcoll_sim_sched(sim, 1), 0, KCOLL_BUF_SEND, 0, KCOLL_BUF_RECV, 0, 8);
    kcoll_sim_add(sim, 0);
    kcoll_sim_set_buffer(sim, 0, KCOLL_BUF_SEND, a1, 8);
    kcoll_sim_set_buffer(sim, 1, KCOLL_BUF_RECV, b1, 8);
    kcoll_sched_expose(kcoll_sim_sched(sim, 0), KCOLL_BUF_SEND);
    kcoll_sched_wait(kcoll_sim_sched(sim, 0), 1, KCOLL_FLAG_DONE, 1);
    kcoll_sched_read(kcoll_sim_sched(sim, 1), 0, KCOLL_BUF_SEND, 0, KCOLL_BUF_RECV, 0, 8);
    kcoll_sched_signal(kcoll_sim_sched(sim, 1), KCOLL_FLAG_DONE, 1);
    kcoll_status_t st = kcoll_sim_run(sim, seed);
    const char *err = kcoll_sim_error(sim);
    CHECK(st == KCOLL_ERR_SCHED && (strstr(err, "already belongs to collective 1") ||
                                    strstr(err, "use after return")),
          "cross-talk caught (seed %u): %s", seed, err);
    kcoll_sim_free(sim);
}

/* EXTERN orders what comes before it on every rank before what comes after
 * it on any rank, when every rank runs it. Rank 1 reads rank 0's buffer
 * before the EXTERN, rank 0 overwrites it after. */
static int extern_case(int both, unsigned seed, char *why, size_t whylen)
{
    uint8_t s0[8] = {7}, r1[8], t0[8] = {9};
    kcoll_sim_t *sim = kcoll_sim_new(2);
    kcoll_sim_set_buffer(sim, 0, KCOLL_BUF_SEND, s0, 8);
    kcoll_sim_set_buffer(sim, 0, KCOLL_BUF_TMP, t0, 8);
    kcoll_sim_set_buffer(sim, 1, KCOLL_BUF_RECV, r1, 8);
    kcoll_sched_t *a = kcoll_sim_sched(sim, 0), *b = kcoll_sim_sched(sim, 1);
    kcoll_sched_expose(a, KCOLL_BUF_SEND);
    kcoll_sched_extern(a, 0);
    kcoll_sched_copy(a, KCOLL_BUF_SEND, 0, KCOLL_BUF_TMP, 0, 8);
    kcoll_sched_signal(a, KCOLL_FLAG_DONE, 1);
    kcoll_sched_read(b, 0, KCOLL_BUF_SEND, 0, KCOLL_BUF_RECV, 0, 8);
    if (both)
        kcoll_sched_extern(b, 0);
    kcoll_sched_wait(b, 0, KCOLL_FLAG_DONE, 1);
    kcoll_status_t st = kcoll_sim_run(sim, seed);
    snprintf(why, whylen, "%s", kcoll_sim_error(sim));
    kcoll_sim_free(sim);
    return st == KCOLL_OK && r1[0] == 7 ? 0 : st == KCOLL_ERR_SCHED ? 1 : 2;
}

int main(void)
{
    char why[800];
    long programs = 0;
    for (int p = 2; p <= 9; p++) {
        static const int lane_counts[] = {1, 2, 3, KCOLL_LANES};
        for (int li = 0; li < 4; li++)
            for (unsigned seed = 1; seed <= (p <= 4 ? 6u : 2u); seed++) {
                int ncoll = lane_counts[li] == KCOLL_LANES ? KCOLL_LANES + 6 : 12;
                run_program(p, ncoll, lane_counts[li], seed * 17 + (unsigned)p);
                programs++;
            }
    }
    run_program(13, 20, 4, 5);
    run_program(16, KCOLL_LANES + 3, KCOLL_LANES, 6);
    programs += 2;
    for (unsigned seed = 0; seed < 20; seed++)
        crosstalk(seed);
    for (unsigned seed = 0; seed < 20; seed++) {
        int st = extern_case(1, seed, why, sizeof why);
        CHECK(st == 0, "EXTERN on both ranks orders the accesses (seed %u): %s", seed, why);
        st = extern_case(0, seed, why, sizeof why);
        CHECK(st == 1 && (strstr(why, "race") || strstr(why, "deadlock")),
              "EXTERN on one rank only is caught (seed %u): %s", seed, why);
    }
    printf("%ld simulated programs of overlapping collectives\n", programs);
    return check_report("test_lanes_sim");
}
