/* kcoll-bench: MPI_Allgather(v), MPI_Alltoall(v), MPI_Barrier and their
 * non-blocking forms (MPI_Iallgather...).
 *
 * The size of a row is the bytes of one block (what one rank sends to one
 * other rank). The v-rows use uniform counts, so they show the cost of
 * the v path (the agreement on layouts) against the uniform one. The
 * barrier moves no data: every size row times the same barrier, which
 * gives as many independent measurements as there are rows. */
#include <stdlib.h>

#include "bench.h"

/* counts and displacements (in bytes, MPI_BYTE) of the v-rows: uniform
 * blocks of the row's size, set up before the row is timed */
static int *v_counts, *v_displs;
static int v_ranks;

static void v_setup(size_t bytes, int nranks)
{
    if (v_ranks != nranks) {
        free(v_counts);
        free(v_displs);
        v_counts = malloc((size_t)nranks * sizeof *v_counts);
        v_displs = malloc((size_t)nranks * sizeof *v_displs);
        v_ranks = nranks;
    }
    for (int q = 0; q < nranks; q++) {
        v_counts[q] = (int)bytes;
        v_displs[q] = (int)((size_t)q * bytes);
    }
}

/* Block-by-block check of p blocks against the patterns seed_of(q). */
static void check_blocks(const bench_args_t *a, uint64_t base, int alltoall, bench_check_t *check)
{
    check->bad = 0;
    for (int q = 0; q < a->nranks; q++) {
        bench_check_t c;
        uint64_t seed = alltoall ? base + (uint64_t)q * (uint64_t)a->nranks + (uint64_t)a->rank
                                 : base + (uint64_t)q;
        pattern_check((const char *)a->recvbuf + (size_t)q * a->bytes, a->bytes, seed, &c);
        if (c.bad && !check->bad) {
            *check = c;
            check->first += (size_t)q * a->bytes;
        } else if (c.bad) {
            check->bad += c.bad;
        }
    }
}

/* MPI_Allgather(v): one block sent, p blocks received. */
static void allgather_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    v_setup(bytes, nranks);
    *send_bytes = bytes;
    *recv_bytes = bytes * (size_t)nranks;
}

static int allgather_host(const bench_args_t *a)
{
    return PMPI_Allgather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                          a->comm);
}

static int allgather_kcoll(const bench_args_t *a)
{
    return MPI_Allgather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                         a->comm);
}

static int allgatherv_host(const bench_args_t *a)
{
    return PMPI_Allgatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                           MPI_BYTE, a->comm);
}

static int allgatherv_kcoll(const bench_args_t *a)
{
    return MPI_Allgatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                          MPI_BYTE, a->comm);
}

static int iallgather_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Iallgather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes,
                           MPI_BYTE, a->comm, req);
}

static int iallgather_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Iallgather(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes,
                          MPI_BYTE, a->comm, req);
}

static int iallgatherv_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Iallgatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                            MPI_BYTE, a->comm, req);
}

static int iallgatherv_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Iallgatherv(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                           MPI_BYTE, a->comm, req);
}

static void allgather_prepare(const bench_args_t *a, uint64_t seed)
{
    pattern_fill(a->sendbuf, a->bytes, seed + (uint64_t)a->rank, 0);
    pattern_fill(a->recvbuf, a->bytes * (size_t)a->nranks, seed, 1);
}

static void allgather_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    check_blocks(a, seed, 0, check);
}

/* MPI_Alltoall(v): p blocks sent, p blocks received. */
static void alltoall_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    v_setup(bytes, nranks);
    *send_bytes = bytes * (size_t)nranks;
    *recv_bytes = bytes * (size_t)nranks;
}

static int alltoall_host(const bench_args_t *a)
{
    return PMPI_Alltoall(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                         a->comm);
}

static int alltoall_kcoll(const bench_args_t *a)
{
    return MPI_Alltoall(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                        a->comm);
}

static int alltoallv_host(const bench_args_t *a)
{
    return PMPI_Alltoallv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                          MPI_BYTE, a->comm);
}

static int alltoallv_kcoll(const bench_args_t *a)
{
    return MPI_Alltoallv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, v_counts, v_displs,
                         MPI_BYTE, a->comm);
}

static int ialltoall_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ialltoall(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes,
                          MPI_BYTE, a->comm, req);
}

static int ialltoall_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ialltoall(a->sendbuf, (int)a->bytes, MPI_BYTE, a->recvbuf, (int)a->bytes, MPI_BYTE,
                         a->comm, req);
}

static int ialltoallv_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ialltoallv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, v_counts,
                           v_displs, MPI_BYTE, a->comm, req);
}

static int ialltoallv_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ialltoallv(a->sendbuf, v_counts, v_displs, MPI_BYTE, a->recvbuf, v_counts,
                          v_displs, MPI_BYTE, a->comm, req);
}

static void alltoall_prepare(const bench_args_t *a, uint64_t seed)
{
    /* block j of rank r: pattern seed + r*p + j */
    for (int j = 0; j < a->nranks; j++)
        pattern_fill((char *)a->sendbuf + (size_t)j * a->bytes, a->bytes,
                     seed + (uint64_t)a->rank * (uint64_t)a->nranks + (uint64_t)j, 0);
    pattern_fill(a->recvbuf, a->bytes * (size_t)a->nranks, seed, 1);
}

static void alltoall_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    check_blocks(a, seed, 1, check);
}

/* MPI_Barrier: no buffers. */
static void barrier_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    (void)bytes;
    (void)nranks;
    *send_bytes = 0;
    *recv_bytes = 0;
}

static int barrier_host(const bench_args_t *a)
{
    return PMPI_Barrier(a->comm);
}

static int barrier_kcoll(const bench_args_t *a)
{
    return MPI_Barrier(a->comm);
}

static int ibarrier_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ibarrier(a->comm, req);
}

static int ibarrier_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ibarrier(a->comm, req);
}

static void barrier_prepare(const bench_args_t *a, uint64_t seed)
{
    (void)a;
    (void)seed;
}

static void barrier_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    (void)a;
    (void)seed;
    check->bad = 0;
}

const bench_coll_t bench_colls_all[] = {
    {"allgather", "MPI_Allgather", "ALLGATHER_ALGO", allgather_setup, allgather_host,
     allgather_kcoll, iallgather_host, iallgather_kcoll, allgather_prepare, allgather_validate},
    {"allgatherv", "MPI_Allgatherv", "ALLGATHER_ALGO", allgather_setup, allgatherv_host,
     allgatherv_kcoll, iallgatherv_host, iallgatherv_kcoll, allgather_prepare,
     allgather_validate},
    {"alltoall", "MPI_Alltoall", "ALLTOALL_ALGO", alltoall_setup, alltoall_host, alltoall_kcoll,
     ialltoall_host, ialltoall_kcoll, alltoall_prepare, alltoall_validate},
    {"alltoallv", "MPI_Alltoallv", "ALLTOALL_ALGO", alltoall_setup, alltoallv_host,
     alltoallv_kcoll, ialltoallv_host, ialltoallv_kcoll, alltoall_prepare, alltoall_validate},
    {"barrier", "MPI_Barrier", "BARRIER_ALGO", barrier_setup, barrier_host, barrier_kcoll,
     ibarrier_host, ibarrier_kcoll, barrier_prepare, barrier_validate},
    {NULL},
};
