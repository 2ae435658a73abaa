/* Synthetic topology levels for simulator tests of the hierarchical
 * algorithms: shape s of p ranks, as raw ids for kcoll_levels_make.
 *   0: none (flat)
 *   1: two levels, ranks dealt in blocks: groups of 3 inside groups of 8
 *      (uneven at the end)
 *   2: three levels, ranks dealt round-robin over 2 packages (as
 *      binding "by socket" puts them), 2 NUMA domains each, caches of 2
 *      cores; beyond 16 ranks cores are shared
 *   3: two levels of pseudo-random uneven groups */
#ifndef KCOLL_TEST_LEVELS_FIXTURE_H
#define KCOLL_TEST_LEVELS_FIXTURE_H

#include <stdlib.h>

#include "coll/levels.h"

#define LEVEL_SHAPES 4

static inline void levels_fixture(kcoll_levels_t *lv, int p, int shape)
{
    int *ids = malloc(3 * (size_t)(p > 0 ? p : 1) * sizeof *ids);
    int nraw = 0;
    for (int q = 0; q < p; q++) {
        switch (shape) {
        case 1:
            ids[q] = q / 3;
            ids[p + q] = q / 8;
            nraw = 2;
            break;
        case 2: { /* 16 cores; rank q runs on core c, packages alternating */
            const int c = (q % 2) * 8 + (q / 2) % 8;
            ids[q] = c / 2;         /* cache of 2 cores */
            ids[p + q] = c / 4;     /* NUMA domain of 4 cores */
            ids[2 * p + q] = c / 8; /* package of 8 cores */
            nraw = 3;
            break;
        }
        case 3:
            ids[q] = (int)((unsigned)(q * 2654435761u) >> 29);     /* 8 groups */
            ids[p + q] = (int)((unsigned)(q * 2246822519u) >> 31); /* 2 groups */
            nraw = 2;
            break;
        default:
            nraw = 0;
        }
    }
    kcoll_levels_make(lv, p, nraw, ids);
    free(ids);
}

#endif
