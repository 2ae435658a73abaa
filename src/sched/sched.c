/* Building and printing schedules (see sched.h). */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "sched/sched.h"

void kcoll_sched_init(kcoll_sched_t *s)
{
    memset(s, 0, sizeof *s);
}

void kcoll_sched_reset(kcoll_sched_t *s)
{
    s->n = 0;
    s->nxc = 0;
    s->nxv = 0;
    s->err = KCOLL_OK;
}

void kcoll_sched_free(kcoll_sched_t *s)
{
    free(s->steps);
    free(s->xc);
    free(s->xv);
    kcoll_sched_init(s);
}

static kcoll_step_t *kcoll_sched_push(kcoll_sched_t *s, kcoll_step_kind_t kind)
{
    if (s->err)
        return NULL;
    if (kcoll_grow((void **)&s->steps, &s->cap, s->n, sizeof *s->steps, 32)) {
        s->err = KCOLL_ERR_NOMEM;
        return NULL;
    }
    kcoll_step_t *st = &s->steps[s->n++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    st->peer = -1;
    return st;
}

void kcoll_sched_expose(kcoll_sched_t *s, kcoll_buf_t buf)
{
    kcoll_step_t *st = kcoll_sched_push(s, KCOLL_STEP_EXPOSE);
    if (st)
        st->lbuf = (uint8_t)buf;
}

static void kcoll_sched_data(kcoll_sched_t *s, kcoll_step_kind_t kind, int peer,
                             kcoll_buf_t pbuf, size_t poff, kcoll_buf_t lbuf, size_t loff,
                             size_t len)
{
    if (len == 0)
        return;
    kcoll_step_t *st = kcoll_sched_push(s, kind);
    if (!st)
        return;
    st->peer = peer;
    st->pbuf = (uint8_t)pbuf;
    st->poff = poff;
    st->lbuf = (uint8_t)lbuf;
    st->loff = loff;
    st->len = len;
}

void kcoll_sched_read(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                      kcoll_buf_t lbuf, size_t loff, size_t len)
{
    kcoll_sched_data(s, KCOLL_STEP_READ, peer, pbuf, poff, lbuf, loff, len);
}

void kcoll_sched_read_staged(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                             kcoll_buf_t lbuf, size_t loff, size_t len)
{
    int n = s->n;
    kcoll_sched_data(s, KCOLL_STEP_READ, peer, pbuf, poff, lbuf, loff, len);
    if (s->n > n)
        s->steps[n].staged = 1;
}

void kcoll_sched_write(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                       kcoll_buf_t lbuf, size_t loff, size_t len)
{
    kcoll_sched_data(s, KCOLL_STEP_WRITE, peer, pbuf, poff, lbuf, loff, len);
}

void kcoll_sched_copy(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff, kcoll_buf_t sbuf,
                      size_t soff, size_t len)
{
    kcoll_sched_data(s, KCOLL_STEP_COPY, -1, dbuf, doff, sbuf, soff, len);
}

void kcoll_sched_reduce(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff, kcoll_buf_t sbuf,
                        size_t soff, size_t len)
{
    kcoll_sched_data(s, KCOLL_STEP_REDUCE, -1, dbuf, doff, sbuf, soff, len);
}

void kcoll_sched_reduce_rev(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff, kcoll_buf_t sbuf,
                            size_t soff, size_t len)
{
    int n = s->n;
    kcoll_sched_data(s, KCOLL_STEP_REDUCE, -1, dbuf, doff, sbuf, soff, len);
    if (s->n > n)
        s->steps[n].rev = 1;
}

/* SIGNAL and WAIT: a flag, a value in range, and for WAIT the peer. */
static void kcoll_sched_flag(kcoll_sched_t *s, kcoll_step_kind_t kind, int peer,
                             kcoll_flag_t flag, uint32_t value)
{
    if (value > KCOLL_FLAG_VALUE_MAX) {
        if (!s->err)
            s->err = KCOLL_ERR_ARG;
        return;
    }
    kcoll_step_t *st = kcoll_sched_push(s, kind);
    if (!st)
        return;
    st->peer = peer;
    st->flag = (uint8_t)flag;
    st->value = value;
}

void kcoll_sched_signal(kcoll_sched_t *s, kcoll_flag_t flag, uint32_t value)
{
    kcoll_sched_flag(s, KCOLL_STEP_SIGNAL, -1, flag, value);
}

void kcoll_sched_wait(kcoll_sched_t *s, int peer, kcoll_flag_t flag, uint32_t value)
{
    kcoll_sched_flag(s, KCOLL_STEP_WAIT, peer, flag, value);
}

void kcoll_sched_extern(kcoll_sched_t *s, int op)
{
    if (op < 0) {
        if (!s->err)
            s->err = KCOLL_ERR_ARG;
        return;
    }
    kcoll_step_t *st = kcoll_sched_push(s, KCOLL_STEP_EXTERN);
    if (st)
        st->value = (uint32_t)op;
}

static int kcoll_xcoll_is_v(int coll)
{
    return coll == KCOLL_XC_GATHERV || coll == KCOLL_XC_ALLGATHERV || coll == KCOLL_XC_SCATTERV ||
           coll == KCOLL_XC_REDUCE_SCATTER || coll == KCOLL_XC_ALLTOALLV;
}

/* Own a copy of x, a v form's n block lengths lens with it (into s->xv);
 * returns its number, or -1 (s->err set). */
static int kcoll_sched_push_xcoll(kcoll_sched_t *s, const kcoll_xcoll_t *x, const size_t *lens,
                                  int n)
{
    if (s->err)
        return -1;
    const int v = kcoll_xcoll_is_v(x->coll);
    if (x->coll >= KCOLL_NXC || x->sbuf >= KCOLL_NBUF || x->rbuf >= KCOLL_NBUF || x->group < 0 ||
        x->root < 0 || x->esize == 0 || x->len % x->esize ||
        (v && (n <= 0 || (x->esize != 1 && !kcoll_xcoll_reduces(x->coll)))) || (!v && n)) {
        s->err = KCOLL_ERR_ARG;
        return -1;
    }
    for (int i = 0; v && i < n; i++)
        if (lens[i] % x->esize) { /* a reduction's blocks are whole elements */
            s->err = KCOLL_ERR_ARG;
            return -1;
        }
    int fail = kcoll_grow((void **)&s->xc, &s->xccap, s->nxc, sizeof *s->xc, 4);
    while (!fail && s->nxv + n > s->xvcap) /* doubles each time */
        fail = kcoll_grow((void **)&s->xv, &s->xvcap, s->xvcap, sizeof *s->xv, 16);
    if (fail) {
        s->err = KCOLL_ERR_NOMEM;
        return -1;
    }
    kcoll_xcoll_t *d = &s->xc[s->nxc];
    *d = *x;
    d->vat = (uint32_t)s->nxv;
    d->nv = (uint32_t)n;
    if (n) {
        memcpy(s->xv + s->nxv, lens, (size_t)n * sizeof *lens);
        s->nxv += n;
    }
    return s->nxc++;
}

static void kcoll_sched_xcoll_step(kcoll_sched_t *s, int i, int part)
{
    if (i < 0)
        return;
    kcoll_step_t *st = kcoll_sched_push(s, KCOLL_STEP_EXTERN);
    if (st) {
        st->value = (uint32_t)i;
        st->flag = KCOLL_EXTERN_XCOLL;
        st->xpart = (uint8_t)part;
    }
}

void kcoll_sched_xcoll(kcoll_sched_t *s, const kcoll_xcoll_t *x)
{
    kcoll_sched_xcoll_step(s, kcoll_sched_push_xcoll(s, x, NULL, 0), KCOLL_XPART_WHOLE);
}

/* Own the v form *x of n blocks of lens[i] bytes (its len and esize set
 * here): the descriptor's number, or -1. */
static int kcoll_sched_push_xcoll_v(kcoll_sched_t *s, const kcoll_xcoll_t *x, const size_t *lens,
                                    int n)
{
    kcoll_xcoll_t y = *x;
    y.len = 0;
    y.esize = kcoll_xcoll_reduces(x->coll) ? x->esize : 1; /* a reduction keeps its element */
    for (int i = 0; i < n; i++)
        y.len += lens[i];
    return kcoll_sched_push_xcoll(s, &y, lens, n);
}

void kcoll_sched_xcoll_v(kcoll_sched_t *s, const kcoll_xcoll_t *x, const size_t *lens, int n)
{
    kcoll_sched_xcoll_step(s, kcoll_sched_push_xcoll_v(s, x, lens, n), KCOLL_XPART_WHOLE);
}

int kcoll_sched_xbegin(kcoll_sched_t *s, const kcoll_xcoll_t *x, const size_t *lens, int n)
{
    const int i =
        lens ? kcoll_sched_push_xcoll_v(s, x, lens, n) : kcoll_sched_push_xcoll(s, x, NULL, 0);
    kcoll_sched_xcoll_step(s, i, KCOLL_XPART_BEGIN);
    return s->err ? -1 : i;
}

void kcoll_sched_xend(kcoll_sched_t *s, int id)
{
    if (id < 0 || id >= s->nxc) {
        if (!s->err)
            s->err = KCOLL_ERR_ARG;
        return;
    }
    kcoll_sched_xcoll_step(s, id, KCOLL_XPART_END);
}

/* Bring src's host collectives into dst, buffers mapped by m (NULL: as
 * they are); returns what src's EXTERN steps that name them must be
 * shifted by. */
static uint32_t kcoll_sched_take_xcolls(kcoll_sched_t *dst, const kcoll_sched_t *src,
                                        const kcoll_bufmap_t *m)
{
    uint32_t shift = (uint32_t)dst->nxc;
    for (int i = 0; i < src->nxc && !dst->err; i++) {
        kcoll_xcoll_t x = src->xc[i];
        if (m) {
            x.soff += m->off[x.sbuf];
            x.sbuf = m->buf[x.sbuf];
            x.roff += m->off[x.rbuf];
            x.rbuf = m->buf[x.rbuf];
        }
        kcoll_sched_push_xcoll(dst, &x, kcoll_sched_xlens(src, &x), (int)x.nv);
    }
    return shift;
}

void kcoll_sched_append(kcoll_sched_t *dst, const kcoll_sched_t *src)
{
    uint32_t shift = kcoll_sched_take_xcolls(dst, src, NULL);
    for (int i = 0; i < src->n && !dst->err; i++) {
        kcoll_step_t *st = kcoll_sched_push(dst, (kcoll_step_kind_t)src->steps[i].kind);
        if (st) {
            *st = src->steps[i];
            if (st->kind == KCOLL_STEP_EXTERN && st->flag == KCOLL_EXTERN_XCOLL)
                st->value += shift;
        }
    }
    if (src->err && !dst->err)
        dst->err = src->err;
}

void kcoll_bufmap_init(kcoll_bufmap_t *m, int send_is_recv)
{
    for (int b = 0; b < KCOLL_NBUF; b++) {
        m->buf[b] = (uint8_t)b;
        m->off[b] = 0;
    }
    if (send_is_recv)
        m->buf[KCOLL_BUF_SEND] = KCOLL_BUF_RECV;
}

void kcoll_sched_append_mapped(kcoll_sched_t *dst, const kcoll_sched_t *src, const int *peer_of,
                               uint32_t base, uint32_t values, const kcoll_bufmap_t *map,
                               int nmap, int me)
{
    kcoll_bufmap_t id;
    kcoll_bufmap_init(&id, 0);
    const kcoll_bufmap_t *mine = !map ? &id : nmap == 1 ? map : &map[me];
    uint32_t shift = kcoll_sched_take_xcolls(dst, src, mine);
    for (int i = 0; i < src->n && !dst->err; i++) {
        kcoll_step_t *st = kcoll_sched_push(dst, (kcoll_step_kind_t)src->steps[i].kind);
        if (!st)
            break;
        *st = src->steps[i];
        switch ((kcoll_step_kind_t)st->kind) {
        case KCOLL_STEP_SIGNAL:
        case KCOLL_STEP_WAIT:
            if (st->value >= values || base > KCOLL_FLAG_VALUE_MAX - st->value) {
                dst->err = KCOLL_ERR_ARG; /* values past the phase's range */
                break;
            }
            st->value += base;
            if (st->kind == KCOLL_STEP_WAIT)
                st->peer = peer_of[st->peer];
            break;
        case KCOLL_STEP_READ:
        case KCOLL_STEP_WRITE: {
            const kcoll_bufmap_t *pm = !map ? &id : nmap == 1 ? map : &map[st->peer];
            st->poff += pm->off[st->pbuf];
            st->pbuf = pm->buf[st->pbuf];
            st->loff += mine->off[st->lbuf];
            st->lbuf = mine->buf[st->lbuf];
            st->peer = peer_of[st->peer];
            break;
        }
        case KCOLL_STEP_COPY:
        case KCOLL_STEP_REDUCE: /* both buffers local */
            st->doff += mine->off[st->dbuf];
            st->dbuf = mine->buf[st->dbuf];
            st->soff += mine->off[st->sbuf];
            st->sbuf = mine->buf[st->sbuf];
            break;
        case KCOLL_STEP_EXPOSE: /* the whole buffer */
            st->lbuf = mine->buf[st->lbuf];
            break;
        default: /* EXTERN: the collective's operation, or src's host collective */
            if (st->flag == KCOLL_EXTERN_XCOLL)
                st->value += shift;
            break;
        }
    }
    if (src->err && !dst->err)
        dst->err = src->err;
}

const char *kcoll_buf_name(int buf)
{
    static const char *const names[KCOLL_NBUF] = {"SEND", "RECV", "TMP"};
    return (unsigned)buf < KCOLL_NBUF ? names[buf] : "?";
}

const char *kcoll_xcoll_name(int coll)
{
    static const char *const names[KCOLL_NXC] = {"ALLREDUCE", "REDUCE", "BCAST", "ALLGATHER",
                                                 "REDUCE_SCATTER_BLOCK", "GATHER", "SCATTER",
                                                 "BARRIER", "GATHERV", "ALLGATHERV", "SCATTERV",
                                                 "REDUCE_SCATTER", "ALLTOALL", "ALLTOALLV",
                                                 "CALL"};
    return (unsigned)coll < KCOLL_NXC ? names[coll] : "?";
}

const char *kcoll_flag_name(int flag)
{
    static const char *const names[KCOLL_NFLAG] = {"DATA", "DONE", "AUX"};
    return (unsigned)flag < KCOLL_NFLAG ? names[flag] : "?";
}

void kcoll_sched_print(const kcoll_sched_t *s, int rank, FILE *out)
{
    for (int i = 0; i < s->n; i++) {
        const kcoll_step_t *st = &s->steps[i];
        fprintf(out, "rank %d: %3d ", rank, i);
        switch ((kcoll_step_kind_t)st->kind) {
        case KCOLL_STEP_EXPOSE:
            fprintf(out, "EXPOSE %s\n", kcoll_buf_name(st->lbuf));
            break;
        case KCOLL_STEP_READ:
            fprintf(out, "READ   %s[%zu..+%zu] <- rank %d %s[%zu]%s\n", kcoll_buf_name(st->lbuf),
                    st->loff, st->len, st->peer, kcoll_buf_name(st->pbuf), st->poff,
                    st->staged ? " (staged)" : "");
            break;
        case KCOLL_STEP_WRITE:
            fprintf(out, "WRITE  %s[%zu..+%zu] -> rank %d %s[%zu]\n", kcoll_buf_name(st->lbuf),
                    st->loff, st->len, st->peer, kcoll_buf_name(st->pbuf), st->poff);
            break;
        case KCOLL_STEP_COPY:
            fprintf(out, "COPY   %s[%zu..+%zu] -> %s[%zu]\n", kcoll_buf_name(st->sbuf), st->soff,
                    st->len, kcoll_buf_name(st->dbuf), st->doff);
            break;
        case KCOLL_STEP_REDUCE:
            fprintf(out, "REDUCE %s[%zu..+%zu] %s %s[%zu]\n", kcoll_buf_name(st->dbuf), st->doff,
                    st->len, st->rev ? "=op" : "op=", kcoll_buf_name(st->sbuf), st->soff);
            break;
        case KCOLL_STEP_SIGNAL:
            fprintf(out, "SIGNAL %s := %u\n", kcoll_flag_name(st->flag), st->value);
            break;
        case KCOLL_STEP_WAIT:
            fprintf(out, "WAIT   rank %d %s >= %u\n", st->peer, kcoll_flag_name(st->flag),
                    st->value);
            break;
        case KCOLL_STEP_EXTERN:
            if (st->flag == KCOLL_EXTERN_XCOLL && st->value < (uint32_t)s->nxc) {
                const kcoll_xcoll_t *x = &s->xc[st->value];
                static const char *const part[] = {"", " (begin)", " (end)"};
                fprintf(out, "EXTERN host %s #%u group %d root %d %s[%zu] -> %s[%zu] len %zu%s\n",
                        kcoll_xcoll_name(x->coll), st->value, x->group, x->root,
                        kcoll_buf_name(x->sbuf), x->soff, kcoll_buf_name(x->rbuf), x->roff, x->len,
                        part[st->xpart <= KCOLL_XPART_END ? st->xpart : 0]);
            } else
                fprintf(out, "EXTERN %u\n", st->value);
            break;
        }
    }
}
