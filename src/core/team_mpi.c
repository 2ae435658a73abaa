/* Teams of MPI communicators (DESIGN.md section 4).
 *
 * Creation, collective over the communicator, on its first eligible call:
 *  1. Split the communicator by shared memory: if the node's part is not
 *     the whole communicator, it spans several nodes; the team is marked
 *     "host MPI" for good (hierarchical support comes later).
 *  2. Every rank makes itself readable by its peers (Yama, see xfer/cma.c).
 *  3. Rank 0 creates the control segment with shm_open (mode 0600, a name
 *     made of its pid, a counter and random bits, O_EXCL), sizes and maps
 *     it and broadcasts the name; the others open and map it.
 *  4. All agree that everyone attached (allreduce); rank 0 then unlinks the
 *     name at once, so nothing is left in /dev/shm even if a rank is killed
 *     later: the memory lives exactly as long as some rank maps it.
 *  5. Each rank really reads a word of its right neighbour's private
 *     memory with process_vm_readv, and all agree on the result. If any
 *     read failed, the lowest failing rank prints one warning line (once
 *     per process) saying why and how to fix it, and the communicator uses
 *     the host MPI.
 * The team is stored on the communicator with an attribute whose delete
 * callback unmaps the segment; MPI_Comm_dup does not copy it (a duplicate
 * has its own collectives, so its own sequence numbers and team).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/team_mpi.h"
#include "xfer/cma.h"

typedef struct kcoll_mteam {
    kcoll_team_t team;
    int usable;            /* 1: kcoll runs this communicator's collectives */
    kcoll_reason_t reason; /* why not, when usable == 0 */
    MPI_Comm comm;         /* not owned: the communicator the attribute sits on */
    struct kcoll_mteam *prev, *next;
} kcoll_mteam_t;

static int kcoll_keyval = MPI_KEYVAL_INVALID;
static kcoll_mteam_t *kcoll_mteams; /* every team alive, for MPI_Finalize */
static pthread_mutex_t kcoll_mteams_lock = PTHREAD_MUTEX_INITIALIZER;

static void kcoll_mteam_destroy(kcoll_mteam_t *mt)
{
    pthread_mutex_lock(&kcoll_mteams_lock);
    if (mt->prev)
        mt->prev->next = mt->next;
    else
        kcoll_mteams = mt->next;
    if (mt->next)
        mt->next->prev = mt->prev;
    pthread_mutex_unlock(&kcoll_mteams_lock);
    if (mt->usable) {
        munmap(mt->team.seg, mt->team.seg_len);
        kcoll_team_fini(&mt->team);
    }
    free(mt);
}

static int kcoll_mteam_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    kcoll_mteam_destroy(attr);
    return MPI_SUCCESS;
}

int kcoll_teams_init(void)
{
    if (kcoll_keyval != MPI_KEYVAL_INVALID)
        return 0;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, kcoll_mteam_delete_fn, &kcoll_keyval,
                                   NULL) == MPI_SUCCESS
               ? 0
               : -1;
}

void kcoll_teams_finalize(void)
{
    if (kcoll_keyval == MPI_KEYVAL_INVALID)
        return;
    for (;;) {
        pthread_mutex_lock(&kcoll_mteams_lock);
        kcoll_mteam_t *mt = kcoll_mteams;
        pthread_mutex_unlock(&kcoll_mteams_lock);
        if (!mt)
            break;
        /* calls kcoll_mteam_delete_fn, which unlinks mt */
        if (PMPI_Comm_delete_attr(mt->comm, kcoll_keyval) != MPI_SUCCESS)
            kcoll_mteam_destroy(mt);
    }
    PMPI_Comm_free_keyval(&kcoll_keyval);
}

/* Steps 3-4: the shared control segment. Returns 0 on this rank's success. */
static int kcoll_mteam_map(kcoll_mteam_t *mt, MPI_Comm comm, int p, int rank)
{
    /* relaxed: only makes names unique between threads; orders nothing */
    static _Atomic unsigned counter;
    char name[64] = "";
    size_t len = kcoll_team_seg_len(p);
    void *seg = MAP_FAILED;
    int ok = 1, all_ok = 0;

    if (rank == 0) {
        snprintf(name, sizeof name, "/kcoll-%d-%u-%lx", (int)getpid(),
                 atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed),
                 (unsigned long)kcoll_now_ns());
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0) {
            kcoll_warn("shm_open(%s) failed: %s; this communicator uses the host MPI", name,
                       strerror(errno));
            name[0] = '\0';
        } else {
            if (ftruncate(fd, (off_t)len) == 0)
                seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            if (seg == MAP_FAILED) {
                kcoll_warn("sizing or mapping %zu bytes of shared memory failed: %s; this "
                           "communicator uses the host MPI", len, strerror(errno));
                shm_unlink(name);
                name[0] = '\0';
            } else {
                kcoll_team_seg_init(seg, p);
            }
        }
    }
    PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm);
    if (!name[0])
        return -1; /* every rank sees the empty name */

    if (rank != 0) {
        int fd = shm_open(name, O_RDWR, 0600);
        if (fd >= 0) {
            seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
        }
    }
    if (seg == MAP_FAILED || kcoll_team_attach(&mt->team, seg, len, p, rank) != KCOLL_OK)
        ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (rank == 0)
        shm_unlink(name); /* everyone has it mapped (or gave up): no name is needed any more */
    if (all_ok && kcoll_team_load_pids(&mt->team) == KCOLL_OK)
        return 0;
    if (ok)
        kcoll_team_fini(&mt->team);
    if (seg != MAP_FAILED)
        munmap(seg, len);
    return -1;
}

/* Step 5: can every rank read its neighbour's memory? Agreed by all. */
static int kcoll_mteam_probe(kcoll_mteam_t *mt, MPI_Comm comm, const char *allow_why)
{
    static int warned;
    kcoll_team_t *t = &mt->team;
    int p = t->p, rank = t->rank, peer = (rank + 1) % p;
    char why[320] = "";
    kcoll_slot_t *ps = &t->slots[peer];
    kcoll_status_t st = kcoll_cma_probe_peer(t->pids[peer], (const void *)(uintptr_t)ps->probe_addr,
                                             ps->probe_val, why, sizeof why);
    int fail_rank = st == KCOLL_OK ? p : rank, first_fail = p;
    PMPI_Allreduce(&fail_rank, &first_fail, 1, MPI_INT, MPI_MIN, comm);
    if (first_fail == p)
        return 0;
    if (first_fail == rank && !warned) {
        warned = 1;
        kcoll_warn("single-copy transfers are not permitted here, so communicators use the host "
                   "MPI: %s%s%s",
                   why, allow_why[0] ? "; also: " : "", allow_why);
    }
    return -1;
}

kcoll_team_t *kcoll_team_get(MPI_Comm comm, kcoll_reason_t *why)
{
    kcoll_mteam_t *mt = NULL;
    int flag = 0, p, rank, node_p;
    MPI_Comm node;

    if (kcoll_keyval == MPI_KEYVAL_INVALID) {
        *why = KCOLL_R_TEAM_FAILED;
        return NULL;
    }
    PMPI_Comm_get_attr(comm, kcoll_keyval, &mt, &flag);
    if (flag && mt) {
        *why = mt->reason;
        return mt->usable ? &mt->team : NULL;
    }

    mt = calloc(1, sizeof *mt);
    int alloc_ok = mt != NULL, all_alloc_ok = 0;
    PMPI_Allreduce(&alloc_ok, &all_alloc_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_alloc_ok) {
        free(mt);
        *why = KCOLL_R_TEAM_FAILED;
        return NULL; /* not cached: the next call tries again */
    }
    mt->comm = comm;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);

    /* 1. one node? */
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &node_p);
    PMPI_Comm_free(&node);
    if (node_p != p) {
        mt->reason = KCOLL_R_MULTINODE;
        goto cache;
    }
    /* 2. let peers read this process */
    char allow_why[200] = "";
    kcoll_cma_allow_peers(allow_why, sizeof allow_why);
    /* 3, 4. control segment */
    if (kcoll_mteam_map(mt, comm, p, rank)) {
        mt->reason = KCOLL_R_TEAM_FAILED;
        goto cache;
    }
    /* 5. permission, agreed */
    if (kcoll_mteam_probe(mt, comm, allow_why)) {
        munmap(mt->team.seg, mt->team.seg_len);
        kcoll_team_fini(&mt->team);
        mt->reason = KCOLL_R_NO_CMA;
        goto cache;
    }
    mt->usable = 1;

cache:
    pthread_mutex_lock(&kcoll_mteams_lock);
    mt->next = kcoll_mteams;
    if (kcoll_mteams)
        kcoll_mteams->prev = mt;
    kcoll_mteams = mt;
    pthread_mutex_unlock(&kcoll_mteams_lock);
    PMPI_Comm_set_attr(comm, kcoll_keyval, mt);
    *why = mt->reason;
    return mt->usable ? &mt->team : NULL;
}
