/* The executor with the real engine: ranks are forked processes sharing an
 * anonymous control segment, moving data with process_vm_readv/writev.
 * Each group of p processes runs many collectives in a row on one team
 * (every algorithm, root and size), so sequence numbers, lanes and flags
 * carry over between collectives as they do in an MPI job; then many
 * agreements; then more collectives outstanding at once than there are
 * lanes; consecutive reads batched into one engine call; EXTERN steps;
 * buffers laid out by datatype maps (a different layout on every rank,
 * more pieces than one system call takes, COPY and REDUCE between maps);
 * then a peer dies and the waiter must report it instead of hanging. */
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/params.h"
#include "check.h"
#include "coll/coll.h"
#include "forkteam.h"
#include "sched/agree.h"
#include "sched/dmap.h"
#include "sched/exec.h"
#include "xfer/cma.h"

static const size_t sizes[] = {0, 1, 4095, 16387, 1048581};

static uint8_t pattern(size_t i, int case_no)
{
    return (uint8_t)(i * 7 + (size_t)case_no * 13 + 1);
}

/* Body of team rank `rank`: every broadcast algorithm, root and size in a
 * row on one team, so collective numbers and lanes carry over. Returns
 * the number of wrong results. */
static int child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    const int p = c->p;
    uint8_t *buf = malloc(sizes[4]);
    int wrong = 0, case_no = 0;
    uint64_t seq = 0;
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *algo = &kcoll_algos[ai];
        if (algo->family != KCOLL_COLL_BCAST)
            continue;
        for (int root = 0; root < p; root++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, case_no++) {
                size_t n = sizes[si];
                for (size_t i = 0; i < n; i++)
                    buf[i] = rank == root ? pattern(i, case_no) : 0xee;
                kcoll_args_t a = {.coll = algo->family, .p = p, .rank = rank, .root = root,
                                  .bytes = n, .prm = {.k = 2 + case_no % 3}};
                kcoll_sched_reset(&s);
                algo->build(&a, &s);
                void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
                size_t lens[KCOLL_NBUF] = {0, n, 0};
                kcoll_exec_t x;
                kcoll_exec_start(&x, c, &kcoll_engine_cma, &s, bufs, lens, ++seq);
                kcoll_status_t st = kcoll_exec_run(&x);
                if (st) {
                    fprintf(stderr, "rank %d %s root %d n %zu: %s: %s\n", rank, algo->name, root,
                            n, kcoll_status_str(st), x.errmsg);
                    return wrong + 100;
                }
                for (size_t i = 0; i < n; i++)
                    if (buf[i] != pattern(i, case_no)) {
                        fprintf(stderr, "rank %d %s root %d n %zu: byte %zu wrong\n", rank,
                                algo->name, root, n, i);
                        wrong++;
                        break;
                    }
            }
    }
    kcoll_sched_free(&s);
    free(buf);
    return wrong;
}

/* Body of rank `rank` in the agreement test: many agreements in a row
 * (many more than lanes), ranks running at different speeds; every rank
 * must see every rank's vote and table of the same agreement. */
typedef struct {
    uint64_t a;
    int rank;
} agree_fill_t;

static void agree_fill(void *ctx, size_t *tab)
{
    agree_fill_t *f = ctx;
    /* the table is written only when the lane's slot may be, inside the agreement */
    for (size_t i = 0; i < 4 * 8; i++)
        tab[i] = f->a * 1000003u + (size_t)f->rank * 1009u + i;
}

static int agree_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    const int p = c->p;
    int wrong = 0;
    uint64_t *votes = calloc((size_t)p, sizeof *votes);
    char err[256];
    for (uint64_t a = 1; a <= 300; a++) {
        if ((a + (uint64_t)rank) % 7 == 0) /* some ranks lag behind now and then */
            for (int y = 0; y < 20; y++)
                sched_yield();
        agree_fill_t f = {a, rank};
        kcoll_agree_t ag;
        kcoll_agree_init(&ag, c, a, a * 100 + (uint64_t)rank, agree_fill, &f, votes);
        if (kcoll_agree_run(&ag, err, sizeof err)) {
            fprintf(stderr, "agree rank %d a=%llu: %s\n", rank, (unsigned long long)a, err);
            return wrong + 100;
        }
        for (int q = 0; q < p; q++) {
            const size_t *tab = kcoll_agree_table(c, q, a);
            wrong += votes[q] != a * 100 + (uint64_t)q;
            for (size_t j = 0; j < (size_t)p; j++) {
                size_t base = a * 1000003u + (size_t)q * 1009u;
                wrong += tab[j] != base + j;
                wrong += tab[3 * (size_t)p + j] != base + 3 * (size_t)p + j;
            }
        }
        kcoll_agree_seen(c, a);
    }
    free(votes);
    return wrong;
}

/* Several collectives outstanding on one team, as a non-blocking program
 * has them: every rank starts NCOLL broadcasts (roots, algorithms and
 * sizes vary, each into its own buffer) before completing any, advancing
 * all started ones round robin in a rank-dependent order. Collective s
 * enters its lane (s % KCOLL_LANES) only once s - KCOLL_LANES has
 * completed on this rank, the rule of the call layer; NCOLL is more than
 * the lanes, so lanes are reused while others are in flight. */
#define NCOLL (2 * KCOLL_LANES + 5)
#define NBYTES 70000

static int outstanding_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    const int p = c->p;
    static const char *const names[] = {"direct_read", "knomial", "scatter_allgather",
                                        "split_rw", "direct_write"};
    uint8_t *bufs = malloc((size_t)NCOLL * NBYTES);
    kcoll_sched_t s[NCOLL];
    kcoll_exec_t x[NCOLL];
    int state[NCOLL] = {0}; /* 0 not started, 1 running, 2 done */
    int wrong = 0, done = 0, next = 0;
    for (int i = 0; i < NCOLL; i++) {
        const int root = (i * 3) % p;
        const size_t n = NBYTES - (size_t)(i * 997) % 4096;
        uint8_t *b = bufs + (size_t)i * NBYTES;
        for (size_t j = 0; j < n; j++)
            b[j] = rank == root ? pattern(j, i) : 0xee;
        const kcoll_algo_t *algo = kcoll_algo_find(KCOLL_COLL_BCAST, names[i % 5]);
        kcoll_args_t a = {.coll = KCOLL_COLL_BCAST, .p = p, .rank = rank, .root = root,
                          .bytes = n, .prm = {.k = 2 + i % 3}};
        kcoll_sched_init(&s[i]);
        algo->build(&a, &s[i]);
        void *bp[KCOLL_NBUF] = {NULL, b, NULL};
        size_t lens[KCOLL_NBUF] = {0, n, 0};
        kcoll_exec_start(&x[i], c, &kcoll_engine_cma, &s[i], bp, lens, (uint64_t)i + 1);
    }
    for (int round = 0; done < NCOLL; round++) {
        /* start what the lanes allow, a few at a time */
        while (next < NCOLL && (next < KCOLL_LANES || state[next - KCOLL_LANES] == 2) &&
               (next - done < 3 + rank || next < 2))
            state[next++] = 1;
        for (int k = 0; k < next; k++) {
            int i = (k + round * (rank + 1)) % next; /* a rotation, rank-dependent */
            if (state[i] != 1)
                continue;
            kcoll_status_t st = kcoll_exec_progress(&x[i]);
            if (st == KCOLL_OK) {
                state[i] = 2;
                done++;
            } else if (st != KCOLL_IN_PROGRESS) {
                fprintf(stderr, "rank %d collective %d: %s: %s\n", rank, i + 1,
                        kcoll_status_str(st), x[i].errmsg);
                return 100;
            }
        }
        sched_yield();
    }
    for (int i = 0; i < NCOLL; i++) {
        const size_t n = NBYTES - (size_t)(i * 997) % 4096;
        const uint8_t *b = bufs + (size_t)i * NBYTES;
        for (size_t j = 0; j < n; j++)
            if (b[j] != pattern(j, i)) {
                fprintf(stderr, "rank %d collective %d: byte %zu wrong\n", rank, i + 1, j);
                wrong++;
                break;
            }
        kcoll_sched_free(&s[i]);
    }
    free(bufs);
    return wrong;
}

/* Batching: consecutive READs from one peer go into one engine call. A
 * counting engine wraps CMA; rank 1 reads 100 scattered pieces of rank 0's
 * buffer (not adjacent, so nothing merged them while building). */
static int engine_calls;

static kcoll_status_t counting_readv(pid_t pid, const struct iovec *l, int nl,
                                     const struct iovec *r, int nr)
{
    engine_calls++;
    return kcoll_cma_readv(pid, l, nl, r, nr);
}

static int batch_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    enum { PIECES = 100, PIECE = 40 };
    static uint8_t buf[2 * PIECES * PIECE];
    kcoll_engine_t counting = kcoll_engine_cma;
    counting.readv = counting_readv;
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = rank == 0 ? pattern(i, 5) : 0;
    kcoll_sched_expose(&s, KCOLL_BUF_RECV);
    if (rank == 0) {
        kcoll_sched_wait(&s, 1, KCOLL_FLAG_DONE, 1);
    } else {
        for (int i = PIECES - 1; i >= 0; i--) /* every other piece, backwards */
            kcoll_sched_read(&s, 0, KCOLL_BUF_RECV, (size_t)(2 * i) * PIECE, KCOLL_BUF_RECV,
                             (size_t)(2 * i) * PIECE, PIECE);
        kcoll_sched_signal(&s, KCOLL_FLAG_DONE, 1);
    }
    void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
    size_t lens[KCOLL_NBUF] = {0, sizeof buf, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, c, &counting, &s, bufs, lens, 1);
    if (rank == 1) /* rank 0's exposure first, so that all pieces are there */
        while (atomic_load_explicit(&kcoll_ctl_lane(c, 0, 1)->expose[KCOLL_BUF_RECV].seq,
                                    memory_order_acquire) < 1)
            sched_yield();
    if (kcoll_exec_run(&x))
        return 100;
    kcoll_sched_free(&s);
    int wrong = 0;
    for (int i = 0; rank == 1 && i < PIECES; i++)
        for (int j = 0; j < PIECE; j++) {
            size_t k = (size_t)(2 * i) * PIECE + (size_t)j;
            wrong += buf[k] != pattern(k, 5) || buf[k + PIECE] != 0;
        }
    /* 100 steps, at most 64 per call: two calls */
    if (rank == 1 && engine_calls != 2) {
        fprintf(stderr, "100 consecutive READs took %d engine calls, not 2\n", engine_calls);
        wrong++;
    }
    return wrong;
}

/* EXTERN: an external operation is started once when its step is reached
 * and then tested in later progress calls until it is done. */
typedef struct {
    kcoll_xop_t op;
    int starts, tests, until;
    uint8_t *word;
} count_xop_t;

static void *new_segment(int p, size_t *len)
{
    *len = kcoll_ctl_seg_len(p);
    void *seg = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    kcoll_ctl_seg_init(seg, p);
    return seg;
}

/* A one-rank team's control segment, attached as its rank 0. */
static void *attach_one(kcoll_ctl_t *c, size_t *len)
{
    void *seg = new_segment(1, len);
    CHECK(kcoll_ctl_attach(c, seg, *len, 1, 0) == KCOLL_OK && kcoll_ctl_load_pids(c) == KCOLL_OK,
          "attach");
    return seg;
}

static kcoll_status_t count_start(kcoll_xop_t *op, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    ((count_xop_t *)op)->starts++;
    return KCOLL_OK;
}

/* A test that reports "not yet" until its until-th call, then done with
 * its effect (*at = value, before the steps after it), or, until < 0, a
 * failure saying what failed. */
static kcoll_status_t counted_test(int *tests, int until, uint8_t *at, uint8_t value,
                                   const char *what, kcoll_status_t fail, char *err,
                                   size_t errlen)
{
    if (++*tests < until)
        return KCOLL_IN_PROGRESS;
    if (until < 0) {
        snprintf(err, errlen, "the %s failed", what);
        return fail;
    }
    *at = value;
    return KCOLL_OK;
}

static kcoll_status_t count_test(kcoll_xop_t *op, char *err, size_t errlen)
{
    count_xop_t *c = (count_xop_t *)op;
    return counted_test(&c->tests, c->until, c->word, 42, "operation", KCOLL_ERR_SYS, err, errlen);
}

static void extern_steps(void)
{
    size_t len;
    kcoll_ctl_t c;
    void *seg = attach_one(&c, &len);
    uint8_t buf[2] = {0, 0};
    count_xop_t xop = {{"count", -1, count_start, count_test}, 0, 0, 3, &buf[0]};
    kcoll_xop_t *xops[1] = {&xop.op};
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_sched_extern(&s, 0);
    kcoll_sched_copy(&s, KCOLL_BUF_RECV, 1, KCOLL_BUF_RECV, 0, 1); /* uses the op's effect */
    void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
    size_t lens[KCOLL_NBUF] = {0, 2, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 1);
    x.xops = xops;
    x.nxops = 1;
    kcoll_status_t r1 = kcoll_exec_progress(&x), r2 = kcoll_exec_progress(&x),
                   r3 = kcoll_exec_progress(&x);
    CHECK(r1 == KCOLL_IN_PROGRESS && r2 == KCOLL_IN_PROGRESS && r3 == KCOLL_OK,
          "EXTERN in progress twice, then done: %d %d %d", r1, r2, r3);
    CHECK(xop.starts == 1 && xop.tests == 3, "started once (%d), tested 3 times (%d)", xop.starts,
          xop.tests);
    CHECK(buf[1] == 42, "the step after EXTERN saw its effect (%d)", buf[1]);
    /* a failing operation fails the schedule with its reason */
    xop = (count_xop_t){{"count", -1, count_start, count_test}, 0, 0, -1, &buf[0]};
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 2);
    x.xops = xops;
    x.nxops = 1;
    CHECK(kcoll_exec_progress(&x) == KCOLL_ERR_SYS && strstr(x.errmsg, "failed"),
          "a failing operation: %s", x.errmsg);
    /* an EXTERN step naming no operation is an error, not a crash */
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 3);
    CHECK(kcoll_exec_progress(&x) == KCOLL_ERR_ARG, "EXTERN without operations refused");
    kcoll_sched_free(&s);
    kcoll_ctl_fini(&c);
    munmap(seg, len);
}

/* A host runner for EXTERN steps naming host collectives: declines to
 * start `busy` times (not its turn), then starts; tests report done after
 * `until` tests, a failure when until < 0. It "runs" a Bcast by writing
 * the byte its descriptor names, so the step after sees it. */
typedef struct {
    int busy, starts, tests, until, polls;
    int split[4], ids[4]; /* each start's split flag and descriptor number */
    kcoll_xcoll_t seen;
    uint8_t *at;
} xhost_t;

static kcoll_status_t xhost_start(void *data, int id, const kcoll_xcoll_t *x, const size_t *vlen,
                                  void *const bufs[KCOLL_NBUF], int split, char *err,
                                  size_t errlen)
{
    (void)vlen;
    xhost_t *h = data;
    if (h->busy > 0) {
        h->busy--;
        return KCOLL_IN_PROGRESS;
    }
    if (x->group == 99) {
        snprintf(err, errlen, "no such group");
        return KCOLL_ERR_ARG;
    }
    if (h->starts < 4) {
        h->split[h->starts] = split;
        h->ids[h->starts] = id;
    }
    h->starts++;
    h->seen = *x;
    h->at = (uint8_t *)bufs[x->rbuf] + x->roff;
    return KCOLL_OK;
}

static kcoll_status_t xhost_test(void *data, int id, char *err, size_t errlen)
{
    (void)id;
    xhost_t *h = data;
    return counted_test(&h->tests, h->until, h->at, 7, "host collective", KCOLL_ERR_PROTO, err,
                        errlen);
}

static kcoll_status_t xhost_poll(void *data, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    ((xhost_t *)data)->polls++;
    return KCOLL_OK;
}

static const kcoll_xhost_t xhost_fns = {xhost_start, xhost_test, xhost_poll};

static void host_collective_steps(void)
{
    size_t len;
    kcoll_ctl_t c;
    void *seg = attach_one(&c, &len);
    uint8_t buf[3] = {0, 0, 0};
    const kcoll_xcoll_t bc = {.coll = KCOLL_XC_BCAST, .sbuf = KCOLL_BUF_RECV,
                              .rbuf = KCOLL_BUF_RECV, .group = 3, .root = 1, .roff = 1, .len = 1,
                              .esize = 1};
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_sched_xcoll(&s, &bc);
    kcoll_sched_copy(&s, KCOLL_BUF_RECV, 2, KCOLL_BUF_RECV, 1, 1); /* uses its effect */
    void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
    size_t lens[KCOLL_NBUF] = {0, 3, 0};
    kcoll_exec_t x;
    xhost_t h = {.busy = 2, .until = 2};
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 1);
    x.xhost = &xhost_fns;
    x.xdata = &h;
    kcoll_status_t r[5];
    for (int i = 0; i < 5; i++)
        r[i] = kcoll_exec_progress(&x);
    CHECK(r[0] == KCOLL_IN_PROGRESS && r[1] == KCOLL_IN_PROGRESS && r[2] == KCOLL_IN_PROGRESS &&
              r[3] == KCOLL_OK,
          "declined twice, started, tested twice: %d %d %d %d", r[0], r[1], r[2], r[3]);
    CHECK(h.starts == 1 && h.tests == 2, "started once (%d), tested twice (%d)", h.starts,
          h.tests);
    CHECK(h.seen.coll == KCOLL_XC_BCAST && h.seen.group == 3 && h.seen.root == 1 &&
              h.seen.roff == 1 && h.seen.len == 1,
          "the runner got the schedule's descriptor");
    CHECK(buf[1] == 7 && buf[2] == 7, "the step after the host collective saw its effect (%d)",
          buf[2]);
    CHECK(h.split[0] == 0 && h.ids[0] == 0, "a whole step starts descriptor 0 unsplit (%d, %d)",
          h.split[0], h.ids[0]);
    /* split: two begun at once, the steps between them run before either
     * is done, each END waits for its own */
    kcoll_sched_t sp;
    kcoll_sched_init(&sp);
    const int b0 = kcoll_sched_xbegin(&sp, &bc, NULL, 0);
    kcoll_xcoll_t bc2 = bc;
    bc2.group = 4;
    const int b1 = kcoll_sched_xbegin(&sp, &bc2, NULL, 0);
    kcoll_sched_copy(&sp, KCOLL_BUF_RECV, 0, KCOLL_BUF_RECV, 2, 1); /* not x's bytes */
    kcoll_sched_xend(&sp, b0);
    kcoll_sched_xend(&sp, b1);
    kcoll_sched_copy(&sp, KCOLL_BUF_RECV, 2, KCOLL_BUF_RECV, 1, 1); /* uses its effect */
    kcoll_sched_xend(&sp, 7);                                       /* names none */
    CHECK(b0 == 0 && b1 == 1 && sp.err == KCOLL_ERR_ARG,
          "xbegin numbers its descriptors (%d, %d), an END naming none fails (%d)", b0, b1,
          sp.err);
    sp.err = KCOLL_OK;
    memset(buf, 0, sizeof buf);
    buf[2] = 5;
    h = (xhost_t){.until = 2};
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &sp, bufs, lens, 2);
    x.xhost = &xhost_fns;
    x.xdata = &h;
    r[0] = kcoll_exec_progress(&x);
    CHECK(r[0] == KCOLL_IN_PROGRESS && h.starts == 2 && h.split[0] == 1 && h.split[1] == 1 &&
              h.ids[0] == 0 && h.ids[1] == 1 && buf[0] == 5 && x.xlive == 2,
          "both begun split (%d %d, ids %d %d), the copy between ran (%d), %d live", h.split[0],
          h.split[1], h.ids[0], h.ids[1], buf[0], x.xlive);
    r[1] = kcoll_exec_progress(&x);
    CHECK(r[1] == KCOLL_OK && buf[2] == 7 && x.xlive == 0,
          "the ENDs waited for both, the step after saw the effect (%d, %d live)", buf[2],
          x.xlive);
    kcoll_sched_free(&sp);
    /* a failing host collective fails the run with its reason */
    h = (xhost_t){.until = -1};
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 3);
    x.xhost = &xhost_fns;
    x.xdata = &h;
    CHECK(kcoll_exec_progress(&x) == KCOLL_ERR_PROTO && strstr(x.errmsg, "host collective failed"),
          "a failing host collective: %s", x.errmsg);
    /* one the runner cannot start */
    kcoll_sched_t bad;
    kcoll_sched_init(&bad);
    kcoll_xcoll_t nog = bc;
    nog.group = 99;
    kcoll_sched_xcoll(&bad, &nog);
    h = (xhost_t){.until = 1};
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &bad, bufs, lens, 4);
    x.xhost = &xhost_fns;
    x.xdata = &h;
    CHECK(kcoll_exec_progress(&x) == KCOLL_ERR_ARG && strstr(x.errmsg, "no such group"),
          "a host collective that cannot start: %s", x.errmsg);
    /* without a runner: an error naming the step, not a crash */
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 5);
    CHECK(kcoll_exec_progress(&x) == KCOLL_ERR_ARG && strstr(x.errmsg, "host collective 0"),
          "a host collective without a runner: %s", x.errmsg);
    kcoll_sched_free(&bad);
    kcoll_sched_free(&s);
    kcoll_ctl_fini(&c);
    munmap(seg, len);
}

/* Rank `rank` of a 2-rank team on seg: one 64 KiB direct_read broadcast
 * from rank 0, as the first collective, started delay_ms after attaching.
 * Returns the status; the executor's message goes to msg (if not NULL). */
static kcoll_status_t bcast_pair(void *seg, size_t len, int rank, int delay_ms, char *msg,
                                 size_t msglen)
{
    kcoll_ctl_t c;
    static char buf[65536];
    kcoll_ctl_attach(&c, seg, len, 2, rank);
    while (!kcoll_ctl_all_attached(&c))
        sched_yield();
    kcoll_ctl_load_pids(&c);
    struct timespec delay = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    nanosleep(&delay, NULL);
    kcoll_args_t a = {.coll = KCOLL_COLL_BCAST, .p = 2, .rank = rank, .root = 0,
                      .bytes = sizeof buf};
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_bcast_direct_read(&a, &s);
    void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
    size_t lens[KCOLL_NBUF] = {0, sizeof buf, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, &c, &kcoll_engine_cma, &s, bufs, lens, 1);
    kcoll_status_t st = kcoll_exec_run(&x);
    if (msg)
        snprintf(msg, msglen, "%s", x.errmsg);
    return st;
}


/* Rank 1 attaches and exits at once; rank 0 (this process's child) waits
 * for it in a broadcast and must report the death. */
static void dead_peer(void)
{
    size_t len;
    void *seg = new_segment(2, &len);
    int *result = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *msg = (char *)(result + 4);
    pid_t dying = fork();
    if (dying == 0) {
        kcoll_ctl_t c;
        kcoll_ctl_attach(&c, seg, len, 2, 1);
        _exit(0); /* stays a zombie: nobody reaps it until the root is done */
    }
    pid_t root = fork();
    if (root == 0) {
        kcoll_params_set("PEER_CHECK_MS", "20");
        result[0] = bcast_pair(seg, len, 0, 0, msg, 1000);
        _exit(0);
    }
    int status;
    waitpid(root, &status, 0);
    waitpid(dying, &status, 0);
    CHECK(result[0] == KCOLL_ERR_PEER_DEAD, "dead peer reported (status %d: %s)", result[0], msg);
    CHECK(strstr(msg, "died") != NULL, "message names the death: %s", msg);
    munmap(seg, len);
    munmap(result, 4096);
}

/* Rank 1 arrives 600 ms late; rank 0, told to warn after 100 ms, must say
 * once which peer it waits for, then finish normally when it arrives. */
static void late_peer(void)
{
    size_t len;
    void *seg = new_segment(2, &len);
    int *result = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char logname[] = "/tmp/kcoll-test-exec-XXXXXX";
    int logfd = mkstemp(logname);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] != 0)
            continue;
        if (r == 0) {
            kcoll_params_set("WAIT_WARN_MS", "100");
            kcoll_params_set("PEER_CHECK_MS", "20");
            dup2(logfd, 2);
        }
        result[r] = bcast_pair(seg, len, r, r == 1 ? 600 : 0, NULL, 0);
        _exit(0);
    }
    for (int r = 0; r < 2; r++)
        waitpid(pids[r], NULL, 0);
    char log[2048] = "";
    ssize_t n = pread(logfd, log, sizeof log - 1, 0);
    log[n > 0 ? n : 0] = '\0';
    close(logfd);
    unlink(logname);
    CHECK(result[0] == KCOLL_OK && result[1] == KCOLL_OK, "late peer: statuses %d %d", result[0],
          result[1]);
    CHECK(strstr(log, "waited") && strstr(log, "for rank 1"), "one warning naming rank 1: %s", log);
    CHECK(strchr(log, '\n') && strchr(log, '\n') == strrchr(log, '\n'), "exactly one line: %s",
          log);
    munmap(seg, len);
    munmap(result, 4096);
}

/* ---- buffers laid out by datatype maps ---- */

/* A map of nseg segments (offset, length) per element, extent ext */
static kcoll_dmap_t *make_map(int nseg, const int64_t *off, const uint64_t *len, int64_t ext)
{
    kcoll_dmap_t *m = calloc(1, kcoll_dmap_bytes((uint64_t)nseg));
    m->nseg = (uint64_t)nseg;
    m->extent = ext;
    for (int i = 0; i < nseg; i++) {
        m->seg[i].off = off[i];
        m->seg[i].len = len[i];
        m->seg[i].count = 1;
        m->size += len[i];
    }
    return kcoll_dmap_seal(m) ? NULL : m;
}

/* Logical byte i of a buffer laid out by m (NULL: contiguous) lies at
 * this memory offset: the type map walked by hand, element by element,
 * piece by piece */
static size_t map_at(const kcoll_dmap_t *m, size_t i)
{
    if (!m)
        return i;
    size_t e = i / m->size, w = i % m->size, at = 0;
    for (uint64_t j = 0;; j++)
        for (uint64_t k = 0; k < m->seg[j].count; k++) {
            if (w < at + m->seg[j].len)
                return (size_t)((int64_t)e * m->extent + m->seg[j].off +
                                (int64_t)k * m->seg[j].stride + (int64_t)(w - at));
            at += m->seg[j].len;
        }
}

/* The layouts the ranks use, by rank % 4: 3 bytes of every 7 (a piece per
 * element: a 64 KiB message has more pieces than one system call takes),
 * two segments out of memory order (8..12 then 0..4 of 12), 4 KiB + 1
 * bytes of every 8 KiB (pieces across page boundaries), contiguous */
static kcoll_dmap_t *rank_map(int r)
{
    static const int64_t o0[] = {0}, o1[] = {8, 0}, o2[] = {5};
    static const uint64_t l0[] = {3}, l1[] = {4, 4}, l2[] = {4097};
    switch (r % 4) {
    case 0: return make_map(1, o0, l0, 7);
    case 1: return make_map(2, o1, l1, 12);
    case 2: return make_map(1, o2, l2, 8192);
    }
    return NULL;
}

/* Every broadcast algorithm and root at 64 KiB + 5, each rank's buffer laid
 * out by its own map: every data byte where its map says, every other
 * byte untouched. */
static int mapped_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    const size_t n = 65541;
    kcoll_dmap_t *m = rank_map(rank);
    size_t span = m ? (n / m->size + 1) * (size_t)m->extent + 8192 : n;
    uint8_t *buf = malloc(span), *want = malloc(span);
    int wrong = 0, case_no = 0;
    uint64_t seq = 0;
    kcoll_sched_t s;
    kcoll_exec_t x;
    kcoll_sched_init(&s);
    for (int ai = 0; ai < kcoll_nalgos; ai++) {
        const kcoll_algo_t *algo = &kcoll_algos[ai];
        if (algo->family != KCOLL_COLL_BCAST)
            continue;
        for (int root = 0; root < c->p; root++, case_no++) {
            memset(want, 0xee, span);
            for (size_t i = 0; i < n; i++)
                want[map_at(m, i)] = pattern(i, case_no);
            if (rank == root)
                memcpy(buf, want, span);
            else
                memset(buf, 0xee, span);
            kcoll_args_t a = {.coll = algo->family, .p = c->p, .rank = rank, .root = root,
                              .bytes = n, .prm = {.k = 2}};
            kcoll_sched_reset(&s);
            algo->build(&a, &s);
            void *bufs[KCOLL_NBUF] = {NULL, buf, NULL};
            size_t lens[KCOLL_NBUF] = {0, n, 0};
            kcoll_exec_start(&x, c, &kcoll_engine_cma, &s, bufs, lens, ++seq);
            x.maps[KCOLL_BUF_RECV] = m;
            kcoll_status_t st = kcoll_exec_run(&x);
            kcoll_exec_finish(&x);
            if (st) {
                fprintf(stderr, "rank %d %s root %d: %s: %s\n", rank, algo->name, root,
                        kcoll_status_str(st), x.errmsg);
                return wrong + 100;
            }
            if (memcmp(buf, want, span)) {
                fprintf(stderr, "rank %d %s root %d: wrong bytes through the maps\n", rank,
                        algo->name, root);
                wrong++;
            }
        }
    }
    kcoll_sched_free(&s);
    free(buf);
    free(want);
    free(m);
    return wrong;
}

/* COPY and REDUCE (int32 SUM) from a buffer of one layout onto one of
 * another, on one rank: the two piece lists cut the bytes differently */
static int local_map_child(kcoll_ctl_t *c, int rank, void *arg)
{
    (void)arg;
    const size_t n = 4 * 3001; /* whole int32 elements */
    static const int64_t oa[] = {0, 16}, ob[] = {4};
    static const uint64_t la[] = {8, 4}, lb[] = {12};
    kcoll_dmap_t *ma = make_map(2, oa, la, 24), *mb = make_map(1, ob, lb, 20);
    size_t sa = (n / 12 + 1) * 24, sb = (n / 12 + 1) * 20;
    int32_t *a = calloc(sa / 4 + 1, 4), *b = calloc(sb / 4 + 1, 4), *want = calloc(sb / 4 + 1, 4);
    int wrong = 0;
    for (size_t i = 0; i < n / 4; i++) {
        a[map_at(ma, 4 * i) / 4] = (int32_t)(i * 3 + 1);
        want[map_at(mb, 4 * i) / 4] = (int32_t)(i * 3 + 1);
    }
    kcoll_sched_t s;
    kcoll_sched_init(&s);
    kcoll_sched_copy(&s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, n);
    kcoll_sched_reduce(&s, KCOLL_BUF_RECV, 0, KCOLL_BUF_SEND, 0, n);
    kcoll_op_t op = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_INT32, .esize = 4};
    void *bufs[KCOLL_NBUF] = {a, b, NULL};
    size_t lens[KCOLL_NBUF] = {n, n, 0};
    kcoll_exec_t x;
    kcoll_exec_start(&x, c, &kcoll_engine_cma, &s, bufs, lens, 1);
    x.maps[KCOLL_BUF_SEND] = ma;
    x.maps[KCOLL_BUF_RECV] = mb;
    x.op = &op;
    kcoll_status_t st = kcoll_exec_run(&x);
    kcoll_exec_finish(&x);
    for (size_t i = 0; i < n / 4; i++)
        want[map_at(mb, 4 * i) / 4] *= 2; /* copied, then added once more */
    if (st || memcmp(b, want, sb)) {
        fprintf(stderr, "rank %d: COPY/REDUCE between maps wrong (%s)\n", rank,
                kcoll_status_str(st));
        wrong = 1;
    }
    kcoll_sched_free(&s);
    free(a);
    free(b);
    free(want);
    free(ma);
    free(mb);
    return wrong;
}

/* The pieces of logical ranges: merged where memory continues, split at
 * element and segment ends, negative offsets, a bad map refused */
static void dmap_pieces(void)
{
    static const int64_t off[] = {-4, 4, 0};
    static const uint64_t len[] = {4, 4, 2};
    kcoll_dmap_t *m = make_map(3, off, len, 16); /* -4..0, 4..8, 0..2: size 10 */
    char base[64];
    kcoll_iovs_t l = {NULL, 0, 0};
    CHECK(m && m->size == 10 && m->seg[2].at == 8, "map sealed: logical starts");
    CHECK(kcoll_dmap_iov(m, base + 8, 2, 12, &l) == 0 && l.n == 4, "pieces of 2..14: %d", l.n);
    CHECK(l.v[0].iov_base == base + 6 && l.v[0].iov_len == 2, "first piece inside segment 0");
    CHECK(l.v[1].iov_base == base + 12 && l.v[1].iov_len == 4, "segment 1");
    CHECK(l.v[2].iov_base == base + 8 && l.v[2].iov_len == 2, "segment 2 (memory before 1)");
    CHECK(l.v[3].iov_base == base + 20 && l.v[3].iov_len == 4, "element 1's segment 0");
    l.n = 0;
    static const int64_t o2[] = {0, 3};
    static const uint64_t l2[] = {3, 5};
    kcoll_dmap_t *adj = make_map(2, o2, l2, 8); /* dense: one piece for any range */
    CHECK(kcoll_dmap_iov(adj, base, 1, 20, &l) == 0 && l.n == 1 && l.v[0].iov_len == 20,
          "neighbouring pieces merge (%d)", l.n);
    /* strided segments (a negative stride too): every byte of many logical
     * ranges, through the pieces and through pack/unpack, where map_at says */
    {
        kcoll_dmap_t *sm = calloc(1, kcoll_dmap_bytes(2));
        sm->nseg = 2;
        sm->extent = 200;
        sm->seg[0] = (kcoll_dseg_t){.off = 100, .len = 4, .count = 5, .stride = -12};
        sm->seg[1] = (kcoll_dseg_t){.off = 3, .len = 2, .count = 3, .stride = 7};
        sm->size = 4 * 5 + 2 * 3;
        CHECK(kcoll_dmap_seal(sm) == 0 && sm->pieces == 8 && sm->seglen == 0 &&
                  kcoll_dmap_valid(sm), "strided map sealed");
        char *mem = malloc(200 * 12);
        int ok = 1;
        for (size_t o = 0; o < 3 * 26; o += 5)
            for (size_t n = 1; o + n <= 4 * 26; n += 9) {
                l.n = 0;
                ok &= kcoll_dmap_iov(sm, mem, o, n, &l) == 0;
                size_t i = o;
                for (int k = 0; k < l.n; k++)
                    for (size_t b = 0; b < l.v[k].iov_len; b++, i++)
                        ok &= (char *)l.v[k].iov_base + b == mem + map_at(sm, i);
                ok &= i == o + n;
            }
        CHECK(ok, "strided pieces of logical ranges");
        char packed[4 * 26], *back = calloc(200, 12);
        for (size_t i = 0; i < 200 * 12; i++)
            mem[i] = (char)(i * 13 + 1);
        kcoll_dmap_pack(sm, mem, sizeof packed, packed);
        kcoll_dmap_unpack(sm, back, sizeof packed, packed);
        ok = 1;
        for (size_t i = 0; i < sizeof packed; i++)
            ok &= packed[i] == mem[map_at(sm, i)] && back[map_at(sm, i)] == mem[map_at(sm, i)];
        CHECK(ok, "strided pack and unpack");
        free(mem);
        free(back);
        free(sm);
    }
    kcoll_dmap_t bad = *adj;
    bad.size = 9;
    CHECK(!kcoll_dmap_valid(&bad) && kcoll_dmap_valid(adj), "a map whose sizes disagree is refused");
    /* pack and unpack, segments of the sizes copied by fixed-size loops and
     * others, one or three segments per element (three: out of memory
     * order, one of another length in the last case), a length that ends
     * inside an element: against map_at */
    static const uint64_t plens[] = {4, 8, 16, 32, 64, 24, 3, 8, 16, 8};
    for (size_t k = 0; k < sizeof plens / sizeof plens[0]; k++) {
        const int64_t po[] = {5}, po3[] = {(int64_t)plens[k] * 2, 1, (int64_t)plens[k] * 4};
        const uint64_t pl3[] = {plens[k], plens[k], k == 9 ? 3 : plens[k]};
        kcoll_dmap_t *pm = k < 7 ? make_map(1, po, &plens[k], (int64_t)plens[k] * 3)
                                 : make_map(3, po3, pl3, (int64_t)plens[k] * 6);
        const size_t plen = 100 * plens[k] + 1, span = 102 * (size_t)pm->extent;
        char *mem = malloc(span), *packed = malloc(plen), *back = malloc(span);
        for (size_t i = 0; i < span; i++)
            mem[i] = (char)(i * 7 + k);
        kcoll_dmap_pack(pm, mem, plen, packed);
        int ok = 1;
        for (size_t i = 0; i < plen; i++)
            ok &= packed[i] == mem[map_at(pm, i)];
        memset(back, 0x5a, span);
        kcoll_dmap_unpack(pm, back, plen, packed);
        for (size_t i = 0; i < plen; i++) {
            ok &= back[map_at(pm, i)] == packed[i];
            back[map_at(pm, i)] = 0x5a;
        }
        for (size_t i = 0; i < span; i++)
            ok &= back[i] == 0x5a; /* nothing written outside the data */
        CHECK(ok, "pack/unpack with %llu-byte segments", (unsigned long long)plens[k]);
        free(mem);
        free(packed);
        free(back);
        free(pm);
    }
    kcoll_iovs_free(&l);
    free(m);
    free(adj);
}

int main(void)
{
    kcoll_params_set("WARN", "1");
    for (int p = 1; p <= 5; p++)
        forkteam_run(p, child, NULL, "broadcasts");
    forkteam_run(8, child, NULL, "broadcasts");
    for (int p = 1; p <= 8; p += 3)
        forkteam_run(p, agree_child, NULL, "agreements");
    for (int p = 2; p <= 5; p++)
        forkteam_run(p, outstanding_child, NULL, "outstanding collectives");
    forkteam_run(2, batch_child, NULL, "batched reads");
    extern_steps();
    host_collective_steps();
    dmap_pieces();
    for (int p = 2; p <= 4; p++)
        forkteam_run(p, mapped_child, NULL, "broadcasts through datatype maps");
    forkteam_run(1, local_map_child, NULL, "COPY and REDUCE between datatype maps");
    dead_peer();
    late_peer();
    return check_report("test_exec");
}
