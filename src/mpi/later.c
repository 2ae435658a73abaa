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
 * (ucontext), whose host calls start point-to-point messages and then,
 * while they are not done, switch back to whoever advanced the set-up.
 * kcoll advances it from the program's later MPI calls that reach it
 * (mpi/teams.c: every collective call, and the waits and tests); each
 * advance tests the pending messages and, once they are done, runs the
 * set-up on to its next host call or its end. Nothing ever waits for
 * another rank.
 *
 * The messages cannot go over the communicator itself, where the
 * program's own receives (MPI_ANY_TAG) could take them, nor over a
 * duplicate made with MPI_Comm_idup: Open MPI's runs its rounds on the
 * parent communicator when its progress reaches them, so that they meet
 * the program's other non-blocking collectives there in another order on
 * each rank (docs/hosts.md). They go over kcoll's own duplicate of
 * MPI_COMM_WORLD, made at MPI_Init, between the ranks' MPI_COMM_WORLD
 * ranks, under a tag that no other set-up under way between them uses.
 * The tag is agreed by the one collective the set-up makes on the
 * communicator itself, in the call that begins it (so in the same place of
 * the communicator's order on every rank): rank 0 broadcasts a slot of its
 * own (one of KCOLL_LATER_SLOTS), and the tag is made of rank 0's
 * MPI_COMM_WORLD rank and that slot. Rank 0 keeps the slot until every
 * rank has said it is done (the set-up's last message): only then can no
 * message of the set-up still be on its way, and a new set-up may use it.
 *
 * Each host collective is a gather to rank 0 and a broadcast from it,
 * linear: rank 0 receives p - 1 messages and sends p - 1, so a set-up of
 * a dozen such calls costs it some 24 (p - 1) message times between the
 * ranks of one node, spread over the program's calls that advance it.
 * A pair of ranks exchanges one set-up's messages in one order, and MPI
 * delivers the messages between two ranks under one tag in the order
 * they were sent, so each receive gets the message of its own step.
 *
 * Only where one thread calls MPI (MPI_THREAD_SINGLE or FUNNELED: the
 * caller, mpi/teams.c, checks): the coroutine then always runs on the
 * thread that started it, and thread-local data is that thread's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "mpi/later.h"

/* The coroutine's stack: the set-up's own frames, snprintf and the
 * topology's lookups; a guard page below it. */
#define KCOLL_LATER_STACK (256u * 1024)
/* set-ups one rank can lead at once (a bit each of kcoll_later_slots) */
#define KCOLL_LATER_SLOTS 64

struct kcoll_later {
    ucontext_t caller, co;
    char *map;           /* the stack's mapping, guard page first */
    size_t map_len;
    int p, rank;         /* in the communicator */
    int *world;          /* each rank's rank in kcoll_later_comm */
    int slot;            /* rank 0's slot (broadcast), -1: none */
    int tag;             /* of its messages: once the slot is known */
    MPI_Request agree;   /* the slot's broadcast (MPI_REQUEST_NULL: done) */
    MPI_Request *reqs;   /* the messages the set-up waits for (p) */
    int finished, failed;
    void (*fn)(void *arg, const kcoll_later_host_t *h);
    void *arg;
    kcoll_later_host_t host;
};

/* kcoll's duplicate of MPI_COMM_WORLD and its group; the slots this rank
 * leads set-ups in (only the thread that calls MPI touches them) */
static MPI_Comm kcoll_later_comm = MPI_COMM_NULL;
static MPI_Group kcoll_later_group = MPI_GROUP_NULL;
static uint64_t kcoll_later_slots;
/* the largest tag the host allows (MPI_TAG_UB, at least 32767) */
static int kcoll_later_tag_ub;

int kcoll_later_init(void)
{
    int *ub = NULL, flag = 0;
    /* (every MPI has it; were it missing, no slot is ever taken: such
     * set-ups end at once, the calls staying the host's) */
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub)
        kcoll_later_tag_ub = *ub;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &kcoll_later_comm) != MPI_SUCCESS) {
        kcoll_later_comm = MPI_COMM_NULL;
        return -1;
    }
    if (PMPI_Comm_group(kcoll_later_comm, &kcoll_later_group) != MPI_SUCCESS) {
        PMPI_Comm_free(&kcoll_later_comm);
        kcoll_later_group = MPI_GROUP_NULL;
        return -1;
    }
    return 0;
}

void kcoll_later_finalize(void)
{
    if (kcoll_later_group != MPI_GROUP_NULL)
        PMPI_Group_free(&kcoll_later_group);
    if (kcoll_later_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&kcoll_later_comm);
}

/* Inside the coroutine: wait for the n messages of s->reqs, handing
 * control back to the advancing call while they are not done. 0, or 1
 * when the host's call failed. */
static int kcoll_later_wait(kcoll_later_t *s, int n)
{
    for (;;) {
        int flag = 1;
        for (int i = 0; i < n && flag; i++)
            if (PMPI_Test(&s->reqs[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return 1;
        if (flag)
            return 0;
        swapcontext(&s->co, &s->caller);
    }
}

/* Rank 0 sends len bytes of buf to every other rank, which receives them
 * there. */
static int kcoll_later_down(kcoll_later_t *s, void *buf, int len)
{
    if (s->rank)
        return PMPI_Irecv(buf, len, MPI_BYTE, s->world[0], s->tag, kcoll_later_comm,
                          &s->reqs[0]) != MPI_SUCCESS ||
               kcoll_later_wait(s, 1);
    for (int q = 1; q < s->p; q++)
        if (PMPI_Isend(buf, len, MPI_BYTE, s->world[q], s->tag, kcoll_later_comm,
                       &s->reqs[q - 1]) != MPI_SUCCESS)
            return 1;
    return kcoll_later_wait(s, s->p - 1);
}

/* Every other rank sends len bytes of mine to rank 0, which receives rank
 * q's at all + q * len (all: NULL when len is 0). */
static int kcoll_later_up(kcoll_later_t *s, const void *mine, char *all, int len)
{
    if (s->rank)
        return PMPI_Isend(mine, len, MPI_BYTE, s->world[0], s->tag, kcoll_later_comm,
                          &s->reqs[0]) != MPI_SUCCESS ||
               kcoll_later_wait(s, 1);
    if (all && len)
        memcpy(all, mine, (size_t)len);
    for (int q = 1; q < s->p; q++)
        if (PMPI_Irecv(all ? all + (size_t)q * (size_t)len : NULL, len, MPI_BYTE, s->world[q],
                       s->tag, kcoll_later_comm, &s->reqs[q - 1]) != MPI_SUCCESS)
            return 1;
    return kcoll_later_wait(s, s->p - 1);
}

static int kcoll_later_allmin(void *ctx, int *values, int n)
{
    kcoll_later_t *s = ctx;
    const int len = n * (int)sizeof *values;
    int *all = s->rank ? NULL : malloc((size_t)s->p * (size_t)len);
    if (!s->rank && !all)
        return 1;
    int rc = kcoll_later_up(s, values, (char *)all, len);
    for (int q = 1; !rc && all && q < s->p; q++)
        for (int i = 0; i < n; i++)
            if (all[q * n + i] < values[i])
                values[i] = all[q * n + i];
    free(all);
    return rc || kcoll_later_down(s, values, len);
}

static int kcoll_later_bcast0(void *ctx, void *buf, size_t len)
{
    return kcoll_later_down(ctx, buf, (int)len);
}

static int kcoll_later_allgather(void *ctx, const int *mine, int n, int *all)
{
    kcoll_later_t *s = ctx;
    const int len = n * (int)sizeof *mine;
    return kcoll_later_up(s, mine, (char *)all, len) || kcoll_later_down(s, all, s->p * len);
}

/* The coroutine's body: the pointer comes in two ints (makecontext).
 * After fn, every rank tells rank 0 it is done: rank 0's slot is free
 * again once it has heard from all. */
static void kcoll_later_main(unsigned lo, unsigned hi)
{
    kcoll_later_t *s = (kcoll_later_t *)(uintptr_t)((uint64_t)hi << 32 | lo);
    s->fn(s->arg, &s->host);
    kcoll_later_up(s, NULL, NULL, 0);
    s->finished = 1;
    /* returning resumes s->caller (uc_link) */
}

/* getcontext returns twice (like setjmp): alone in a function of its own,
 * so that no variable of the caller lives across it. */
static __attribute__((noinline)) int kcoll_later_getcontext(ucontext_t *co)
{
    return getcontext(co);
}

/* Rank 0's slot for a new set-up, or -1 where it leads
 * KCOLL_LATER_SLOTS already or the tag would pass MPI_TAG_UB. */
static int kcoll_later_take_slot(int world0)
{
    if ((int64_t)world0 * KCOLL_LATER_SLOTS + KCOLL_LATER_SLOTS - 1 > kcoll_later_tag_ub)
        return -1;
    for (int i = 0; i < KCOLL_LATER_SLOTS; i++)
        if (!(kcoll_later_slots >> i & 1)) {
            kcoll_later_slots |= (uint64_t)1 << i;
            return i;
        }
    return -1;
}

/* The set-up's stack, its ranks' MPI_COMM_WORLD ranks and its requests:
 * 0, or -1 (nothing kept) where one cannot be had. */
static int kcoll_later_alloc(kcoll_later_t *s, MPI_Comm comm)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    MPI_Group g = MPI_GROUP_NULL;
    int *mine = NULL, ok = 0;
    s->map_len = KCOLL_LATER_STACK + page;
    s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                  -1, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        return -1;
    }
    s->world = malloc((size_t)s->p * sizeof *s->world);
    s->reqs = malloc((size_t)s->p * sizeof *s->reqs);
    mine = malloc((size_t)s->p * sizeof *mine);
    if (s->world && s->reqs && mine && mprotect(s->map, page, PROT_NONE) == 0 &&
        kcoll_later_getcontext(&s->co) == 0 && PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
        for (int q = 0; q < s->p; q++)
            mine[q] = q;
        ok = PMPI_Group_translate_ranks(g, s->p, mine, kcoll_later_group, s->world) ==
             MPI_SUCCESS;
        for (int q = 0; ok && q < s->p; q++)
            ok = s->world[q] != MPI_UNDEFINED;
        PMPI_Group_free(&g);
    }
    free(mine);
    if (ok) {
        s->co.uc_stack.ss_sp = s->map + page;
        s->co.uc_stack.ss_size = KCOLL_LATER_STACK;
        s->co.uc_link = &s->caller;
        return 0;
    }
    munmap(s->map, s->map_len);
    free(s->world);
    free(s->reqs);
    return -1;
}

kcoll_later_t *kcoll_later_start(MPI_Comm comm, void (*fn)(void *arg, const kcoll_later_host_t *h),
                                 void *arg)
{
    if (kcoll_later_comm == MPI_COMM_NULL)
        return NULL;
    kcoll_later_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    PMPI_Comm_size(comm, &s->p);
    PMPI_Comm_rank(comm, &s->rank);
    if (kcoll_later_alloc(s, comm) != 0) {
        free(s);
        return NULL;
    }
    const uint64_t bits = (uint64_t)(uintptr_t)s;
    makecontext(&s->co, (void (*)(void))kcoll_later_main, 2, (unsigned)(bits & 0xffffffffu),
                (unsigned)(bits >> 32));
    s->fn = fn;
    s->arg = arg;
    s->host = (kcoll_later_host_t){{s, kcoll_later_allmin, kcoll_later_bcast0},
                                   kcoll_later_allgather};
    for (int q = 0; q < s->p; q++)
        s->reqs[q] = MPI_REQUEST_NULL;
    s->slot = s->rank ? -1 : kcoll_later_take_slot(s->world[0]);
    /* every rank starts it in the same collective call: the broadcast is
     * in the same place of comm's order everywhere. Where the host cannot
     * start it, its error handler has had the call (fatal by default);
     * under MPI_ERRORS_RETURN the set-up ends at once without running fn
     * (no team: the calls stay the host's) */
    if (PMPI_Ibcast(&s->slot, 1, MPI_INT, 0, comm, &s->agree) != MPI_SUCCESS) {
        s->agree = MPI_REQUEST_NULL;
        s->failed = 1;
    }
    return s;
}

int kcoll_later_advance(kcoll_later_t *s)
{
    int flag = 0;
    if (s->finished)
        return 1;
    if (!s->failed && s->agree != MPI_REQUEST_NULL) {
        if (PMPI_Test(&s->agree, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            s->failed = 1;
        else if (!flag)
            return 0;
        else if (s->slot >= 0)
            s->tag = s->world[0] * KCOLL_LATER_SLOTS + s->slot;
    }
    if (s->failed || s->slot < 0)
        return s->finished = 1; /* fn never runs */
    swapcontext(&s->caller, &s->co);
    return s->finished;
}

void kcoll_later_free(kcoll_later_t *s)
{
    if (!s)
        return;
    if (!s->rank && s->slot >= 0)
        kcoll_later_slots &= ~((uint64_t)1 << s->slot);
    munmap(s->map, s->map_len);
    free(s->world);
    free(s->reqs);
    free(s);
}
