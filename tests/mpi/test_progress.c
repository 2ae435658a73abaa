/* Progress of the host MPI while a rank waits inside kcoll.
 *
 * Every rank starts a host non-blocking collective that kcoll does not
 * take (MPI_Iscan, 1 MiB, on a duplicate communicator); the last rank
 * then tests it in a loop until it completes, and only then joins a
 * blocking MPI_Bcast that kcoll runs (1 MiB, on another communicator).
 * The other ranks go straight into the broadcast and wait there for the
 * last rank. The last rank's part of the scan needs messages its peers
 * send only as their own parts of the scan advance, which happens only
 * while they are inside an MPI call that runs the host's progress: inside
 * kcoll's wait. Without the host's progress there the job hangs (the
 * watchdog ends it with a message); with it, both results are checked
 * against what they must be, and the broadcast against kcoll's statistics.
 * Several rounds, alternating the broadcast's root. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

#define N (256 * 1024) /* ints: 1 MiB */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    wd_init("test_progress");
    MPI_Comm scan_comm, bcast_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &scan_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &bcast_comm);
    int *sv = malloc(N * sizeof(int)), *sr = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    if (!sv || !sr || !b)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int round = 0; round < 6; round++) {
        const int root = round % p;
        wd_note("round %d: the last rank tests its MPI_Iscan while the others wait in kcoll's "
                "MPI_Bcast (root %d)",
                round, root);
        wd_arm(60);
        for (int i = 0; i < N; i++) {
            sv[i] = (me + 1) * (i % 1000 + round);
            b[i] = me == root ? i ^ (round * 7919) : -1;
        }
        const uint64_t k0 = mt_calls("MPI_Bcast", "kcoll:*");
        MPI_Request req;
        MPI_Iscan(sv, sr, N, MPI_INT, MPI_SUM, scan_comm, &req);
        if (me == p - 1) {
            int flag = 0;
            while (!flag) {
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                if (!flag)
                    sched_yield();
            }
        }
        MPI_Bcast(b, N, MPI_INT, root, bcast_comm);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        wd_arm(0);
        const uint64_t k1 = mt_calls("MPI_Bcast", "kcoll:*");
        int bad_scan = -1, bad_bcast = -1;
        const int tri = (me + 1) * (me + 2) / 2; /* 1 + 2 + ... + (me + 1) */
        for (int i = 0; i < N && (bad_scan < 0 || bad_bcast < 0); i++) {
            if (bad_scan < 0 && sr[i] != tri * (i % 1000 + round))
                bad_scan = i;
            if (bad_bcast < 0 && b[i] != (i ^ (round * 7919)))
                bad_bcast = i;
        }
        if (bad_scan >= 0)
            mt_fail("round %d: MPI_Iscan's result differs at element %d", round, bad_scan);
        else
            mt_pass();
        if (bad_bcast >= 0)
            mt_fail("round %d: MPI_Bcast's result differs at element %d", round, bad_bcast);
        else
            mt_pass();
        if (p > 1 && k1 == k0)
            mt_fail("round %d: the 1 MiB MPI_Bcast did not run on kcoll's paths", round);
        else
            mt_pass();
    }
    free(sv);
    free(sr);
    free(b);
    MPI_Comm_free(&scan_comm);
    MPI_Comm_free(&bcast_comm);
    const int rc = mt_finish("test_progress");
    MPI_Finalize();
    return rc;
}
