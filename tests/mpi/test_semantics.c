/* MPI semantics at the corners public test suites push on (each part is a
 * defect such a suite found, and its kin), every result against the host
 * MPI's own blocking PMPI_* call, byte for byte:
 *
 *  1. Persistent collectives started in a different order on every rank
 *     (MPI orders the initializations, not the starts): every persistent
 *     collective, one request kcoll runs and one the host runs for each,
 *     started with MPI_Startall and MPI_Start in an order drawn per rank
 *     and round, completed together by MPI_Waitall, a MPI_Testall loop and
 *     a MPI_Waitsome loop, four rounds with new contents; on
 *     MPI_COMM_WORLD and a split with the rank order reversed.
 *  2. Non-blocking v-variants whose count and displacement arrays the
 *     program overwrites right after the call returns (mpi4py 4.1.2's
 *     Iallgatherv lets them go then): MPI forbids it, but the host MPIs
 *     read them at the start on one node, and so must kcoll; counts of
 *     zero on some ranks, all zero, in place (across nodes: the
 *     collectives kcoll composes).
 *  3. A long history on one communicator (2400 small calls of several
 *     collectives, blocking and not, sizes 0-4 elements, KCOLL_MIN_BYTES
 *     switching between 0 and auto), each checked, so that schedule cache,
 *     decision cache, host-decision memo and lanes see what a long-running
 *     program shows them.
 *  4. A rank that gives a collective up (KCOLL_TEST_FAIL, as if a
 *     transfer had failed): every rank's call returns an error within
 *     seconds, non-blocking and blocking, and the communicator goes on:
 *     the next calls are right (the ranks' numbering of collectives stayed
 *     together).
 *  5. A user operation and a derived datatype freed while a non-blocking
 *     (or persistent) reduction that uses them is pending (MPI: they are
 *     only marked for deallocation): the handles read null, the user
 *     function still gets a datatype of the right size, new handles made
 *     meanwhile do not take the old ones' place, and the result is right;
 *     an Ialltoallv of a derived datatype freed right after the call.
 *
 * Run on one node (mpi.semantics.np2-4) and on fake nodes with
 * KCOLL_HIER=on (mpi.semantics.fakenodes), where parts 1, 2 and 5 run as
 * one schedule across the nodes (or with the host MPI whole). -q: parts 1 and 5 only on
 * MPI_COMM_WORLD and a shorter history (MPICH above 3 ranks). */
#include <unistd.h>

#include "nbjob.h"

static int quick;
static int one_node; /* MPI_COMM_WORLD lies on one node */
static MPI_Comm shape_comms[2];
static const char *shape_names[2] = {"MPI_COMM_WORLD", "a reversed split"};

static void set_param(const char *name, const char *value)
{
    if (kcoll_param_set(name, value)) {
        fprintf(stderr, "test_semantics: kcoll_param_set(%s, %s) failed\n", name, value);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* A permutation of n numbers drawn from seed. */
static __attribute__((unused)) void shuffle(int *a, int n, unsigned seed)
{
    mt_seed(seed);
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(mt_rnd() % (unsigned)(i + 1)), t = a[i];
        a[i] = a[k];
        a[k] = t;
    }
}

/* The element kind a collective's data takes here. */
static int kind_of(int c)
{
    return is_red(c) ? K_INT : K_BYTE;
}

/* ---------------------------------------------------------------------- */
/* 1. Persistent collectives started in different orders                  */

#ifdef KCOLL_HAVE_PERSISTENT
/* The host MPI's own persistent collectives where they are right: MPICH
 * 4.0's are broken (tests/mpi/test_persistent.c, HOST_PERSISTENT_OK):
 * there only Bcast, Barrier, Reduce and Allreduce, and only on two ranks,
 * where they work, are mixed in. */
static int host_persistent_ok(int c, int p)
{
#if defined(I_MPI_NUMVERSION)
    /* Intel MPI 2021.14's persistent collectives start a non-blocking
     * collective at MPI_Start, so they must be started in the same order
     * on every rank (they hang otherwise, with KCOLL_DISABLE=1 too): only
     * kcoll's requests are tested here */
    (void)c;
    (void)p;
    return 0;
#elif defined(KCOLL_HOST_OLD_MPICH)
    return p <= 2 && (c == BCAST || c == BARRIER || c == REDUCE || c == ALLREDUCE);
#else
    (void)c;
    (void)p;
    return 1;
#endif
}

/* Starts of persistent requests kcoll ran, all collectives. */
static uint64_t init_runs(void)
{
    uint64_t sum = 0;
    for (int c = 0; c < NCOLL; c++) {
        char row[64];
        snprintf(row, sizeof row, "%s_init", colls[c].name);
        sum += kcoll_runs(row, colls[c].fam);
    }
    return sum;
}

/* MPICH 4.0.2's own completion functions on its persistent collectives:
 * MPI_Testall reports MPI_ERR_IN_STATUS for completed ones, MPI_Testany
 * never sees them completed, MPI_Waitsome returns an inactive one again
 * and again (checked without kcoll): there every round completes with
 * MPI_Waitall, which is right. */
#ifdef KCOLL_HOST_OLD_MPICH
#define HOST_TESTS_OK 0
#else
#define HOST_TESTS_OK 1
#endif

#define BIG 3000 /* elements of a request kcoll runs (KCOLL_MIN_BYTES 1 KiB) */
#define TINY 3   /* ...and of one the host runs */

static void start_orders(MPI_Comm comm, const char *cname)
{
    job_t jobs[2 * NCOLL];
    MPI_Request req[2 * NCOLL];
    int kc[2 * NCOLL], nj = 0, p;
    MPI_Comm_size(comm, &p);
    const int rounds = quick ? 2 : 4;
    set_param("MIN_BYTES", "1024");
    for (int c = 0; c < NCOLL; c++)
        for (int big = 1; big >= 0; big--) {
            job_t *j = &jobs[nj];
            job_init(j, c, comm, big ? BIG : TINY, kind_of(c), (c + big) % p, 0,
                     1000 + 2 * c + big);
            /* across nodes kcoll composes all but Gatherv, Scatterv and the
             * all-to-alls, which are the host's (call.c, kcoll_call_across_has) */
            kc[nj] = expect_kcoll(j, 0, 1024) &&
                     (one_node ||
                      (c != GATHERV && c != SCATTERV && c != ALLTOALL && c != ALLTOALLV));
            if (!kc[nj] && !host_persistent_ok(c, p))
                continue;
            job_alloc(j);
            j->gen = 0;
            job_fill(j);
            if (job_issue(j, PINIT, &req[nj]) != MPI_SUCCESS) {
                mt_fail("%s: %s_init failed", cname, colls[c].name);
                job_free(j);
                continue;
            }
            nj++;
        }
    set_param("MIN_BYTES", "auto");
    const uint64_t runs0 = init_runs();
    int want = 0;
    for (int round = 0; round < rounds; round++) {
        int order[2 * NCOLL], me;
        MPI_Comm_rank(comm, &me);
        wd_note("persistent start orders on %s, round %d", cname, round);
        wd_arm(60);
        for (int i = 0; i < nj; i++) { /* new contents; the host's result for them */
            jobs[i].gen = (unsigned)round + 1;
            job_fill(&jobs[i]);
            job_issue(&jobs[i], HOST, NULL);
            want += kc[i];
        }
        shuffle(order, nj, (unsigned)(me * 7919 + round * 104729 + 11));
        MPI_Request started[2 * NCOLL];
        for (int i = 0; i < nj; i++)
            started[i] = req[order[i]];
        if (round % 3 == 0) {
            MPI_Startall(nj, started);
        } else if (round % 3 == 1) {
            for (int i = 0; i < nj; i++)
                MPI_Start(&started[i]);
        } else {
            MPI_Startall(nj / 2, started);
            MPI_Startall(nj - nj / 2, started + nj / 2);
        }
        int rc = MPI_SUCCESS, flag = 0, out = 0, done = 0, idx[2 * NCOLL];
        MPI_Status sts[2 * NCOLL];
        switch (HOST_TESTS_OK ? round % 3 : 0) {
        case 0:
            rc = MPI_Waitall(nj, req, sts);
            break;
        case 1:
            while ((rc = MPI_Testall(nj, req, &flag, sts)) == MPI_SUCCESS && !flag)
                sched_yield();
            break;
        default: /* persistent requests stay: completed ones come back inactive */
            while (rc == MPI_SUCCESS && done < nj) {
                rc = MPI_Waitsome(nj, req, &out, idx, sts);
                if (out == MPI_UNDEFINED)
                    break;
                done += out;
            }
            break;
        }
        wd_arm(0);
        if (rc != MPI_SUCCESS) {
            mt_fail("%s, round %d: completion returned an error", cname, round);
            continue;
        }
        for (int i = 0; i < nj; i++) {
            if (job_same(&jobs[i], HOST, NB))
                mt_pass();
            else
                mt_fail("%s, round %d: %s_init (%d elements, %s) started in another order on "
                        "each rank differs from the host's result",
                        cname, round, colls[jobs[i].c].name, jobs[i].n,
                        kc[i] ? "kcoll" : "host");
        }
    }
    const uint64_t runs1 = init_runs();
    for (int i = 0; i < nj; i++) {
        MPI_Request_free(&req[i]);
        job_free(&jobs[i]);
    }
    if (!one_node) /* across nodes: counted as kcoll:leaders or kcoll:lanes, or handed to the host */
        mt_pass();
    else if (runs1 - runs0 != (uint64_t)want)
        mt_fail("%s: kcoll ran %llu starts of persistent requests, expected %d", cname,
                (unsigned long long)(runs1 - runs0), want);
    else
        mt_pass();
}
#endif

/* ---------------------------------------------------------------------- */
/* 2. v-arrays overwritten after a non-blocking call                      */

static void overwritten_arrays(MPI_Comm comm, const char *cname)
{
    static const int vcolls[] = {SCATTERV, GATHERV, ALLGATHERV, ALLTOALLV, RS};
    int p;
    MPI_Comm_size(comm, &p);
    set_param("MIN_BYTES", "0");
    for (size_t v = 0; v < sizeof vcolls / sizeof vcolls[0]; v++)
        for (int shape = 0; shape < 6; shape++) {
            /* across nodes only the collectives kcoll composes: the others are
             * the host's, and Open MPI 4.1's Ialltoallv between nodes reads
             * the arrays late too (the program is erroneous, after all) */
            if (!one_node && vcolls[v] != ALLGATHERV && vcolls[v] != RS)
                continue;
            const int c = vcolls[v], n = shape == 0 ? 0 : shape < 3 ? 1 + shape : 700 + shape;
            const int ip = shape % 2 && has_in_place(c);
            job_t j;
            job_init(&j, c, comm, n, kind_of(c), shape % p, ip, 5000 + 10 * c + shape);
            job_alloc(&j);
            job_fill(&j);
            job_issue(&j, HOST, NULL);
            wd_note("%s with its arrays overwritten after the call on %s, %d elements%s",
                    colls[c].row, cname, n, ip ? ", in place" : "");
            wd_arm(30);
            MPI_Request q;
            int saved[4][MAXP];
            memcpy(saved[0], j.rc, sizeof j.rc);
            memcpy(saved[1], j.rd, sizeof j.rd);
            memcpy(saved[2], j.sc, sizeof j.sc);
            memcpy(saved[3], j.sd, sizeof j.sd);
            int rc = job_issue(&j, NB, &q);
            /* what a freed and reused array would hold */
            memset(j.rc, 0, sizeof j.rc);
            memset(j.rd, 0x7f, sizeof j.rd);
            memset(j.sc, 0, sizeof j.sc);
            memset(j.sd, 0x7f, sizeof j.sd);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
            memcpy(j.rc, saved[0], sizeof j.rc);
            memcpy(j.rd, saved[1], sizeof j.rd);
            memcpy(j.sc, saved[2], sizeof j.sc);
            memcpy(j.sd, saved[3], sizeof j.sd);
            wd_arm(0);
            if (rc != MPI_SUCCESS || !job_same(&j, HOST, NB))
                mt_fail("%s on %s, %d elements%s: with the arrays overwritten after the call, "
                        "%s",
                        colls[c].row, cname, n, ip ? ", in place" : "",
                        rc != MPI_SUCCESS ? "an error" : "a result other than the host's");
            else
                mt_pass();
            job_free(&j);
        }
    set_param("MIN_BYTES", "auto");
}

/* ---------------------------------------------------------------------- */
/* 3. A long history, then zero counts                                    */

static void long_history(MPI_Comm world)
{
    static const int hist[] = {ALLGATHERV, GATHERV, SCATTERV, ALLTOALLV, RS, ALLGATHER,
                               BCAST,      ALLREDUCE, REDUCE, ALLTOALL, RSB};
    const int nh = (int)(sizeof hist / sizeof hist[0]);
    const int calls = quick ? 600 : 2400;
    MPI_Comm comm;
    int p;
    MPI_Comm_dup(world, &comm);
    MPI_Comm_size(comm, &p);
    long bad = 0;
    for (int i = 0; i < calls; i++) {
        if (i % 100 == 0) /* alike on every rank */
            set_param("MIN_BYTES", (i / 100) % 2 ? "auto" : "0");
        const int c = hist[(i * 7) % nh], n = (i / nh) % 5, nb = i % 3 != 0;
        const int ip = (i / 3) % 4 == 1 && has_in_place(c);
        job_t j;
        job_init(&j, c, comm, n, kind_of(c), i % p, ip, 20000 + i);
        job_alloc(&j);
        job_fill(&j);
        job_issue(&j, HOST, NULL);
        wd_note("history call %d on a duplicate of MPI_COMM_WORLD: %s, %d elements%s", i,
                nb ? colls[c].row : colls[c].name, n, ip ? ", in place" : "");
        wd_arm(30);
        MPI_Request q;
        int rc;
        const char *row = nb ? colls[c].row : colls[c].name;
        const uint64_t host0 = host_runs(row);
        if (nb) {
            rc = job_issue(&j, NB, &q);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            rc = job_issue(&j, KB, NULL);
            memcpy(j.b[NB][0], j.b[KB][0], j.slen + CANARY);
            memcpy(j.b[NB][1], j.b[KB][1], j.rlen + CANARY);
        }
        wd_arm(0);
        /* every rank took the same path: all the host's, or none */
        int host = host_runs(row) != host0, hosts = 0;
        PMPI_Allreduce(&host, &hosts, 1, MPI_INT, MPI_SUM, comm);
        if (hosts != 0 && hosts != p) {
            if (bad++ < 3)
                mt_fail("history call %d (%s, %d elements%s): %d of %d ranks gave it to the host",
                        i, row, n, ip ? ", in place" : "", hosts, p);
        } else if (rc != MPI_SUCCESS || !job_same(&j, HOST, NB)) {
            if (bad++ < 3)
                mt_fail("history call %d (%s, %d elements%s): %s", i,
                        nb ? colls[c].row : colls[c].name, n, ip ? ", in place" : "",
                        rc != MPI_SUCCESS ? "an error" : "a result other than the host's");
        }
        job_free(&j);
    }
    if (!bad)
        mt_pass();
    set_param("MIN_BYTES", "auto");
    MPI_Comm_free(&comm);
}

/* ---------------------------------------------------------------------- */
/* 4. A rank that gives a collective up                                   */

static void gave_up(MPI_Comm world)
{
    MPI_Comm comm;
    int p, me;
    MPI_Comm_dup(world, &comm);
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    if (p < 2) {
        MPI_Comm_free(&comm);
        return;
    }
    /* errors come back as return codes: MPI_Wait's of a non-blocking one
     * through MPI_COMM_SELF's handler (a generalized request) */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Errhandler world_eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    set_param("MIN_BYTES", "0");
    const int n = 5000;
    int *s = malloc(sizeof(int) * n), *r = malloc(sizeof(int) * n), *ref = malloc(sizeof(int) * n);
    /* collective k of the fresh team: non-blocking, then blocking */
    for (int blocking = 0; blocking < 2; blocking++) {
        for (int k = 1; k <= 6; k++) {
            const int seq = blocking ? 10 + k : k, fails = k == 3;
            char spec[32];
            snprintf(spec, sizeof spec, "%d:%d", p - 1, seq);
            set_param("TEST_FAIL", fails ? spec : "");
            for (int i = 0; i < n; i++)
                s[i] = me * 1000 + i + k;
            PMPI_Allreduce(s, ref, n, MPI_INT, MPI_SUM, comm);
            wd_note("a rank gives up %s collective %d", blocking ? "blocking" : "non-blocking",
                    seq);
            wd_arm(30);
            double t0 = MPI_Wtime();
            int rc;
            if (blocking) {
                rc = MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, comm);
            } else {
                MPI_Request q;
                rc = MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, comm, &q);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
            }
            const double took = MPI_Wtime() - t0;
            wd_arm(0);
            set_param("TEST_FAIL", "");
            if (fails && rc == MPI_SUCCESS)
                mt_fail("%s collective %d: rank %d gave it up, yet this rank's call succeeded",
                        blocking ? "blocking" : "non-blocking", seq, p - 1);
            else if (fails && took > 10.0)
                mt_fail("%s collective %d: the error took %.1f s to arrive",
                        blocking ? "blocking" : "non-blocking", seq, took);
            else if (!fails && (rc != MPI_SUCCESS || memcmp(r, ref, sizeof(int) * n)))
                mt_fail("%s collective %d after a given-up one: %s",
                        blocking ? "blocking" : "non-blocking", seq,
                        rc != MPI_SUCCESS ? "an error" : "a result other than the host's");
            else
                mt_pass();
        }
        /* the blocking round's numbers start at 11: use the ones between */
        for (int k = 7; !blocking && k <= 10; k++) {
            MPI_Request q;
            MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, comm, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    }
    set_param("MIN_BYTES", "auto");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
    MPI_Errhandler_free(&world_eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    free(s);
    free(r);
    free(ref);
    MPI_Comm_free(&comm);
}

/* ---------------------------------------------------------------------- */
/* 5. Operations and datatypes freed while a call is pending              */

static volatile int sum_wrong_size;

/* inout += in, over the ints of *len elements of *dt (2 ints each) */
static void pair_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size = 0;
    if (MPI_Type_size(*dt, &size) != MPI_SUCCESS || size != 2 * (int)sizeof(int)) {
        sum_wrong_size = 1;
        size = 2 * (int)sizeof(int);
    }
    for (int i = 0; i < *len * (size / (int)sizeof(int)); i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void poison_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = -7;
}

static void freed_handles(MPI_Comm comm, const char *cname)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    set_param("MIN_BYTES", "0");
    const int pairs = 4000, n = 2 * pairs;
    int *s = malloc(sizeof(int) * n), *r = malloc(sizeof(int) * n), *ref = malloc(sizeof(int) * n);
    for (int form = 0; form < KCOLL_PERSISTENT_FORMS - 1; form++)
        for (int it = 0; it < 4; it++) {
            MPI_Op op, junk_op;
            MPI_Datatype pair, junk_type;
            MPI_Request q;
            MPI_Op_create(pair_sum, 1, &op);
            MPI_Type_contiguous(2, MPI_INT, &pair);
            MPI_Type_commit(&pair);
            for (int i = 0; i < n; i++)
                s[i] = me * 3 + i + it;
            PMPI_Allreduce(s, ref, n, MPI_INT, MPI_SUM, comm);
            sum_wrong_size = 0;
            wd_note("%s with a user operation and datatype freed before the wait on %s",
                    form ? "MPI_Allreduce_init" : "MPI_Iallreduce", cname);
            wd_arm(30);
            memset(r, 0, sizeof(int) * n);
            if (me == 1)
                usleep(20000); /* the others' reductions then run after their frees */
#ifdef KCOLL_HAVE_PERSISTENT
            int rc = form ? MPI_Allreduce_init(s, r, pairs, pair, op, comm, MPI_INFO_NULL, &q)
                          : MPI_Iallreduce(s, r, pairs, pair, op, comm, &q);
#else
            int rc = MPI_Iallreduce(s, r, pairs, pair, op, comm, &q);
#endif
            MPI_Op_free(&op);
            MPI_Type_free(&pair);
            /* new handles while the old ones are only marked */
            MPI_Op_create(poison_fn, 1, &junk_op);
            MPI_Type_contiguous(3, MPI_INT, &junk_type);
            MPI_Type_commit(&junk_type);
            const int starts = form ? 3 : 1;
            for (int st = 0; st < starts && rc == MPI_SUCCESS; st++) {
#ifdef KCOLL_HAVE_PERSISTENT
                if (form) {
                    memset(r, 0, sizeof(int) * n);
                    rc = MPI_Start(&q);
                }
#endif
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
                if (rc == MPI_SUCCESS && memcmp(r, ref, sizeof(int) * n))
                    rc = -1;
            }
            if (form)
                MPI_Request_free(&q);
            wd_arm(0);
            MPI_Op_free(&junk_op);
            MPI_Type_free(&junk_type);
            if (op != MPI_OP_NULL || pair != MPI_DATATYPE_NULL)
                mt_fail("%s: a freed handle does not read null", cname);
            else if (rc != MPI_SUCCESS)
                mt_fail("%s, %s %d: the operation and datatype were freed before the wait: %s",
                        cname, form ? "MPI_Allreduce_init" : "MPI_Iallreduce", it,
                        rc == -1 ? "a result other than the host's" : "an error");
            else if (sum_wrong_size)
                mt_fail("%s: the user function got a datatype of another size", cname);
            else
                mt_pass();
        }
    /* an Ialltoallv of a derived datatype freed right after the call */
    {
        MPI_Datatype vec;
        MPI_Type_vector(64, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int *cnt = malloc(sizeof(int) * (size_t)p), *dsp = malloc(sizeof(int) * (size_t)p);
        const size_t ext = (size_t)(2 * 64 - 1) * sizeof(int);
        char *sb = malloc(ext * (size_t)p), *rb = malloc(ext * (size_t)p),
             *hb = malloc(ext * (size_t)p);
        for (int q = 0; q < p; q++) {
            cnt[q] = 1;
            dsp[q] = q;
        }
        for (size_t i = 0; i < ext * (size_t)p; i++) {
            sb[i] = (char)(me * 31 + (int)i);
            rb[i] = hb[i] = 0;
        }
        MPI_Request q;
        PMPI_Alltoallv(sb, cnt, dsp, vec, hb, cnt, dsp, vec, comm);
        wd_note("MPI_Ialltoallv of a datatype freed after the call on %s", cname);
        wd_arm(30);
        int rc = MPI_Ialltoallv(sb, cnt, dsp, vec, rb, cnt, dsp, vec, comm, &q);
        MPI_Type_free(&vec);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        wd_arm(0);
        if (rc != MPI_SUCCESS || memcmp(rb, hb, ext * (size_t)p))
            mt_fail("%s: MPI_Ialltoallv of a datatype freed after the call: %s", cname,
                    rc != MPI_SUCCESS ? "an error" : "a result other than the host's");
        else
            mt_pass();
        free(cnt);
        free(dsp);
        free(sb);
        free(rb);
        free(hb);
    }
    set_param("MIN_BYTES", "auto");
    free(s);
    free(r);
    free(ref);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wd_init("test_semantics");
    mt_opts_t o = mt_options(argc, argv);
    quick = o.quick;
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    MPI_Op_create(matmul, 0, &matmul_op);
    shape_comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - me, &shape_comms[1]);
    const int nshapes = quick ? 1 : 2;
    MPI_Comm node;
    int np;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &np);
    MPI_Comm_free(&node);
    one_node = np == p;

#ifdef KCOLL_HAVE_PERSISTENT
    for (int s = 0; s < nshapes; s++)
        start_orders(shape_comms[s], shape_names[s]);
#else
    if (me == 0)
        printf("test_semantics: this MPI declares no persistent collectives (MPI %d.%d): part 1 "
               "has nothing to test\n",
               MPI_VERSION, MPI_SUBVERSION);
#endif
    for (int s = 0; s < nshapes; s++)
        overwritten_arrays(shape_comms[s], shape_names[s]);
#ifdef KCOLL_HOST_OLD_OMPI
    /* Open MPI 4.1.4's own non-blocking collectives between nodes hang in
     * this sequence with kcoll disabled (an Ibcast at call 103 on 2 x 2) */
    if (one_node)
#endif
        long_history(MPI_COMM_WORLD);
    if (one_node) /* KCOLL_TEST_FAIL names a team's rank and number: one node's */
        gave_up(MPI_COMM_WORLD);
    for (int s = 0; s < nshapes; s++)
        freed_handles(shape_comms[s], shape_names[s]);

    MPI_Comm_free(&shape_comms[1]);
    MPI_Op_free(&matmul_op);
    MPI_Type_free(&mat_t);
    int rc = mt_finish("test_semantics");
    MPI_Finalize();
    return rc;
}
