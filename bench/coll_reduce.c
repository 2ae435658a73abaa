/* kcoll-bench: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter. */
#include "bench.h"

const bench_coll_t bench_colls_reduce[] = {
    {NULL},
};
