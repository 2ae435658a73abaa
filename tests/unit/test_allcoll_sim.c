/* Every Allgather(v), Alltoall(v) and Barrier algorithm, checked by the
 * simulator for p = 1..64: uniform blocks (0, 1, odd and larger sizes) and
 * v-layouts with random counts (zeros included) at shuffled displacements
 * with gaps, in place and not. The run must be free of deadlocks, races
 * and use-after-return; every receive block must hold the right bytes,
 * written exactly once (in place: the own block never), and the gaps
 * between blocks must stay untouched; the Allgathers along the levels
 * (hier, ring_levels) also on 2- and 3-level shapes with uneven groups. ring_neighbor runs with every legal
 * j of small p (and a few for large p); its illegal j must be refused.
 * The dissemination barrier also runs for real on forked processes. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "algo_param.h"
#include "check.h"
#include "levels_fixture.h"
#include "coll/coll.h"
#include "forkteam.h"
#include "sched/exec.h"
#include "sched/sim.h"
#include "xfer/cma.h"

static unsigned rng_state = 12345;
static unsigned rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) & 0xffffff;
}

static uint8_t val(int from, int to, size_t i)
{
    return (uint8_t)(from * 37 + to * 11 + i * 7 + 1);
}

/* A rank's blocked buffer: p blocks of cnt[j] bytes at shuffled offsets
 * with gaps; returns the buffer length. */
static size_t shuffle_layout(int p, const size_t *cnt, size_t *displ)
{
    int *order = malloc((size_t)p * sizeof *order);
    for (int j = 0; j < p; j++)
        order[j] = j;
    for (int j = p - 1; j > 0; j--) {
        int k = (int)(rnd() % (unsigned)(j + 1)), t = order[j];
        order[j] = order[k];
        order[k] = t;
    }
    size_t off = rnd() % 5;
    for (int j = 0; j < p; j++) {
        displ[order[j]] = off;
        off += cnt[order[j]] + rnd() % 3;
    }
    free(order);
    return off + 1;
}

typedef struct {
    int p;
    int v;
    size_t n;            /* uniform block bytes */
    size_t *sc, *sd, *rc, *rd; /* v: [q*p + j] */
    kcoll_layout_t *lay;
    size_t *slen, *rlen;
} layout_t;

static void layout_make(layout_t *L, kcoll_coll_t fam, int p, int v, size_t n, int in_place)
{
    L->p = p;
    L->v = v;
    L->n = n;
    size_t pp = (size_t)p * (size_t)p;
    L->sc = calloc(pp, sizeof(size_t));
    L->sd = calloc(pp, sizeof(size_t));
    L->rc = calloc(pp, sizeof(size_t));
    L->rd = calloc(pp, sizeof(size_t));
    L->lay = calloc((size_t)p, sizeof *L->lay);
    L->slen = calloc((size_t)p, sizeof(size_t));
    L->rlen = calloc((size_t)p, sizeof(size_t));
    if (!v) {
        for (int q = 0; q < p; q++) {
            L->slen[q] = fam == KCOLL_COLL_ALLGATHER ? n : n * (size_t)p;
            L->rlen[q] = n * (size_t)p;
        }
        return;
    }
    if (fam == KCOLL_COLL_ALLGATHER) {
        for (int j = 0; j < p; j++) {
            size_t c = rnd() % 4 == 0 ? 0 : rnd() % (2 * n + 1);
            for (int q = 0; q < p; q++)
                L->rc[q * p + j] = c;
        }
        for (int q = 0; q < p; q++) {
            L->rlen[q] = shuffle_layout(p, &L->rc[q * p], &L->rd[q * p]);
            L->slen[q] = L->rc[q * p + q] + 1;
            L->lay[q] = (kcoll_layout_t){NULL, NULL, &L->rc[q * p], &L->rd[q * p]};
        }
        return;
    }
    /* in place, send counts are the receive counts: symmetric */
    for (int q = 0; q < p; q++)
        for (int j = 0; j < p; j++) {
            size_t c = rnd() % 4 == 0 ? 0 : rnd() % (2 * n + 1);
            if (in_place && j < q)
                c = L->sc[j * p + q];
            L->sc[q * p + j] = c;         /* q sends c to j */
            L->rc[j * p + q] = c;         /* j receives c from q */
        }
    for (int q = 0; q < p; q++) {
        L->rlen[q] = shuffle_layout(p, &L->rc[q * p], &L->rd[q * p]);
        if (in_place) {
            memcpy(&L->sd[q * p], &L->rd[q * p], (size_t)p * sizeof(size_t));
            memcpy(&L->sc[q * p], &L->rc[q * p], (size_t)p * sizeof(size_t));
            L->slen[q] = 0;
        } else {
            L->slen[q] = shuffle_layout(p, &L->sc[q * p], &L->sd[q * p]);
        }
        L->lay[q] = (kcoll_layout_t){&L->sc[q * p], &L->sd[q * p], &L->rc[q * p], &L->rd[q * p]};
    }
}

static void layout_free(layout_t *L)
{
    free(L->sc);
    free(L->sd);
    free(L->rc);
    free(L->rd);
    free(L->lay);
    free(L->slen);
    free(L->rlen);
}

static int check_one(const kcoll_algo_t *algo, int k, int p, int v, size_t n, int in_place,
                     unsigned seed, const kcoll_levels_t *lv, int shape)
{
    const kcoll_coll_t fam = algo->family;
    layout_t L;
    layout_make(&L, fam, p, v, n, in_place);
    kcoll_sim_t *sim = kcoll_sim_new(p);
    uint8_t **sb = calloc((size_t)p, sizeof *sb), **rb = calloc((size_t)p, sizeof *rb);
    uint8_t **tb = calloc((size_t)p, sizeof *tb);
    int ok = 1;
    char what[160];
    snprintf(what, sizeof what, "%s %s k=%d p=%d %s n=%zu%s shape %d seed=%u",
             kcoll_coll_name(fam), algo->name, k, p, v ? "v" : "uniform", n,
             in_place ? " in place" : "", shape, seed);

    for (int r = 0; r < p; r++) {
        kcoll_args_t a = {.coll = fam, .p = p, .rank = r, .bytes = n, .lay = v ? L.lay : NULL,
                          .in_place = in_place, .prm = with_param(algo, k), .lv = lv};
        sb[r] = malloc(L.slen[r] + 1);
        rb[r] = malloc(L.rlen[r] + 1);
        memset(rb[r], 0xee, L.rlen[r]);
        memset(sb[r], 0xdd, L.slen[r]);
        size_t tlen = 0;
        for (int j = 0; j < p; j++) {
            size_t off, len;
            if (fam == KCOLL_COLL_ALLGATHER) {
                if (j != r)
                    continue;
                len = kcoll_rblock(&a, r, r, &off);
                for (size_t i = 0; i < len; i++)
                    (in_place ? rb[r] + off : sb[r])[i] = val(r, 0, i);
            } else {
                len = in_place ? kcoll_rblock(&a, r, j, &off) : kcoll_sblock(&a, r, j, &off);
                for (size_t i = 0; i < len; i++)
                    (in_place ? rb[r] : sb[r])[off + i] = val(r, j, i);
            }
        }
        tlen = algo->tmp ? algo->tmp(&a) : 0; /* what the call layer gives it */
        tb[r] = malloc(tlen + 1);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_SEND, sb[r], L.slen[r]);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, rb[r], L.rlen[r]);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, tb[r], tlen);
        if (algo->build(&a, kcoll_sim_sched(sim, r)) != KCOLL_OK) {
            CHECK(0, "%s: builder failed on rank %d", what, r);
            ok = 0;
        }
    }
    if (ok && kcoll_sim_run(sim, seed) != KCOLL_OK) {
        CHECK(0, "%s: %s", what, kcoll_sim_error(sim));
        ok = 0;
    }
    for (int r = 0; ok && r < p; r++) {
        kcoll_args_t a = {.coll = fam, .p = p, .rank = r, .bytes = n, .lay = v ? L.lay : NULL,
                          .in_place = in_place, .prm = with_param(algo, k), .lv = lv};
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        uint8_t *inblock = calloc(L.rlen[r] + 1, 1);
        for (int j = 0; j < p && ok; j++) {
            size_t off, len = kcoll_rblock(&a, r, j, &off);
            for (size_t i = 0; i < len; i++) {
                uint8_t want = fam == KCOLL_COLL_ALLGATHER ? val(j, 0, i) : val(j, r, i);
                uint16_t wantw = in_place && j == r ? 0 : 1;
                inblock[off + i] = 1;
                if (rb[r][off + i] != want || w[off + i] != wantw) {
                    CHECK(0, "%s: rank %d block %d byte %zu: value %u (want %u), written %u times (want %u)",
                          what, r, j, i, rb[r][off + i], want, w[off + i], wantw);
                    ok = 0;
                    break;
                }
            }
        }
        for (size_t i = 0; ok && i < L.rlen[r]; i++)
            if (!inblock[i] && (rb[r][i] != 0xee || w[i])) {
                CHECK(0, "%s: rank %d: gap byte %zu was written", what, r, i);
                ok = 0;
            }
        free(inblock);
        /* the send buffer is never written */
        const uint16_t *ws = kcoll_sim_writes(sim, r, KCOLL_BUF_SEND);
        for (size_t i = 0; ok && i < L.slen[r]; i++)
            if (ws[i]) {
                CHECK(0, "%s: rank %d: send byte %zu was written", what, r, i);
                ok = 0;
            }
    }
    if (ok)
        CHECK(1, "ok");
    for (int r = 0; r < p; r++) {
        free(sb[r]);
        free(rb[r]);
        free(tb[r]);
    }
    free(sb);
    free(rb);
    free(tb);
    kcoll_sim_free(sim);
    layout_free(&L);
    return ok;
}

static int gcd(int x, int y)
{
    return y ? gcd(y, x % y) : x;
}

static long run_algo(const kcoll_algo_t *algo)
{
    static const size_t sizes[] = {0, 1, 13, 4099};
    long runs = 0;
    /* the hierarchical ones on every level shape (levels_fixture.h; the
     * flat one up to 16 ranks) */
    const int hier = algo->levels;
    for (int shape = 0; shape < (hier ? LEVEL_SHAPES : 1); shape++)
    for (int p = 1; p <= (hier && !shape ? 16 : 64); p++) {
        kcoll_levels_t lv;
        levels_fixture(&lv, p, shape);
        int js[8], nj = 0;
        if (first_param(algo)) { /* ring_neighbor: every j <= 2p for small p, a few for large */
            for (int j = 1; j <= 2 * p + 1 && nj < 8; j++) {
                char err[128];
                kcoll_aparam_t prm = {.j = j};
                int legal = kcoll_allgather_ring_neighbor_check(p, &prm, err, sizeof err) == 0;
                CHECK(legal == (p == 1 || gcd(p, j % p) == 1), "j=%d p=%d: check says %d", j, p,
                      legal);
                if (legal && (p <= 8 || j == 1 || j == p - 1 || (j > 1 && nj < 3)))
                    js[nj++] = j;
            }
        } else {
            js[nj++] = 0;
        }
        for (int ji = 0; ji < nj; ji++)
            for (int v = 0; v < 2; v++)
                for (int ip = 0; ip < 2; ip++)
                    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                        size_t n = sizes[si];
                        if (p > 16 && n > 100 && (p % 7 && p != 64))
                            continue;
                        if (p > 24 && v && si != 2 && p % 5)
                            continue;
                        check_one(algo, js[ji], p, v, n, ip,
                                  (unsigned)(p + si + (size_t)v + (size_t)shape) % 3,
                                  shape ? &lv : NULL, shape);
                        runs++;
                    }
        kcoll_levels_free(&lv);
    }
    return runs;
}

/* Which ranks each rank has heard from (transitively) when its schedule
 * ends: K[r][i] is what rank r knows after its first i steps ({r} at
 * first); a WAIT for (peer, flag, v) adds what peer knew just before its
 * first raise of that flag to v or more. Iterated to a fixed point. */
static void barrier_knowledge(kcoll_sim_t *sim, int p, char **heard)
{
    char **K = malloc((size_t)p * sizeof *K);
    for (int r = 0; r < p; r++) {
        const kcoll_sched_t *s = kcoll_sim_sched(sim, r);
        K[r] = calloc((size_t)(s->n + 1) * (size_t)p, 1);
        for (int i = 0; i <= s->n; i++)
            K[r][(size_t)i * p + r] = 1;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int r = 0; r < p; r++) {
            const kcoll_sched_t *s = kcoll_sim_sched(sim, r);
            for (int i = 0; i < s->n; i++) {
                char *next = &K[r][(size_t)(i + 1) * p];
                const char *now = &K[r][(size_t)i * p];
                const char *got = NULL;
                const kcoll_step_t *st = &s->steps[i];
                if (st->kind == KCOLL_STEP_WAIT) {
                    const kcoll_sched_t *ps = kcoll_sim_sched(sim, st->peer);
                    for (int j = 0; j < ps->n && !got; j++)
                        if (ps->steps[j].kind == KCOLL_STEP_SIGNAL &&
                            ps->steps[j].flag == st->flag && ps->steps[j].value >= st->value)
                            got = &K[st->peer][(size_t)j * p];
                }
                for (int q = 0; q < p; q++) {
                    char v = now[q] || (got && got[q]);
                    if (v && !next[q]) {
                        next[q] = 1;
                        changed = 1;
                    }
                }
            }
        }
    }
    for (int r = 0; r < p; r++) {
        const kcoll_sched_t *s = kcoll_sim_sched(sim, r);
        memcpy(heard[r], &K[r][(size_t)s->n * p], (size_t)p);
        free(K[r]);
    }
    free(K);
}

/* Barrier: the schedules must run clean, move no data, and each rank's
 * schedule must (transitively) wait for every other rank's entry: checked
 * by following the WAIT edges to a fixed point (barrier_knowledge). */
static long run_barrier(const kcoll_algo_t *algo)
{
    long runs = 0;
    /* the hierarchical barrier also on 2- and 3-level topologies */
    const int shapes = algo->levels ? LEVEL_SHAPES : 1;
    for (int shape = 0; shape < shapes; shape++)
    for (int p = 1; p <= 64; p++) {
        kcoll_sim_t *sim = kcoll_sim_new(p);
        char **heard = malloc((size_t)p * sizeof *heard);
        kcoll_levels_t lv;
        levels_fixture(&lv, p, shape);
        for (int r = 0; r < p; r++) {
            kcoll_args_t a = {.coll = KCOLL_COLL_BARRIER, .p = p, .rank = r, .lv = &lv};
            kcoll_sched_t *s = kcoll_sim_sched(sim, r);
            CHECK(algo->build(&a, s) == KCOLL_OK, "barrier p=%d: builder failed", p);
            for (int i = 0; i < s->n; i++)
                CHECK(s->steps[i].kind == KCOLL_STEP_SIGNAL || s->steps[i].kind == KCOLL_STEP_WAIT,
                      "barrier p=%d: a data step", p);
            heard[r] = calloc((size_t)p, 1);
            heard[r][r] = 1;
        }
        barrier_knowledge(sim, p, heard);
        for (int r = 0; r < p; r++) {
            int all = 1;
            for (int q = 0; q < p; q++)
                all &= heard[r][q];
            CHECK(all, "barrier p=%d: rank %d can leave before every rank entered", p, r);
            free(heard[r]);
        }
        free(heard);
        CHECK(kcoll_sim_run(sim, (unsigned)p % 3) == KCOLL_OK, "barrier p=%d: %s", p,
              kcoll_sim_error(sim));
        kcoll_sim_free(sim);
        kcoll_levels_free(&lv);
        runs++;
    }
    return runs;
}

/* The barrier for real: p forked processes on one control segment add 1
 * to a shared counter, then meet in the dissemination barrier (run by the
 * executor), then read the counter, many rounds in a row with a different
 * late rank each round. Returns the number of rounds in which this rank
 * saw too small a count. */
static int barrier_child(kcoll_ctl_t *c, int rank, void *arg)
{
    long *counter = arg;
    const int p = c->p;
    const kcoll_algo_t *algo = kcoll_algo_find(KCOLL_COLL_BARRIER, "dissemination");
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    int wrong = 0;
    for (int k = 1; k <= 50; k++) {
        if (k % p == rank) {
            struct timespec nap = {0, 1000000};
            nanosleep(&nap, NULL);
        }
        /* seq_cst: this rank's increment is ordered before its barrier */
        __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
        kcoll_args_t a = {.coll = KCOLL_COLL_BARRIER, .p = p, .rank = rank};
        kcoll_sched_reset(&s);
        algo->build(&a, &s);
        void *bufs[KCOLL_NBUF] = {NULL, NULL, NULL};
        size_t lens[KCOLL_NBUF] = {0, 0, 0};
        kcoll_exec_t x;
        kcoll_exec_start(&x, c, &kcoll_engine_cma, &s, bufs, lens, (uint64_t)k);
        if (kcoll_exec_run(&x) != KCOLL_OK) {
            fprintf(stderr, "barrier rank %d round %d: %s\n", rank, k, x.errmsg);
            return wrong + 100;
        }
        /* acquire: sees every increment ordered before the barrier */
        if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < (long)p * k)
            wrong++;
    }
    kcoll_sched_free(&s);
    return wrong;
}

static void run_team_barrier(int p)
{
    long *counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    forkteam_run(p, barrier_child, counter, "barrier");
    munmap(counter, 4096);
}

int main(void)
{
    for (int p = 1; p <= 5; p++)
        run_team_barrier(p);
    long runs = 0;
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *algo = &kcoll_algos[ai];
        if (algo->family == KCOLL_COLL_ALLGATHER || algo->family == KCOLL_COLL_ALLTOALL)
            runs += run_algo(algo);
        else if (algo->family == KCOLL_COLL_BARRIER)
            runs += run_barrier(algo);
    }
    /* illegal j: refused by the check and by the builder */
    char err[128];
    kcoll_aparam_t j2 = {.j = 2}, j4 = {.j = 4};
    CHECK(kcoll_allgather_ring_neighbor_check(6, &j2, err, sizeof err) != 0 &&
              strstr(err, "j=2") && strstr(err, "p=6"),
          "j=2 p=6 accepted or unclear message: %s", err);
    CHECK(kcoll_allgather_ring_neighbor_check(4, &j4, err, sizeof err) != 0, "j=p accepted");
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_args_t a = {.coll = KCOLL_COLL_ALLGATHER, .p = 6, .rank = 0, .bytes = 8,
                      .prm = {.j = 3}};
    CHECK(kcoll_allgather_ring_neighbor(&a, &s) != KCOLL_OK, "builder accepted j=3 p=6");
    kcoll_sched_free(&s);
    printf("%ld simulated collectives\n", runs);
    return check_report("test_allcoll_sim");
}
