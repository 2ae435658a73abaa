/* The host MPI's own progress engine advances kcoll's requests, where the
 * host offers a way in; and which threads may call MPI while they advance
 * them (not the helper thread of mpi/drive.c, not the host's calls into
 * kcoll).
 *
 * Open MPI (opal_progress_register, exported by libopen-pal and used by
 * Open MPI's own components to be called in every turn of its progress
 * loop): kcoll registers a callback, so its requests advance inside every
 * Open MPI call that waits, blocking point-to-point and the host's own
 * collectives included. The symbol is looked up at run time, so the same
 * library works where it does not exist.
 *
 * MPICH 4.0 has no such hook for foreign requests; there kcoll's requests
 * advance in kcoll's and the completion calls (pmpi/request.c) and through
 * the poll and wait functions of their generalized-request class.
 *
 * Calls across nodes advance here too: their host collectives between
 * nodes are MPI calls (a host non-blocking collective on a group's
 * communicator, PMPI_Test), made from inside Open MPI's progress loop,
 * where Open MPI's own non-blocking collectives (libnbc) start their
 * point-to-point operations as well. So a rank blocked in any Open MPI
 * call (a host collective on another communicator included) still starts
 * its part of a call across nodes that its peers wait for.
 *
 * The callback does nothing while no kcoll request is pending, and
 * kcoll_progress does not recurse into itself (the MPI calls it makes run
 * Open MPI's progress loop, and with it this callback, again). It is
 * registered as a low-priority callback (opal_progress_register_lp, in
 * Open MPI 3.0 and later), which the loop calls in one turn of eight:
 * every callback of the loop runs in every turn of every wait of every
 * Open MPI call, kcoll's calls handed to the host included, and as an
 * every-turn callback it cost a call that Open MPI does in 1 us some 2-3%
 * (a 2-rank MPI_Allreduce of 8 B-2 KiB, off-cache, which kcoll hands to
 * the host: 0.94-0.95x the host's own call, 0.97x as a low-priority one;
 * docs/adapt.md, "From cold"). A kcoll request then advances in Open
 * MPI's waits every eighth turn, well under a microsecond apart.
 */
#include <dlfcn.h>
#include <string.h>

#include "mpi/host.h"

/* This thread is mpi/drive.c's helper: it advances kcoll's requests and
 * makes no MPI call (what needs one is left or handed back to the calling
 * thread). Initial-exec TLS: no __tls_get_addr call in a preloaded library. */
static __thread __attribute__((tls_model("initial-exec"))) int kcoll_helper_self;

void kcoll_progress_mark_helper(void)
{
    kcoll_helper_self = 1;
}

int kcoll_progress_in_helper(void)
{
    return kcoll_helper_self;
}

typedef int (*kcoll_host_cb_t)(void);
typedef int (*kcoll_host_register_t)(kcoll_host_cb_t cb);

static kcoll_host_register_t kcoll_host_unregister;

static int kcoll_host_progress_cb(void)
{
    if (!kcoll_pending())
        return 0;
    kcoll_host_calls_in(1); /* inside Open MPI's progress loop: no poke back */
    const int n = kcoll_progress();
    kcoll_host_calls_in(0);
    return n;
}

/* A function pointer from dlsym (ISO C has no cast between object and
 * function pointers). */
static kcoll_host_register_t kcoll_host_fn(const char *name)
{
    kcoll_host_register_t fn = NULL;
    void *sym = dlsym(RTLD_DEFAULT, name);
    if (sym)
        memcpy(&fn, &sym, sizeof fn);
    return fn;
}

void kcoll_progress_hook_init(void)
{
    kcoll_host_register_t reg = kcoll_host_fn("opal_progress_register_lp");
    kcoll_host_register_t unreg = kcoll_host_fn("opal_progress_unregister"); /* either list */
    if (!reg) /* (an Open MPI before 3.0: every turn) */
        reg = kcoll_host_fn("opal_progress_register");
    if (reg && unreg && reg(kcoll_host_progress_cb) == 0)
        kcoll_host_unregister = unreg;
}

void kcoll_progress_hook_finalize(void)
{
    if (kcoll_host_unregister)
        kcoll_host_unregister(kcoll_host_progress_cb);
    kcoll_host_unregister = NULL;
}

int kcoll_progress_hook_active(void)
{
    return kcoll_host_unregister != NULL;
}

/* The host's own progress while kcoll waits. MPI's progress rule: a
 * process inside any MPI call advances its pending operations. A rank
 * that waits inside kcoll (a blocking collective, MPI_Wait on a kcoll
 * request) runs no host code, so a host operation a peer still needs from
 * it (its part of a non-blocking collective kcoll handed to the host, a
 * rendezvous send) would not move, and the peer, waiting in the host for
 * it, never arrives where this rank waits: a hang (seen with MPICH 5.0
 * under the fuzzer; tests/mpi/test_progress.c). So a long wait pokes the
 * host now and then (every 16th pause once the spinning is over:
 * sched/wait.c): an MPI_Test of a receive that never matches, posted at
 * start-up on a private duplicate of MPI_COMM_SELF. A test of a pending
 * request runs the host's whole progress engine (its non-blocking
 * collectives' schedules included; an MPI_Iprobe on MPI_COMM_SELF does
 * not under MPICH 5.0) and consumes nothing. Not from the helper thread
 * (no MPI calls there), and not from inside a call of the host's into
 * kcoll (the poll and wait functions of kcoll's generalized requests,
 * Open MPI's progress callback: kcoll_host_calls_in), where the host may
 * hold its own locks. */
static __thread __attribute__((tls_model("initial-exec"))) int kcoll_host_inside;
static MPI_Comm kcoll_poke_comm = MPI_COMM_NULL;
static MPI_Request kcoll_poke_req = MPI_REQUEST_NULL;
static char kcoll_poke_byte;

int kcoll_host_may_call(void)
{
    return !kcoll_host_inside && !kcoll_helper_self;
}

void kcoll_host_calls_in(int inside)
{
    kcoll_host_inside += inside ? 1 : -1;
}

static void kcoll_host_poke(void)
{
    int flag = 0;
    /* (no request: kcoll is not set up, or finalized) */
    if (kcoll_host_inside || kcoll_poke_req == MPI_REQUEST_NULL || kcoll_progress_in_helper())
        return;
    kcoll_host_inside = 1; /* the host's progress may call back into kcoll */
    PMPI_Test(&kcoll_poke_req, &flag, MPI_STATUS_IGNORE);
    kcoll_host_inside = 0;
}

void kcoll_host_poke_init(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &kcoll_poke_comm) != MPI_SUCCESS)
        return;
    if (PMPI_Irecv(&kcoll_poke_byte, 1, MPI_BYTE, 0, 0, kcoll_poke_comm, &kcoll_poke_req) !=
        MPI_SUCCESS) {
        kcoll_poke_req = MPI_REQUEST_NULL;
        return;
    }
    kcoll_wait_idle_set(kcoll_host_poke);
}

void kcoll_host_poke_finalize(void)
{
    kcoll_wait_idle_set(NULL);
    if (kcoll_poke_req != MPI_REQUEST_NULL) {
        PMPI_Cancel(&kcoll_poke_req);
        PMPI_Wait(&kcoll_poke_req, MPI_STATUS_IGNORE);
    }
    if (kcoll_poke_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&kcoll_poke_comm);
}
