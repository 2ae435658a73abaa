/* kcoll-bench's pieces shared by the collective tables (bench/coll_*.c):
 * what one call gets, how a result is checked, and the row type of the
 * table of collectives. Every row carries both forms of its collective,
 * the blocking call and the non-blocking start (MPI_Ibcast...), so that
 * the non-blocking form shares the row's buffers, setup and checks. */
#ifndef KCOLL_BENCH_H
#define KCOLL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* One call of a collective on this rank. */
typedef struct {
    void *sendbuf;
    void *recvbuf; /* MPI_Bcast: the buffer */
    size_t bytes;  /* the message size of the table row */
    int root;
    int rank;
    int nranks;
    MPI_Comm comm;
} bench_args_t;

/* Outcome of a byte-for-byte check. */
typedef struct {
    size_t bad;   /* number of wrong bytes */
    size_t first; /* offset of the first wrong byte */
    unsigned expected, got;
} bench_check_t;

typedef struct {
    const char *name;       /* -c NAME and the CSV "collective" field */
    const char *mpi_name;   /* "MPI_Bcast": headings and kcoll's statistics rows */
    const char *algo_param; /* kcoll parameter that forces the algorithm */
    /* Bytes of send and receive buffer one rank needs for a row of size bytes. */
    void (*setup)(size_t bytes, int nranks, size_t *send_bytes, size_t *recv_bytes);
    int (*host_call)(const bench_args_t *a);  /* PMPI_*: the host MPI */
    int (*kcoll_call)(const bench_args_t *a); /* MPI_*: kcoll when loaded */
    /* The non-blocking form: start the call and set *req, which the caller
     * completes (PMPI_Wait for host_start, MPI_Wait for kcoll_start). */
    int (*host_start)(const bench_args_t *a, MPI_Request *req);  /* PMPI_I* */
    int (*kcoll_start)(const bench_args_t *a, MPI_Request *req); /* MPI_I* */
    /* Validation: write the inputs derived from seed and poison the outputs,
     * then after the call check the outputs on this rank. */
    void (*prepare)(const bench_args_t *a, uint64_t seed);
    void (*validate)(const bench_args_t *a, uint64_t seed, bench_check_t *check);
} bench_coll_t;

/* A byte pattern that depends on seed and position; inverted writes its
 * complement (differs in every byte) to poison buffers. */
void pattern_fill(void *buf, size_t n, uint64_t seed, int inverted);
/* Compare buf with the pattern of seed; the first difference goes to check. */
void pattern_check(const void *buf, size_t n, uint64_t seed, bench_check_t *check);

/* The tables of collectives, one per file, each ended by a row whose name
 * is NULL. */
extern const bench_coll_t bench_colls_bcast[];   /* coll_bcast.c */
extern const bench_coll_t bench_colls_rooted[];  /* coll_rooted.c: Scatter, Gather (v) */
extern const bench_coll_t bench_colls_all[];     /* coll_all.c: Allgather, Alltoall (v), Barrier */
extern const bench_coll_t bench_colls_reduce[];  /* coll_reduce.c: reductions */

#endif
