/* kcoll's completion functions, and persistent collectives as MPI
 * requests (see request.h; non-blocking ones are the host's generalized
 * requests: mpi/greq.c).
 *
 * When progress happens. A kcoll request advances (docs/architecture.md
 * "Progress"):
 *  - when it starts, and in every kcoll collective call, of any kind;
 *  - in every completion call of this file, for any request, before the
 *    host's own is asked: MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testall,
 *    MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome,
 *    MPI_Request_get_status; a waiting call keeps advancing kcoll's requests
 *    until what it waits for completes;
 *  - while a blocking host collective runs in place of a kcoll call;
 *  - with MPICH, whenever MPICH tests or waits for one of kcoll's
 *    generalized requests (their class's poll and wait functions);
 *  - with Open MPI, in every turn of Open MPI's own progress engine
 *    (mpi/progress.c): so also inside blocking point-to-point calls.
 *
 * Fast path: with no kcoll request pending, every completion function is
 * the host's own call and nothing more.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "pmpi/request.h"

/* ---------------------------------------------------------------------- */
/* Persistent collectives: plans                                           */

typedef struct kcoll_plan {
    struct kcoll_plan *next;
    uint64_t key;          /* the handle's bits */
    kcoll_req_t *r;        /* kcoll runs the starts, or NULL: the host */
    kcoll_call_t call;     /* the host's starts are counted from it */
    kcoll_reason_t why;    /* why the host does (counted at every start) */
    /* the request's own duplicate of its communicator (kcoll runs the
     * starts there: see kcoll_pmpi_persistent), freed with the plan; or
     * MPI_COMM_NULL */
    MPI_Comm own;
    MPI_Datatype held;     /* retained for the plan's life (a user operation's), or null */
    int active;            /* started by kcoll and not yet completed by the user */
    int err;
    _Atomic int done;      /* kcoll has completed the current start */
} kcoll_plan_t;

#define KCOLL_PLAN_BUCKETS 64
static kcoll_plan_t *kcoll_plans[KCOLL_PLAN_BUCKETS];
static pthread_mutex_t kcoll_plans_lock = PTHREAD_MUTEX_INITIALIZER;
/* relaxed: a count read as a hint (are there plans at all?), ordering nothing */
static _Atomic int kcoll_nplans;
/* Plans whose starts kcoll runs (kcoll_nkplans), and those of them kcoll
 * has started and the user has not completed yet (kcoll_nactive_plans).
 * The host is never asked about their handles: to the host they are
 * persistent requests never started, which it should ignore as inactive,
 * but MPICH 4.0 reports such a request as never complete (MPI_Wait hangs)
 * or, in MPI_Waitsome, as complete again and again. Relaxed: hints, read
 * by the thread that completes a handle. */
static _Atomic int kcoll_nkplans, kcoll_nactive_plans;

/* Can a completion call go to the host MPI's own blocking call (without
 * advancing kcoll)? Then the only plans among its requests are inactive
 * ones, which it hides from the host (kcoll_plans_now). */
static int kcoll_host_only(void)
{
    /* relaxed: see kcoll_nkplans */
    return !kcoll_pending() && !atomic_load_explicit(&kcoll_nactive_plans, memory_order_relaxed);
}

/* pl's starts are kcoll's: count it (or, gone, no more) */
static void kcoll_kplan_count(const kcoll_plan_t *pl, int delta)
{
    if (pl->r)
        /* relaxed: see kcoll_nkplans */
        atomic_fetch_add_explicit(&kcoll_nkplans, delta, memory_order_relaxed);
}

static uint64_t kcoll_handle_key(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return k;
}

static kcoll_plan_t *kcoll_plan_find(MPI_Request h)
{
    /* relaxed: a hint; a plan is only looked for by the thread that uses its handle */
    if (!atomic_load_explicit(&kcoll_nplans, memory_order_relaxed) || h == MPI_REQUEST_NULL)
        return NULL;
    uint64_t k = kcoll_handle_key(h);
    pthread_mutex_lock(&kcoll_plans_lock);
    kcoll_plan_t *pl = kcoll_plans[k % KCOLL_PLAN_BUCKETS];
    while (pl && pl->key != k)
        pl = pl->next;
    pthread_mutex_unlock(&kcoll_plans_lock);
    return pl;
}

/* The plan whose starts kcoll runs for handle h (active or not), or NULL. */
static kcoll_plan_t *kcoll_plan_ours(MPI_Request h)
{
    /* relaxed: a hint */
    if (!atomic_load_explicit(&kcoll_nkplans, memory_order_relaxed))
        return NULL;
    kcoll_plan_t *pl = kcoll_plan_find(h);
    return pl && pl->r ? pl : NULL;
}

static kcoll_plan_t *kcoll_plan_new(MPI_Request handle, const kcoll_call_t *c,
                                     kcoll_reason_t why)
{
    kcoll_plan_t *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    pl->own = MPI_COMM_NULL;
    pl->held = MPI_DATATYPE_NULL;
    pl->key = kcoll_handle_key(handle);
    pl->call = *c;
    pl->call.op = NULL; /* the caller's; only the sizes are needed to count the starts */
    pl->why = why;
    pthread_mutex_lock(&kcoll_plans_lock);
    pl->next = kcoll_plans[pl->key % KCOLL_PLAN_BUCKETS];
    kcoll_plans[pl->key % KCOLL_PLAN_BUCKETS] = pl;
    pthread_mutex_unlock(&kcoll_plans_lock);
    /* relaxed: a hint, ordering nothing */
    atomic_fetch_add_explicit(&kcoll_nplans, 1, memory_order_relaxed);
    return pl;
}

/* Let go of a private communicator (MPI_Comm_free is local in practice:
 * it only marks the communicator for deallocation). */
static void kcoll_own_free(MPI_Comm *own)
{
    if (*own != MPI_COMM_NULL)
        PMPI_Comm_free(own);
}

void kcoll_plan_add(MPI_Request handle, kcoll_req_t *r, const kcoll_call_t *c,
                    kcoll_reason_t why, MPI_Comm *own)
{
    kcoll_plan_t *pl = kcoll_plan_new(handle, c, why);
    if (pl) {
        pl->r = r;
        if (r) { /* the plan keeps the communicator r runs on */
            pl->own = *own;
            *own = MPI_COMM_NULL;
            if ((pl->held = kcoll_pmpi_op_type(kcoll_req_op(r))) != MPI_DATATYPE_NULL)
                kcoll_retain_type(pl->held);
            kcoll_kplan_count(pl, 1);
        }
    } else if (r) {
        kcoll_req_release(r); /* prepared, never started: the host runs the starts */
    }
    kcoll_own_free(own);
}

static void kcoll_plan_remove(kcoll_plan_t *pl)
{
    kcoll_kplan_count(pl, -1);
    pthread_mutex_lock(&kcoll_plans_lock);
    kcoll_plan_t **pp = &kcoll_plans[pl->key % KCOLL_PLAN_BUCKETS];
    while (*pp && *pp != pl)
        pp = &(*pp)->next;
    if (*pp)
        *pp = pl->next;
    pthread_mutex_unlock(&kcoll_plans_lock);
    /* relaxed: a hint, ordering nothing */
    atomic_fetch_sub_explicit(&kcoll_nplans, 1, memory_order_relaxed);
}

static void kcoll_plan_done(kcoll_req_t *r, void *ctx)
{
    kcoll_plan_t *pl = ctx;
    kcoll_status_t st = kcoll_req_status(r);
    pl->err = MPI_SUCCESS;
    if (st != KCOLL_OK) {
        pl->err = kcoll_report(pl->call.coll, " (persistent)", st, kcoll_req_error(r));
    }
    /* release: err is visible to whoever acquires done */
    atomic_store_explicit(&pl->done, 1, memory_order_release);
}

static int kcoll_plan_is_done(kcoll_plan_t *pl)
{
    /* acquire: pairs with the release in kcoll_plan_done */
    return atomic_load_explicit(&pl->done, memory_order_acquire);
}

/* The user completes the current start: the request becomes inactive. */
static int kcoll_plan_finish(kcoll_plan_t *pl, MPI_Status *status)
{
    pl->active = 0;
    /* relaxed: see kcoll_nkplans */
    atomic_fetch_sub_explicit(&kcoll_nactive_plans, 1, memory_order_relaxed);
    kcoll_status_collective(status);
    return pl->err;
}

/* Advance until the plan's start has completed. */
static void kcoll_plan_wait(kcoll_plan_t *pl)
{
    kcoll_pause_t pause;
    kcoll_pause_init(&pause);
    while (!kcoll_plan_is_done(pl)) {
        kcoll_pause_unless(&pause, kcoll_progress());
    }
}

static int kcoll_start_one(MPI_Request *request)
{
    kcoll_plan_t *pl = kcoll_plan_find(*request);
    if (!pl)
        return PMPI_Start(request);
    if (!pl->r) {
        kcoll_call_host(&pl->call, KCOLL_MODE_PERSISTENT, pl->why);
        return PMPI_Start(request);
    }
    /* relaxed: nobody looks at done before the start below */
    atomic_store_explicit(&pl->done, 0, memory_order_relaxed);
    pl->active = 1;
    /* relaxed: see kcoll_nkplans */
    atomic_fetch_add_explicit(&kcoll_nactive_plans, 1, memory_order_relaxed);
    kcoll_req_start(pl->r, kcoll_plan_done, pl);
    return MPI_SUCCESS;
}

KCOLL_PUBLIC int MPI_Start(MPI_Request *request)
{
    return kcoll_start_one(request);
}

KCOLL_PUBLIC int MPI_Startall(int count, MPI_Request requests[])
{
    /* relaxed: a hint */
    if (!atomic_load_explicit(&kcoll_nplans, memory_order_relaxed))
        return PMPI_Startall(count, requests);
    for (int i = 0; i < count; i++) {
        int rc = kcoll_start_one(&requests[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

KCOLL_PUBLIC int MPI_Request_free(MPI_Request *request)
{
    kcoll_plan_t *pl = request ? kcoll_plan_find(*request) : NULL;
    if (pl) {
        if (pl->active) { /* freeing an active request: let it finish first */
            kcoll_plan_wait(pl);
            kcoll_plan_finish(pl, MPI_STATUS_IGNORE);
        }
        kcoll_plan_remove(pl);
        if (pl->r)
            kcoll_req_release(pl->r);
        kcoll_own_free(&pl->own);
        if (pl->held != MPI_DATATYPE_NULL)
            kcoll_release_type(pl->held);
        free(pl);
    }
    return PMPI_Request_free(request);
}

/* ---------------------------------------------------------------------- */
/* Completion                                                              */

/* Which of n requests are plans kcoll runs, active or not (NULL if none;
 * else an array the caller frees). */
static kcoll_plan_t **kcoll_plans_in(int n, const MPI_Request *reqs)
{
    kcoll_plan_t **pls = NULL;
    /* relaxed: a hint */
    if (!atomic_load_explicit(&kcoll_nkplans, memory_order_relaxed))
        return NULL;
    for (int i = 0; i < n; i++) {
        kcoll_plan_t *pl = kcoll_plan_ours(reqs[i]);
        if (pl && !pls && !(pls = calloc((size_t)n, sizeof *pls)))
            return NULL;
        if (pl)
            pls[i] = pl;
    }
    return pls;
}

/* What every completion call does first: advance kcoll's requests, then
 * find the plans kcoll runs among its requests. NULL (nothing pending,
 * no plan among them): the host's own call answers. */
static kcoll_plan_t *kcoll_plan_now(MPI_Request h)
{
    if (!kcoll_host_only())
        kcoll_progress();
    return kcoll_plan_ours(h);
}
static kcoll_plan_t **kcoll_plans_now(int n, const MPI_Request *reqs)
{
    if (!kcoll_host_only())
        kcoll_progress();
    return kcoll_plans_in(n, reqs);
}

/* A copy of reqs with the plans kcoll runs replaced by MPI_REQUEST_NULL,
 * for the host MPI. */
static MPI_Request *kcoll_host_view(int n, const MPI_Request *reqs, kcoll_plan_t **pls)
{
    MPI_Request *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int i = 0; v && i < n; i++)
        v[i] = pls[i] ? MPI_REQUEST_NULL : reqs[i];
    return v;
}

static MPI_Status *kcoll_status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

/* The empty status MPI gives an inactive (or null) request. */
static void kcoll_status_empty(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

/* Waiting loops pause between rounds (sched/wait.h). */
#define KCOLL_WAIT_LOOP(test)                                                              \
    do {                                                                                   \
        kcoll_pause_t pause_;                                                              \
        kcoll_pause_init(&pause_);                                                         \
        for (;;) {                                                                         \
            int moved_ = kcoll_progress();                                                 \
            test;                                                                          \
            kcoll_pause_unless(&pause_, moved_);                                          \
        }                                                                                  \
    } while (0)

KCOLL_PUBLIC int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    kcoll_teams_later(); /* teams set up in later calls (mpi/later.c) */
    kcoll_plan_t *pl = kcoll_plan_now(*request);
    if (!pl)
        return PMPI_Test(request, flag, status);
    if (!pl->active) { /* inactive: complete at once, with an empty status */
        *flag = 1;
        kcoll_status_empty(status);
        return MPI_SUCCESS;
    }
    *flag = kcoll_plan_is_done(pl);
    return *flag ? kcoll_plan_finish(pl, status) : MPI_SUCCESS;
}

KCOLL_PUBLIC int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    kcoll_teams_later(); /* teams set up in later calls (mpi/later.c) */
    int flag = 0, rc;
    if (kcoll_host_only() && !kcoll_plan_ours(*request))
        return PMPI_Wait(request, status);
    KCOLL_WAIT_LOOP(if ((rc = MPI_Test(request, &flag, status)) != MPI_SUCCESS || flag) return rc);
}

KCOLL_PUBLIC int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    kcoll_plan_t *pl = kcoll_plan_now(request);
    if (!pl)
        return PMPI_Request_get_status(request, flag, status);
    if (!pl->active) {
        *flag = 1;
        kcoll_status_empty(status);
    } else if ((*flag = kcoll_plan_is_done(pl))) {
        kcoll_status_collective(status);
    }
    return MPI_SUCCESS;
}

/* The host's own MPI_Waitall (index and outcount NULL), MPI_Waitany
 * (index) or MPI_Waitsome (outcount, indices) when nothing of kcoll's is
 * running: the handles of kcoll's plans among the requests, all inactive
 * then, are hidden from the host (as MPI_REQUEST_NULL), and get the empty
 * status of an inactive request from a Waitall. */
static int kcoll_host_wait_hiding(int n, MPI_Request reqs[], MPI_Status *statuses, int *index,
                                  int *outcount, int indices[])
{
    kcoll_plan_t **pls = kcoll_plans_in(n, reqs);
    if (!pls)
        return index      ? PMPI_Waitany(n, reqs, index, statuses)
               : outcount ? PMPI_Waitsome(n, reqs, outcount, indices, statuses)
                          : PMPI_Waitall(n, reqs, statuses);
    MPI_Request *v = kcoll_host_view(n, reqs, pls);
    int rc = MPI_ERR_NO_MEM;
    if (v && index) {
        rc = PMPI_Waitany(n, v, index, statuses);
        if (*index != MPI_UNDEFINED)
            reqs[*index] = v[*index];
    } else if (v && outcount) {
        rc = PMPI_Waitsome(n, v, outcount, indices, statuses);
        for (int j = 0; *outcount != MPI_UNDEFINED && j < *outcount; j++)
            reqs[indices[j]] = v[indices[j]];
    } else if (v) {
        rc = PMPI_Waitall(n, v, statuses);
        for (int i = 0; i < n; i++) {
            if (!pls[i]) {
                reqs[i] = v[i];
            } else {
                kcoll_status_empty(kcoll_status_at(statuses, i));
                if (statuses != MPI_STATUSES_IGNORE)
                    statuses[i].MPI_ERROR = MPI_SUCCESS;
            }
        }
    }
    free(v);
    free(pls);
    return rc;
}

/* The host's part of a Testall, as kcoll's waiting loops ask it: every
 * request looked at with PMPI_Request_get_status, which completes none,
 * and once all have completed, PMPI_Waitall, which then returns at once.
 * Not PMPI_Testall: MPICH's (4.0.2, 5.0.2) reports MPI_ERR_IN_STATUS, with every
 * status MPI_SUCCESS, for a persistent collective request that completed,
 * where its MPI_Waitall is right (a user's MPI_Waitall that kcoll turns
 * into a loop of tests must not fail where the host's own would not). */
static int kcoll_host_testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    *flag = 0;
    for (int i = 0; i < n; i++) {
        int f = 1;
        if (reqs[i] != MPI_REQUEST_NULL) {
            int rc = PMPI_Request_get_status(reqs[i], &f, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (!f)
            return MPI_SUCCESS;
    }
    *flag = 1;
    return PMPI_Waitall(n, reqs, statuses);
}

/* Testall with plans among the requests (pls NULL: none), for MPI_Testall
 * (host: the host's own test) or kcoll's waiting loops (kcoll_host_testall). */
static int kcoll_testall_plans(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[],
                               kcoll_plan_t **pls,
                               int (*host)(int, MPI_Request *, int *, MPI_Status *))
{
    int rc = MPI_SUCCESS, err = 0;
    *flag = 0;
    if (!pls)
        return host(n, reqs, flag, statuses);
    for (int i = 0; i < n; i++)
        if (pls[i] && pls[i]->active && !kcoll_plan_is_done(pls[i])) {
            for (int j = 0; j < n; j++) /* keep the host's requests moving too */
                if (!pls[j] && reqs[j] != MPI_REQUEST_NULL) {
                    int f;
                    PMPI_Request_get_status(reqs[j], &f, MPI_STATUS_IGNORE);
                    break;
                }
            return MPI_SUCCESS;
        }
    MPI_Request *v = kcoll_host_view(n, reqs, pls);
    if (!v)
        return MPI_ERR_NO_MEM;
    rc = host(n, v, flag, statuses);
    if (*flag) {
        for (int i = 0; i < n; i++) {
            MPI_Status *st = kcoll_status_at(statuses, i);
            if (!pls[i]) {
                reqs[i] = v[i];
                continue;
            }
            if (!pls[i]->active) {
                kcoll_status_empty(st);
                if (st != MPI_STATUS_IGNORE)
                    st->MPI_ERROR = MPI_SUCCESS;
                continue;
            }
            int e = kcoll_plan_finish(pls[i], st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = e;
            err |= e != MPI_SUCCESS;
        }
        if (err && rc == MPI_SUCCESS)
            rc = MPI_ERR_IN_STATUS;
    }
    free(v);
    return rc;
}

KCOLL_PUBLIC int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    kcoll_teams_later();
    kcoll_plan_t **pls = kcoll_plans_now(count, requests);
    if (!pls)
        return PMPI_Testall(count, requests, flag, statuses);
    int rc = kcoll_testall_plans(count, requests, flag, statuses, pls, kcoll_host_testall);
    free(pls);
    return rc;
}

KCOLL_PUBLIC int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    kcoll_teams_later();
    int flag = 0, rc;
    if (kcoll_host_only()) /* the host's blocking call, kcoll's (inactive) plans hidden */
        return kcoll_host_wait_hiding(count, requests, statuses, NULL, NULL, NULL);
    KCOLL_WAIT_LOOP({
        kcoll_plan_t **pls = kcoll_plans_in(count, requests);
        rc = kcoll_testall_plans(count, requests, &flag, statuses, pls, kcoll_host_testall);
        free(pls);
        if (rc != MPI_SUCCESS || flag)
            return rc;
    });
}

/* Are any of kcoll's plans among the requests active? */
static int kcoll_plans_active(int n, kcoll_plan_t **pls)
{
    for (int i = 0; i < n; i++)
        if (pls[i] && pls[i]->active)
            return 1;
    return 0;
}

/* Testany with plans among the requests. */
static int kcoll_testany_plans(int n, MPI_Request reqs[], int *index, int *flag,
                               MPI_Status *status, kcoll_plan_t **pls)
{
    for (int i = 0; i < n; i++)
        if (pls[i] && pls[i]->active && kcoll_plan_is_done(pls[i])) {
            *index = i;
            *flag = 1;
            return kcoll_plan_finish(pls[i], status);
        }
    MPI_Request *v = kcoll_host_view(n, reqs, pls);
    if (!v)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Testany(n, v, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED)
        reqs[*index] = v[*index];
    else if (kcoll_plans_active(n, pls))
        *flag = 0; /* kcoll's plans are still active */
    free(v);
    return rc;
}

KCOLL_PUBLIC int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                             MPI_Status *status)
{
    kcoll_teams_later();
    kcoll_plan_t **pls = kcoll_plans_now(count, requests);
    if (!pls)
        return PMPI_Testany(count, requests, index, flag, status);
    int rc = kcoll_testany_plans(count, requests, index, flag, status, pls);
    free(pls);
    return rc;
}

KCOLL_PUBLIC int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    kcoll_teams_later();
    int flag = 0, rc;
    if (kcoll_host_only())
        return kcoll_host_wait_hiding(count, requests, status, index, NULL, NULL);
    KCOLL_WAIT_LOOP(if ((rc = MPI_Testany(count, requests, index, &flag, status)) != MPI_SUCCESS ||
                        flag) return rc);
}

/* Testsome with plans among the requests. */
static int kcoll_testsome_plans(int n, MPI_Request reqs[], int *outcount, int indices[],
                                MPI_Status statuses[], kcoll_plan_t **pls)
{
    MPI_Request *v = kcoll_host_view(n, reqs, pls);
    if (!v)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Testsome(n, v, outcount, indices, statuses);
    const int host_none = *outcount == MPI_UNDEFINED;
    int k = host_none ? 0 : *outcount;
    for (int j = 0; j < k; j++)
        reqs[indices[j]] = v[indices[j]];
    for (int i = 0; i < n; i++)
        if (pls[i] && pls[i]->active && kcoll_plan_is_done(pls[i])) {
            indices[k] = i;
            int e = kcoll_plan_finish(pls[i], kcoll_status_at(statuses, k));
            if (e != MPI_SUCCESS && rc == MPI_SUCCESS)
                rc = MPI_ERR_IN_STATUS;
            k++;
        }
    /* none active at all (the host's none, and no plan of kcoll's running):
     * MPI_UNDEFINED */
    *outcount = k == 0 && host_none && !kcoll_plans_active(n, pls) ? MPI_UNDEFINED : k;
    free(v);
    return rc;
}

KCOLL_PUBLIC int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                              MPI_Status statuses[])
{
    kcoll_teams_later();
    kcoll_plan_t **pls = kcoll_plans_now(incount, requests);
    if (!pls)
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    int rc = kcoll_testsome_plans(incount, requests, outcount, indices, statuses, pls);
    free(pls);
    return rc;
}

KCOLL_PUBLIC int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                              MPI_Status statuses[])
{
    kcoll_teams_later();
    int rc;
    if (kcoll_host_only())
        return kcoll_host_wait_hiding(incount, requests, statuses, NULL, outcount, indices);
    KCOLL_WAIT_LOOP(if ((rc = MPI_Testsome(incount, requests, outcount, indices, statuses)) !=
                            MPI_SUCCESS ||
                        *outcount != 0) return rc);
}

/* ---------------------------------------------------------------------- */

void kcoll_plans_finalize(void)
{
    /* plans the program never freed: their requests go back to the teams */
    pthread_mutex_lock(&kcoll_plans_lock);
    for (int b = 0; b < KCOLL_PLAN_BUCKETS; b++)
        while (kcoll_plans[b]) {
            kcoll_plan_t *pl = kcoll_plans[b];
            kcoll_plans[b] = pl->next;
            if (pl->r && !pl->active)
                kcoll_req_release(pl->r);
            if (!pl->active) {
                kcoll_own_free(&pl->own);
                if (pl->held != MPI_DATATYPE_NULL)
                    kcoll_release_type(pl->held);
            }
            free(pl);
        }
    atomic_store_explicit(&kcoll_nplans, 0, memory_order_relaxed); /* relaxed: a hint */
    atomic_store_explicit(&kcoll_nkplans, 0, memory_order_relaxed); /* relaxed: a hint */
    atomic_store_explicit(&kcoll_nactive_plans, 0, memory_order_relaxed); /* relaxed: a hint */
    pthread_mutex_unlock(&kcoll_plans_lock);
}
