/* Levels of a team inside a node: its ranks grouped by where they run
 * (paper 000 section IV: one leader per NUMA node; paper 002:
 * distance-aware hierarchies). DESIGN.md section 6.
 *
 * Level 0 is the innermost grouping (say, ranks sharing an L3 cache or a
 * NUMA domain), each further level coarser (a package). Groups nest: two
 * ranks in one group at level l are in one group at every level above.
 * A level that does not split the ranks further than the one below it
 * (or leaves every rank alone, or puts all in one group) is dropped when
 * the levels are made, so a machine with one NUMA domain has none: the
 * team is flat.
 *
 * Leaders. Of a group, the collective's root if the group holds it (so the
 * root's data never takes a detour), else its lowest rank. The tree every
 * hierarchical algorithm walks: a rank's parent is the leader of its group
 * at the innermost level where it does not lead; a rank that leads its
 * groups at every level hangs from the root. Going up the tree the level
 * grows, so it has no cycle, and its depth is at most levels + 1.
 */
#ifndef KCOLL_COLL_LEVELS_H
#define KCOLL_COLL_LEVELS_H

#include <stddef.h>

#define KCOLL_MAX_LEVELS 4

typedef struct {
    int n; /* levels kept (0: flat) */
    int p;
    /* group[l][q]: rank q's group at level l, numbered 0.. in order of
     * the groups' lowest ranks */
    int *group[KCOLL_MAX_LEVELS];
    int ngroups[KCOLL_MAX_LEVELS];
} kcoll_levels_t;

/* Make the levels of p ranks from raw ids: ids[l * p + q] is the
 * topology object (NUMA domain, package...) rank q runs in at candidate
 * level l (nraw candidates, innermost first; -1: unknown, which makes
 * that candidate unusable). Nests and drops as above. Returns 0, or -1
 * when out of memory (lv is then flat). */
int kcoll_levels_make(kcoll_levels_t *lv, int p, int nraw, const int *ids);
void kcoll_levels_free(kcoll_levels_t *lv);

/* The leader of rank q's group at level l, for a collective rooted at root. */
int kcoll_levels_leader(const kcoll_levels_t *lv, int l, int q, int root);
/* Rank q's parent in the tree rooted at root (-1 for the root). With no
 * levels (lv NULL or flat) every other rank hangs from the root. */
int kcoll_levels_parent(const kcoll_levels_t *lv, int q, int root);
/* Composition by levels (allreduce/hier.c, reduce/hier.c): phase k runs
 * inside every level-k group among its active ranks: at level 0 all, at
 * level k > 0 the leaders of the level k-1 groups; k == lv->n is the top,
 * one group of all outermost leaders. Is q active at level k? */
int kcoll_levels_active(const kcoll_levels_t *lv, int k, int q, int root);
/* The active ranks of active rank r's group at level k, in rank order,
 * into members (room for p); returns how many, r's index in *me. */
int kcoll_levels_members(const kcoll_levels_t *lv, int k, int r, int root, int *members, int *me);

/* The whole tree rooted at root, for the algorithms that move blocks
 * along it (gather/hier.c, scatter/hier.c, allgather/hier.c). With
 * forest, a rank that leads its groups at every level has no parent: the
 * tree falls apart into one tree per outermost group. */
typedef struct {
    int p;
    int *parent; /* [p] kcoll_levels_parent (-1: the root, or a forest's root) */
    int *first;  /* [p + 1] q's children are kids[first[q] .. first[q + 1]), */
    int *kids;   /*         in rank order */
    int *order;  /* [p] preorder: each root, then its children's subtrees in rank order */
    int *at;     /* [p] q's place in order: its subtree is order[at[q] .. at[q] + size[q]) */
    int *size;   /* [p] ranks in q's subtree */
} kcoll_tree_t;
/* O(levels * p). Returns 0, or -1 when out of memory. lv NULL or flat:
 * every rank hangs from the root (forest: every rank is a root). */
int kcoll_tree_make(kcoll_tree_t *t, const kcoll_levels_t *lv, int p, int root, int forest);
void kcoll_tree_free(kcoll_tree_t *t);
/* Is q in x's subtree? */
static inline int kcoll_tree_under(const kcoll_tree_t *t, int q, int x)
{
    return t->at[q] >= t->at[x] && t->at[q] < t->at[x] + t->size[x];
}

/* Is every group of every level a run of consecutive ranks (so that
 * combining groups in order is rank order)? */
int kcoll_levels_runs(const kcoll_levels_t *lv);
/* "2 levels: 4 groups of 2 (level 0), 2 groups of 4 (level 1)". */
void kcoll_levels_describe(const kcoll_levels_t *lv, char *out, size_t outlen);

#endif
