/* Every Scatter and Gather algorithm, checked by the simulator for
 * p = 1..64, every root up to 16 ranks (beyond, and for large blocks or
 * many k, roots 0, 1, p/2, p-1), block sizes 0, 1, odd and large (large
 * ones up to 32 ranks, then at 48 and 64), uniform blocks and v-layouts
 * (random counts with zeros, blocks placed in shuffled order with gaps),
 * with and without the root's MPI_IN_PLACE, and for the throttled ones
 * k = 1..p+1 (a thinner set of k for large p); the hierarchical ones on
 * 2- and 3-level shapes with uneven groups (levels_fixture.h), a thinner
 * set of roots and sizes (run_hier). The run must be free of
 * deadlocks, races and use-after-return; then:
 *  Scatter: every rank's receive buffer holds its block of the root's send
 *    buffer, each byte written exactly once, the canary bytes after it
 *    never; the root's send buffer is never written; in place, the root's
 *    receive buffer is not touched at all.
 *  Gather: every block of the root's receive buffer holds its rank's send
 *    buffer, written exactly once (the root's own block not at all when in
 *    place), every byte outside the blocks is never written; no send
 *    buffer is written. */
#include <stdlib.h>
#include <string.h>

#include "algo_param.h"
#include "check.h"
#include "coll/coll.h"
#include "levels_fixture.h"
#include "sched/sim.h"

#define CANARY 16

static const size_t sizes[] = {0, 1, 1237, 65536 + 7};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static unsigned rng_state = 12345;
static unsigned rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) & 0xffffff;
}

/* The root's layout: counts and displacements of p blocks of about n
 * bytes (v: random counts, a quarter of them zero, placed in shuffled
 * order with gaps of 0..7 bytes; else uniform j*n). Returns the span. */
static size_t make_layout(int p, size_t n, int v, size_t *count, size_t *displ)
{
    if (!v) {
        for (int j = 0; j < p; j++) {
            count[j] = n;
            displ[j] = (size_t)j * n;
        }
        return (size_t)p * n;
    }
    int *order = malloc((size_t)p * sizeof *order);
    for (int j = 0; j < p; j++) {
        order[j] = j;
        count[j] = rng() % 4 == 0 ? 0 : (n ? rng() % (n + n / 2 + 1) : 0);
    }
    for (int j = p - 1; j > 0; j--) {
        int i = (int)(rng() % (unsigned)(j + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    size_t at = 0;
    for (int j = 0; j < p; j++) {
        at += rng() % 8;
        displ[order[j]] = at;
        at += count[order[j]];
    }
    free(order);
    return at + rng() % 8;
}

static uint8_t pat(int r, size_t i)
{
    return (uint8_t)(i * 131 + (size_t)r * 29 + 1);
}

static void check_one(const kcoll_algo_t *algo, int k, int p, int root, size_t n, int v,
                      int in_place, unsigned seed, const kcoll_levels_t *lv, int shape)
{
    const int scatter = algo->family == KCOLL_COLL_SCATTER;
    size_t *count = malloc((size_t)p * sizeof *count), *displ = malloc((size_t)p * sizeof *displ);
    size_t span = make_layout(p, n, v, count, displ);
    kcoll_layout_t *lay = calloc((size_t)p, sizeof *lay);
    if (scatter) {
        lay[root].scount = count;
        lay[root].sdispl = displ;
    } else {
        lay[root].rcount = count;
        lay[root].rdispl = displ;
    }
    /* blocked[r] is the root's blocked buffer, own[r] each rank's block
     * (with CANARY bytes after it); the root in place has no own buffer */
    uint8_t *blocked = malloc(span + 1), **own = calloc((size_t)p, sizeof *own);
    uint8_t **tmp = calloc((size_t)p, sizeof *tmp);
    kcoll_sim_t *sim = kcoll_sim_new(p);
    char what[160];
    snprintf(what, sizeof what, "%s %s k=%d p=%d root=%d n=%zu %s%s shape %d seed=%u",
             kcoll_coll_name(algo->family), algo->name, k, p, root, n, v ? "v" : "uniform",
             in_place ? " in place" : "", shape, seed);
    for (size_t i = 0; i < span; i++)
        blocked[i] = scatter ? pat(root, i) : 0xee;
    kcoll_buf_t bb = scatter ? KCOLL_BUF_SEND : KCOLL_BUF_RECV;
    kcoll_buf_t ob = scatter ? KCOLL_BUF_RECV : KCOLL_BUF_SEND;
    kcoll_sim_set_buffer(sim, root, bb, blocked, span);
    int ok = 1;
    for (int r = 0; r < p; r++) {
        size_t len = count[r] + CANARY;
        if (!(r == root && in_place)) {
            own[r] = malloc(len);
            for (size_t i = 0; i < len; i++)
                own[r][i] = scatter ? 0xc5 : pat(r, i);
            kcoll_sim_set_buffer(sim, r, ob, own[r], len);
        }
        kcoll_args_t a = {.coll = scatter ? (v ? KCOLL_COLL_SCATTERV : KCOLL_COLL_SCATTER)
                                          : (v ? KCOLL_COLL_GATHERV : KCOLL_COLL_GATHER),
                          .p = p, .rank = r, .root = root, .bytes = v ? 0 : n,
                          .lay = v ? lay : NULL, .in_place = r == root && in_place, .prm = with_param(algo, k),
                          .lv = lv};
        size_t tlen = algo->tmp ? algo->tmp(&a) : 0; /* what the call layer gives it */
        tmp[r] = malloc(tlen + 1);
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_TMP, tmp[r], tlen);
        if (algo->build(&a, kcoll_sim_sched(sim, r)) != KCOLL_OK) {
            CHECK(0, "%s: builder failed on rank %d", what, r);
            ok = 0;
        }
    }
    if (ok && kcoll_sim_run(sim, seed) != KCOLL_OK) {
        CHECK(0, "%s: %s", what, kcoll_sim_error(sim));
        ok = 0;
    }
    /* what each byte of the blocked buffer must hold and how often it must
     * have been written */
    const uint16_t *wb = ok ? kcoll_sim_writes(sim, root, bb) : NULL;
    uint8_t *want = malloc(span + 1);
    uint16_t *wantw = calloc(span + 1, sizeof *wantw);
    memcpy(want, blocked, span);
    if (ok && !scatter) {
        memset(want, 0xee, span);
        for (int r = 0; r < p; r++)
            if (!(r == root && in_place))
                for (size_t i = 0; i < count[r]; i++) {
                    want[displ[r] + i] = pat(r, i);
                    wantw[displ[r] + i] = 1;
                }
    }
    for (size_t i = 0; ok && i < span; i++)
        if (blocked[i] != want[i] || wb[i] != wantw[i]) {
            CHECK(0, "%s: root's %s buffer byte %zu is %u written %u times (want %u, %u times)",
                  what, kcoll_buf_name(bb), i, blocked[i], wb[i], want[i], wantw[i]);
            ok = 0;
        }
    for (int r = 0; ok && r < p; r++) {
        if (!own[r])
            continue;
        const uint16_t *w = kcoll_sim_writes(sim, r, ob);
        for (size_t i = 0; i < count[r] + CANARY; i++) {
            int inside = i < count[r];
            uint8_t wv = scatter ? (inside ? pat(root, displ[r] + i) : 0xc5) : pat(r, i);
            uint16_t ww = scatter && inside ? 1 : 0;
            if (own[r][i] != wv || w[i] != ww) {
                CHECK(0, "%s: rank %d's %s buffer byte %zu is %u written %u times (want %u, %u times)",
                      what, r, kcoll_buf_name(ob), i, own[r][i], w[i], wv, ww);
                ok = 0;
                break;
            }
        }
    }
    if (ok)
        CHECK(1, "ok");
    for (int r = 0; r < p; r++) {
        free(own[r]);
        free(tmp[r]);
    }
    free(own);
    free(tmp);
    free(want);
    free(wantw);
    free(blocked);
    free(lay);
    free(count);
    free(displ);
    kcoll_sim_free(sim);
}

/* The hierarchical algorithms on every level shape (coll/levels.h; the
 * flat one up to 16 ranks), thinner: every root up to 8 ranks, then 0, 1, p/2, p-1;
 * large blocks up to 16 ranks and at 32, 48, 64; in place at two roots
 * beyond 8 ranks. */
static long run_hier(const kcoll_algo_t *algo)
{
    long runs = 0;
    for (int shape = 0; shape < LEVEL_SHAPES; shape++)
        for (int p = 1; p <= (shape ? 64 : 16); p++) {
            kcoll_levels_t lv;
            levels_fixture(&lv, p, shape);
            for (int root = 0; root < p; root++) {
                if (p > 8 && root != 0 && root != 1 && root != p / 2 && root != p - 1)
                    continue;
                for (int si = 0; si < NSIZES; si++) {
                    if (sizes[si] > 2000 && p > 16 && p % 16)
                        continue;
                    for (int v = 0; v < 2; v++)
                        for (int in_place = 0; in_place < 2; in_place++) {
                            if (in_place && p > 8 && root != 1 && root != p - 1)
                                continue;
                            check_one(algo, 0, p, root, sizes[si], v, in_place,
                                      (unsigned)(root + si + v + shape) % 3, &lv, shape);
                            runs++;
                        }
                }
            }
            kcoll_levels_free(&lv);
        }
    return runs;
}

int main(void)
{
    long runs = 0;
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *algo = &kcoll_algos[ai];
        if (algo->family != KCOLL_COLL_SCATTER && algo->family != KCOLL_COLL_GATHER)
            continue;
        if (algo->levels) {
            runs += run_hier(algo);
            continue;
        }
        for (int p = 1; p <= 64; p++)
            for (int k = first_param(algo) ? 1 : 0; k <= (first_param(algo) ? p + 1 : 0); k++) {
                /* beyond 12 ranks: k = 1, 2, 3, 4, p/2, p-1, p, p+1 */
                if (p > 12 && k > 4 && k != p / 2 && k < p - 1)
                    continue;
                for (int root = 0; root < p; root++)
                    for (int si = 0; si < NSIZES; si++)
                        for (int v = 0; v < 2; v++)
                            for (int in_place = 0; in_place < 2; in_place++) {
                                size_t n = sizes[si];
                                /* many ranks, or large blocks, or the
                                 * many k values: a handful of roots */
                                int few = p > 16 || (p > 8 && (n > 2000 || (first_param(algo) && k > 1)));
                                if (few && root != 0 && root != 1 && root != p / 2 &&
                                    root != p - 1)
                                    continue;
                                if (n > 2000 && p > 24 && root != 0 && root != p - 1)
                                    continue;
                                if (n > 2000 && p > 32 && (p % 16 || root || k > 2))
                                    continue;
                                if (in_place && p > 8 && (n > 2000 || (root != 0 && root != p - 1)))
                                    continue;
                                /* alternate interleavings: the verdicts must not depend on them */
                                check_one(algo, k, p, root, n, v, in_place,
                                          (unsigned)(root + si + v) % 3, NULL, 0);
                                runs++;
                            }
            }
    }
    printf("%ld simulated scatters and gathers\n", runs);
    return check_report("test_rooted_sim");
}
