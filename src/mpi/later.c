/* A set-up of collective host calls run in the calls that follow it.
 *
 * A team is set up with a dozen host collectives over its communicator
 * (team/team.c: agreements, the segment's name, the engines' probes; the
 * topology levels). Where every rank is in one blocking call, they are the
 * host's blocking collectives. A communicator that kcoll did not see
 * being made (through PMPI_* by another tool or a binding) and whose
 * first collective is non-blocking has no such call: a non-blocking call
 * must return without waiting for the other ranks.
 *
 * So the same set-up code runs as a coroutine on a stack of its own
 * (ucontext), with host collectives that start the host's non-blocking
 * form (PMPI_Iallreduce, PMPI_Ibcast, PMPI_Iallgather) and then, while it
 * is not done, switch back to whoever advanced the set-up. kcoll advances
 * it from the program's later MPI calls that reach it (mpi/teams.c: every
 * collective call, and the waits and tests); each advance tests the
 * pending host call and, once it is done, runs the set-up on to its next
 * host call or its end. Nothing ever waits for another rank. The host
 * calls are made on a duplicate of the communicator (PMPI_Comm_idup,
 * started in the collective call that starts the set-up, so in the same
 * place of the communicator's order on every rank), so they cannot be
 * matched with the program's own collectives, which go on meanwhile.
 *
 * Only where one thread calls MPI (MPI_THREAD_SINGLE or FUNNELED: the
 * caller, mpi/teams.c, checks): the coroutine then always runs on the
 * thread that started it, and thread-local data is that thread's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "mpi/later.h"

/* The coroutine's stack: the set-up's own frames, snprintf and the
 * topology's lookups; a guard page below it. */
#define KCOLL_LATER_STACK (256u * 1024)

struct kcoll_later {
    ucontext_t caller, co;
    char *map;           /* the stack's mapping, guard page first */
    size_t map_len;
    MPI_Comm comm;       /* the duplicate the host calls are made on */
    MPI_Request dup;     /* the duplicate being made (MPI_REQUEST_NULL: made) */
    MPI_Request req;     /* the host call the set-up waits for */
    int finished, failed_dup;
    void (*fn)(void *arg, const kcoll_later_host_t *h);
    void *arg;
    kcoll_later_host_t host;
};

/* Inside the coroutine: wait for s->req, handing control back to the
 * advancing call while it is not done. 0, or 1 when the host's call
 * failed. */
static int kcoll_later_wait(kcoll_later_t *s, int rc)
{
    int flag = 0;
    if (rc != MPI_SUCCESS)
        return 1;
    for (;;) {
        if (PMPI_Test(&s->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return 1;
        if (flag)
            return 0;
        swapcontext(&s->co, &s->caller);
    }
}

static int kcoll_later_allmin(void *ctx, int *values, int n)
{
    kcoll_later_t *s = ctx;
    return kcoll_later_wait(
        s, PMPI_Iallreduce(MPI_IN_PLACE, values, n, MPI_INT, MPI_MIN, s->comm, &s->req));
}

static int kcoll_later_bcast0(void *ctx, void *buf, size_t len)
{
    kcoll_later_t *s = ctx;
    return kcoll_later_wait(s, PMPI_Ibcast(buf, (int)len, MPI_BYTE, 0, s->comm, &s->req));
}

static int kcoll_later_allgather(void *ctx, const int *mine, int n, int *all)
{
    kcoll_later_t *s = ctx;
    return kcoll_later_wait(
        s, PMPI_Iallgather(mine, n, MPI_INT, all, n, MPI_INT, s->comm, &s->req));
}

/* The coroutine's body: the pointer comes in two ints (makecontext). */
static void kcoll_later_main(unsigned lo, unsigned hi)
{
    kcoll_later_t *s = (kcoll_later_t *)(uintptr_t)((uint64_t)hi << 32 | lo);
    s->fn(s->arg, &s->host);
    s->finished = 1;
    /* returning resumes s->caller (uc_link) */
}

/* getcontext returns twice (like setjmp): alone in a function of its own,
 * so that no variable of the caller lives across it. */
static __attribute__((noinline)) int kcoll_later_getcontext(ucontext_t *co)
{
    return getcontext(co);
}

kcoll_later_t *kcoll_later_start(MPI_Comm comm, void (*fn)(void *arg, const kcoll_later_host_t *h),
                                 void *arg)
{
    kcoll_later_t *s = calloc(1, sizeof *s);
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!s)
        return NULL;
    s->map_len = KCOLL_LATER_STACK + page;
    s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                  -1, 0);
    if (s->map == MAP_FAILED || mprotect(s->map, page, PROT_NONE) != 0 ||
        kcoll_later_getcontext(&s->co) != 0) {
        if (s->map != MAP_FAILED)
            munmap(s->map, s->map_len);
        free(s);
        return NULL;
    }
    s->co.uc_stack.ss_sp = s->map + page;
    s->co.uc_stack.ss_size = KCOLL_LATER_STACK;
    s->co.uc_link = &s->caller;
    const uint64_t bits = (uint64_t)(uintptr_t)s;
    makecontext(&s->co, (void (*)(void))kcoll_later_main, 2, (unsigned)(bits & 0xffffffffu),
                (unsigned)(bits >> 32));
    s->fn = fn;
    s->arg = arg;
    s->host = (kcoll_later_host_t){{s, kcoll_later_allmin, kcoll_later_bcast0},
                                   kcoll_later_allgather};
    s->req = MPI_REQUEST_NULL;
    s->comm = MPI_COMM_NULL;
    /* every rank starts it in the same collective call: the duplicate is
     * in the same place of comm's order everywhere. Where the host cannot
     * make it, its error handler has had the call (fatal by default);
     * under MPI_ERRORS_RETURN the set-up ends at once without running fn
     * (no team: the calls stay the host's) */
    if (PMPI_Comm_idup(comm, &s->comm, &s->dup) != MPI_SUCCESS) {
        s->comm = MPI_COMM_NULL;
        s->failed_dup = 1;
    }
    return s;
}

int kcoll_later_advance(kcoll_later_t *s)
{
    int flag = 0;
    if (s->finished)
        return 1;
    if (!s->failed_dup && s->dup != MPI_REQUEST_NULL &&
        PMPI_Test(&s->dup, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        s->failed_dup = 1;
    if (s->failed_dup) {
        s->comm = MPI_COMM_NULL;
        return s->finished = 1; /* fn never ran */
    }
    if (s->dup != MPI_REQUEST_NULL && !flag)
        return 0;
    swapcontext(&s->caller, &s->co);
    return s->finished;
}

void kcoll_later_free(kcoll_later_t *s)
{
    if (!s)
        return;
    if (s->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&s->comm);
    munmap(s->map, s->map_len);
    free(s);
}
