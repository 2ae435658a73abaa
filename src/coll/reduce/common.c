/* Shared pieces of the reduction algorithms: see common.h. */
#include "coll/reduce/common.h"
#include "op/op.h"

size_t kcoll_red_vector(const kcoll_args_t *a)
{
    if (a->coll == KCOLL_COLL_REDUCE_SCATTER) {
        size_t n = 0;
        for (int q = 0; q < a->p; q++)
            n += a->counts[q];
        return n * a->esize;
    }
    if (a->coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK)
        return (size_t)a->p * a->count * a->esize;
    return a->count * a->esize;
}

void kcoll_red_slice(const kcoll_args_t *a, int q, size_t *off, size_t *len)
{
    const size_t es = a->esize;
    if (a->coll == KCOLL_COLL_REDUCE_SCATTER) {
        size_t o = 0;
        for (int j = 0; j < q; j++)
            o += a->counts[j];
        *off = o * es;
        *len = a->counts[q] * es;
        return;
    }
    if (a->coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        *off = (size_t)q * a->count * es;
        *len = a->count * es;
        return;
    }
    /* a share of ceil(count/p) elements, rounded up to whole cache lines
     * when an element divides a line */
    size_t unit = (es <= 64 && 64 % es == 0) ? 64 / es : 1;
    size_t share = (a->count + (size_t)a->p - 1) / (size_t)a->p;
    share = (share + unit - 1) / unit * unit;
    size_t lo = share * (size_t)q, hi = lo + share;
    if (lo > a->count)
        lo = a->count;
    if (hi > a->count || q == a->p - 1)
        hi = a->count;
    *off = lo * es;
    *len = (hi - lo) * es;
}

size_t kcoll_red_chunk(const kcoll_args_t *a)
{
    size_t c = (size_t)(a->prm.chunk > 0 ? a->prm.chunk : 128) * 1024 / a->esize * a->esize;
    return c ? c : a->esize;
}

size_t kcoll_reduce_tmp_len(const kcoll_args_t *a)
{
    size_t off, len, c = kcoll_red_chunk(a);
    kcoll_red_slice(a, a->rank, &off, &len);
    /* incoming chunk + staged accumulator chunk; an in-place
     * Reduce_scatter keeps its whole block in TMP until the end */
    int rs = a->coll == KCOLL_COLL_REDUCE_SCATTER || a->coll == KCOLL_COLL_REDUCE_SCATTER_BLOCK;
    return 2 * c + (rs && a->in_place ? len : 0);
}

void kcoll_red_range(const kcoll_args_t *a, kcoll_sched_t *s, size_t off, size_t len,
                     const kcoll_red_dest_t *d)
{
    const int p = a->p, r = a->rank;
    const size_t c = kcoll_red_chunk(a);
    for (size_t x = 0; x < len; x += c) {
        size_t m = len - x < c ? len - x : c;
        kcoll_buf_t ab = d->staged ? KCOLL_BUF_TMP : d->acc;
        size_t ao = d->staged ? c : d->acc_off + x;
        int q = p - 2;
        if (p - 1 != r) {
            /* acc = r_{p-1} */
            kcoll_sched_read(s, p - 1, KCOLL_BUF_SEND, off + x, ab, ao, m);
        } else if (p > 1 && kcoll_op_has_rev(a->op)) {
            /* this rank is p-1: acc = r_{p-2}, then acc = acc op r_{p-1}
             * from SEND, the same operation without copying SEND first */
            kcoll_sched_read(s, p - 2, KCOLL_BUF_SEND, off + x, ab, ao, m);
            kcoll_sched_reduce_rev(s, ab, ao, KCOLL_BUF_SEND, off + x, m);
            q = p - 3;
        } else {
            kcoll_sched_copy(s, ab, ao, KCOLL_BUF_SEND, off + x, m);
        }
        /* acc = r_q op acc, q = p-2 .. 0 */
        for (; q >= 0; q--) {
            if (q == r) {
                kcoll_sched_reduce(s, ab, ao, KCOLL_BUF_SEND, off + x, m);
            } else {
                /* staged: with the direct engine, reduced from q's SEND in place */
                kcoll_sched_read_staged(s, q, KCOLL_BUF_SEND, off + x, KCOLL_BUF_TMP, 0, m);
                kcoll_sched_reduce(s, ab, ao, KCOLL_BUF_TMP, 0, m);
            }
        }
        if (d->staged && d->peer < 0)
            kcoll_sched_copy(s, d->dst, d->dst_off + x, KCOLL_BUF_TMP, c, m);
        else if (d->staged)
            kcoll_sched_write(s, d->peer, d->dst, d->dst_off + x, KCOLL_BUF_TMP, c, m);
    }
}

int kcoll_red_by_levels(const kcoll_args_t *a)
{
    return a->lv && a->lv->n > 0 && a->p > 1 &&
           !(a->op && a->op->kind == KCOLL_OP_USER && !kcoll_levels_runs(a->lv));
}

void kcoll_red_wait_all(const kcoll_args_t *a, kcoll_sched_t *s, kcoll_flag_t flag)
{
    for (int i = 1; i < a->p; i++)
        kcoll_sched_wait(s, (a->rank + i) % a->p, flag, 1);
}
