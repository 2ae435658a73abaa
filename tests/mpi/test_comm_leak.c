/* Teams are released with their communicators: 1000 times dup
 * MPI_COMM_WORLD, broadcast through kcoll (which creates a team and its
 * shared control segment), free the communicator. Afterwards this process
 * must hold no more file descriptors than before, no mapping of a kcoll
 * segment, and /dev/shm must hold no kcoll name at any point after a team
 * is set up. MPI_COMM_WORLD's team (set up at MPI_Init) is the one segment
 * mapped throughout; after MPI_Finalize none may stay mapped. Across (fake)
 * nodes each duplicate also makes and frees its node and leaders'
 * communicators and the node's team (docs/hierarchy.md). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

/* Mappings of kcoll's segments: their names in /proc/self/maps. */
#define count_segment_maps() mt_maps_of("/kcoll-")

/* Names of this job's segments: rank 0 of every communicator here is
 * world rank 0, whose pid starts the name ("kcoll-<pid>-..."). */
static int count_shm_names(int creator_pid)
{
    char prefix[32];
    int n = 0, len = snprintf(prefix, sizeof prefix, "kcoll-%d-", creator_pid);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, prefix, (size_t)len) == 0;
    if (d)
        closedir(d);
    return n;
}

#define ITER 1000
#define BYTES (64 << 10)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc(BYTES);
    memset(buf, rank, BYTES);
    int creator_pid = (int)getpid();
    MPI_Bcast(&creator_pid, 1, MPI_INT, 0, MPI_COMM_WORLD);

    /* warm up: the host MPI allocates its own things on first use */
    for (int i = 0; i < 10; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Bcast(buf, BYTES, MPI_BYTE, 0, c);
        MPI_Comm_free(&c);
    }
    int fds0 = mt_open_fds(), maps0 = count_segment_maps();
    /* on one node split_rw or knomial; across (fake) nodes the hierarchy */
    uint64_t calls0 = mt_calls("MPI_Bcast", "kcoll:split_rw") + mt_calls("MPI_Bcast", "kcoll:knomial") +
                      mt_calls("MPI_Bcast", "kcoll:leaders");

    int shm_seen = 0;
    for (int i = 0; i < ITER; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rank == 0)
            memset(buf, i & 0xff, BYTES);
        MPI_Bcast(buf, BYTES, MPI_BYTE, 0, c);
        if (buf[BYTES - 1] != (char)(i & 0xff))
            mt_fail("iteration %d: wrong data", i);
        shm_seen += count_shm_names(creator_pid);
        MPI_Comm_free(&c);
    }
    uint64_t calls1 = mt_calls("MPI_Bcast", "kcoll:split_rw") + mt_calls("MPI_Bcast", "kcoll:knomial") +
                      mt_calls("MPI_Bcast", "kcoll:leaders");
    int fds1 = mt_open_fds(), maps1 = count_segment_maps();

    if (calls1 - calls0 != ITER)
        mt_fail("kcoll ran %llu of %d broadcasts", (unsigned long long)(calls1 - calls0), ITER);
    else
        mt_pass();
    if (fds1 != fds0)
        mt_fail("file descriptors: %d before, %d after %d communicators", fds0, fds1, ITER);
    else
        mt_pass();
    /* one mapping, MPI_COMM_WORLD's (its team is set up at MPI_Init) */
    if (maps0 != 1 || maps1 != 1)
        mt_fail("kcoll segments mapped: %d before, %d after (expected MPI_COMM_WORLD's only)",
                maps0, maps1);
    else
        mt_pass();
    if (shm_seen)
        mt_fail("a kcoll name was seen in /dev/shm %d times after its team was set up", shm_seen);
    else
        mt_pass();

    /* the team of MPI_COMM_WORLD lives until MPI_Finalize */
    MPI_Bcast(buf, BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (count_segment_maps() != 1)
        mt_fail("MPI_COMM_WORLD's segment: %d mappings, expected 1", count_segment_maps());
    else
        mt_pass();
    int rc = mt_finish("test_comm_leak");
    MPI_Finalize();
    if (count_segment_maps() != 0) {
        fprintf(stderr, "FAIL: %d kcoll segments still mapped after MPI_Finalize\n",
                count_segment_maps());
        rc = 1;
    }
    free(buf);
    return rc;
}
