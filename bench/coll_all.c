/* kcoll-bench: MPI_Allgather(v), MPI_Alltoall(v), MPI_Barrier. */
#include "bench.h"

const bench_coll_t bench_colls_all[] = {
    {NULL},
};
