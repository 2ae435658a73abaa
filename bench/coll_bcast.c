/* kcoll-bench: MPI_Bcast and MPI_Ibcast. */
#include "bench.h"

/* MPI_Bcast: one buffer of bytes on every rank. */
static void bcast_setup(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes)
{
    (void)nranks;
    *send_bytes = 0;
    *recv_bytes = bytes;
}

static int bcast_host(const bench_args_t *a)
{
    return PMPI_Bcast(a->recvbuf, (int)a->bytes, MPI_BYTE, a->root, a->comm);
}

static int bcast_kcoll(const bench_args_t *a)
{
    return MPI_Bcast(a->recvbuf, (int)a->bytes, MPI_BYTE, a->root, a->comm);
}

static int ibcast_host(const bench_args_t *a, MPI_Request *req)
{
    return PMPI_Ibcast(a->recvbuf, (int)a->bytes, MPI_BYTE, a->root, a->comm, req);
}

static int ibcast_kcoll(const bench_args_t *a, MPI_Request *req)
{
    return MPI_Ibcast(a->recvbuf, (int)a->bytes, MPI_BYTE, a->root, a->comm, req);
}

static void bcast_prepare(const bench_args_t *a, uint64_t seed)
{
    pattern_fill(a->recvbuf, a->bytes, seed, a->rank != a->root);
}

static void bcast_validate(const bench_args_t *a, uint64_t seed, bench_check_t *check)
{
    /* The root's buffer must be unchanged, every other must equal it. */
    pattern_check(a->recvbuf, a->bytes, seed, check);
}

const bench_coll_t bench_colls_bcast[] = {
    {"bcast", "MPI_Bcast", "BCAST_ALGO", bcast_setup, bcast_host, bcast_kcoll, ibcast_host,
     ibcast_kcoll, bcast_prepare, bcast_validate},
    {NULL},
};
