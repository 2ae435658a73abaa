/* MPI_Allgather(v), ring-neighbor-j (paper 003 section IV.C).
 *
 * Every rank reads only from one neighbour, (rank - j) mod p. In step
 * i = 1..p-1 it reads block (rank - i*j) mod p, the block that neighbour
 * obtained in step i-1 (in step 1: the neighbour's own block, read from
 * its send buffer). After step i a rank raises DATA to i; the reader of
 * step i waits for its neighbour's DATA >= i-1. A rank returns once its
 * own reader, (rank + j) mod p, has raised DATA to p-1, i.e. has finished
 * reading from it. The blocks forward along the ring, so each process is
 * read by exactly one peer at a time (no contention), but step i depends
 * on the neighbour's step i-1: the ring is a pipeline of p-1 hops.
 * j = 1 is the classic ring; other j spread the ring across sockets
 * differently. The blocks (rank - i*j) mod p are all distinct only when
 * gcd(p, j) = 1: other j are refused (kcoll_allgather_ring_neighbor_check).
 *
 * Cost (paper 003): T = (p-1)*(alpha + n*beta + l*ceil(n/s)) + waits.
 * Restriction: gcd(p, j) = 1. Any n, layout; in place or not.
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll/coll.h"

static int gcd(int x, int y)
{
    while (y) {
        int t = x % y;
        x = y;
        y = t;
    }
    return x;
}

int kcoll_allgather_ring_neighbor_check(int p, const kcoll_aparam_t *prm, char *why,
                                        size_t whylen)
{
    const int j = prm->j;
    if (j >= 1 && (p <= 1 || gcd(p, j % p) == 1))
        return 0;
    snprintf(why, whylen, "ring_neighbor needs gcd(p, j) = 1, but j=%d and p=%d share a factor",
             j, p);
    return -1;
}

kcoll_status_t kcoll_allgather_ring_order(const kcoll_args_t *a, kcoll_sched_t *s,
                                          const int *order, int pos)
{
    const int p = a->p, r = a->rank;
    const int from = order[(pos + p - 1) % p], reader = order[(pos + 1) % p];
    size_t off, len, poff;

    kcoll_allgather_own_block(a, s);
    if (p == 1)
        return s->err;
    for (int i = 1; i < p; i++) {
        const int b = order[(pos + p - i) % p];
        kcoll_buf_t pb = KCOLL_BUF_RECV;
        if (i == 1)
            pb = kcoll_ag_own(a, from, &poff);
        else {
            kcoll_sched_wait(s, from, KCOLL_FLAG_DATA, (uint32_t)(i - 1));
            kcoll_rblock(a, from, b, &poff);
        }
        len = kcoll_rblock(a, r, b, &off);
        kcoll_sched_read(s, from, pb, poff, KCOLL_BUF_RECV, off, len);
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)i);
    }
    kcoll_sched_wait(s, reader, KCOLL_FLAG_DATA, (uint32_t)(p - 1));
    return s->err;
}

kcoll_status_t kcoll_allgather_ring_neighbor(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p;
    char why[96];
    if (kcoll_allgather_ring_neighbor_check(p, &a->prm, why, sizeof why))
        return KCOLL_ERR_ARG;
    /* the ring's k-th place holds rank k*j mod p; this rank's place is
     * rank * j^-1 mod p */
    const int j = p > 1 ? a->prm.j % p : 0;
    int *order = malloc((size_t)p * sizeof *order), pos = 0;
    if (!order)
        return KCOLL_ERR_NOMEM;
    for (int k = 0; k < p; k++) {
        order[k] = (int)((long)k * j % p);
        if (order[k] == a->rank)
            pos = k;
    }
    kcoll_status_t rc = kcoll_allgather_ring_order(a, s, order, pos);
    free(order);
    return rc;
}
