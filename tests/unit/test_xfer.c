/* Every algorithm of every family through each transfer engine, for real:
 * the ranks are forked processes on one control segment, each runs its
 * schedule with the executor and the engine under test, and compares what
 * it received with what the simulator delivers for the same schedules and
 * inputs (byte for byte). p = 2, 3 and 5; every algorithm valid at p with
 * its default parameters; sizes of one byte, a few pages and more than
 * the two bounce cells (so the ring wraps around); the first and the last
 * rank as root; reductions on int32 sums. The engines:
 *  - shm: every transfer through the bounce cells (the owner serves);
 *  - shm with cells of one page: many rounds through the ring per step;
 *  - vmsplice: through each rank's pipe, with the default capacity and
 *    with pipes of one page (every step many partial vmsplice and readv
 *    calls, the producer finding the pipe full again and again);
 *  - direct: SEND and RECV in shareable memory (xfer/direct.h), every
 *    step on them a load or store (TMP is private: its steps go through
 *    cma), the partitioned reductions reducing the peers' chunks in place
 *    (their scratch stays untouched); every rank's allocations freed after
 *    each case, and the mappings of freed ones let go.
 * Then the channel on its own: a transfer the owner refuses (a collective
 * it has not exposed) fails with its reason, and a requester waiting for
 * an owner that has died gets the watchdog's error, not a hang, and an
 * owner whose reader dies in the middle of a vmsplice transfer (its pipe
 * full) gets the watchdog's error too; an allocation freed while a peer
 * has it mapped stays readable there until the peer's next look at its
 * owner drops the mapping. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/params.h"
#include "check.h"
#include "coll/coll.h"
#include "coll/reduce/common.h"
#include "forkteam.h"
#include "sched/exec.h"
#include "sched/sim.h"
#include "xfer/chan.h"
#include "xfer/direct.h"
#include "xfer/vmsplice.h"
#include "xfer/cma.h"

static const kcoll_op_t isum = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_INT32, .esize = 4};

typedef struct {
    const char *name;
    kcoll_engine_id_t engine;
    int direct; /* SEND and RECV in shareable memory, the direct engine on */
} mode_t_;

/* The buffers of one rank of one call. */
typedef struct {
    uint8_t *b[KCOLL_NBUF];
    size_t len[KCOLL_NBUF];
    int shared; /* SEND and RECV from kcoll_direct_alloc */
} bufs_t;

static kcoll_coll_t coll_of(kcoll_coll_t family)
{
    return family == KCOLL_COLL_REDUCE_SCATTER ? KCOLL_COLL_REDUCE_SCATTER_BLOCK : family;
}

static kcoll_args_t args_of(const kcoll_algo_t *a, int p, int rank, int root, size_t bytes)
{
    kcoll_args_t x = {.coll = coll_of(a->family), .p = p, .rank = rank, .root = root,
                      .bytes = bytes};
    kcoll_algo_defaults(a, &x.prm);
    if (x.coll >= KCOLL_COLL_REDUCE) {
        x.esize = 4;
        x.count = bytes / 4;
        x.bytes = x.count * 4;
        x.op = &isum;
    }
    return x;
}

/* Rank r's buffers for a call, filled: SEND with its data, RECV with
 * 0xee (a broadcast's root: its data), TMP as the algorithm asks. */
static void bufs_make(bufs_t *B, const kcoll_algo_t *a, const kcoll_args_t *x, int case_no,
                      int shared)
{
    const int p = x->p, r = x->rank, root = r == x->root;
    size_t s = 0, v = 0, n = x->bytes;
    switch (x->coll) {
    case KCOLL_COLL_BCAST:
        v = n;
        break;
    case KCOLL_COLL_SCATTER:
        s = root ? (size_t)p * n : 0;
        v = n;
        break;
    case KCOLL_COLL_GATHER:
        s = n;
        v = root ? (size_t)p * n : 0;
        break;
    case KCOLL_COLL_ALLGATHER:
        s = n;
        v = (size_t)p * n;
        break;
    case KCOLL_COLL_ALLTOALL:
        s = v = (size_t)p * n;
        break;
    case KCOLL_COLL_REDUCE:
        s = n;
        v = root ? n : 0;
        break;
    case KCOLL_COLL_ALLREDUCE:
        s = v = n;
        break;
    case KCOLL_COLL_REDUCE_SCATTER_BLOCK:
        s = (size_t)p * n;
        v = n;
        break;
    default:
        break;
    }
    memset(B, 0, sizeof *B);
    B->len[KCOLL_BUF_SEND] = s;
    B->len[KCOLL_BUF_RECV] = v;
    B->len[KCOLL_BUF_TMP] = a->tmp ? a->tmp(x) : 0;
    B->shared = shared;
    for (int b = 0; b < KCOLL_NBUF; b++)
        if (B->len[b])
            B->b[b] = shared && b != KCOLL_BUF_TMP ? kcoll_direct_alloc(B->len[b])
                                                   : malloc(B->len[b]);
    for (size_t i = 0; i < s; i += 4) { /* small int32s: sums do not overflow */
        uint32_t w = (uint32_t)((size_t)r * 131 + i / 4 * 7 + (size_t)case_no) % 1000;
        memcpy(B->b[KCOLL_BUF_SEND] + i, &w, s - i < 4 ? s - i : 4);
    }
    if (B->len[KCOLL_BUF_TMP])
        memset(B->b[KCOLL_BUF_TMP], 0xee, B->len[KCOLL_BUF_TMP]);
    for (size_t i = 0; i < v; i++)
        B->b[KCOLL_BUF_RECV][i] =
            x->coll == KCOLL_COLL_BCAST && root ? (uint8_t)(i * 7 + (size_t)case_no) : 0xee;
}

static void bufs_free(bufs_t *B)
{
    for (int b = 0; b < KCOLL_NBUF; b++)
        if (!B->shared || b == KCOLL_BUF_TMP || !kcoll_direct_free(B->b[b]))
            free(B->b[b]);
}

static void barrier(kcoll_ctl_t *c, uint64_t *seq);

/* The team's pipes, as team set-up makes them (team/team.c): each rank
 * its own, named in its slot, opened by everyone, then unlinked. */
static int make_pipes(kcoll_ctl_t *c, uint64_t *seq)
{
    const int p = c->p, rank = c->rank;
    char why[256];
    int *fds = malloc((size_t)p * sizeof *fds);
    kcoll_slot_t *me = &c->slots[rank];
    fds[rank] = kcoll_vmsplice_make(me->pipe, sizeof me->pipe,
                                    (size_t)kcoll_param_int(KCOLL_P_PIPE_SIZE), why, sizeof why);
    barrier(c, seq);
    for (int q = 0; q < p; q++)
        if (q != rank && (fds[q] = kcoll_vmsplice_open(c->slots[q].pipe, why, sizeof why)) < 0)
            fprintf(stderr, "%s\n", why);
    barrier(c, seq);
    kcoll_vmsplice_unlink(me->pipe);
    for (int q = 0; q < p; q++)
        if (fds[q] < 0)
            return -1;
    kcoll_chan_set_pipes(c->chan, fds);
    return 0;
}

/* Every rank here at once: a dissemination barrier through the executor. */
static void barrier(kcoll_ctl_t *c, uint64_t *seq)
{
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_args_t a = {.coll = KCOLL_COLL_BARRIER, .p = c->p, .rank = c->rank};
    kcoll_barrier_dissemination(&a, &s);
    void *bp[KCOLL_NBUF] = {NULL, NULL, NULL};
    size_t lens[KCOLL_NBUF] = {0, 0, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, c, kcoll_engine(KCOLL_ENGINE_CMA), &s, bp, lens, ++*seq);
    kcoll_exec_run(&x);
    kcoll_exec_finish(&x);
    kcoll_sched_free(&s);
}

static const size_t sizes[] = {1, 12289, 300007};

/* The body of one rank: every case in a row on one team. Returns the
 * number of wrong results. */
static int run_all(kcoll_ctl_t *c, int rank, void *arg)
{
    const mode_t_ *m = arg;
    const int p = c->p;
    uint64_t direct_bytes = 0;
    int wrong = 0, case_no = 0;
    uint64_t seq = 0;
    if (m->engine == KCOLL_ENGINE_VMSPLICE && make_pipes(c, &seq))
        return 1;
    if (m->direct) { /* the registry, published before anyone looks */
        char why[200];
        kcoll_slot_t *me = &c->slots[rank];
        if (kcoll_direct_init(why, sizeof why))
            return 1;
        kcoll_direct_self(&me->dreg_fd, &me->dreg_ino);
        c->direct = 1;
        barrier(c, &seq);
    }
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *a = &kcoll_algos[ai];
        kcoll_aparam_t prm;
        char why[128];
        kcoll_algo_defaults(a, &prm);
        if (a->check && a->check(p, &prm, why, sizeof why))
            continue;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int root = 0; root < p; root += p - 1, case_no++) {
                /* what the simulator delivers, from the same schedules */
                kcoll_sim_t *sim = kcoll_sim_new(p);
                kcoll_sim_set_op(sim, &isum);
                bufs_t *S = calloc((size_t)p, sizeof *S);
                for (int r = 0; r < p; r++) {
                    kcoll_args_t x = args_of(a, p, r, root, sizes[si]);
                    bufs_make(&S[r], a, &x, case_no, 0);
                    for (int b = 0; b < KCOLL_NBUF; b++)
                        if (S[r].b[b])
                            kcoll_sim_set_buffer(sim, r, (kcoll_buf_t)b, S[r].b[b], S[r].len[b]);
                    a->build(&x, kcoll_sim_sched(sim, r));
                }
                if (kcoll_sim_run(sim, 0) != KCOLL_OK) {
                    fprintf(stderr, "%s %s p=%d: simulator: %s\n", kcoll_coll_name(a->family),
                            a->name, p, kcoll_sim_error(sim));
                    wrong++;
                }
                /* and this rank for real */
                kcoll_args_t x = args_of(a, p, rank, root, sizes[si]);
                bufs_t B;
                bufs_make(&B, a, &x, case_no, m->direct);
                kcoll_sched_t s;
                kcoll_sched_init(&s);
                a->build(&x, &s);
                kcoll_exec_t ex;
                void *bp[KCOLL_NBUF] = {B.b[0], B.b[1], B.b[2]};
                kcoll_exec_start(&ex, c, kcoll_engine(m->engine), &s, bp, B.len, ++seq);
                ex.op = &isum;
                kcoll_status_t rc = kcoll_exec_run(&ex);
                if (rc != KCOLL_OK) {
                    fprintf(stderr, "%s %s %s p=%d rank %d size %zu root %d: %s\n", m->name,
                            kcoll_coll_name(a->family), a->name, p, rank, sizes[si], root,
                            ex.errmsg);
                    wrong++;
                } else if (B.len[KCOLL_BUF_RECV] &&
                           memcmp(B.b[KCOLL_BUF_RECV], S[rank].b[KCOLL_BUF_RECV],
                                  B.len[KCOLL_BUF_RECV])) {
                    fprintf(stderr, "%s %s %s p=%d rank %d size %zu root %d: wrong result\n",
                            m->name, kcoll_coll_name(a->family), a->name, p, rank, sizes[si],
                            root);
                    wrong++;
                }
                /* the engines moved what the run needed: shm forced, all of it */
                if (!rc && m->engine == KCOLL_ENGINE_SHM && ex.moved[KCOLL_ENGINE_CMA]) {
                    fprintf(stderr, "%s: cma moved bytes\n", m->name);
                    wrong++;
                }
                direct_bytes += ex.moved[KCOLL_ENGINE_DIRECT];
                /* the partitioned reduction read the peers' chunks in place:
                 * from 3 ranks every rank has chunks it would stage in
                 * TMP[0..), which must be untouched */
                if (!rc && m->direct && p >= 3 && !strcmp(a->name, "partitioned") &&
                    sizes[si] >= 64) {
                    int touched = 0;
                    for (size_t i = 0; i < 64; i++)
                        touched |= B.b[KCOLL_BUF_TMP][i] != 0xee;
                    if (touched) {
                        fprintf(stderr, "direct %s %s p=%d size %zu: the chunks were staged\n",
                                kcoll_coll_name(a->family), a->name, p, sizes[si]);
                        wrong++;
                    }
                }
                kcoll_exec_finish(&ex);
                kcoll_sched_free(&s);
                if (m->direct) /* nobody reads this rank's buffers any more */
                    barrier(c, &seq);
                bufs_free(&B);
                for (int r = 0; r < p; r++)
                    bufs_free(&S[r]);
                free(S);
                kcoll_sim_free(sim);
            }
    }
    if (m->direct) {
        /* loads and stores moved bytes; everything freed; the mappings of
         * freed allocations go at the next look (at most one per peer left) */
        if (!direct_bytes || kcoll_direct_live() || kcoll_direct_mapped() > 2 * (p - 1)) {
            fprintf(stderr, "direct: %llu bytes, %d allocations live, %d mappings\n",
                    (unsigned long long)direct_bytes, kcoll_direct_live(), kcoll_direct_mapped());
            wrong++;
        }
        kcoll_direct_fini();
    }
    return wrong;
}

/* Rank 0's part of the channel tests: expose buf as SEND for collective
 * seq and run until rank 1's DONE, serving meanwhile through engine e. The
 * run's status; its reason in err. */
static kcoll_status_t owner_until_done(kcoll_ctl_t *c, kcoll_engine_id_t e, char *buf, size_t len,
                                       uint64_t seq, char *err, size_t errlen)
{
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_sched_expose(&s, KCOLL_BUF_SEND);
    kcoll_sched_wait(&s, 1, KCOLL_FLAG_DONE, 1);
    void *bp[KCOLL_NBUF] = {buf, buf, NULL};
    size_t lens[KCOLL_NBUF] = {len, len, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, c, kcoll_engine(e), &s, bp, lens, seq);
    kcoll_status_t rc = kcoll_exec_run(&x);
    snprintf(err, errlen, "%s", x.errmsg);
    kcoll_exec_finish(&x);
    kcoll_sched_free(&s);
    return rc;
}

/* The channel refuses a request for a collective its owner has not
 * exposed: rank 1 asks rank 0 for collective 22's SEND (lane 6) while rank 0 has
 * exposed it for collective 6. */
static int refuse_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    char buf[64] = "abc", why[256] = "";
    if (rank == 0) /* serves until rank 1 is done */
        return owner_until_done(c, KCOLL_ENGINE_SHM, buf, sizeof buf, 6, why, sizeof why) !=
               KCOLL_OK;
    /* rank 0's exposure for 6 must be there first: then ask for 22 */
    while (atomic_load(&kcoll_ctl_lane(c, 0, 6)->expose[KCOLL_BUF_SEND].seq) != 6)
        sched_yield();
    kcoll_chan_xfer_t xf;
    struct iovec l = {buf, 8};
    kcoll_chan_seg_t seg = {.buf = KCOLL_BUF_SEND, .off = 0, .len = 8};
    kcoll_status_t rc = kcoll_chan_start(c->chan, &xf, 0, KCOLL_CHAN_READ, KCOLL_PATH_RING, 22,
                                         &seg, 1, &l, 1, why, sizeof why);
    if (rc == KCOLL_OK)
        while ((rc = kcoll_chan_poll(c->chan, &xf, why, sizeof why)) == KCOLL_IN_PROGRESS)
            sched_yield();
    int bad = rc != KCOLL_ERR_PROTO || !strstr(why, "collective 6, not 22");
    if (bad)
        fprintf(stderr, "refused transfer: status %d, '%s'\n", rc, why);
    /* release rank 0 (collective 6's DONE) */
    atomic_store(&kcoll_ctl_lane(c, 1, 6)->flag[KCOLL_FLAG_DONE].v, kcoll_flag_word(6, 1));
    return bad;
}

/* A reader that dies in the middle of a vmsplice transfer: the owner,
 * waiting for its DONE (and serving meanwhile, into a full pipe), gets
 * the watchdog's error naming it. */
static int dead_reader_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    static char buf[1 << 20];
    uint64_t seq = 0;
    char why[256];
    if (make_pipes(c, &seq))
        return 1;
    ++seq;
    if (rank == 0) {
        kcoll_status_t rc =
            owner_until_done(c, KCOLL_ENGINE_VMSPLICE, buf, sizeof buf, seq, why, sizeof why);
        int bad = rc != KCOLL_ERR_PEER_DEAD || !strstr(why, "rank 1");
        if (bad)
            fprintf(stderr, "dead reader: status %d, '%s'\n", rc, why);
        return bad;
    }
    while (atomic_load(&kcoll_ctl_lane(c, 0, seq)->expose[KCOLL_BUF_SEND].seq) != seq)
        sched_yield();
    kcoll_chan_xfer_t xf;
    struct iovec l = {buf, sizeof buf};
    kcoll_chan_seg_t seg = {.buf = KCOLL_BUF_SEND, .off = 0, .len = sizeof buf};
    kcoll_status_t rc = kcoll_chan_start(c->chan, &xf, 0, KCOLL_CHAN_READ, KCOLL_PATH_PIPE, seq,
                                         &seg, 1, &l, 1, why, sizeof why);
    while (rc == KCOLL_OK && xf.cur.i == 0 && xf.cur.off == 0) {
        rc = kcoll_chan_poll(c->chan, &xf, why, sizeof why);
        if (rc == KCOLL_IN_PROGRESS)
            rc = KCOLL_OK;
        sched_yield();
    }
    _exit(rc == KCOLL_OK ? 0 : 1); /* some bytes read, most not: die */
}

/* Rank 0 publishes allocation a (n bytes) as its SEND of collective seq. */
static void publish(kcoll_ctl_t *c, uint64_t seq, char *a, size_t n)
{
    kcoll_expo_t *e = &kcoll_ctl_lane(c, 0, seq)->expose[KCOLL_BUF_SEND];
    atomic_store(&e->addr, (uint64_t)(uintptr_t)a);
    atomic_store(&e->len, n);
    atomic_store(&e->direct, kcoll_direct_ref(a, n));
    atomic_store(&e->seq, seq);
}

/* Rank 1 maps rank 0's SEND of collective seq; checks it holds byte v. */
static char *map_peer(kcoll_ctl_t *c, uint64_t seq, size_t n, int v, void **hold, int *bad)
{
    kcoll_expo_t *e = &kcoll_ctl_lane(c, 0, seq)->expose[KCOLL_BUF_SEND];
    char *p = NULL, why[256];
    if (kcoll_direct_get(c->pids[0], c->slots[0].dreg_fd, c->slots[0].dreg_ino,
                         atomic_load(&e->direct), atomic_load(&e->addr), n, &p, hold, why,
                         sizeof why)) {
        fprintf(stderr, "freed while mapped: %s\n", why);
        ++*bad;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (p[i] != (char)v) {
            ++*bad;
            break;
        }
    return p;
}

/* An allocation its owner frees while a peer has it mapped: the peer's
 * mapping stays valid (the bytes are there, nothing faults) until the
 * peer lets go of it, which it does the next time it looks that process
 * up (here, for the owner's next allocation, in the same registry entry). */
static int freed_mapped_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    const size_t n = 1 << 20;
    uint64_t seq = 0;
    char why[256];
    kcoll_slot_t *me = &c->slots[rank];
    if (kcoll_direct_init(why, sizeof why))
        return 1;
    kcoll_direct_self(&me->dreg_fd, &me->dreg_ino);
    int bad = 0;
    if (rank == 0) {
        char *a = kcoll_direct_alloc(n);
        memset(a, 0x5c, n);
        publish(c, 100, a, n);
        barrier(c, &seq); /* published */
        barrier(c, &seq); /* the peer has it mapped */
        kcoll_direct_free(a);
        barrier(c, &seq); /* freed */
        barrier(c, &seq); /* the peer read it again */
        char *b = kcoll_direct_alloc(n);
        memset(b, 0x3d, n);
        publish(c, 101, b, n);
        barrier(c, &seq); /* published */
        barrier(c, &seq); /* the peer is done */
        kcoll_direct_free(b);
        return kcoll_direct_live() != 0;
    }
    void *hold;
    barrier(c, &seq);
    char *p = map_peer(c, 100, n, 0x5c, &hold, &bad);
    barrier(c, &seq);
    barrier(c, &seq);
    for (size_t i = 0; p && i < n; i += 4096) /* after the owner's free */
        bad += p[i] != 0x5c;
    if (p)
        kcoll_direct_put(hold);
    bad += kcoll_direct_mapped() != 1;
    barrier(c, &seq);
    barrier(c, &seq);
    char *q = map_peer(c, 101, n, 0x3d, &hold, &bad);
    if (q)
        kcoll_direct_put(hold);
    bad += kcoll_direct_mapped() != 1; /* the freed one's mapping went */
    barrier(c, &seq);
    if (bad)
        fprintf(stderr, "freed while mapped: %d wrong, %d mappings\n", bad, kcoll_direct_mapped());
    kcoll_direct_fini();
    return bad;
}

/* A requester whose owner dies before serving: its step fails with the
 * watchdog's error naming the dead rank. */
static int dead_owner_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    static char buf[1 << 16];
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    void *bp[KCOLL_NBUF] = {buf, buf, NULL};
    size_t lens[KCOLL_NBUF] = {sizeof buf, sizeof buf, 0};
    kcoll_exec_t x;
    if (rank == 0) {
        /* expose and die without ever serving */
        kcoll_expo_t *e = &kcoll_ctl_lane(c, 0, 1)->expose[KCOLL_BUF_SEND];
        atomic_store(&e->addr, (uint64_t)(uintptr_t)buf);
        atomic_store(&e->len, sizeof buf);
        atomic_store(&e->seq, 1);
        _exit(0);
    }
    kcoll_sched_read(&s, 0, KCOLL_BUF_SEND, 0, KCOLL_BUF_RECV, 0, sizeof buf);
    kcoll_exec_start(&x, c, kcoll_engine(KCOLL_ENGINE_SHM), &s, bp, lens, 1);
    kcoll_status_t rc = kcoll_exec_run(&x);
    int bad = rc != KCOLL_ERR_PEER_DEAD || !strstr(x.errmsg, "rank 0");
    if (bad)
        fprintf(stderr, "dead owner: status %d, '%s'\n", rc, x.errmsg);
    kcoll_exec_finish(&x);
    kcoll_sched_free(&s);
    return bad;
}

int main(void)
{
    kcoll_params_load();
    static const int ps[] = {2, 3, 5};
    mode_t_ shm = {"shm", KCOLL_ENGINE_SHM, 0}, direct = {"direct", KCOLL_ENGINE_CMA, 1};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        forkteam_run(ps[i], run_all, &shm, "every algorithm through shm");
        forkteam_run(ps[i], run_all, &direct, "every algorithm through direct");
    }
    /* one-page cells: every transfer goes round the ring many times */
    kcoll_params_set("SHM_CELL", "4096");
    forkteam_run(3, run_all, &shm, "every algorithm through shm, one-page cells");
    kcoll_params_set("SHM_CELL", "64KiB");
    mode_t_ vms = {"vmsplice", KCOLL_ENGINE_VMSPLICE, 0};
    forkteam_run(2, run_all, &vms, "every algorithm through vmsplice");
    forkteam_run(3, run_all, &vms, "every algorithm through vmsplice");
    /* pipes of one page: partial transfers, the pipe full most of the time */
    kcoll_params_set("PIPE_SIZE", "4096");
    forkteam_run(2, run_all, &vms, "every algorithm through vmsplice, one-page pipes");
    forkteam_run(2, refuse_child, NULL, "a refused transfer");
    kcoll_params_set("PEER_CHECK_MS", "20");
    forkteam_run(2, dead_owner_child, NULL, "an owner that died");
    forkteam_run(2, dead_reader_child, NULL, "a reader that died in a vmsplice transfer");
    forkteam_run(2, freed_mapped_child, NULL, "an allocation freed while a peer has it mapped");
    return check_report("test_xfer");
}
