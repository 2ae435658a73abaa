/* kcoll-bench: MPI_Scatter, MPI_Scatterv, MPI_Gather, MPI_Gatherv. */
#include "bench.h"

const bench_coll_t bench_colls_rooted[] = {
    {NULL},
};
