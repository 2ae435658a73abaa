/* When cross-memory attach is not permitted, kcoll must notice it when the
 * team is set up, agree on it across ranks, print one warning line that
 * says why, how to fix it and what kcoll does instead, and still get the
 * right results:
 *  - KCOLL_ENGINE=auto (the default): kcoll runs its algorithms with two
 *    copies through shared memory (the shm engine): every call here is on
 *    a kcoll path, the statistics' transfers row counts bytes on
 *    engine:shm and none on engine:cma;
 *  - KCOLL_ENGINE=cma: kcoll cannot do what it was told, so the host MPI
 *    does every call (mpi:no_cma).
 * The denial is real: each rank drops CAP_SYS_PTRACE and marks itself
 * non-dumpable, so the kernel refuses process_vm_readv from its peers with
 * EPERM. (run_nocma.sh runs both settings and checks the warning line
 * appears once.) The program calls PMPI_Init itself, which also covers
 * kcoll starting without having seen MPI_Init. */
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mpitest.h"

#define BYTES (256 << 10)

static void forbid_cma(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) == 0) {
        d[0].effective &= ~(1u << CAP_SYS_PTRACE);
        d[0].permitted &= ~(1u << CAP_SYS_PTRACE);
        d[0].inheritable &= ~(1u << CAP_SYS_PTRACE);
        if (syscall(SYS_capset, &h, d) != 0)
            perror("capset");
    }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        perror("prctl(PR_SET_DUMPABLE)");
}

static uint64_t engine_bytes(const char *engine)
{
    uint64_t calls = 0, bytes = 0;
    kcoll_stats_get("transfers", engine, &calls, &bytes);
    return bytes;
}

/* The call on path `want` (kcoll:* or mpi:no_cma) and its result equal to
 * the host's. */
static void verdict(const char *what, int round, const char *coll, uint64_t before, int host,
                    const void *ref, const void *got, size_t len)
{
    uint64_t now = mt_calls(coll, host ? "mpi:no_cma" : "kcoll:*");
    if (memcmp(ref, got, len))
        mt_fail("%s round %d: result differs from the host MPI's", what, round);
    else if (now != before + 1)
        mt_fail("%s round %d: not counted on %s", what, round, host ? "mpi:no_cma" : "kcoll:*");
    else
        mt_pass();
}

int main(int argc, char **argv)
{
    /* PMPI_Init: the host starts alone (its own shared memory set up while
     * this process is still dumpable), kcoll starts lazily at its first
     * call, after the denial, and sets up MPI_COMM_WORLD's team then */
    PMPI_Init(&argc, &argv);
    forbid_cma();
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *engine = kcoll_param_get("ENGINE");
    const int host = engine && !strcmp(engine, "cma");

    char *src = malloc((size_t)p * BYTES), *ref = malloc((size_t)p * BYTES),
         *got = malloc((size_t)p * BYTES);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < (size_t)p * BYTES; i++)
            src[i] = (char)(i * 7 + (size_t)round + (size_t)rank * 13);
        /* MPI_Bcast */
        memcpy(ref, src, BYTES);
        memcpy(got, src, BYTES);
        uint64_t before = mt_calls("MPI_Bcast", host ? "mpi:no_cma" : "kcoll:*");
        PMPI_Bcast(ref, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Bcast(got, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
        verdict("MPI_Bcast", round, "MPI_Bcast", before, host, ref, got, BYTES);
        /* MPI_Allreduce */
        before = mt_calls("MPI_Allreduce", host ? "mpi:no_cma" : "kcoll:*");
        PMPI_Allreduce(src, ref, BYTES / 4, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
        MPI_Allreduce(src, got, BYTES / 4, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
        verdict("MPI_Allreduce", round, "MPI_Allreduce", before, host, ref, got, BYTES);
        /* MPI_Alltoall */
        before = mt_calls("MPI_Alltoall", host ? "mpi:no_cma" : "kcoll:*");
        PMPI_Alltoall(src, BYTES, MPI_BYTE, ref, BYTES, MPI_BYTE, MPI_COMM_WORLD);
        MPI_Alltoall(src, BYTES, MPI_BYTE, got, BYTES, MPI_BYTE, MPI_COMM_WORLD);
        verdict("MPI_Alltoall", round, "MPI_Alltoall", before, host, ref, got, (size_t)p * BYTES);
        /* MPI_Ibcast: the owner serves while it waits */
        memcpy(ref, src, BYTES);
        memcpy(got, src, BYTES);
        before = mt_calls("MPI_Ibcast", host ? "mpi:no_cma" : "kcoll:*");
        MPI_Request req;
        PMPI_Bcast(ref, BYTES, MPI_BYTE, p - 1, MPI_COMM_WORLD);
        MPI_Ibcast(got, BYTES, MPI_BYTE, p - 1, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        verdict("MPI_Ibcast", round, "MPI_Ibcast", before, host, ref, got, BYTES);
    }
    /* every byte through the engine that works, none through cma */
    if (!host && (engine_bytes("engine:shm") == 0 || engine_bytes("engine:cma") != 0))
        mt_fail("KCOLL_ENGINE=%s: %llu bytes through shm, %llu through cma", engine ? engine : "?",
                (unsigned long long)engine_bytes("engine:shm"),
                (unsigned long long)engine_bytes("engine:cma"));
    else
        mt_pass();
    free(src);
    free(ref);
    free(got);
    int rc = mt_finish("test_nocma");
    MPI_Finalize();
    return rc;
}
