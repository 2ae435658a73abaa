/* Topology levels (coll/levels.h): which candidate levels are kept, that
 * groups nest and are numbered by their lowest rank, that leaders are the
 * root where the group holds it and the lowest rank elsewhere, and that
 * every rank's parent chain reaches the root within levels + 1 steps for
 * every root, on the simulator tests' shapes and p = 1..64; the whole tree
 * and the members of a composed phase agree with those. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "coll/levels.h"
#include "levels_fixture.h"

static void kept(void)
{
    /* 8 ranks: NUMA of 4, a package of 8 (one group: dropped), an L3 per
     * NUMA (the same split as NUMA: dropped), an unknown level (dropped) */
    enum { P = 8 };
    int ids[4 * P];
    for (int q = 0; q < P; q++) {
        ids[q] = q / 4;     /* l3 */
        ids[P + q] = q / 4; /* numa */
        ids[2 * P + q] = 0; /* package */
        ids[3 * P + q] = q == 5 ? -1 : 0;
    }
    kcoll_levels_t lv;
    CHECK(kcoll_levels_make(&lv, P, 4, ids) == 0, "make");
    CHECK(lv.n == 1 && lv.ngroups[0] == 2, "one level of 2 groups kept, got %d levels", lv.n);
    CHECK(lv.group[0][0] == 0 && lv.group[0][4] == 1 && lv.group[0][7] == 1, "numbering");
    kcoll_levels_free(&lv);
    /* every rank alone: no level */
    for (int q = 0; q < P; q++)
        ids[q] = q;
    CHECK(kcoll_levels_make(&lv, P, 1, ids) == 0 && lv.n == 0, "singletons dropped");
    kcoll_levels_free(&lv);
    /* not nested on their own (caches across NUMA domains): made nested */
    for (int q = 0; q < P; q++) {
        ids[q] = q / 2 % 2;  /* "cache" 0 or 1, crossing the NUMA split */
        ids[P + q] = q / 4;
    }
    CHECK(kcoll_levels_make(&lv, P, 2, ids) == 0 && lv.n == 2, "two levels");
    for (int q = 0; q < P; q++)
        for (int x = 0; x < P; x++)
            if (lv.group[0][q] == lv.group[0][x])
                CHECK(lv.group[1][q] == lv.group[1][x], "ranks %d %d: level 0 not inside 1", q, x);
    kcoll_levels_free(&lv);
}

/* The whole tree (kcoll_tree_make) against kcoll_levels_parent: the same
 * parents (a forest cuts those of ranks that lead at every level),
 * children in rank order, and a preorder in which every subtree is one
 * range holding exactly the ranks whose parent chain passes its top. */
static void whole_tree(const kcoll_levels_t *lv, int p, int root, int shape, int forest)
{
    kcoll_tree_t t;
    CHECK(kcoll_tree_make(&t, lv, p, root, forest) == 0, "tree make");
    int bad = 0;
    for (int q = 0; q < p && !bad; q++) {
        int want = kcoll_levels_parent(lv, q, root);
        int top = 1;
        for (int l = 0; l < lv->n; l++)
            top &= kcoll_levels_leader(lv, l, q, root) == q;
        if (forest && top)
            want = -1;
        bad |= t.parent[q] != want;
        for (int c = t.first[q]; c < t.first[q + 1]; c++)
            bad |= t.parent[t.kids[c]] != q || (c > t.first[q] && t.kids[c] <= t.kids[c - 1]);
        bad |= t.order[t.at[q]] != q;
        for (int x = 0; x < p; x++) { /* x under q: q on x's chain of parents */
            int y = x;
            while (y >= 0 && y != q)
                y = t.parent[y];
            bad |= (y == q) != kcoll_tree_under(&t, x, q);
        }
    }
    if (!forest)
        bad |= t.order[0] != root || t.size[root] != p;
    CHECK(!bad, "shape %d p=%d root %d%s: whole tree differs", shape, p, root,
          forest ? " (forest)" : "");
    kcoll_tree_free(&t);
}

/* The members of a composed phase: level k's active ranks (every rank at
 * level 0, then the leaders of level k-1) in rank order, r's index. */
static void members(const kcoll_levels_t *lv, int p, int root, int shape)
{
    int *mem = malloc((size_t)p * sizeof *mem), bad = 0;
    for (int k = 0; k <= lv->n && !bad; k++)
        for (int r = 0; r < p && !bad; r++) {
            if (!kcoll_levels_active(lv, k, r, root))
                continue;
            int me = -1, m = kcoll_levels_members(lv, k, r, root, mem, &me), i = 0;
            bad |= me < 0 || mem[me] != r;
            for (int q = 0; q < p; q++)
                if (kcoll_levels_active(lv, k, q, root) &&
                    (k == lv->n || lv->group[k][q] == lv->group[k][r]))
                    bad |= i >= m || mem[i++] != q;
            bad |= i != m;
        }
    CHECK(!bad, "shape %d p=%d root %d: members differ", shape, p, root);
    free(mem);
}

static void trees(void)
{
    for (int shape = 0; shape < LEVEL_SHAPES; shape++)
        for (int p = 1; p <= 64; p++) {
            kcoll_levels_t lv;
            levels_fixture(&lv, p, shape);
            for (int l = 0; l + 1 < lv.n; l++)
                for (int q = 0; q < p; q++)
                    for (int x = 0; x < p; x++)
                        if (lv.group[l][q] == lv.group[l][x] && lv.group[l + 1][q] != lv.group[l + 1][x])
                            CHECK(0, "shape %d p=%d: groups do not nest", shape, p);
            for (int root = 0; root < p; root++) {
                for (int l = 0; l < lv.n; l++) {
                    int lead = kcoll_levels_leader(&lv, l, root, root);
                    CHECK(lead == root, "shape %d p=%d: the root does not lead its group", shape, p);
                }
                for (int q = 0; q < p; q++) {
                    int x = q, hops = 0;
                    while (x != root && hops <= lv.n + 1) {
                        x = kcoll_levels_parent(&lv, x, root);
                        hops++;
                    }
                    CHECK(x == root, "shape %d p=%d root %d: rank %d does not reach the root in %d hops",
                          shape, p, root, q, lv.n + 1);
                }
                whole_tree(&lv, p, root, shape, 0);
                whole_tree(&lv, p, root, shape, 1);
                members(&lv, p, root, shape);
            }
            kcoll_levels_free(&lv);
        }
}

int main(void)
{
    kept();
    trees();
    return check_report("test_levels");
}
