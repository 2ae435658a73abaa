/* Every broadcast algorithm, checked by the simulator for p = 1..64, every
 * root, message sizes 0, 1, odd, not a multiple of p, and large (fewer
 * roots for the large ones): the run
 * (the hierarchical tree also on 2- and 3-level topologies)
 * must be free of deadlocks, races and use-after-return, every non-root
 * must end with the root's bytes, every non-root byte must be written
 * exactly once (single copy) and the root's buffer never. */
#include <stdlib.h>
#include <string.h>

#include "algo_param.h"
#include "levels_fixture.h"
#include "check.h"
#include "coll/coll.h"
#include "sched/sim.h"

static const size_t sizes[] = {0, 1, 1237, 4099, 65536 + 7, 262144 + 3};

static int check_one(const kcoll_algo_t *algo, int k, int p, int root, size_t n, unsigned seed,
                     const kcoll_levels_t *lv)
{
    kcoll_sim_t *sim = kcoll_sim_new(p);
    uint8_t **buf = calloc((size_t)p, sizeof *buf);
    int ok = 1;
    for (int r = 0; r < p; r++) {
        buf[r] = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            buf[r][i] = r == root ? (uint8_t)(i * 131 + root * 7 + 1) : 0xee;
        kcoll_sim_set_buffer(sim, r, KCOLL_BUF_RECV, buf[r], n);
        kcoll_args_t a = {.coll = KCOLL_COLL_BCAST, .p = p, .rank = r, .root = root, .bytes = n,
                          .prm = with_param(algo, k), .lv = lv};
        kcoll_status_t st = algo->build(&a, kcoll_sim_sched(sim, r));
        if (st) {
            CHECK(0, "%s k=%d p=%d root=%d n=%zu: builder failed on rank %d", algo->name, k, p,
                  root, n, r);
            ok = 0;
        }
    }
    if (ok) {
        kcoll_status_t st = kcoll_sim_run(sim, seed);
        if (st != KCOLL_OK) {
            CHECK(0, "%s k=%d p=%d root=%d n=%zu seed=%u: %s", algo->name, k, p, root, n, seed,
                  kcoll_sim_error(sim));
            ok = 0;
        }
    }
    for (int r = 0; ok && r < p; r++) {
        const uint16_t *w = kcoll_sim_writes(sim, r, KCOLL_BUF_RECV);
        for (size_t i = 0; i < n; i++) {
            uint16_t want = r == root ? 0 : 1;
            if (w[i] != want || buf[r][i] != buf[root][i]) {
                CHECK(0, "%s k=%d p=%d root=%d n=%zu: rank %d byte %zu written %u times, value %u (want %u)",
                      algo->name, k, p, root, n, r, i, w[i], buf[r][i], buf[root][i]);
                ok = 0;
                break;
            }
        }
    }
    if (ok)
        CHECK(1, "ok");
    for (int r = 0; r < p; r++)
        free(buf[r]);
    free(buf);
    kcoll_sim_free(sim);
    return ok;
}

int main(void)
{
    long runs = 0;
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *algo = &kcoll_algos[ai];
        if (algo->family != KCOLL_COLL_BCAST)
            continue;
        for (int p = 1; p <= 64; p++) {
            /* k-nomial: binary, ternary, the default, and k > p */
            int ks[] = {2, 3, 4, p + 1};
            int nk = first_param(algo) ? 4 : 1;
            if (!strcmp(algo->name, "hier")) { /* segments: auto, and 4 KiB */
                ks[0] = 0;
                ks[1] = 4;
                nk = 2;
            }
            for (int ki = 0; ki < nk; ki++) {
                int k = first_param(algo) ? ks[ki] : 0;
                if (first_param(algo) && k < first_param(algo)->min)
                    continue;
                for (int root = 0; root < p; root++)
                    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                        size_t n = sizes[si];
                        /* large sizes: a handful of roots are enough; the
                         * largest (page-aligned chunks while p <= 16) needs
                         * two roots and p up to 24 */
                        if (n > 10000 && p > 8 && root != 0 && root != 1 && root != p / 2 &&
                            root != p - 1)
                            continue;
                        if (n > 200000 && ((root != 0 && root != p - 1) || p > 24))
                            continue;
                        /* alternate interleavings: the verdicts must not depend on them */
                        check_one(algo, k, p, root, n, (unsigned)(root + si) % 3, NULL);
                        runs++;
                    }
            }
        }
    }
    /* the hierarchical tree on 2- and 3-level topologies, even and uneven
     * groups, blocks and round-robin placement */
    const kcoll_algo_t *hier = kcoll_algo_find(KCOLL_COLL_BCAST, "hier");
    for (int shape = 1; hier && shape < LEVEL_SHAPES; shape++)
        for (int p = 1; p <= 64; p++) {
            kcoll_levels_t lv;
            levels_fixture(&lv, p, shape);
            for (int root = 0; root < p; root++)
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                    if (p > 8 && root != 0 && root != p / 2 && root != p - 1)
                        continue;
                    if (sizes[si] > 200000 && p > 16)
                        continue;
                    for (int chunk = 0; chunk <= 4; chunk += 4) { /* auto, and 4 KiB segments */
                        check_one(hier, chunk, p, root, sizes[si], (unsigned)(root + si) % 3, &lv);
                        runs++;
                    }
                }
            kcoll_levels_free(&lv);
        }
    printf("%ld simulated broadcasts\n", runs);
    return check_report("test_bcast_sim");
}
