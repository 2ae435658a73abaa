/* Non-blocking collectives kcoll runs, as MPI requests: generalized
 * requests of the host MPI (MPI_Grequest_start; with MPICH, an
 * MPIX_Grequest_class whose poll and wait functions advance kcoll),
 * which kcoll completes (MPI_Grequest_complete) when the collective has
 * completed. So the handle is a real MPI request: it may be mixed with any
 * other request in MPI_Waitall and friends, and the host's own completion
 * functions see it complete (pmpi/request.c has kcoll's completion
 * functions, and when progress happens).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "mpi/host.h"

typedef struct kcoll_greq {
    MPI_Request handle;
    int err;            /* the MPI result, once completed */
    _Atomic int done;   /* kcoll has completed it */
    _Atomic int refs;   /* the host's request and kcoll's: freed by the last */
    MPI_Datatype held;  /* retained while the collective runs (a user operation's), or null */
    struct kcoll_greq *next; /* handed back by the helper thread (mpi/drive.c) */
} kcoll_greq_t;

/* Completions the helper thread reached; the calling thread completes them
 * (no MPI call from the helper). Under the lock. */
static kcoll_greq_t *kcoll_handed_back;
static pthread_mutex_t kcoll_handed_back_lock = PTHREAD_MUTEX_INITIALIZER;

static void kcoll_greq_unref(kcoll_greq_t *g)
{
    /* acq_rel: the last holder sees everything the other did before freeing */
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        free(g);
}

void kcoll_status_collective(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = 0;
    status->MPI_TAG = 0;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

static int kcoll_greq_query(void *extra, MPI_Status *status)
{
    kcoll_greq_t *g = extra;
    kcoll_status_collective(status);
    return g->err;
}

static int kcoll_greq_free(void *extra)
{
    kcoll_greq_unref(extra);
    return MPI_SUCCESS;
}

static int kcoll_greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* a collective cannot be cancelled: MPI says so */
}

static void kcoll_greq_complete(kcoll_greq_t *g)
{
    if (g->held != MPI_DATATYPE_NULL)
        kcoll_release_type(g->held);
    PMPI_Grequest_complete(g->handle);
    kcoll_greq_unref(g);
}

/* The collective behind g has completed with the MPI result err: complete
 * the generalized request (or, on the helper thread, hand it back). */
static void kcoll_greq_finish(kcoll_greq_t *g, int err)
{
    g->err = err;
    /* release: err is visible to whoever acquires done */
    atomic_store_explicit(&g->done, 1, memory_order_release);
    if (kcoll_progress_in_helper()) {
        pthread_mutex_lock(&kcoll_handed_back_lock);
        g->next = kcoll_handed_back;
        kcoll_handed_back = g;
        pthread_mutex_unlock(&kcoll_handed_back_lock);
        return;
    }
    kcoll_greq_complete(g);
}

/* The call layer's completion callback. */
static void kcoll_greq_done(kcoll_req_t *r, void *ctx)
{
    kcoll_status_t st = kcoll_req_status(r);
    kcoll_greq_finish(ctx, st == KCOLL_OK ? MPI_SUCCESS
                                          : kcoll_report(kcoll_req_coll(r), "", st,
                                                         kcoll_req_error(r)));
}

void kcoll_requests_handed_back(void)
{
    pthread_mutex_lock(&kcoll_handed_back_lock);
    kcoll_greq_t *g = kcoll_handed_back;
    kcoll_handed_back = NULL;
    pthread_mutex_unlock(&kcoll_handed_back_lock);
    while (g) {
        kcoll_greq_t *next = g->next;
        kcoll_greq_complete(g);
        g = next;
    }
}

#ifdef KCOLL_HAVE_MPIX_GREQUEST
/* MPICH calls these when it tests or waits for one of kcoll's requests. */
static MPIX_Grequest_class kcoll_greq_class;

static int kcoll_greq_poll(void *extra, MPI_Status *status)
{
    (void)extra;
    (void)status;
    kcoll_host_calls_in(1);
    kcoll_progress();
    kcoll_host_calls_in(0);
    return MPI_SUCCESS;
}

static int kcoll_greq_wait(int count, void **states, double timeout, MPI_Status *status)
{
    kcoll_pause_t pause;
    (void)timeout;
    (void)status;
    kcoll_pause_init(&pause);
    kcoll_host_calls_in(1);
    for (int i = 0; i < count; i++)
        /* acquire: pairs with the release in kcoll_greq_finish */
        while (!atomic_load_explicit(&((kcoll_greq_t *)states[i])->done, memory_order_acquire))
            kcoll_pause_unless(&pause, kcoll_progress());
    kcoll_host_calls_in(0);
    return MPI_SUCCESS;
}
#endif

/* A generalized request of the host MPI for a collective kcoll runs, or
 * NULL when the host cannot make one. */
static kcoll_greq_t *kcoll_greq_make(void)
{
    kcoll_greq_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    atomic_init(&g->refs, 2);
    g->held = MPI_DATATYPE_NULL;
#ifdef KCOLL_HAVE_MPIX_GREQUEST
    int rc = PMPIX_Grequest_class_allocate(kcoll_greq_class, g, &g->handle);
#else
    int rc = PMPI_Grequest_start(kcoll_greq_query, kcoll_greq_free, kcoll_greq_cancel, g,
                                 &g->handle);
#endif
    if (rc != MPI_SUCCESS) {
        free(g);
        return NULL;
    }
    return g;
}

static const char kcoll_greq_none[] = "no generalized request for a non-blocking collective";

int kcoll_greq_start(kcoll_req_t *r, MPI_Comm comm, MPI_Request *request)
{
    kcoll_greq_t *g = kcoll_greq_make();
    if (!g) {
        /* prepared, not started: every rank started it, so it must run;
         * run it here, then report the failure of the handle */
        kcoll_coll_t coll = kcoll_req_coll(r);
        kcoll_req_start(r, NULL, NULL);
        kcoll_req_wait(r);
        kcoll_req_release(r);
        return kcoll_fail(comm, coll, KCOLL_ERR_NOMEM, kcoll_greq_none);
    }
    *request = g->handle;
    /* a user operation's function gets the datatype: the program may free
     * it before the collective completes (released in kcoll_greq_complete) */
    if ((g->held = kcoll_pmpi_op_type(kcoll_req_op(r))) != MPI_DATATYPE_NULL)
        kcoll_retain_type(g->held);
    kcoll_req_detach(r);
    kcoll_req_start(r, kcoll_greq_done, g);
    return MPI_SUCCESS;
}

int kcoll_greq_init(void)
{
#ifdef KCOLL_HAVE_MPIX_GREQUEST
    if (PMPIX_Grequest_class_create(kcoll_greq_query, kcoll_greq_free, kcoll_greq_cancel,
                                    kcoll_greq_poll, kcoll_greq_wait,
                                    &kcoll_greq_class) != MPI_SUCCESS)
        return -1;
#endif
    return 0;
}
