/* What the lanes layouts share (allreduce_lanes.c, bcast_lanes.c,
 * reduce_lanes.c): the rounds' Reduce_scatter views and their scratch,
 * the host collective of every lane a rank carries, the rounds of
 * in-place Allgatherv that give every rank of a node the lanes' shares,
 * and the phases they append, each in a range of flag values of its own. */
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

int kcoll_cluster_lanes_xcoll(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                              const kcoll_xcoll_t *base, int *ids, kcoll_sched_t *s)
{
    const int L = cl->lanes;
    const size_t es = a->esize;
    size_t first, len;
    int n = 0;
    for (int l = cl->me; cl->nodes > 1 && l < L; l += cl->pn) {
        kcoll_cluster_share(a->count, L, l, &first, &len);
        if (len == 0) /* alike on every node: the shares are the same */
            continue;
        kcoll_xcoll_t x = *base;
        x.group = KCOLL_CLUSTER_LANE(l);
        x.soff += first * es;
        x.roff += first * es;
        x.len = len * es;
        x.esize = es;
        if (ids)
            ids[n++] = kcoll_sched_xbegin(s, &x, NULL, 0);
        else
            kcoll_sched_xcoll(s, &x);
    }
    return n;
}

kcoll_status_t kcoll_cluster_lanes_pieces(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                          const kcoll_lanes_stages_t *st, kcoll_sched_t *s)
{
    const int pn = cl->pn, L = cl->lanes;
    const int m = (L - cl->me + pn - 1) / pn; /* the lanes this rank carries */
    const size_t es = a->esize;
    /* the pieces, alike on every rank of every node (count, esize, the
     * segment and L are every rank's) */
    size_t per = a->count;
    if (cl->segment && L > 1 && cl->segment < a->count * es) {
        /* at most 2 KCOLL_CLUSTER_MAX_ROUNDS phases a piece, each at most
         * KCOLL_CLUSTER_PIECE_VALUES(L) values */
        size_t most = KCOLL_FLAG_VALUE_MAX / (2u * KCOLL_CLUSTER_MAX_ROUNDS *
                                              (size_t)KCOLL_CLUSTER_PIECE_VALUES(L)) - 1;
        most = most < KCOLL_CLUSTER_MAX_SEGMENTS ? most : KCOLL_CLUSTER_MAX_SEGMENTS;
        per = cl->segment / es ? cl->segment / es : 1;
        if ((a->count + per - 1) / per > most)
            per = (a->count + most - 1) / most;
    }
    const size_t k = a->count ? (a->count + per - 1) / per : 0;
    const uint32_t step = k > 1 ? KCOLL_CLUSTER_PIECE_VALUES(pn) : KCOLL_PHASE_VALUES;
    int *ids = malloc(2 * (size_t)m * sizeof *ids); /* two pieces' split lanes */
    if (!ids)
        return KCOLL_ERR_NOMEM;
    /* piece i: step 1, then step 2 begun; piece i - 1: step 2 ended, step 3 */
    uint32_t ph = 0;
    int nid[2] = {0, 0};
    kcoll_args_t piece[2];
    for (size_t i = 0; i <= k && !s->err; i++) {
        if (i < k) {
            kcoll_args_t *b = &piece[i % 2];
            *b = *a;
            b->count = i + 1 < k ? per : a->count - i * per;
            const size_t at = i * per * es;
            st->before(st->ctx, b, cl, at, &ph, step, k > 1, s);
            kcoll_xcoll_t x = st->x;
            x.soff += at;
            x.roff += at;
            int *split = k > 1 ? ids + (i % 2) * (size_t)m : NULL; /* one piece: whole */
            const int started = kcoll_cluster_lanes_xcoll(b, cl, &x, split, s);
            nid[i % 2] = split ? started : 0;
        }
        if (i > 0) {
            const size_t w = (i - 1) % 2;
            for (int c = 0; c < nid[w]; c++)
                kcoll_sched_xend(s, ids[w * (size_t)m + (size_t)c]);
            st->after(st->ctx, &piece[w], cl, (i - 1) * per * es, &ph, step, k > 1, s);
        }
    }
    free(ids);
    return s->err;
}

void kcoll_cluster_lanes_scatter(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t at,
                                 kcoll_buf_t dst, size_t dst_off, uint32_t *ph, uint32_t step,
                                 size_t *counts, kcoll_bufmap_t *maps, kcoll_sched_t *s)
{
    const int pn = cl->pn, R = (cl->lanes + pn - 1) / pn;
    /* into RECV: MPI_IN_PLACE as the call says; into TMP: an in-place
     * root's SEND is its RECV, which is not written */
    const int in_place = dst == KCOLL_BUF_RECV && a->in_place;
    for (int j = 0; pn > 1 && j < R; j++) {
        kcoll_args_t b;
        const size_t start = kcoll_cluster_lanes_round(a, cl, j, &b, counts);
        size_t to = start;
        b.in_place = in_place;
        for (int i = 0; i < pn; i++) {
            kcoll_bufmap_init(&maps[i], in_place);
            maps[i].off[KCOLL_BUF_SEND] = at + start * a->esize; /* the round's range */
            maps[i].buf[KCOLL_BUF_RECV] = (uint8_t)dst;         /* i's block: its lane's share */
            maps[i].off[KCOLL_BUF_RECV] = dst_off + at + to * a->esize;
            to += counts[i];
        }
        kcoll_phase_append(s, &b, kcoll_reduce_partitioned, cl->peer_of, (*ph)++ * step, step,
                           maps, pn, 0, NULL);
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
                                   uint32_t base, uint32_t step, size_t at, kcoll_sched_t *s)
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
        kcoll_bufmap_t map; /* the vector (or piece) from byte `at` on, on every rank */
        kcoll_bufmap_init(&map, 0);
        map.off[KCOLL_BUF_RECV] = at;
        /* before the first round, wait for the node's lanes */
        kcoll_phase_append(s, &b, kcoll_allgather_ring_source_read, cl->peer_of,
                           base + (uint32_t)j * step, step, &map, 1, j == 0, NULL);
    }
    free(lay);
    free(rc);
}
