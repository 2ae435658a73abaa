/* Where ranks stand in a communicator spanning nodes (see cluster.h). */
#include <stdlib.h>

#include "cluster/cluster.h"

/* Node index of every rank (nodes numbered by their lowest rank) into
 * idx, ranks per node into size (room for p each); returns the nodes, or
 * -1 (out of memory). */
static int kcoll_cluster_index(int p, const int *node_of, int *idx, int *size)
{
    int nodes = 0;
    for (int r = 0; r < p; r++) {
        int k = -1;
        for (int q = 0; q < r && k < 0; q++)
            if (node_of[q] == node_of[r])
                k = idx[q];
        if (k < 0) {
            k = nodes++;
            size[k] = 0;
        }
        idx[r] = k;
        size[k]++;
    }
    return nodes;
}

int kcoll_cluster_ranks(int p, const int *node_of, int L, int *rank_of)
{
    int *idx = malloc(2 * (size_t)p * sizeof *idx), *size = idx + p;
    if (!idx || p < 1 || L < 1) {
        free(idx);
        return -1;
    }
    const int nodes = kcoll_cluster_index(p, node_of, idx, size);
    for (int i = 0; i < nodes * L; i++)
        rank_of[i] = -1;
    for (int k = 0; k < nodes; k++)
        size[k] = 0;
    for (int r = 0; r < p; r++) { /* local ranks follow communicator ranks */
        const int k = idx[r], l = size[k]++;
        if (l < L)
            rank_of[k * L + l] = r;
    }
    free(idx);
    return nodes;
}

int kcoll_cluster_make(kcoll_cluster_t *cl, int *peer_of, int p, const int *node_of, int rank)
{
    if (p < 1 || rank < 0 || rank >= p)
        return -1;
    int *idx = malloc(2 * (size_t)p * sizeof *idx), *size = idx + p;
    if (!idx)
        return -1;
    cl->nodes = kcoll_cluster_index(p, node_of, idx, size);
    cl->node = idx[rank];
    cl->pn = 0;
    cl->lanes = 0;
    cl->ordered = 1;
    for (int r = 0; r < p; r++) {
        if (idx[r] == cl->node) {
            if (r == rank)
                cl->me = cl->pn;
            peer_of[cl->pn++] = r;
        }
        /* a rank of an earlier node after a later node's: not consecutive */
        if (r > 0 && idx[r] < idx[r - 1])
            cl->ordered = 0;
    }
    for (int k = 0; k < cl->nodes; k++)
        if (size[k] > cl->lanes)
            cl->lanes = size[k];
    cl->peer_of = peer_of;
    cl->rank_of = NULL;
    cl->segment = 0;
    free(idx);
    return 0;
}

int kcoll_cluster_group(int p, const int *node_of, int g, int *members)
{
    int *idx = malloc(3 * (size_t)p * sizeof *idx), *size = idx + p, *seen = idx + 2 * p;
    if (!idx || g < 0)
        goto bad;
    const int nodes = kcoll_cluster_index(p, node_of, idx, size);
    int L = 0;
    for (int k = 0; k < nodes; k++) {
        L = size[k] > L ? size[k] : L;
        seen[k] = 0;
    }
    const int lane = g - KCOLL_CLUSTER_LANE(0);
    if (g != KCOLL_CLUSTER_LEADERS && lane >= L)
        goto bad;
    /* node k's member: its local rank 0 (leaders) or lane % size[k] */
    for (int r = 0; r < p; r++) {
        const int k = idx[r];
        const int want = g == KCOLL_CLUSTER_LEADERS ? 0 : lane % size[k];
        if (seen[k]++ == want)
            members[k] = r;
    }
    free(idx);
    return nodes;
bad:
    free(idx);
    return -1;
}

kcoll_args_t kcoll_cluster_node_view(const kcoll_args_t *a, const kcoll_cluster_t *cl,
                                     kcoll_coll_t coll, int root)
{
    kcoll_args_t b = *a;
    b.coll = coll;
    b.p = cl->pn;
    b.rank = cl->me;
    b.root = root;
    b.lv = NULL;
    b.lay = NULL;
    b.counts = NULL;
    b.bytes = a->count * a->esize;
    return b;
}

int kcoll_cluster_locate(int p, const int *node_of, int rank, int *node, int *local)
{
    int *idx = malloc(2 * (size_t)p * sizeof *idx), *size = idx + p;
    if (!idx || rank < 0 || rank >= p) {
        free(idx);
        return -1;
    }
    kcoll_cluster_index(p, node_of, idx, size);
    *node = idx[rank];
    *local = 0;
    for (int r = 0; r < rank; r++)
        *local += idx[r] == idx[rank];
    free(idx);
    return 0;
}

size_t kcoll_cluster_blocks(const kcoll_args_t *a, const kcoll_cluster_t *cl, size_t *at,
                            size_t *run)
{
    size_t total = 0;
    for (int k = 0; k < cl->nodes; k++) {
        run[k] = 0;
        for (int l = 0; l < cl->lanes; l++) {
            const size_t i = (size_t)k * (size_t)cl->lanes + (size_t)l;
            const int q = cl->rank_of[i];
            at[i] = total;
            if (q < 0)
                continue;
            const size_t b = kcoll_cluster_blen(a, q);
            run[k] += b;
            total += b;
        }
    }
    return total;
}

/* One contiguous move being gathered up by kcoll_cluster_move_blocks. */
typedef struct {
    size_t x, y, len; /* node-major offset, place, bytes */
} kcoll_cluster_piece_t;

static void kcoll_cluster_piece_flush(kcoll_sched_t *s, const kcoll_cluster_piece_t *pc,
                                      int peer, int to_places, kcoll_buf_t xbuf, size_t xoff,
                                      kcoll_buf_t ybuf)
{
    if (!pc->len)
        return;
    if (peer < 0 && to_places)
        kcoll_sched_copy(s, ybuf, pc->y, xbuf, xoff + pc->x, pc->len);
    else if (peer < 0)
        kcoll_sched_copy(s, xbuf, xoff + pc->x, ybuf, pc->y, pc->len);
    else if (to_places) /* the peer's node-major buffer -> my places */
        kcoll_sched_read(s, peer, xbuf, xoff + pc->x, ybuf, pc->y, pc->len);
    else /* the peer's places -> my node-major buffer */
        kcoll_sched_read(s, peer, ybuf, pc->y, xbuf, xoff + pc->x, pc->len);
}

void kcoll_cluster_move_blocks(kcoll_sched_t *s, const kcoll_args_t *a, const kcoll_cluster_t *cl,
                               const size_t *at, int node, int peer, int to_places,
                               kcoll_buf_t xbuf, size_t xoff, kcoll_buf_t ybuf)
{
    kcoll_cluster_piece_t pc = {0, 0, 0};
    const int k0 = node < 0 ? 0 : node, k1 = node < 0 ? cl->nodes : node + 1;
    const size_t base = at[(size_t)k0 * (size_t)cl->lanes];
    for (int k = k0; k < k1; k++)
        for (int l = 0; l < cl->lanes; l++) {
            const size_t i = (size_t)k * (size_t)cl->lanes + (size_t)l;
            const int q = cl->rank_of[i];
            const size_t b = q < 0 ? 0 : kcoll_cluster_blen(a, q);
            if (!b)
                continue;
            const size_t x = at[i] - base, y = kcoll_cluster_place(a, q);
            if (pc.len && pc.x + pc.len == x && pc.y + pc.len == y) {
                pc.len += b; /* continues the last piece on both sides */
                continue;
            }
            kcoll_cluster_piece_flush(s, &pc, peer, to_places, xbuf, xoff, ybuf);
            pc = (kcoll_cluster_piece_t){x, y, b};
        }
    kcoll_cluster_piece_flush(s, &pc, peer, to_places, xbuf, xoff, ybuf);
}
