/* Runs of block moves (see runs.h). */
#include "sched/runs.h"

void kcoll_run_init(kcoll_run_t *r)
{
    r->len = 0;
}

void kcoll_run_flush(kcoll_sched_t *s, kcoll_run_t *r)
{
    if (r->len == 0)
        return;
    if (r->kind == KCOLL_STEP_READ)
        kcoll_sched_read(s, r->peer, (kcoll_buf_t)r->pbuf, r->poff, (kcoll_buf_t)r->lbuf, r->loff,
                         r->len);
    else if (r->kind == KCOLL_STEP_WRITE)
        kcoll_sched_write(s, r->peer, (kcoll_buf_t)r->pbuf, r->poff, (kcoll_buf_t)r->lbuf,
                          r->loff, r->len);
    else
        kcoll_sched_copy(s, (kcoll_buf_t)r->pbuf, r->poff, (kcoll_buf_t)r->lbuf, r->loff, r->len);
    r->len = 0;
}

void kcoll_run_add(kcoll_sched_t *s, kcoll_run_t *r, int kind, int peer, kcoll_buf_t pbuf,
                   size_t poff, kcoll_buf_t lbuf, size_t loff, size_t len)
{
    if (len == 0)
        return;
    if (r->len && r->kind == kind && r->peer == peer && r->pbuf == (int)pbuf &&
        r->lbuf == (int)lbuf && r->poff + r->len == poff && r->loff + r->len == loff) {
        r->len += len;
        return;
    }
    kcoll_run_flush(s, r);
    r->kind = kind;
    r->peer = peer;
    r->pbuf = (int)pbuf;
    r->lbuf = (int)lbuf;
    r->poff = poff;
    r->loff = loff;
    r->len = len;
}
