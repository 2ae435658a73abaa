/* Teams of MPI communicators: kcoll's record of each communicator.
 *
 * A communicator's team is set up collectively while all its ranks are in
 * one call: when the communicator is made (MPI_Comm_dup, MPI_Comm_split
 * and the other constructors of pmpi/comm.c, and MPI_COMM_WORLD at
 * MPI_Init), or
 * else at its first blocking collective that kcoll would run. A
 * non-blocking collective cannot wait for the other ranks: where it is
 * the first call on a communicator without a record (one kcoll did not
 * see being made, or made by MPI_Comm_idup), it begins the set-up *in
 * later calls* (mpi/later.c: the same set-up, run in the program's calls
 * that follow, on point-to-point messages), and the calls go to the host
 * MPI (mpi:no_team) until every rank turns the team on at one call
 * (kcoll_mteam_turn). Not where several threads call MPI (agreed by every
 * rank at MPI_Init: kcoll_nodes_init). Set-up (team/team.c) first checks
 * that the communicator lies on one node (MPI_COMM_TYPE_SHARED, through a
 * map of MPI_COMM_WORLD's nodes made at MPI_Init); a team that cannot be
 * set up sends the communicator to the host MPI for its whole life, with
 * the reason. A team's topology levels are gathered right after its
 * set-up (kcoll_mteam_levels). A communicator that spans nodes gets no
 * team but the cross-node layer's record (span/span.h: its node
 * communicator, which gets its own record and team here, and the groups
 * between nodes: kcoll_span_make), let go of with the record.
 *
 * The team is stored on the communicator with an attribute; MPI_Comm_dup
 * does not copy it (a duplicate has its own collectives, so its own
 * sequence numbers and team). The attribute's delete callback (at
 * MPI_Comm_free, and for every team still alive at MPI_Finalize) lets go
 * of the communicator's reference: the team itself lives on until its last
 * unfinished request completes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/params.h"
#include "call/shortcut.h"
#include "mpi/host.h"
#include "mpi/later.h"
#include "topo/topo.h"

typedef struct kcoll_mteam {
    kcoll_team_t *team;    /* NULL: kcoll does not run this communicator's collectives */
    kcoll_reason_t reason; /* why not (KCOLL_R_SPANS: it spans nodes and has a span record) */
    kcoll_span_t *span;    /* a communicator that spans nodes: its record (span/span.h) */
    MPI_Comm comm;         /* not owned: the communicator the attribute sits on */
    int p, rank;           /* of comm (an intra-communicator) */
    struct kcoll_mteam *prev, *next;
    /* a team set up in later calls (mpi/later.c), until it is turned on:
     * the set-up, the collective calls on comm since it began (numbered
     * alike on every rank), the team it made (team stays NULL until every
     * rank turns it on: kcoll_team_turn), whether comm has let go of the
     * record meanwhile, and the records with a set-up under way */
    kcoll_later_t *later;
    uint64_t calls;
    kcoll_team_t *made;
    kcoll_reason_t made_why;
    int posted, orphan;
    struct kcoll_mteam *lnext;
} kcoll_mteam_t;

/* The record of the communicator this thread used last: a collective call
 * then finds its team without asking the host MPI (attribute lookup, size,
 * rank). Communicator handles are reused after MPI_Comm_free, so a record's
 * destruction bumps the generation, which every thread's entry carries.
 * Initial-exec TLS: no __tls_get_addr call in a preloaded library. */
static __thread __attribute__((tls_model("initial-exec"))) struct {
    MPI_Comm comm;
    kcoll_mteam_t *mt;
    uint64_t gen;
} kcoll_last;
/* relaxed: compared with a thread's copy; the record it names is only
 * destroyed by MPI_Comm_free or MPI_Finalize, which MPI forbids to run
 * concurrently with a collective call on that communicator */
static _Atomic uint64_t kcoll_mteams_gen = 1;

/* Which node each process of MPI_COMM_WORLD is on: the MPI_COMM_WORLD
 * rank of its node's first process (MPI_COMM_TYPE_SHARED decides what a
 * node is). Made at MPI_Init, so that a communicator's locality is then
 * known without a collective call. NULL when kcoll started later. */
static int *kcoll_node_of;
static int kcoll_world_size;
/* this process's rank among its node's processes of MPI_COMM_WORLD (-1: unknown) */
static int kcoll_node_index = -1;

static int kcoll_keyval = MPI_KEYVAL_INVALID;
static kcoll_mteam_t *kcoll_mteams; /* every record alive, for MPI_Finalize */
/* records whose team is being set up in later calls (alive or let go of
 * by their communicator), and how many: only where one thread calls MPI
 * (kcoll_teams_init), so these are that thread's alone */
static kcoll_mteam_t *kcoll_laters;
static int kcoll_nlaters, kcoll_laters_allowed;
static pthread_mutex_t kcoll_mteams_lock = PTHREAD_MUTEX_INITIALIZER;

static void kcoll_mteam_destroy(kcoll_mteam_t *mt)
{
    kcoll_shortcut_forget(); /* the handle may name another communicator later */
    /* relaxed: see kcoll_mteams_gen */
    atomic_fetch_add_explicit(&kcoll_mteams_gen, 1, memory_order_relaxed);
    pthread_mutex_lock(&kcoll_mteams_lock);
    if (mt->prev)
        mt->prev->next = mt->next;
    else
        kcoll_mteams = mt->next;
    if (mt->next)
        mt->next->prev = mt->prev;
    pthread_mutex_unlock(&kcoll_mteams_lock);
    if (mt->team)
        kcoll_team_unref(mt->team, kcoll_call_release_team);
    if (mt->span) /* the last reference frees the node communicator, whose record goes too */
        kcoll_span_release(mt->span);
    if (mt->later) { /* its set-up runs to its end first (kcoll_teams_later) */
        mt->orphan = 1;
        return;
    }
    if (mt->made)
        kcoll_team_unref(mt->made, kcoll_call_release_team);
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

/* What the cross-node layer asks of the host (span.h). */
static int kcoll_span_may_call(void)
{
    return !kcoll_progress_in_helper();
}

static void kcoll_span_hold_type(MPI_Datatype dt, int hold)
{
    (hold ? kcoll_retain_type : kcoll_release_type)(dt);
}

static void kcoll_span_hold_op(MPI_Op op, int hold)
{
    (hold ? kcoll_retain_op : kcoll_release_op)(op);
}

static kcoll_team_t *kcoll_span_node_team(MPI_Comm node)
{
    kcoll_reason_t why;
    return kcoll_comm_team(node, 0, &why);
}

int kcoll_teams_init(void)
{
    const kcoll_span_host_t span_host = {kcoll_drive_begin,     kcoll_drive_end,
                                         kcoll_span_may_call,   kcoll_span_hold_type,
                                         kcoll_span_hold_op,    kcoll_span_node_team};
    int level = MPI_THREAD_MULTIPLE;
    kcoll_span_set_host(&span_host);
    /* set-ups in later calls: only where one thread calls MPI (mpi/later.c);
     * every rank must agree (kcoll_nodes_init), as each starts a set-up's
     * broadcast on the communicator */
    kcoll_laters_allowed =
        PMPI_Query_thread(&level) == MPI_SUCCESS && level <= MPI_THREAD_FUNNELED;
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
    /* set-ups in later calls still under way, their records let go of
     * above: every rank is here, so each ends (all at once: each rank may
     * have begun them in another order) */
    kcoll_pause_t pause;
    kcoll_pause_init(&pause);
    while (kcoll_nlaters) {
        kcoll_teams_later();
        kcoll_pause_unless(&pause, 0);
    }
    kcoll_later_finalize();
    PMPI_Comm_free_keyval(&kcoll_keyval);
    free(kcoll_node_of);
    kcoll_node_of = NULL;
}

/* The two collectives team set-up borrows from the host MPI (blocking; with
 * kcoll requests pending and no host progress hook, advanced beside by
 * mpi/drive.c). */
static int kcoll_host_allmin(void *ctx, int *values, int n)
{
    int drive = kcoll_drive_begin();
    int rc = PMPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT, MPI_MIN, *(MPI_Comm *)ctx);
    kcoll_drive_end(drive);
    return rc != MPI_SUCCESS;
}

static int kcoll_host_bcast0(void *ctx, void *buf, size_t len)
{
    int drive = kcoll_drive_begin();
    int rc = PMPI_Bcast(buf, (int)len, MPI_BYTE, 0, *(MPI_Comm *)ctx);
    kcoll_drive_end(drive);
    return rc != MPI_SUCCESS;
}

static int kcoll_host_allgather(void *ctx, const int *mine, int n, int *all)
{
    int drive = kcoll_drive_begin();
    int rc = PMPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, *(MPI_Comm *)ctx);
    kcoll_drive_end(drive);
    return rc != MPI_SUCCESS;
}

void kcoll_nodes_init(void)
{
    MPI_Comm node;
    int wr = kcoll_world_rank, leader;
    PMPI_Comm_size(MPI_COMM_WORLD, &kcoll_world_size);
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return;
    leader = wr;
    PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
    int *map = malloc((size_t)kcoll_world_size * sizeof *map);
    /* whether every rank has the map's memory, and whether every rank may
     * set teams up in later calls (each rank's own thread level: MPI lets
     * them differ) */
    int ok[2] = {map != NULL, kcoll_laters_allowed};
    PMPI_Allreduce(MPI_IN_PLACE, ok, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    kcoll_laters_allowed = ok[1] && kcoll_later_init() == 0;
    if (ok[0] &&
        PMPI_Allgather(&leader, 1, MPI_INT, map, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS)
        kcoll_node_of = map;
    else
        free(map);
    for (int q = 0; kcoll_node_of && q <= wr; q++)
        kcoll_node_index += kcoll_node_of[q] == kcoll_node_of[wr];
}

int kcoll_node_rank(void)
{
    return kcoll_node_of ? kcoll_node_index : -1;
}

/* Do all p processes of comm share one node? Without a collective call
 * where the node map is known; otherwise with MPI_Comm_split_type on comm
 * (collective: every rank of comm is in this call). Every rank gets the
 * same answer. */
static int kcoll_comm_one_node(MPI_Comm comm, int p)
{
    if (!kcoll_node_of) {
        MPI_Comm node;
        int node_p = 0, drive = kcoll_drive_begin();
        PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        kcoll_drive_end(drive);
        PMPI_Comm_size(node, &node_p);
        PMPI_Comm_free(&node);
        return node_p == p;
    }
    MPI_Group g, wg;
    int *ranks = malloc(2 * (size_t)p * sizeof *ranks), one = ranks != NULL;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; one && i < p; i++)
        ranks[i] = i;
    if (one)
        PMPI_Group_translate_ranks(g, p, ranks, wg, ranks + p);
    for (int i = 0; one && i < p; i++) /* a process of another job's world is not local */
        one = ranks[p + i] != MPI_UNDEFINED && ranks[p + i] < kcoll_world_size &&
              kcoll_node_of[ranks[p + i]] == kcoll_node_of[ranks[p]];
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    free(ranks);
    return one;
}

/* Team t's topology levels (collective over comm, through the host's
 * collectives h): where each rank runs at each level of
 * KCOLL_HIER_LEVELS, gathered, grouped (coll/levels.h). A level name
 * kcoll does not know leaves the team flat, with a warning. */
static void kcoll_mteam_levels(const kcoll_mteam_t *mt, kcoll_team_t *t,
                               const kcoll_later_host_t *h)
{
    int mine[KCOLL_MAX_LEVELS], pu;
    char err[256];
    int n = kcoll_topo_place(kcoll_node_index >= 0 ? kcoll_node_index : mt->rank, mine,
                             KCOLL_MAX_LEVELS, &pu, err, sizeof err);
    if (n < 0 && mt->rank == 0)
        kcoll_warn("topology levels unavailable, the communicator's team is flat: %s", err);
    /* room for any number of levels, so that one agreement says both how
     * many levels every rank has and whether every rank has the memory */
    int *all = malloc(2 * (size_t)mt->p * KCOLL_MAX_LEVELS * sizeof *all);
    int agree[2] = {n, all != NULL};
    if (h->team.allmin(h->team.ctx, agree, 2) || agree[0] <= 0 || !agree[1]) {
        free(all);
        return;
    }
    const int nl = agree[0];
    if (h->allgather(h->team.ctx, mine, nl, all) == 0) {
        int *ids = all + (size_t)mt->p * (size_t)nl; /* level-major */
        for (int q = 0; q < mt->p; q++)
            for (int l = 0; l < nl; l++)
                ids[l * mt->p + q] = all[q * nl + l];
        kcoll_team_set_levels(t, nl, ids);
    }
    free(all);
}

/* The node team of a span record, while every rank of the node is here
 * (its set-up drives its own host calls), even on a node of one rank (it
 * numbers the calls); every rank learns whether every node has it
 * (span.h: xok). */
static void kcoll_mteam_span_node(kcoll_mteam_t *mt)
{
    kcoll_reason_t why;
    if (!mt->span->xok)
        return;
    int ok = kcoll_comm_team(mt->span->xnode, 1, &why) != NULL;
    if (kcoll_host_allmin(&mt->comm, &ok, 1))
        ok = 0;
    mt->span->xok = ok;
}

/* Keep record mt: on the list of records alive, and on its communicator. */
static void kcoll_mteam_keep(kcoll_mteam_t *mt)
{
    pthread_mutex_lock(&kcoll_mteams_lock);
    mt->next = kcoll_mteams;
    if (kcoll_mteams)
        kcoll_mteams->prev = mt;
    kcoll_mteams = mt;
    pthread_mutex_unlock(&kcoll_mteams_lock);
    PMPI_Comm_set_attr(mt->comm, kcoll_keyval, mt);
}

/* Set comm's team up (collective over comm) and record the outcome. */
static kcoll_mteam_t *kcoll_mteam_create(MPI_Comm comm)
{
    int p, rank, ok;
    kcoll_mteam_t *mt = calloc(1, sizeof *mt);
    ok = mt != NULL;
    if (kcoll_host_allmin(&comm, &ok, 1) || !ok) {
        free(mt);
        return NULL; /* not recorded: a later call tries again */
    }
    mt->comm = comm;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    mt->p = p;
    mt->rank = rank;

    if (!kcoll_comm_one_node(comm, p)) {
        mt->reason = KCOLL_R_MULTINODE;
        if (kcoll_call_across_mode() && (mt->span = kcoll_span_make(comm))) {
            mt->reason = KCOLL_R_SPANS;
            kcoll_mteam_span_node(mt);
        }
    } else if ((mt->team = calloc(1, sizeof *mt->team)) == NULL) {
        mt->reason = KCOLL_R_TEAM_FAILED; /* the set-up's own agreements notice it too */
    }
    const int multinode = mt->reason == KCOLL_R_MULTINODE || mt->reason == KCOLL_R_SPANS;
    int have = mt->team != NULL || multinode;
    if (kcoll_host_allmin(&comm, &have, 1))
        have = 0;
    if (!multinode && !have) {
        free(mt->team);
        mt->team = NULL;
        mt->reason = KCOLL_R_TEAM_FAILED;
    } else if (mt->team) {
        const kcoll_later_host_t host = {{&mt->comm, kcoll_host_allmin, kcoll_host_bcast0},
                                         kcoll_host_allgather};
        kcoll_status_t st = kcoll_team_setup(mt->team, p, rank, &host.team);
        if (st != KCOLL_OK) {
            free(mt->team);
            mt->team = NULL;
            mt->reason = st == KCOLL_ERR_PERM ? KCOLL_R_NO_CMA : KCOLL_R_TEAM_FAILED;
        } else {
            kcoll_mteam_levels(mt, mt->team, &host);
        }
    }

    kcoll_mteam_keep(mt);
    return mt;
}

/* The set-up of a team in later calls (the coroutine of mpi/later.c):
 * what kcoll_mteam_create does for a communicator on one node, with the
 * set-up's own messages h (mpi/later.c) in place of host collectives. The
 * team is left in mt->made (NULL, alike on every rank, where it could not
 * be set up: the reason in mt->made_why). */
static void kcoll_mteam_later_fn(void *arg, const kcoll_later_host_t *h)
{
    kcoll_mteam_t *mt = arg;
    kcoll_team_t *t = calloc(1, sizeof *t);
    int ok = t != NULL;
    if (h->team.allmin(h->team.ctx, &ok, 1) || !ok) {
        free(t);
        return;
    }
    kcoll_status_t st = kcoll_team_setup(t, mt->p, mt->rank, &h->team);
    if (st != KCOLL_OK) {
        free(t);
        mt->made_why = st == KCOLL_ERR_PERM ? KCOLL_R_NO_CMA : KCOLL_R_TEAM_FAILED;
        return;
    }
    kcoll_mteam_levels(mt, t, h);
    mt->made = t;
}

/* A non-blocking (or persistent) collective call on comm, which has no
 * record: begin its team's set-up in later calls, where kcoll can (one
 * thread calls MPI, the communicator lies on one node by the map of
 * MPI_COMM_WORLD's nodes, so that no rank needs to ask the others).
 * Every rank of comm gets here in the same call (MPI orders a
 * communicator's collectives alike, and nothing above differs between
 * them). The record, or NULL. */
static kcoll_mteam_t *kcoll_mteam_later(MPI_Comm comm)
{
    int inter = 1, p = 0, rank = 0;
    if (!kcoll_laters_allowed || !kcoll_node_of || kcoll_param_int(KCOLL_P_DISABLE) ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return NULL;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    if (p < 2 || !kcoll_comm_one_node(comm, p))
        return NULL;
    kcoll_mteam_t *mt = calloc(1, sizeof *mt);
    if (!mt)
        return NULL;
    mt->comm = comm;
    mt->p = p;
    mt->rank = rank;
    mt->reason = KCOLL_R_NO_TEAM;
    mt->made_why = KCOLL_R_TEAM_FAILED; /* where the set-up never runs */
    if (!(mt->later = kcoll_later_start(comm, kcoll_mteam_later_fn, mt))) {
        free(mt);
        return NULL;
    }
    mt->lnext = kcoll_laters;
    kcoll_laters = mt;
    kcoll_nlaters++;
    kcoll_mteam_keep(mt);
    return mt;
}

void kcoll_teams_later(void)
{
    static int running; /* not from inside a set-up's own host calls */
    if (!kcoll_nlaters || running || !kcoll_host_may_call())
        return;
    running = 1;
    for (kcoll_mteam_t **at = &kcoll_laters; *at;) {
        kcoll_mteam_t *mt = *at;
        if (!kcoll_later_advance(mt->later)) {
            at = &mt->lnext;
            continue;
        }
        kcoll_later_free(mt->later);
        mt->later = NULL;
        *at = mt->lnext;
        kcoll_nlaters--;
        if (mt->orphan) { /* comm let go of the record meanwhile */
            if (mt->made)
                kcoll_team_unref(mt->made, kcoll_call_release_team);
            free(mt);
        } else if (mt->made) { /* done here: this rank's calls so far went to the host */
            kcoll_team_turn(mt->made, mt->calls, 1);
        } else {
            mt->reason = mt->made_why;
        }
    }
    running = 0;
}

/* Wait, advancing kcoll's requests and every set-up in later calls, until
 * done(mt) (a blocking collective call: every rank of its communicator
 * comes to it, and MPI lets it wait for them). */
static void kcoll_mteam_wait(kcoll_mteam_t *mt, int (*done)(const kcoll_mteam_t *mt))
{
    kcoll_pause_t pause;
    kcoll_pause_init(&pause);
    for (;;) {
        kcoll_teams_later();
        if (done(mt))
            return;
        kcoll_pause_unless(&pause, kcoll_progress());
    }
}

static int kcoll_mteam_set_up(const kcoll_mteam_t *mt)
{
    return !mt->later;
}

static int kcoll_mteam_all_set_up(const kcoll_mteam_t *mt)
{
    return !mt->made || kcoll_team_turn_final(mt->made);
}

/* The next collective call on mt's communicator (mode), whose team is
 * being set up in later calls or waits to be turned on: the team, from
 * the call on which every rank turns it on (kcoll_team_turn), else NULL
 * (the host MPI: mpi:no_team, or the set-up's failure). A set-up that
 * finishes now counts the calls before this one as the host's. A blocking
 * call waits for every rank's set-up, which the others finish in the same
 * call at the latest, and then runs on the team. */
static kcoll_team_t *kcoll_mteam_turn(kcoll_mteam_t *mt, kcoll_mode_t mode, kcoll_reason_t *why)
{
    if (mode == KCOLL_MODE_BLOCKING)
        kcoll_mteam_wait(mt, kcoll_mteam_set_up);
    else
        kcoll_teams_later();
    const uint64_t k = ++mt->calls;
    if (mode == KCOLL_MODE_BLOCKING)
        kcoll_mteam_wait(mt, kcoll_mteam_all_set_up);
    if (mt->later) {
        *why = KCOLL_R_NO_TEAM;
        return NULL;
    }
    if (!mt->made) {
        *why = mt->reason;
        return NULL;
    }
    if (!kcoll_team_turn(mt->made, k, 0)) {
        *why = KCOLL_R_NO_TEAM;
        return NULL;
    }
    mt->team = mt->made;
    mt->made = NULL;
    mt->reason = KCOLL_R_NONE;
    *why = KCOLL_R_NONE;
    return mt->team;
}

/* comm's record, or NULL if it has none (yet). */
static kcoll_mteam_t *kcoll_comm_record(MPI_Comm comm)
{
    kcoll_mteam_t *mt = NULL;
    int flag = 0;
    /* relaxed: see kcoll_mteams_gen */
    uint64_t gen = atomic_load_explicit(&kcoll_mteams_gen, memory_order_relaxed);
    if (kcoll_last.comm == comm && kcoll_last.gen == gen && kcoll_last.mt)
        return kcoll_last.mt;
    if (kcoll_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL)
        return NULL;
    PMPI_Comm_get_attr(comm, kcoll_keyval, &mt, &flag);
    if (!flag || !mt)
        return NULL;
    kcoll_last.comm = comm;
    kcoll_last.mt = mt;
    kcoll_last.gen = gen;
    return mt;
}

kcoll_span_t *kcoll_comm_span(MPI_Comm comm)
{
    kcoll_mteam_t *mt = kcoll_comm_record(comm);
    return mt ? mt->span : NULL;
}

int kcoll_comm_known(MPI_Comm comm, int *p, int *rank)
{
    kcoll_mteam_t *mt = kcoll_comm_record(comm);
    if (!mt)
        return 0;
    *p = mt->p;
    *rank = mt->rank;
    return 1;
}

int kcoll_comm_place(MPI_Comm comm, int *p, int *rank)
{
    int inter = 1;
    if (comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
        PMPI_Comm_size(comm, p) == MPI_SUCCESS && PMPI_Comm_rank(comm, rank) == MPI_SUCCESS)
        return 1;
    *p = *rank = 0;
    return 0;
}

kcoll_team_t *kcoll_comm_team(MPI_Comm comm, int create, kcoll_reason_t *why)
{
    if (kcoll_keyval == MPI_KEYVAL_INVALID) {
        *why = KCOLL_R_TEAM_FAILED;
        return NULL;
    }
    kcoll_mteam_t *mt = kcoll_comm_record(comm);
    if (!mt) {
        if (!create) {
            *why = KCOLL_R_NO_TEAM;
            return NULL;
        }
        if (!(mt = kcoll_mteam_create(comm))) {
            *why = KCOLL_R_TEAM_FAILED;
            return NULL;
        }
    }
    *why = mt->reason;
    return mt->team;
}

kcoll_team_t *kcoll_comm_team_for(MPI_Comm comm, kcoll_mode_t mode, kcoll_reason_t *why)
{
    if (kcoll_keyval == MPI_KEYVAL_INVALID) {
        *why = KCOLL_R_TEAM_FAILED;
        return NULL;
    }
    kcoll_mteam_t *mt = kcoll_comm_record(comm);
    if (!mt && mode != KCOLL_MODE_BLOCKING && !(mt = kcoll_mteam_later(comm))) {
        *why = KCOLL_R_NO_TEAM;
        return NULL;
    }
    if (mt && (mt->later || mt->made))
        return kcoll_mteam_turn(mt, mode, why);
    return kcoll_comm_team(comm, mode == KCOLL_MODE_BLOCKING, why);
}

void kcoll_comm_created(MPI_Comm comm)
{
    int inter = 1, p = 1, flag = 0;
    kcoll_mteam_t *mt;
    /* (no keyval: kcoll is not set up, or finalized) */
    if (comm == MPI_COMM_NULL || kcoll_keyval == MPI_KEYVAL_INVALID ||
        kcoll_param_int(KCOLL_P_DISABLE) ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return;
    PMPI_Comm_size(comm, &p);
    if (p < 2)
        return;
    PMPI_Comm_get_attr(comm, kcoll_keyval, &mt, &flag);
    if (!flag)
        kcoll_mteam_create(comm);
}

