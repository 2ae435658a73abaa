/* Persistent collectives (MPI-4: MPI_Bcast_init ... MPI_Reduce_scatter_init,
 * then MPI_Start / MPI_Startall) through kcoll, against the host MPI's own
 * blocking PMPI_* result, byte for byte.
 *
 * A persistent collective is decided once, at its initialization, and then
 * started many times on the same buffers, whose contents change between
 * starts. kcoll must run every start of a request it took (and count each
 * start once on the statistics row MPI_<Coll>_init), leave the ones it did
 * not take to the host MPI, and its requests must behave as MPI's: inactive
 * after completion, restartable, completed by any completion function,
 * started together with other requests by MPI_Startall, freed by
 * MPI_Request_free. This program checks:
 *
 *  1. Every persistent collective on MPI_COMM_WORLD and a reversed split:
 *     auto (16 KiB + 3 per block or vector, kcoll; Reduce and Allreduce
 *     forced partitioned, their default rule leaves this size to the host)
 *     started 100 times, every other algorithm of its family forced and
 *     started 10 times, and the default KCOLL_MIN_BYTES with one byte (the
 *     host MPI) started 10 times; the contents change at every start and
 *     every result is compared with the host's blocking result for those
 *     contents (canaries after the buffers, gaps in the v-layouts); roots
 *     and MPI_IN_PLACE rotate; reductions: int32 SUM/MAX against the host,
 *     a double SUM against kcoll's blocking call (bit-identical), a
 *     non-commutative user operation against the host. The starts are
 *     completed in turn by MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testall,
 *     MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome and
 *     MPI_Request_get_status (then MPI_Wait), and the request must stay
 *     valid. The statistics must count each start once, on the forced
 *     algorithm or on the host's reason.
 *  2. MPI_Startall of kcoll's persistent collectives, a host one and a
 *     persistent point-to-point pair, completed together, 20 rounds.
 *  3. Persistent, non-blocking and blocking collectives interleaved on one
 *     communicator.
 *  4. MPI_Request_free of requests never started, and 20 rounds of
 *     initialization, one start and free.
 *
 * MPIs that do not declare persistent collectives (Open MPI 4.1: MPI 3.1)
 * have nothing to test: the program says so and passes. Where the host's
 * own persistent collectives are broken (MPICH 4.0.2, see
 * HOST_PERSISTENT_OK), the requests the host would run are made and freed
 * but never started, and the program says how many. -q (MPICH above 3
 * ranks, where each host collective costs milliseconds) thins it: one
 * communicator, auto and one forced algorithm, two contents. */
#include "nbjob.h"

#ifdef KCOLL_HAVE_PERSISTENT

static int quick;

/* The statistics row of the persistent form: "MPI_Bcast_init". */
static const char *init_row(int c, char *buf, size_t len)
{
    snprintf(buf, len, "%s_init", colls[c].name);
    return buf;
}

#define GENS 4 /* distinct contents, cycled through by the starts */

/* References for the GENS contents of job j: the host's blocking result
 * (or kcoll's, `with` KB), saved as [gen][send, recv] copies. */
static char *refs[GENS][2];
static size_t refs_len; /* bytes in each, canaries excluded */

static void make_refs(job_t *j, int with, int gens)
{
    if (j->slen > refs_len || j->rlen > refs_len) {
        fprintf(stderr, "test_persistent: reference buffers too small\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int g = 0; g < gens; g++) {
        j->gen = (unsigned)g;
        job_fill(j);
        job_issue(j, with, NULL);
        memcpy(refs[g][0], j->b[with][0], j->slen + CANARY);
        memcpy(refs[g][1], j->b[with][1], j->rlen + CANARY);
    }
}

/* Put reference g into j's HOST buffers (for job_same). */
static void load_ref(job_t *j, int g)
{
    memcpy(j->b[HOST][0], refs[g][0], j->slen + CANARY);
    memcpy(j->b[HOST][1], refs[g][1], j->rlen + CANARY);
}

static long case_id = 1;

/* MPICH 4.0.2's own persistent collectives are broken (found by this
 * test, checked with small programs without kcoll): MPI_Gather_init on one
 * rank never copies, MPI_Allgather_init and MPI_Scatter_init give wrong
 * results from the second start on, on 3 or more ranks MPI_Wait and
 * MPI_Test fail with "Invalid communicator" (MPIDU_Sched_progress_state),
 * and MPI_Testall reports MPI_ERR_IN_STATUS with every status
 * MPI_SUCCESS. There the requests the host MPI would run are made and
 * freed but not started (counted, and said at the end). */
/* MPICH 5.0.2's completions of them too (KCOLL_HOST_PERSISTENT_BROKEN). */
#ifdef KCOLL_HOST_PERSISTENT_BROKEN
#define HOST_PERSISTENT_OK 0
#else
#define HOST_PERSISTENT_OK 1
#endif
static long host_skipped;

/* One persistent request: initialized on j, started `starts` times with
 * contents that change each time, each result compared; then freed. */
static void one_persistent(job_t *j, int ai, size_t min_bytes, int starts, const char *cname)
{
    const int fam = colls[j->c].fam, gens = quick ? 2 : GENS;
    const char *algo = fam_algos[fam][ai];
    char row[64], path[64];
    init_row(j->c, row, sizeof row);
    snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algo, ":"), algo);
    const int expect = expect_kcoll(j, ai > 0, min_bytes);
    const int with = j->kind == K_DOUBLE ? KB : HOST;
    if (!expect && !HOST_PERSISTENT_OK)
        starts = 0;
    wd_note("%s on %s, %s, %d elements of %s, root %d%s", row, cname, algo, j->n,
            kind_names[j->kind], j->root, j->ip ? ", in place" : "");
    if (starts)
        make_refs(j, with, gens);

    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    j->gen = 0;
    job_fill(j);
    const uint64_t path0 = mt_calls(row, path), any0 = kcoll_runs(row, fam);
    const uint64_t host0 = host_runs(row);
    int rc = job_issue(j, PINIT, &req);
    const char *why = rc != MPI_SUCCESS ? "MPI_<Coll>_init returned an error" : NULL;
    int bad_start = -1;
    for (int s = 0; s < starts && !why; s++) {
        const int g = s % gens;
        j->gen = (unsigned)g;
        job_fill(j); /* new contents in the request's own buffers */
        if (MPI_Start(&req) != MPI_SUCCESS)
            why = "MPI_Start returned an error";
        else
            why = complete_as(&req, s % NCMODES, &st, 1, 1);
        load_ref(j, g);
        if (!why && !job_same(j, HOST, NB))
            why = with == KB ? "result differs from kcoll's blocking call"
                             : "result differs from the host MPI's blocking call";
        if (why)
            bad_start = s;
    }
    const uint64_t path1 = mt_calls(row, path), any1 = kcoll_runs(row, fam);
    const uint64_t host1 = host_runs(row);
    if (req != MPI_REQUEST_NULL && MPI_Request_free(&req) != MPI_SUCCESS && !why)
        why = "MPI_Request_free returned an error";
    if (!why && req != MPI_REQUEST_NULL)
        why = "MPI_Request_free did not set the request to MPI_REQUEST_NULL";
    if (!why && expect && any1 - any0 != (uint64_t)starts)
        why = "kcoll did not run (or count) every start exactly once";
    if (!why && expect && ai > 0 && path1 - path0 != (uint64_t)starts)
        why = "the forced algorithm's row does not count every start once";
    if (!why && !expect && (any1 != any0 || host1 - host0 != (uint64_t)starts))
        why = "the host's starts were not counted once each on an mpi: reason";
    if (!why && !starts)
        host_skipped++;
    else if (why)
        mt_fail("%s: %s on %s, %s, %d elements of %s%s, root %d%s, min_bytes %zu, start %d "
                "(kcoll counted %llu, host %llu of %d starts)",
                why, row, cname, algo, j->n, kind_names[j->kind],
                j->kind == K_INT ? (j->op == MPI_MAX ? " MAX" : " SUM") : "", j->root,
                j->ip ? ", in place" : "", min_bytes, bad_start,
                (unsigned long long)(any1 - any0), (unsigned long long)(host1 - host0), starts);
    else
        mt_pass();
}

/* 1. every persistent collective, every algorithm */
static void every_collective(MPI_Comm comm, const char *cname)
{
    int p;
    MPI_Comm_size(comm, &p);
    for (int c = 0; c < NCOLL; c++) {
        const int fam = colls[c].fam, red = is_red(c);
        wd_arm(120);
        for (int ai = 0; ai < 8 && fam_algos[fam][ai]; ai++) {
            if (quick && ai > 1)
                break;
            kcoll_param_set(fam_param[fam], fam_algos[fam][ai]);
            kcoll_param_set("MIN_BYTES", "0");
            /* kinds: data, or int32 then double (against kcoll's blocking) */
            for (int k = 0; k < (red ? 2 : 1); k++) {
                const int kind = !red ? K_BYTE : k ? K_DOUBLE : K_INT;
                const int n = kind == K_BYTE ? 16384 + 3 : (16384 + 3) / 4 + 1;
                const long id = case_id++;
                const int root = rooted(c) ? (int)(id % p) : 0;
                const int ip = has_in_place(c) && id % 2;
                job_t j;
                job_init(&j, c, comm, n, kind, root, ip, id);
                /* doubles: only where kcoll runs the blocking call too */
                if (kind == K_DOUBLE && !expect_kcoll(&j, ai > 0, 0))
                    continue;
                /* 100 starts for auto; Reduce and Allreduce this small
                 * are the host's by the default rule: for partitioned */
                const int main_ai = c == REDUCE || c == ALLREDUCE ? 1 : 0;
                job_alloc(&j);
                one_persistent(&j, ai, 0, ai == main_ai && kind != K_DOUBLE ? 100 : 10, cname);
                job_free(&j);
            }
            kcoll_param_set(fam_param[fam], "auto");
        }
        /* one byte with the default KCOLL_MIN_BYTES: the host MPI's starts
         * (the v-variants whose sizes only an agreement tells: kcoll's) */
        kcoll_param_set("MIN_BYTES", "16384");
        job_t j;
        const int kind = red ? K_INT : K_BYTE;
        job_init(&j, c, comm, 1, kind, p - 1, 0, case_id++);
        job_alloc(&j);
        one_persistent(&j, 0, SMALL, quick ? 3 : 10, cname);
        job_free(&j);
    }
    /* the non-commutative user operation, forced partitioned */
    kcoll_param_set("MIN_BYTES", "0");
    for (int c = REDUCE; c <= RS; c++) {
        job_t j;
        kcoll_param_set(fam_param[colls[c].fam], "partitioned");
        job_init(&j, c, comm, 1003, K_MAT, p - 1, c == ALLREDUCE, case_id++);
        job_alloc(&j);
        one_persistent(&j, 1, 0, 10, cname);
        job_free(&j);
        kcoll_param_set(fam_param[colls[c].fam], "auto");
    }
    kcoll_param_set("MIN_BYTES", "16384");
}

/* 2. MPI_Startall: kcoll's persistent collectives, a host one and a
 * persistent point-to-point pair, 20 rounds, completed together */
static void startall(MPI_Comm comm, const char *cname)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    enum { NJ = 6, NR = NJ + 2 };
    static const int cs[NJ] = {BCAST, ALLGATHERV, ALLTOALL, RSB, BCAST, BARRIER};
    static const int ns[NJ] = {65536, 20000, 17000, 5000, 1, 0};
    wd_note("MPI_Startall on %s", cname);
    wd_arm(120);
    kcoll_param_set("MIN_BYTES", "16384");
    job_t jobs[NJ];
    MPI_Request reqs[NR];
    static char *saved[NJ][2][2];
    int nr = 0, idx_of[NJ]; /* where job i's request is in reqs, or -1 */
    for (int i = 0; i < NJ; i++) {
        job_init(&jobs[i], cs[i], comm, ns[i], is_red(cs[i]) ? K_INT : K_BYTE, i % p, 0,
                 case_id++);
        job_alloc(&jobs[i]);
        idx_of[i] = HOST_PERSISTENT_OK || expect_kcoll(&jobs[i], 0, SMALL) ? nr++ : -1;
        for (int g = 0; g < 2; g++) { /* two contents: host references */
            jobs[i].gen = (unsigned)g;
            job_fill(&jobs[i]);
            job_issue(&jobs[i], HOST, NULL);
            for (int s = 0; s < 2; s++) {
                size_t len = (s ? jobs[i].rlen : jobs[i].slen) + CANARY;
                saved[i][g][s] = malloc(len);
                memcpy(saved[i][g][s], jobs[i].b[HOST][s], len);
            }
        }
        jobs[i].gen = 0;
        job_fill(&jobs[i]);
        if (idx_of[i] >= 0)
            job_issue(&jobs[i], PINIT, &reqs[idx_of[i]]);
        else
            host_skipped++;
    }
    int sendv[16], recvv[16];
    const int right = (rank + 1) % p, left = (rank + p - 1) % p;
    MPI_Send_init(sendv, 16, MPI_INT, right, 5, comm, &reqs[nr++]);
    MPI_Recv_init(recvv, 16, MPI_INT, left, 5, comm, &reqs[nr++]);
    uint64_t kc0 = 0, host0 = 0, kc1 = 0, host1 = 0, nk = 0, nh = 0;
    char row[64];
    for (int i = 0; i < NJ; i++) {
        nk += (uint64_t)expect_kcoll(&jobs[i], 0, SMALL);
        nh += (uint64_t)(idx_of[i] >= 0 && !expect_kcoll(&jobs[i], 0, SMALL));
    }
    for (int c = 0; c < NCOLL; c++) /* each row once */
        if (c == BCAST || c == ALLGATHERV || c == ALLTOALL || c == RSB || c == BARRIER) {
            kc0 += kcoll_runs(init_row(c, row, sizeof row), colls[c].fam);
            host0 += host_runs(row);
        }
    const char *why = NULL;
    const int rounds = 20;
    for (int r = 0; r < rounds && !why; r++) {
        for (int i = 0; i < NJ; i++) {
            jobs[i].gen = (unsigned)(r % 2);
            job_fill(&jobs[i]);
        }
        for (int k = 0; k < 16; k++)
            sendv[k] = rank * 100 + k + r;
        if (MPI_Startall(nr, reqs) != MPI_SUCCESS) {
            why = "MPI_Startall returned an error";
            break;
        }
        MPI_Status sts[NR];
        int rc, flag = 0, out = 0, idx, ids[NR], left_n = nr;
        switch (r % 3) {
        case 0:
            rc = MPI_Waitall(nr, reqs, sts);
            break;
        case 1:
            while ((rc = MPI_Testall(nr, reqs, &flag, sts)) == MPI_SUCCESS && !flag)
                sched_yield();
            break;
        default: /* Waitsome, then Waitany for the rest */
            rc = MPI_Waitsome(nr, reqs, &out, ids, sts);
            left_n -= out == MPI_UNDEFINED ? 0 : out;
            while (rc == MPI_SUCCESS && left_n > 0) {
                rc = MPI_Waitany(nr, reqs, &idx, MPI_STATUS_IGNORE);
                if (idx == MPI_UNDEFINED)
                    break;
                left_n--;
            }
            if (left_n != 0)
                why = "MPI_Waitsome/MPI_Waitany did not complete every request once";
            break;
        }
        if (!why && rc != MPI_SUCCESS)
            why = "a completion function returned an error";
        for (int i = 0; i < NJ && !why; i++) {
            if (idx_of[i] < 0)
                continue;
            memcpy(jobs[i].b[HOST][0], saved[i][r % 2][0], jobs[i].slen + CANARY);
            memcpy(jobs[i].b[HOST][1], saved[i][r % 2][1], jobs[i].rlen + CANARY);
            if (!job_same(&jobs[i], HOST, NB))
                why = "a persistent collective's result differs from the host MPI's";
        }
        for (int k = 0; k < 16 && !why; k++)
            if (recvv[k] != left * 100 + k + r)
                why = "the persistent point-to-point message arrived wrong";
    }
    for (int c = 0; c < NCOLL; c++)
        if (c == BCAST || c == ALLGATHERV || c == ALLTOALL || c == RSB || c == BARRIER) {
            kc1 += kcoll_runs(init_row(c, row, sizeof row), colls[c].fam);
            host1 += host_runs(row);
        }
    /* each start counted once, in kcoll or on the host (the 1-byte broadcast) */
    if (!why && (kc1 - kc0 != nk * rounds || host1 - host0 != nh * rounds))
        why = "statistics: a start was not counted once on its path";
    for (int i = 0; i < nr; i++)
        MPI_Request_free(&reqs[i]);
    if (why)
        mt_fail("%s: MPI_Startall on %s (kcoll counted %llu of %llu starts, the host %llu of "
                "%llu)", why, cname, (unsigned long long)(kc1 - kc0),
                (unsigned long long)(nk * rounds), (unsigned long long)(host1 - host0),
                (unsigned long long)(nh * rounds));
    else
        mt_pass();
    for (int i = 0; i < NJ; i++) {
        job_free(&jobs[i]);
        for (int g = 0; g < 2; g++)
            for (int s = 0; s < 2; s++)
                free(saved[i][g][s]);
    }
}

/* 3. persistent, non-blocking and blocking collectives interleaved:
 * start P; MPI_Ibcast; MPI_Allreduce (kcoll); MPI_Iallgather; wait all */
static void interleaved(MPI_Comm comm, const char *cname)
{
    int p;
    MPI_Comm_size(comm, &p);
    if (p == 1 && !HOST_PERSISTENT_OK) { /* the host's persistent collective */
        host_skipped++;
        return;
    }
    wd_note("persistent, non-blocking and blocking collectives interleaved on %s", cname);
    wd_arm(120);
    kcoll_param_set("MIN_BYTES", "0");
    kcoll_param_set("ALLREDUCE_ALGO", "partitioned");
    enum { N = 4 };
    static const int cs[N] = {ALLTOALLV, BCAST, ALLREDUCE, ALLGATHER};
    job_t j[N];
    MPI_Request q[N];
    for (int i = 0; i < N; i++) {
        job_init(&j[i], cs[i], comm, cs[i] == ALLREDUCE ? 6000 : 20000, is_red(cs[i]) ? K_INT
                                                                                   : K_BYTE,
                 (i + 1) % p, 0, case_id++);
        job_alloc(&j[i]);
    }
    const char *why = NULL;
    for (int r = 0; r < 10 && !why; r++) {
        for (int i = 0; i < N; i++) {
            j[i].gen = (unsigned)r;
            job_fill(&j[i]);
            job_issue(&j[i], HOST, NULL);
        }
        if (r == 0)
            job_issue(&j[0], PINIT, &q[0]);
        MPI_Start(&q[0]);
        job_issue(&j[1], NB, &q[1]);
        job_issue(&j[2], KB, NULL);
        q[2] = MPI_REQUEST_NULL;
        job_issue(&j[3], NB, &q[3]);
        MPI_Status sts[N];
        if (MPI_Waitall(N, q, sts) != MPI_SUCCESS)
            why = "MPI_Waitall returned an error";
        for (int i = 0; i < N && !why; i++)
            if (!job_same(&j[i], HOST, i == 2 ? KB : NB))
                why = "a result differs from the host MPI's";
    }
    MPI_Request_free(&q[0]);
    if (why)
        mt_fail("%s: persistent, non-blocking and blocking interleaved on %s", why, cname);
    else
        mt_pass();
    for (int i = 0; i < N; i++)
        job_free(&j[i]);
    kcoll_param_set("ALLREDUCE_ALGO", "auto");
    kcoll_param_set("MIN_BYTES", "16384");
}

/* 4. requests freed without a start; initialization, start, free cycles */
static void lifecycles(MPI_Comm comm)
{
    int p;
    MPI_Comm_size(comm, &p);
    wd_note("persistent requests freed without a start, and init/start/free cycles");
    wd_arm(120);
    kcoll_param_set("MIN_BYTES", "0");
    const char *why = NULL;
    for (int r = 0; r < 20 && !why; r++) {
        job_t a, b;
        MPI_Request qa, qb;
        job_init(&a, BCAST, comm, 30000 + r, K_BYTE, r % p, 0, case_id++);
        job_init(&b, GATHERV, comm, 20000, K_BYTE, (r + 1) % p, r % 2, case_id++);
        job_alloc(&a);
        job_alloc(&b);
        job_fill(&a);
        job_fill(&b);
        job_issue(&a, HOST, NULL);
        job_issue(&a, PINIT, &qa);
        job_issue(&b, PINIT, &qb); /* never started */
        if (p == 1 && !HOST_PERSISTENT_OK)
            host_skipped++; /* the host's persistent collective */
        else if (MPI_Start(&qa) != MPI_SUCCESS || MPI_Wait(&qa, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            why = "MPI_Start or MPI_Wait returned an error";
        else if (!job_same(&a, HOST, NB))
            why = "result differs from the host MPI's";
        if (MPI_Request_free(&qb) != MPI_SUCCESS || MPI_Request_free(&qa) != MPI_SUCCESS)
            why = "MPI_Request_free returned an error";
        else if (qa != MPI_REQUEST_NULL || qb != MPI_REQUEST_NULL)
            why = "MPI_Request_free did not set the request to MPI_REQUEST_NULL";
        job_free(&a);
        job_free(&b);
    }
    /* the communicator still works afterwards */
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (!why && sum != p)
        why = "MPI_Allreduce after the cycles is wrong";
    if (why)
        mt_fail("%s: persistent request life cycles", why);
    else
        mt_pass();
    kcoll_param_set("MIN_BYTES", "16384");
}

/* A persistent collective on an inter-communicator is the host's: it is
 * counted once per start under mpi:intercomm, never at its initialization
 * (this one is freed without a start, so nothing is counted). */
static void intercomm_init(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p < 2)
        return;
    wd_note("a persistent broadcast initialized on an inter-communicator");
    wd_arm(60);
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 7, &inter);
    const uint64_t before = mt_calls("MPI_Bcast_init", "mpi:intercomm");
    char buf[64] = {0};
    MPI_Request q;
    const char *why = NULL;
    int root = wrank == 0 ? MPI_ROOT : wrank % 2 ? 0 : MPI_PROC_NULL;
    if (MPI_Bcast_init(buf, sizeof buf, MPI_BYTE, root, inter, MPI_INFO_NULL, &q) != MPI_SUCCESS)
        why = "MPI_Bcast_init returned an error";
    else if (MPI_Request_free(&q) != MPI_SUCCESS)
        why = "MPI_Request_free returned an error";
    else if (mt_calls("MPI_Bcast_init", "mpi:intercomm") != before)
        why = "the initialization was counted as a call";
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    if (why)
        mt_fail("%s: MPI_Bcast_init on an inter-communicator", why);
    else
        mt_pass();
}

#endif /* KCOLL_HAVE_PERSISTENT */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wd_init("test_persistent");
#ifdef KCOLL_HAVE_PERSISTENT
    quick = argc > 1 && !strcmp(argv[1], "-q");
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize > MAXP) {
        if (wrank == 0)
            fprintf(stderr, "test_persistent: at most %d ranks\n", MAXP);
        MPI_Finalize();
        return 1;
    }
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    MPI_Op_create(matmul, 0, &matmul_op);
    /* the largest call: p blocks of 16 KiB + 3 doubles, with gaps */
    refs_len = (size_t)wsize * 2 * (16384 + 64) + 4096;
    for (int g = 0; g < GENS; g++)
        for (int s = 0; s < 2; s++)
            refs[g][s] = malloc(refs_len + CANARY);
    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);

    for (int shape = 0; shape < MT_NSHAPES; shape += 3) {
        if (quick && shape)
            break;
        case_id = 1000000L * shape + 1; /* alike on every rank of the communicator */
        every_collective(comms[shape], names[shape]);
        startall(comms[shape], names[shape]);
        interleaved(comms[shape], names[shape]);
        lifecycles(comms[shape]);
    }
    intercomm_init();
    wd_arm(0);

    for (int g = 0; g < GENS; g++)
        for (int s = 0; s < 2; s++)
            free(refs[g][s]);
    mt_free_shapes(comms);
    MPI_Op_free(&matmul_op);
    MPI_Type_free(&mat_t);
    if (host_skipped && wrank == 0)
        printf("test_persistent: %ld persistent requests the host MPI would run were not "
               "started (this MPI's own persistent collectives are broken: see "
               "HOST_PERSISTENT_OK)\n", host_skipped);
#else
    if (wrank == 0)
        printf("test_persistent: this MPI (standard %d.%d) declares no persistent "
               "collectives: nothing to test\n", MPI_VERSION, MPI_SUBVERSION);
#endif
    int rc = mt_finish("test_persistent");
    MPI_Finalize();
    return rc;
}
