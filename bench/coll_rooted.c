/* kcoll-bench: MPI_Scatter, MPI_Scatterv, MPI_Gather, MPI_Gatherv and
 * their non-blocking forms (MPI_Iscatter...).
 *
 * The row size is the bytes of one block (one rank's share), so a row of
 * 1 MiB at p ranks moves (p-1) MiB between processes plus the root's own
 * block. The v-rows call MPI_Scatterv/MPI_Gatherv with uniform counts and
 * displacements j*bytes, to compare the v path with the uniform one. Every
 * rank gets both buffers (the root's blocked one and its own block); only
 * the root's blocked buffer is used on the root. */
#include <stdlib.h>

#include "bench.h"

/* Seed of block j: disjoint from every other block's pattern. */
static uint64_t block_seed(uint64_t seed, int j)
{
    return seed ^ ((uint64_t)(j + 1) << 40);
}

/* Counts and displacements j*bytes for the v-rows, rebuilt only when the
 * row or the process count changes (outside the timing in practice: the
 * warm-up calls of a size rebuild it). */
static int *v_counts, *v_displs, v_n;
static size_t v_bytes;

static void v_layout(int n, size_t bytes)
{
    if (v_n == n && v_bytes == bytes && v_counts)
        return;
    free(v_counts);
    free(v_displs);
    v_counts = malloc((size_t)n * sizeof *v_counts);
    v_displs = malloc((size_t)n * sizeof *v_displs);
    if (!v_counts || !v_displs)
        abort();
    for (int j = 0; j < n; j++) {
        v_counts[j] = (int)bytes;
        v_displs[j] = (int)((size_t)j * bytes);
    }
    v_n = n;
    v_bytes = bytes;
}

static void scatter_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    *send_bytes = (size_t)nranks * bytes;
    *recv_bytes = bytes;
}

static void gather_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    *send_bytes = bytes;
    *recv_bytes = (size_t)nranks * bytes;
}

static int scatter_host(const bench_args_t *a)
{
    return PMPI_Scatter(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                        a->root, a->comm);
}

static int scatter_kcoll(const bench_args_t *a)
{
    return MPI_Scatter(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                       a->root, a->comm);
}

static int scatterv_host(const bench_args_t *a)
{
    v_layout(a->nranks, a->bytes);
    return PMPI_Scatterv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, (int)a->bytes,
                         MPI_BYTE, a->root, a->comm);
}

static int scatterv_kcoll(const bench_args_t *a)
{
    v_layout(a->nranks, a->bytes);
    return MPI_Scatterv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, (int)a->bytes,
                        MPI_BYTE, a->root, a->comm);
}

static int gather_host(const bench_args_t *a)
{
    return PMPI_Gather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                       a->root, a->comm);
}

static int gather_kcoll(const bench_args_t *a)
{
    return MPI_Gather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                      a->root, a->comm);
}

static int gatherv_host(const bench_args_t *a)
{
    v_layout(a->nranks, a->bytes);
    return PMPI_Gatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                        MPI_BYTE, a->root, a->comm);
}

static int gatherv_kcoll(const bench_args_t *a)
{
    v_layout(a->nranks, a->bytes);
    return MPI_Gatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                       MPI_BYTE, a->root, a->comm);
}

static int iscatter_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Iscatter(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes,
                         MPI_BYTE, a->root, a->comm, req);
}

static int iscatter_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Iscatter(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                        a->root, a->comm, req);
}

/* The counts and displacements stay untouched until the request completes:
 * v_layout rebuilds them only for another row size, after every call of
 * the previous size has completed. */
static int iscatterv_host(const bench_args_t *a, MPI_Request *req)
{
    v_layout(a->nranks, a->bytes);
    return PMPI_Iscatterv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, (int)a->bytes,
                          MPI_BYTE, a->root, a->comm, req);
}

static int iscatterv_kcoll(const bench_args_t *a, MPI_Request *req)
{
    v_layout(a->nranks, a->bytes);
    return MPI_Iscatterv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, (int)a->bytes,
                         MPI_BYTE, a->root, a->comm, req);
}

static int igather_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Igather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                        a->root, a->comm, req);
}

static int igather_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Igather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                       a->root, a->comm, req);
}

static int igatherv_host(const bench_args_t *a, MPI_Request *req)
{
    v_layout(a->nranks, a->bytes);
    return PMPI_Igatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                         MPI_BYTE, a->root, a->comm, req);
}

static int igatherv_kcoll(const bench_args_t *a, MPI_Request *req)
{
    v_layout(a->nranks, a->bytes);
    return MPI_Igatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                        MPI_BYTE, a->root, a->comm, req);
}

/* Add one block's check to the running total of a buffer's. */
static void check_block(const unsigned char *buf, size_t off, size_t n, uint64_t seed,
                        bench_check_t *total)
{
    bench_check_t c;
    pattern_check(buf + off, n, seed, &c);
    if (c.bad && !total->bad) {
        total->first = off + c.first;
        total->expected = c.expected;
        total->got = c.got;
    }
    total->bad += c.bad;
}

/* Scatter: the root's blocks carry the pattern of their block seed; every
 * receive buffer is poisoned with the inverse of what it must get. */
static void scatter_prepare(const bench_args_t *a, uint64_t seed)
{
    if (a->rank == a->root)
        for (int j = 0; j < a->nranks; j++)
            pattern_fill((char *)a->sendbuf + (size_t)j * a->bytes, a->bytes,
                         block_seed(seed, j), 0);
    pattern_fill(a->recvbuf, a->bytes, block_seed(seed, a->rank), 1);
}

static void scatter_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    check->bad = 0;
    check_block(a->recvbuf, 0, a->bytes, block_seed(seed, a->rank), check);
    /* the root's send buffer is unchanged */
    for (int j = 0; a->rank == a->root && j < a->nranks; j++)
        check_block(a->sendbuf, (size_t)j * a->bytes, a->bytes, block_seed(seed, j), check);
}

/* Gather: every rank's block carries the pattern of its block seed; the
 * root's receive buffer is poisoned with the inverse. */
static void gather_prepare(const bench_args_t *a, uint64_t seed)
{
    pattern_fill(a->sendbuf, a->bytes, block_seed(seed, a->rank), 0);
    for (int j = 0; a->rank == a->root && j < a->nranks; j++)
        pattern_fill((char *)a->recvbuf + (size_t)j * a->bytes, a->bytes, block_seed(seed, j), 1);
}

static void gather_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    check->bad = 0;
    check_block(a->sendbuf, 0, a->bytes, block_seed(seed, a->rank), check);
    for (int j = 0; a->rank == a->root && j < a->nranks; j++)
        check_block(a->recvbuf, (size_t)j * a->bytes, a->bytes, block_seed(seed, j), check);
}

const bench_coll_t bench_colls_rooted[] = {
    {"scatter", "MPI_Scatter", "SCATTER_ALGO", scatter_setup, scatter_host, scatter_kcoll,
     iscatter_host, iscatter_kcoll, scatter_prepare, scatter_validate},
    {"scatterv", "MPI_Scatterv", "SCATTER_ALGO", scatter_setup, scatterv_host, scatterv_kcoll,
     iscatterv_host, iscatterv_kcoll, scatter_prepare, scatter_validate},
    {"gather", "MPI_Gather", "GATHER_ALGO", gather_setup, gather_host, gather_kcoll,
     igather_host, igather_kcoll, gather_prepare, gather_validate},
    {"gatherv", "MPI_Gatherv", "GATHER_ALGO", gather_setup, gatherv_host, gatherv_kcoll,
     igatherv_host, igatherv_kcoll, gather_prepare, gather_validate},
    {NULL},
};
