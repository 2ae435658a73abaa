/* What the lanes layouts share (allreduce_lanes.c, bcast_lanes.c,
 * reduce_lanes.c): the rounds' Reduce_scatter views and their scratch,
 * the host collective of every lane a rank carries, and the rounds of
 * in-place Allgatherv that give every rank of a node the lanes' shares. */
#include <stdlib.h>

#include "cluster/cluster.h"
#include "coll/reduce/common.h"

size_t kcoll_cluster_lanes_round(const kcoll_args_t *a, const kcoll_cluster_t *cl, int j,
                                 kcoll_args_t *b, size_t *counts)
{
    size_t first, len, start = 0;
    *b = *a;
    b->coll = KCOLL_COLL_REDUCE_SCATTER;
    b->p = cl->pn;
    b->rank = cl->me;
    b->root = 0;
    b->lv = NULL;
    b->lay = NULL;
    b->counts = counts;
    b->count = 0;
    for (int i = 0; i < cl->pn; i++) {
        const int l = j * cl->pn + i;
        counts[i] = 0;
        if (l < cl->lanes) {
            kcoll_cluster_share(a->count, cl->lanes, l, &first, &len);
            counts[i] = len;
            if (i == 0)
                start = first;
        }
    }
    return start;
}

size_t kcoll_cluster_lanes_scratch(const kcoll_args_t *a, const kcoll_cluster_t *cl, int rank)
{
    size_t *counts = malloc((size_t)cl->pn * sizeof *counts), most = 0;
    if (!counts)
        return 0; /* the builder fails alike */
    const int R = (cl->lanes + cl->pn - 1) / cl->pn;
    for (int j = 0; j < R; j++)
        for (int i = rank < 0 ? 0 : rank; i < (rank < 0 ? cl->pn : rank + 1); i++) {
            kcoll_args_t b;
            kcoll_cluster_lanes_round(a, cl, j, &b, counts);
            b.rank = i;
            if (rank < 0) /* not in place: every rank computes the same */
                b.in_place = 0;
            size_t t = kcoll_reduce_tmp_len(&b);
            most = t > most ? t : most;
        }
    free(counts);
    return most;
}

void kcoll_cluster_lanes_xcoll(const kcoll_args_t *a, const kcoll_cluster_t *cl, int coll,
                               int root, kcoll_sched_t *s)
{
    const int L = cl->lanes;
    const size_t es = a->esize;
    size_t first, len;
    for (int l = cl->me; cl->nodes > 1 && l < L; l += cl->pn) {
        kcoll_cluster_share(a->count, L, l, &first, &len);
        if (len == 0) /* alike on every node: the shares are the same */
            continue;
        kcoll_xcoll_t x = {.coll = (uint8_t)coll, .sbuf = KCOLL_BUF_RECV,
                           .rbuf = KCOLL_BUF_RECV, .group = KCOLL_CLUSTER_LANE(l), .root = root,
                           .soff = first * es, .roff = first * es, .len = len * es, .esize = es};
        kcoll_sched_xcoll(s, &x);
    }
}

void kcoll_cluster_lanes_shares(const kcoll_args_t *a, const kcoll_cluster_t *cl, int j,
                                size_t *rc, size_t *rd, kcoll_layout_t *lay)
{
    const int pn = cl->pn, L = cl->lanes;
    const size_t es = a->esize;
    size_t first, len;
    for (int i = 0; i < pn; i++) {
        const int l = j * pn + i;
        kcoll_cluster_share(a->count, L, l < L ? l : L - 1, &first, &len);
        rc[i] = l < L ? len * es : 0;
        rd[i] = first * es;
        lay[i] = (kcoll_layout_t){.rcount = rc, .rdispl = rd};
    }
}

void kcoll_cluster_lanes_allgather(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                   uint32_t round0, kcoll_sched_t *s)
{
    const int pn = cl->pn, L = cl->lanes, R = (L + pn - 1) / pn;
    if (pn == 1)
        return;
    kcoll_layout_t *lay = malloc((size_t)pn * sizeof *lay);
    size_t *rc = malloc(2 * (size_t)pn * sizeof *rc), *rd = rc ? rc + pn : NULL;
    if (!lay || !rc) {
        free(lay);
        free(rc);
        if (!s->err)
            s->err = KCOLL_ERR_NOMEM;
        return;
    }
    for (int j = 0; j < R; j++) {
        kcoll_args_t b = *a;
        b.coll = KCOLL_COLL_ALLGATHERV;
        b.p = pn;
        b.rank = cl->me;
        b.root = 0;
        b.lv = NULL;
        b.counts = NULL;
        b.in_place = 1;
        b.lay = lay;
        kcoll_cluster_lanes_shares(a, cl, j, rc, rd, lay);
        kcoll_bufmap_t id;
        kcoll_bufmap_init(&id, 0);
        /* before the first round, wait for the node's lanes */
        kcoll_phase_append(s, &b, kcoll_allgather_ring_source_read, cl->peer_of,
                           (round0 + (uint32_t)j) * KCOLL_PHASE_VALUES, &id, 1, j == 0, NULL);
    }
    free(lay);
    free(rc);
}
