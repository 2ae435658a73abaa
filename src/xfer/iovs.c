/* Lists of memory pieces (see iovs.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "xfer/iovs.h"

int kcoll_iovs_push(kcoll_iovs_t *out, char *p, size_t len)
{
    if (len == 0)
        return 0;
    if (out->n > 0) {
        struct iovec *last = &out->v[out->n - 1];
        if ((char *)last->iov_base + last->iov_len == p) {
            last->iov_len += len;
            return 0;
        }
    }
    if (kcoll_grow((void **)&out->v, &out->cap, out->n, sizeof *out->v, 16))
        return -1;
    out->v[out->n++] = (struct iovec){p, len};
    return 0;
}

void kcoll_iovs_free(kcoll_iovs_t *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void kcoll_iovcur_advance(kcoll_iovcur_t *c, size_t bytes)
{
    while (bytes > 0 && c->i < c->n) {
        size_t left = c->v[c->i].iov_len - c->off;
        if (bytes < left) {
            c->off += bytes;
            return;
        }
        bytes -= left;
        c->i++;
        c->off = 0;
    }
}

size_t kcoll_iovcur_copy(kcoll_iovcur_t *c, char *flat, size_t len, int to_flat)
{
    size_t done = 0;
    while (done < len && c->i < c->n) {
        size_t left = c->v[c->i].iov_len - c->off, n = len - done < left ? len - done : left;
        char *piece = (char *)c->v[c->i].iov_base + c->off;
        if (to_flat)
            memcpy(flat + done, piece, n);
        else
            memcpy(piece, flat + done, n);
        done += n;
        if ((c->off += n) == c->v[c->i].iov_len) {
            c->i++;
            c->off = 0;
        }
    }
    return done;
}

int kcoll_iovcur_window(const kcoll_iovcur_t *c, struct iovec *out, int max, size_t limit,
                        size_t *bytes)
{
    size_t total = 0, off = c->off;
    int k = 0;
    for (int i = c->i; i < c->n && k < max && total < limit; i++, off = 0) {
        size_t len = c->v[i].iov_len - off;
        if (len == 0)
            continue;
        if (len > limit - total)
            len = limit - total;
        out[k].iov_base = (char *)c->v[i].iov_base + off;
        out[k].iov_len = len;
        total += len;
        k++;
    }
    *bytes = total;
    return k;
}

int kcoll_iovs_total(const struct iovec *v, int n, size_t *total)
{
    size_t sum = 0;
    if (n < 0 || (n > 0 && !v))
        return -1;
    for (int i = 0; i < n; i++) {
        if (v[i].iov_len > SIZE_MAX - sum)
            return -1;
        sum += v[i].iov_len;
    }
    *total = sum;
    return 0;
}
