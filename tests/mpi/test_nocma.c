/* When cross-memory attach is not permitted, kcoll must notice it when the
 * team is set up, agree on it across ranks, print one warning line that
 * says why and how to fix it, and let the host MPI do the work, with the
 * right result. The denial is real: each rank drops CAP_SYS_PTRACE and
 * marks itself non-dumpable, so the kernel refuses process_vm_readv from
 * its peers with EPERM. (run_nocma.sh checks the warning appears once.)
 * The program calls PMPI_Init itself, which also covers kcoll starting
 * without having seen MPI_Init. */
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

int main(int argc, char **argv)
{
    /* PMPI_Init: the host starts alone (its own shared memory set up while
     * this process is still dumpable), kcoll starts lazily at its first
     * call, after the denial, and sets up MPI_COMM_WORLD's team then */
    PMPI_Init(&argc, &argv);
    forbid_cma();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);

    char *ref = malloc(BYTES), *got = malloc(BYTES);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < BYTES; i++)
            ref[i] = got[i] = rank == 0 ? (char)(i * 7 + round) : 0;
        uint64_t before = mt_calls("MPI_Bcast", "mpi:no_cma");
        PMPI_Bcast(ref, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Bcast(got, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (memcmp(ref, got, BYTES))
            mt_fail("round %d: result differs from PMPI_Bcast", round);
        else if (mt_calls("MPI_Bcast", "mpi:no_cma") != before + 1)
            mt_fail("round %d: not counted as mpi:no_cma", round);
        else
            mt_pass();
    }
    free(ref);
    free(got);
    int rc = mt_finish("test_nocma");
    MPI_Finalize();
    return rc;
}
