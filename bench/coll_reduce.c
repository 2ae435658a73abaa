/* kcoll-bench: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block,
 * MPI_Reduce_scatter and their non-blocking forms (MPI_Ireduce...), all on
 * int32 with MPI_SUM. The row size is the
 * per-rank vector for Reduce and Allreduce and one rank's block for the
 * Reduce_scatter pair (the vector is then p blocks). Rank q's element i
 * is base(seed, i) + q, so every result element is
 * p * base(seed, i) + p(p-1)/2 (modulo 2^32). */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static uint32_t base(uint64_t seed, size_t i)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + i;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (uint32_t)x;
}

static void fill_contrib(const bench_args_t *a, uint64_t seed, size_t n, size_t first)
{
    uint32_t *s = a->sendbuf;
    for (size_t i = 0; i < n; i++)
        s[i] = base(seed, first + i) + (uint32_t)a->rank;
}

static void check_sum(const bench_args_t *a, uint64_t seed, const uint32_t *r, size_t n,
                      size_t first, bench_check_t *check)
{
    const uint32_t p = (uint32_t)a->nranks, tri = p * (p - 1) / 2;
    memset(check, 0, sizeof *check);
    for (size_t i = 0; i < n; i++) {
        uint32_t want = p * base(seed, first + i) + tri;
        if (r[i] != want && check->bad++ == 0) {
            check->first = i * 4;
            check->expected = want & 0xff;
            check->got = r[i] & 0xff;
        }
        if (r[i] != want)
            check->bad += 3; /* count bytes, roughly */
    }
}

/* MPI_Reduce, MPI_Allreduce: vectors of bytes/4 elements */
static void vec_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    (void)nranks;
    *send_bytes = bytes;
    *recv_bytes = bytes;
}

static int reduce_host(const bench_args_t *a)
{
    return PMPI_Reduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM, a->root,
                       a->comm);
}
static int reduce_kcoll(const bench_args_t *a)
{
    return MPI_Reduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM, a->root,
                      a->comm);
}
static int allreduce_host(const bench_args_t *a)
{
    return PMPI_Allreduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM,
                          a->comm);
}
static int allreduce_kcoll(const bench_args_t *a)
{
    return MPI_Allreduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM,
                         a->comm);
}
static int ireduce_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ireduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM,
                        a->root, a->comm, req);
}
static int ireduce_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ireduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM, a->root,
                       a->comm, req);
}
static int iallreduce_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Iallreduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM,
                           a->comm, req);
}
static int iallreduce_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Iallreduce(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T, MPI_SUM,
                          a->comm, req);
}

static void vec_prepare(const bench_args_t *a, uint64_t seed)
{
    fill_contrib(a, seed, a->bytes / 4, 0);
    memset(a->recvbuf, 0xa5, a->bytes);
}

static void reduce_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    memset(check, 0, sizeof *check);
    if (a->rank == a->root)
        check_sum(a, seed, a->recvbuf, a->bytes / 4, 0, check);
}

static void allreduce_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    check_sum(a, seed, a->recvbuf, a->bytes / 4, 0, check);
}

/* MPI_Reduce_scatter(_block): p blocks of bytes/4 elements in, one out */
static void rs_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    *send_bytes = bytes * (size_t)nranks;
    *recv_bytes = bytes;
}

static const int *rs_counts(const bench_args_t *a)
{
    static int *counts;
    static int n;
    if (n < a->nranks) {
        free(counts);
        counts = malloc((size_t)a->nranks * sizeof *counts);
        n = counts ? a->nranks : 0;
    }
    for (int q = 0; q < n; q++)
        counts[q] = (int)(a->bytes / 4);
    return counts;
}

static int rsb_host(const bench_args_t *a)
{
    return PMPI_Reduce_scatter_block(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T,
                                     MPI_SUM, a->comm);
}
static int rsb_kcoll(const bench_args_t *a)
{
    return MPI_Reduce_scatter_block(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T,
                                    MPI_SUM, a->comm);
}
static int rs_host(const bench_args_t *a)
{
    return PMPI_Reduce_scatter(a->sendbuf, a->recvbuf, rs_counts(a), MPI_INT32_T, MPI_SUM,
                               a->comm);
}
static int rs_kcoll(const bench_args_t *a)
{
    return MPI_Reduce_scatter(a->sendbuf, a->recvbuf, rs_counts(a), MPI_INT32_T, MPI_SUM,
                              a->comm);
}
static int irsb_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T,
                                      MPI_SUM, a->comm, req);
}
static int irsb_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, (int)(a->bytes / 4), MPI_INT32_T,
                                     MPI_SUM, a->comm, req);
}
/* rs_counts rewrites its array in place with the same values at every
 * call of a size, so a pending request never sees its counts change. */
static int irs_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ireduce_scatter(a->sendbuf, a->recvbuf, rs_counts(a), MPI_INT32_T, MPI_SUM,
                                a->comm, req);
}
static int irs_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ireduce_scatter(a->sendbuf, a->recvbuf, rs_counts(a), MPI_INT32_T, MPI_SUM,
                               a->comm, req);
}

static void rs_prepare(const bench_args_t *a, uint64_t seed)
{
    fill_contrib(a, seed, a->bytes / 4 * (size_t)a->nranks, 0);
    memset(a->recvbuf, 0xa5, a->bytes);
}

static void rs_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    check_sum(a, seed, a->recvbuf, a->bytes / 4, a->bytes / 4 * (size_t)a->rank, check);
}

const bench_coll_t bench_colls_reduce[] = {
    {"reduce", "MPI_Reduce", "REDUCE_ALGO", vec_setup, reduce_host, reduce_kcoll, ireduce_host,
     ireduce_kcoll, vec_prepare, reduce_validate},
    {"allreduce", "MPI_Allreduce", "ALLREDUCE_ALGO", vec_setup, allreduce_host, allreduce_kcoll,
     iallreduce_host, iallreduce_kcoll, vec_prepare, allreduce_validate},
    {"reduce_scatter_block", "MPI_Reduce_scatter_block", "REDUCE_SCATTER_ALGO", rs_setup,
     rsb_host, rsb_kcoll, irsb_host, irsb_kcoll, rs_prepare, rs_validate},
    {"reduce_scatter", "MPI_Reduce_scatter", "REDUCE_SCATTER_ALGO", rs_setup, rs_host, rs_kcoll,
     irs_host, irs_kcoll, rs_prepare, rs_validate},
    {NULL},
};
