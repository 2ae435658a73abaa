/* Advancing kcoll's requests while this process blocks in a host
 * collective, where the host has no progress hook (MPICH 4.0).
 *
 * MPI lets a rank block in a collective (say a small MPI_Allreduce that
 * kcoll hands to the host) while its own non-blocking collective is
 * pending, and a peer may wait for that collective before it joins the
 * blocking one: the pending collective must advance meanwhile. Its host
 * form cannot be replaced by the non-blocking one (MPI never matches a
 * blocking collective with a non-blocking one, and the other ranks call the
 * blocking form), so a helper thread advances kcoll's requests for the
 * duration of the host call: woken by kcoll_drive_begin, parked again by
 * kcoll_drive_end, created at the first need and kept until MPI_Finalize.
 *
 * The helper makes no MPI call: kcoll's progress needs none (shared memory
 * and cross-memory copies), and a generalized request it completes is
 * handed back (pmpi/request.c) and completed by the calling thread when the
 * host call returns. From the helper's first wake-up on, the call layer
 * takes its locks (kcoll_team_threads), as with MPI_THREAD_MULTIPLE.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "base/log.h"
#include "mpi/host.h"

static pthread_t kcoll_drive_thread;
static int kcoll_drive_started;
static pthread_mutex_t kcoll_drive_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kcoll_drive_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t kcoll_drive_rest = PTHREAD_COND_INITIALIZER;
/* relaxed: a switch the helper polls; the lock orders everything else */
static _Atomic int kcoll_drive_on;
static int kcoll_drive_parked = 1, kcoll_drive_quit; /* under the lock */
static void *kcoll_drive_main(void *arg)
{
    (void)arg;
    kcoll_progress_mark_helper();
    pthread_mutex_lock(&kcoll_drive_lock);
    for (;;) {
        /* relaxed: read under the lock, which orders it */
        while (!atomic_load_explicit(&kcoll_drive_on, memory_order_relaxed) && !kcoll_drive_quit) {
            kcoll_drive_parked = 1;
            pthread_cond_signal(&kcoll_drive_rest);
            pthread_cond_wait(&kcoll_drive_wake, &kcoll_drive_lock);
        }
        if (kcoll_drive_quit)
            break;
        kcoll_drive_parked = 0;
        pthread_mutex_unlock(&kcoll_drive_lock);
        kcoll_pause_t pause;
        kcoll_pause_init(&pause);
        /* relaxed: a switch; the lock taken below orders what follows */
        while (atomic_load_explicit(&kcoll_drive_on, memory_order_relaxed))
            kcoll_pause_unless(&pause, kcoll_progress_inner()); /* no MPI calls here */
        pthread_mutex_lock(&kcoll_drive_lock);
    }
    kcoll_drive_parked = 1;
    pthread_cond_signal(&kcoll_drive_rest);
    pthread_mutex_unlock(&kcoll_drive_lock);
    return NULL;
}

int kcoll_drive_begin(void)
{
    if (!kcoll_must_drive())
        return 0;
    pthread_mutex_lock(&kcoll_drive_lock);
    if (!kcoll_drive_started) {
        /* from now on two threads may advance requests: the call layer locks */
        kcoll_team_threads = 1;
        if (pthread_create(&kcoll_drive_thread, NULL, kcoll_drive_main, NULL) != 0) {
            pthread_mutex_unlock(&kcoll_drive_lock);
            kcoll_warn("could not start the thread that advances non-blocking collectives "
                       "during blocking host calls; they wait until the call returns");
            return 0;
        }
        kcoll_drive_started = 1;
    }
    /* relaxed: the lock orders it for the helper's wake-up */
    atomic_store_explicit(&kcoll_drive_on, 1, memory_order_relaxed);
    pthread_cond_signal(&kcoll_drive_wake);
    pthread_mutex_unlock(&kcoll_drive_lock);
    return 1;
}

void kcoll_drive_end(int began)
{
    if (!began)
        return;
    pthread_mutex_lock(&kcoll_drive_lock);
    /* relaxed: the lock orders it */
    atomic_store_explicit(&kcoll_drive_on, 0, memory_order_relaxed);
    while (!kcoll_drive_parked)
        pthread_cond_wait(&kcoll_drive_rest, &kcoll_drive_lock);
    pthread_mutex_unlock(&kcoll_drive_lock);
    kcoll_requests_handed_back(); /* completions the helper reached */
}

void kcoll_drive_finalize(void)
{
    pthread_mutex_lock(&kcoll_drive_lock);
    int started = kcoll_drive_started;
    kcoll_drive_quit = 1;
    pthread_cond_signal(&kcoll_drive_wake);
    pthread_mutex_unlock(&kcoll_drive_lock);
    if (started)
        pthread_join(kcoll_drive_thread, NULL);
    kcoll_drive_started = 0;
    kcoll_drive_quit = 0;
}
