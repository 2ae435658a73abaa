/* Levels of a team (see levels.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/levels.h"

/* Number ranks' groups by the tuple of their ids at candidate levels
 * l..nraw-1 (so groups nest), in order of each group's lowest rank. */
static int kcoll_levels_number(int p, int nraw, const int *ids, int l, int *group)
{
    int n = 0;
    for (int q = 0; q < p; q++) {
        group[q] = -1;
        for (int x = 0; x < q && group[q] < 0; x++) {
            int same = 1;
            for (int m = l; m < nraw && same; m++)
                same = ids[m * p + x] == ids[m * p + q];
            if (same)
                group[q] = group[x];
        }
        if (group[q] < 0)
            group[q] = n++;
    }
    return n;
}

int kcoll_levels_make(kcoll_levels_t *lv, int p, int nraw, const int *ids)
{
    int prev_n = p; /* the kept level below: at first every rank alone */
    int nuse = 0, rc = 0;
    memset(lv, 0, sizeof *lv);
    lv->p = p;
    /* the usable candidates (no unknown id), in order */
    int *use = malloc((size_t)(nraw > 0 ? nraw : 1) * (size_t)(p > 0 ? p : 1) * sizeof *use);
    if (!use)
        return -1;
    for (int l = 0; l < nraw; l++) {
        int usable = 1;
        for (int q = 0; q < p; q++)
            usable &= ids[l * p + q] >= 0;
        if (usable)
            memcpy(&use[nuse++ * p], &ids[l * p], (size_t)p * sizeof *use);
    }
    for (int l = 0; l < nuse && lv->n < KCOLL_MAX_LEVELS; l++) {
        int *g = malloc((size_t)(p > 0 ? p : 1) * sizeof *g);
        if (!g) {
            kcoll_levels_free(lv);
            rc = -1;
            break;
        }
        int n = kcoll_levels_number(p, nuse, use, l, g);
        /* one group for all, or the same split as the level below: nothing */
        if (n <= 1 || n == prev_n) {
            free(g);
            continue;
        }
        lv->group[lv->n] = g;
        lv->ngroups[lv->n] = n;
        lv->n++;
        prev_n = n;
    }
    free(use);
    return rc;
}

void kcoll_levels_free(kcoll_levels_t *lv)
{
    for (int l = 0; l < KCOLL_MAX_LEVELS; l++) {
        free(lv->group[l]);
        lv->group[l] = NULL;
        lv->ngroups[l] = 0;
    }
    lv->n = 0;
}

int kcoll_levels_leader(const kcoll_levels_t *lv, int l, int q, int root)
{
    const int *g = lv->group[l];
    if (g[root] == g[q])
        return root;
    for (int x = 0; x < lv->p; x++)
        if (g[x] == g[q])
            return x;
    return q;
}

int kcoll_levels_parent(const kcoll_levels_t *lv, int q, int root)
{
    if (q == root)
        return -1;
    for (int l = 0; lv && l < lv->n; l++) {
        int lead = kcoll_levels_leader(lv, l, q, root);
        if (lead != q)
            return lead;
    }
    return root;
}

/* lead[g]: the leader of every level-l group g for a collective rooted at
 * root (the root in its own group, else the lowest rank). */
static void kcoll_levels_leads(const kcoll_levels_t *lv, int l, int root, int *lead)
{
    const int *g = lv->group[l];
    for (int q = lv->p - 1; q >= 0; q--)
        lead[g[q]] = q;
    lead[g[root]] = root;
}

int kcoll_levels_active(const kcoll_levels_t *lv, int k, int q, int root)
{
    return k == 0 || kcoll_levels_leader(lv, k - 1, q, root) == q;
}

int kcoll_levels_members(const kcoll_levels_t *lv, int k, int r, int root, int *members, int *me)
{
    /* groups are numbered in order of their lowest ranks: q is the lowest
     * of its level k-1 group when its number passes every number before */
    const int *below = k > 0 ? lv->group[k - 1] : NULL;
    int m = 0, seen = -1;
    for (int q = 0; q < lv->p; q++) {
        int lowest = below && below[q] > seen;
        if (lowest)
            seen = below[q];
        int active = !below || q == root || (lowest && below[q] != below[root]);
        if (active && (k == lv->n || lv->group[k][q] == lv->group[k][r])) {
            if (q == r)
                *me = m;
            members[m++] = q;
        }
    }
    return m;
}

int kcoll_tree_make(kcoll_tree_t *t, const kcoll_levels_t *lv, int p, int root, int forest)
{
    const int nl = lv ? lv->n : 0;
    int maxg = 1;
    for (int l = 0; l < nl; l++)
        maxg = lv->ngroups[l] > maxg ? lv->ngroups[l] : maxg;
    memset(t, 0, sizeof *t);
    t->p = p;
    int *mem = malloc((6 * (size_t)p + 1 + (size_t)maxg) * sizeof *mem);
    if (!mem)
        return -1;
    t->parent = mem;
    t->first = mem + p;
    t->kids = t->first + p + 1;
    t->order = t->kids + p;
    t->at = t->order + p;
    t->size = t->at + p;
    int *lead = t->size + p;
    /* the parent: the leader at the innermost level where q does not lead */
    for (int q = 0; q < p; q++)
        t->parent[q] = -2;
    for (int l = 0; l < nl; l++) {
        kcoll_levels_leads(lv, l, root, lead);
        for (int q = 0; q < p; q++)
            if (t->parent[q] == -2 && lead[lv->group[l][q]] != q)
                t->parent[q] = lead[lv->group[l][q]];
    }
    for (int q = 0; q < p; q++)
        if (t->parent[q] == -2)
            t->parent[q] = q == root || forest ? -1 : root;
    /* children in rank order (at: a cursor per parent, for now) */
    memset(t->first, 0, ((size_t)p + 1) * sizeof *t->first);
    for (int q = 0; q < p; q++)
        if (t->parent[q] >= 0)
            t->first[t->parent[q] + 1]++;
    for (int q = 0; q < p; q++) {
        t->first[q + 1] += t->first[q];
        t->at[q] = t->first[q];
    }
    for (int q = 0; q < p; q++)
        if (t->parent[q] >= 0)
            t->kids[t->at[t->parent[q]]++] = q;
    /* preorder by a stack (in size, for now): roots and children pushed
     * in reverse so that they come out in rank order */
    int top = 0, n = 0;
    for (int q = p - 1; q >= 0; q--)
        if (t->parent[q] < 0)
            t->size[top++] = q;
    while (top) {
        int x = t->size[--top];
        t->order[n++] = x;
        for (int i = t->first[x + 1] - 1; i >= t->first[x]; i--)
            t->size[top++] = t->kids[i];
    }
    /* subtree sizes, children before their parents */
    for (int i = p - 1; i >= 0; i--) {
        int x = t->order[i];
        t->at[x] = i;
        t->size[x] = 1;
        for (int c = t->first[x]; c < t->first[x + 1]; c++)
            t->size[x] += t->size[t->kids[c]];
    }
    return 0;
}

void kcoll_tree_free(kcoll_tree_t *t)
{
    free(t->parent);
    memset(t, 0, sizeof *t);
}

int kcoll_levels_runs(const kcoll_levels_t *lv)
{
    /* groups are numbered by their lowest rank: runs exactly when the
     * numbers never fall */
    for (int l = 0; l < lv->n; l++)
        for (int q = 1; q < lv->p; q++)
            if (lv->group[l][q] < lv->group[l][q - 1])
                return 0;
    return 1;
}

void kcoll_levels_describe(const kcoll_levels_t *lv, char *out, size_t outlen)
{
    size_t pos = 0;
    if (!lv || lv->n == 0) {
        snprintf(out, outlen, "flat (no level splits the ranks)");
        return;
    }
    pos += (size_t)snprintf(out, outlen, "%d level%s:", lv->n, lv->n > 1 ? "s" : "");
    for (int l = 0; l < lv->n && pos < outlen; l++) {
        /* group sizes, listed once each with how many groups have it */
        int min = lv->p, max = 0;
        for (int k = 0; k < lv->ngroups[l]; k++) {
            int size = 0;
            for (int q = 0; q < lv->p; q++)
                size += lv->group[l][q] == k;
            min = size < min ? size : min;
            max = size > max ? size : max;
        }
        if (min == max)
            pos += (size_t)snprintf(out + pos, outlen - pos, "%s %d groups of %d (level %d)",
                                    l ? "," : "", lv->ngroups[l], min, l);
        else
            pos += (size_t)snprintf(out + pos, outlen - pos, "%s %d groups of %d-%d (level %d)",
                                    l ? "," : "", lv->ngroups[l], min, max, l);
    }
}
