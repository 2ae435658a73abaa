/* MPI_Init, MPI_Init_thread and MPI_Finalize: set kcoll up after the host
 * MPI is initialized (parameters, the team keyval, requests, the host's
 * progress hook, MPI_COMM_WORLD's team), and at the end print the
 * statistics and let go of everything before the host MPI finalizes.
 *
 * The end runs inside the host's MPI_Finalize: kcoll puts an attribute on
 * MPI_COMM_SELF, and MPI deletes the attributes of MPI_COMM_SELF first
 * thing in MPI_Finalize, while everything still works (MPI-2.2 and later,
 * "Allowing User Functions at Process Termination"). So kcoll also ends
 * properly where MPI_Finalize does not pass through it: Fortran bindings
 * that call PMPI_Finalize (Open MPI's, MPICH's mpi_f08), a program that
 * calls PMPI_Finalize itself. Such programs also start kcoll lazily, on
 * its first call after a PMPI_Init it did not see (kcoll_ready). */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/params.h"
#include "base/stats.h"
#include "model/keep.h"
#include "model/select.h"
#include "pmpi/pmpi.h"
#include "topo/topo.h"
#include "xfer/direct.h"

/* 0: not set up, 1: ready, 2: finalized */
static _Atomic int kcoll_state;

static int kcoll_end_fn(MPI_Comm comm, int keyval, void *attr, void *extra);
static int kcoll_kept; /* decisions read from those kept by earlier jobs (model/keep.h) */

/* collective: called by every rank at once (from MPI_Init), so the
 * tuning file can be read once and shared */
static void kcoll_startup(int collective)
{
    int end_keyval = MPI_KEYVAL_INVALID;
    int level = MPI_THREAD_SINGLE;
    kcoll_params_load();
    PMPI_Comm_rank(MPI_COMM_WORLD, &kcoll_world_rank);
    kcoll_tuning_startup(collective);
    kcoll_kept = kcoll_keep_load(); /* the decisions of earlier jobs, priced alike */
    PMPI_Query_thread(&level);
    kcoll_team_threads = level == MPI_THREAD_MULTIPLE;
    kcoll_shortcut_allowed = level != MPI_THREAD_MULTIPLE; /* call/shortcut.h */
    if (kcoll_teams_init() != 0 || kcoll_greq_init() != 0 || kcoll_dtype_init() != 0) {
        kcoll_warn("could not create an attribute keyval or a request class; every call uses "
                   "the host MPI");
        return;
    }
    kcoll_progress_hook_init();
    kcoll_host_poke_init();
    kcoll_call_set_packer(&kcoll_host_packer);
    /* the keyval itself is freed at once: the attribute keeps it alive
     * until MPI_Finalize deletes it (MPI: freeing a keyval in use only
     * marks it) */
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, kcoll_end_fn, &end_keyval, NULL) !=
            MPI_SUCCESS ||
        PMPI_Comm_set_attr(MPI_COMM_SELF, end_keyval, NULL) != MPI_SUCCESS)
        kcoll_warn("could not hook MPI_Finalize (an attribute on MPI_COMM_SELF); statistics "
                   "and resources are released only through MPI_Finalize itself");
    else
        PMPI_Comm_free_keyval(&end_keyval);
    /* release: the parameters, keyval and classes above are set before anyone sees "ready" */
    atomic_store_explicit(&kcoll_state, 1, memory_order_release);
}

int kcoll_ready(void)
{
    /* acquire: pairs with the release in kcoll_startup */
    int s = atomic_load_explicit(&kcoll_state, memory_order_acquire);
    if (s == 0) {
        /* The program called PMPI_Init itself; set up now, once. */
        int init = 0, fin = 0;
        PMPI_Initialized(&init);
        PMPI_Finalized(&fin);
        if (init && !fin) {
            static _Atomic int once;
            int expected = 0;
            /* acq_rel: exactly one thread runs the setup */
            if (atomic_compare_exchange_strong_explicit(&once, &expected, 1, memory_order_acq_rel,
                                                        memory_order_acquire))
                kcoll_startup(0);
        }
        /* acquire: pairs with the release in kcoll_startup */
        s = atomic_load_explicit(&kcoll_state, memory_order_acquire);
    }
    return s == 1;
}

/* Right after the host's MPI_Init(_thread) returned rc: the world team's
 * topology levels need this machine's topology, whose load (milliseconds)
 * then overlaps kcoll's own start-up (topo/topo.h) and is joined before
 * MPI_Init returns. Not while the host starts: hwloc reads the
 * environment (getenv) and the host MPI's start-up writes it (Open MPI 5's
 * PMIx setenv()s while it connects), and a getenv racing a setenv that
 * moves the environment reads freed memory. Not when kcoll is disabled
 * from the start (parameters are read after the host starts). */
static int kcoll_after_init(int rc)
{
    if (rc == MPI_SUCCESS) {
        const char *off = getenv("KCOLL_DISABLE");
        int disabled = 0;
        if (!off || kcoll_parse_bool(off, &disabled) || !disabled)
            kcoll_topo_prefetch();
        kcoll_startup(1);
        if (kcoll_ready())
            kcoll_nodes_init();
        kcoll_comm_created(MPI_COMM_WORLD);
    }
    kcoll_topo_settle(); /* (a world of one rank asks nothing) */
    return rc;
}

KCOLL_PUBLIC int MPI_Init(int *argc, char ***argv)
{
    return kcoll_after_init(PMPI_Init(argc, argv));
}

KCOLL_PUBLIC int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return kcoll_after_init(PMPI_Init_thread(argc, argv, required, provided));
}

static void kcoll_stats_report(void)
{
    static uint64_t mine[KCOLL_STATS_LEN], sum[KCOLL_STATS_LEN];
    int size;
    kcoll_stats_snapshot(mine);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Reduce(mine, sum, KCOLL_STATS_LEN, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (kcoll_world_rank == 0) {
        kcoll_stats_print(sum, size, stdout);
        const kcoll_tuning_t *t = kcoll_tuning();
        printf("# prices: %s%s%s\n", t->m.source, t->file[0] ? ", file " : "", t->file);
        if (kcoll_quick_report()[0])
            printf("# %s\n", kcoll_quick_report());
        const uint64_t priced = kcoll_model_pricings();
        if (priced || kcoll_kept)
            printf("# cost model: %" PRIu64 " decisions priced on rank 0, %" PRIu64
                   " of them shared with the ranks of its node (KCOLL_SHARED_PRICING); %d "
                   "read from those kept by earlier jobs (KCOLL_KEEP_DECISIONS)\n",
                   priced, kcoll_model_shared(), kcoll_kept);
        kcoll_adapt_report(stdout);
    }
}

/* The end, run once inside the host's MPI_Finalize (or, where the hook
 * could not be made, by MPI_Finalize below before the host's). */
static void kcoll_end(void)
{
    int ready = 1;
    /* acq_rel: exactly one caller ends kcoll; acquire pairs with the
     * release in kcoll_startup */
    if (!atomic_compare_exchange_strong_explicit(&kcoll_state, &ready, 2, memory_order_acq_rel,
                                                 memory_order_acquire))
        return;
    /* requests the program never completed: advance what can be (an
     * erroneous program; MPI says every request must be completed). The
     * state already says "finalized", so nothing new starts meanwhile:
     * later calls go to the host MPI. */
    kcoll_progress();
    kcoll_shortcut_forget(); /* its calls counted, and none taken after this */
    if (kcoll_param_int(KCOLL_P_STATS))
        kcoll_stats_report();
    /* the decisions this job priced, for the next: one process per node
     * writes (its node's ranks priced the same ones) */
    const int node_rank = kcoll_node_rank();
    if (node_rank == 0 || (node_rank < 0 && kcoll_world_rank == 0))
        kcoll_keep_save();
    kcoll_progress_hook_finalize();
    kcoll_host_poke_finalize();
    kcoll_drive_finalize();
    kcoll_requests_handed_back();
    kcoll_plans_finalize();
    kcoll_teams_finalize();
    kcoll_direct_fini(); /* peers' memory this process mapped */
    kcoll_dtype_finalize();
}

/* MPI_COMM_SELF's attribute is deleted: MPI_Finalize has begun. */
static int kcoll_end_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)attr, (void)extra;
    kcoll_end();
    return MPI_SUCCESS;
}

KCOLL_PUBLIC int MPI_Finalize(void)
{
    kcoll_end(); /* a no-op when the hook already ran it: it runs first in PMPI_Finalize */
    return PMPI_Finalize();
}
