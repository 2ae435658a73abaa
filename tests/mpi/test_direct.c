/* The direct engine (docs/engines.md) through MPI_Alloc_mem:
 *
 *  1. Mixed buffers: collectives (Bcast, Allreduce, Alltoall, Gather,
 *     Reduce_scatter_block) where only some ranks' buffers, or only the
 *     send buffers, come from MPI_Alloc_mem: every step on a shareable
 *     buffer is a load or store, the others go through the team's engine;
 *     results byte for byte the host MPI's, and the statistics' transfers
 *     row shows bytes on engine:direct and on the other engine.
 *  2. Freed while mapped: the root broadcasts from an allocation the
 *     others map, then frees it while they still have it mapped, and
 *     broadcasts from a new one: the others must get the new data (not
 *     the freed allocation's), and drop their mapping of the freed one.
 *  3. 1000 rounds of MPI_Alloc_mem, a collective on the memory,
 *     MPI_Free_mem on every rank: afterwards each process has as many
 *     open files as before, no allocation of its own left mapped, and at
 *     most the last round's mappings of its peers' memory.
 * Also: MPI_Free_mem of the host's memory (KCOLL_ENGINE=cma: MPI_Alloc_mem
 * is the host's) still works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static uint64_t engine_bytes(const char *engine)
{
    uint64_t calls = 0, bytes = 0;
    kcoll_stats_get("transfers", engine, &calls, &bytes);
    return bytes;
}

/* Mappings of kcoll's allocations in this process (its own and its
 * peers'): the memfd's name in /proc/self/maps. */
static int alloc_mappings(void)
{
    return mt_maps_of("memfd:kcoll-alloc");
}

static void *get(size_t n, int shared)
{
    void *p = NULL;
    if (shared)
        MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p);
    else
        p = malloc(n);
    return p;
}

static void put(void *p, int shared)
{
    if (shared)
        MPI_Free_mem(p);
    else
        free(p);
}

static void fill(char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(i * 13 + (size_t)salt * 7 + (i >> 9));
}

/* 1. mode 0: rank 0's buffers shared, the others' private; mode 1: every
 * send buffer shared, every receive buffer private. */
static void mixed(int p, int rank, int mode)
{
    const size_t n = 96 << 10;
    const int ss = mode == 0 ? rank == 0 : 1, rs = mode == 0 ? rank == 0 : 0;
    char *sb = get((size_t)p * n, ss), *rb = get((size_t)p * n, rs), *ref = malloc((size_t)p * n);
    char *src = malloc((size_t)p * n);
    fill(src, (size_t)p * n, rank + mode * 10);
    /* Bcast from each end */
    for (int root = 0; root < p; root += p - 1) {
        fill(rb, n, root + 100);
        memcpy(ref, rb, n);
        PMPI_Bcast(ref, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
        MPI_Bcast(rb, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
        if (memcmp(ref, rb, n))
            mt_fail("mixed %d: MPI_Bcast root %d differs from the host's", mode, root);
        else
            mt_pass();
        if (p == 1)
            break;
    }
    memcpy(sb, src, (size_t)p * n);
    PMPI_Allreduce(sb, ref, (int)(n / 4), MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
    MPI_Allreduce(sb, rb, (int)(n / 4), MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
    if (memcmp(ref, rb, n))
        mt_fail("mixed %d: MPI_Allreduce differs from the host's", mode);
    else
        mt_pass();
    PMPI_Alltoall(sb, (int)n, MPI_BYTE, ref, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Alltoall(sb, (int)n, MPI_BYTE, rb, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    if (memcmp(ref, rb, (size_t)p * n))
        mt_fail("mixed %d: MPI_Alltoall differs from the host's", mode);
    else
        mt_pass();
    memset(rb, 0, (size_t)p * n);
    memset(ref, 0, (size_t)p * n);
    PMPI_Gather(sb, (int)n, MPI_BYTE, ref, (int)n, MPI_BYTE, p - 1, MPI_COMM_WORLD);
    MPI_Gather(sb, (int)n, MPI_BYTE, rb, (int)n, MPI_BYTE, p - 1, MPI_COMM_WORLD);
    if (rank == p - 1 && memcmp(ref, rb, (size_t)p * n))
        mt_fail("mixed %d: MPI_Gather differs from the host's", mode);
    else
        mt_pass();
    PMPI_Reduce_scatter_block(sb, ref, (int)(n / 4), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(sb, rb, (int)(n / 4), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (memcmp(ref, rb, n))
        mt_fail("mixed %d: MPI_Reduce_scatter_block differs from the host's", mode);
    else
        mt_pass();
    put(sb, ss);
    put(rb, rs);
    free(ref);
    free(src);
}

/* 2. freed while the others have it mapped */
static void freed_while_mapped(int p, int rank)
{
    const size_t n = 256 << 10;
    char *a = get(n, 1), *ref = malloc(n);
    fill(a, n, 1);
    MPI_Bcast(a, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD); /* the others map rank 0's a */
    int before = alloc_mappings();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Free_mem(a); /* while the others still have it mapped */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        MPI_Free_mem(a);
    char *b = get(n, 1);
    fill(b, n, rank == 0 ? 2 : 99);
    fill(ref, n, 2);
    MPI_Bcast(b, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (memcmp(b, ref, n))
        mt_fail("freed while mapped: the next broadcast delivered other data");
    else
        mt_pass();
    /* the freed allocations' mappings are gone, the new ones' there: as
     * many as before */
    int after = alloc_mappings();
    if (p > 1 && after > before)
        mt_fail("freed while mapped: %d mappings of kcoll's allocations after, %d before",
                after, before);
    else
        mt_pass();
    put(b, 1);
    free(ref);
}

/* 3. many allocations and frees */
static void cycles(int p, int rank)
{
    const size_t n = 64 << 10;
    int fds0 = mt_open_fds(), bad = 0;
    char *ref = malloc(n);
    for (int i = 0; i < 1000; i++) {
        char *a = get(n, 1);
        fill(a, n, rank == i % p ? i : -1);
        fill(ref, n, i);
        MPI_Bcast(a, (int)n, MPI_BYTE, i % p, MPI_COMM_WORLD);
        bad += memcmp(a, ref, n) != 0;
        put(a, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fds = mt_open_fds(), maps = alloc_mappings();
    if (bad)
        mt_fail("1000 rounds: %d broadcasts delivered wrong data", bad);
    else if (fds != fds0)
        mt_fail("1000 rounds: %d open files after, %d before", fds, fds0);
    else if (maps > p - 1)
        mt_fail("1000 rounds: %d mappings of kcoll's allocations left (at most %d)", maps, p - 1);
    else
        mt_pass();
    free(ref);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    kcoll_param_set("MIN_BYTES", "0");
    uint64_t d0 = engine_bytes("engine:direct"), c0 = engine_bytes("engine:cma");
    mixed(p, rank, 0);
    mixed(p, rank, 1);
    uint64_t d = engine_bytes("engine:direct") - d0, c = engine_bytes("engine:cma") - c0;
    uint64_t all[2] = {d, c}, sum[2];
    MPI_Allreduce(all, sum, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (p > 1 && (!sum[0] || !sum[1]))
        mt_fail("mixed buffers: %llu bytes by loads and stores, %llu through cma",
                (unsigned long long)sum[0], (unsigned long long)sum[1]);
    else
        mt_pass();
    freed_while_mapped(p, rank);
    cycles(p, rank);
    /* the host's memory (KCOLL_ENGINE=cma: MPI_Alloc_mem is the host's) */
    kcoll_param_set("ENGINE", "cma");
    void *h = NULL;
    if (MPI_Alloc_mem(4096, MPI_INFO_NULL, &h) != MPI_SUCCESS || MPI_Free_mem(h) != MPI_SUCCESS)
        mt_fail("the host's MPI_Alloc_mem / MPI_Free_mem failed");
    else
        mt_pass();
    kcoll_param_set("ENGINE", "auto");
    int rc = mt_finish("test_direct");
    MPI_Finalize();
    return rc;
}
