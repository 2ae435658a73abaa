/* The host MPI's own progress engine advances kcoll's requests, where the
 * host offers a way in.
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
 * Composed collectives across nodes (pmpi/hier_req.c) advance here too:
 * their operations are MPI calls (a host non-blocking collective on the
 * leaders' communicator, PMPI_Test), made from inside Open MPI's progress
 * loop, where Open MPI's own non-blocking collectives (libnbc) start their
 * point-to-point operations as well. So a rank blocked in any Open MPI
 * call (a host collective on another communicator included) still starts
 * its part of a composed collective that its peers wait for.
 *
 * The callback does nothing while no kcoll request is pending, and
 * neither kcoll_progress nor the composed requests' progress recurse into
 * themselves (the MPI calls they make run Open MPI's progress loop, and
 * with it this callback, again).
 */
#include <dlfcn.h>
#include <string.h>

#include "pmpi/pmpi.h"

typedef int (*kcoll_host_cb_t)(void);
typedef int (*kcoll_host_register_t)(kcoll_host_cb_t cb);

static kcoll_host_register_t kcoll_host_unregister;

static int kcoll_host_progress_cb(void)
{
    return kcoll_pending() || kcoll_hier_pending() ? kcoll_progress() : 0;
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
    kcoll_host_register_t reg = kcoll_host_fn("opal_progress_register");
    kcoll_host_register_t unreg = kcoll_host_fn("opal_progress_unregister");
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
