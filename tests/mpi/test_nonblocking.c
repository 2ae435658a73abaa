/* Non-blocking collectives (MPI_Ibcast ... MPI_Ireduce_scatter) through
 * kcoll, completed with every MPI completion function, against the host
 * MPI's own blocking PMPI_* result, byte for byte.
 *
 * A non-blocking collective must decide at its start, without waiting for
 * the other ranks, whether kcoll or the host MPI runs it, and kcoll's
 * request must then behave as any MPI request: it completes in whichever
 * completion call the program uses, mixed with the host's own requests,
 * while the program does other communication or computes, in the order the
 * program chooses. This program checks:
 *
 *  1. The matrix: every non-blocking collective x algorithm (auto and
 *     every one of its family forced) x size (0, 1, 4095 bytes, 16 KiB + 3,
 *     256 KiB + 5) x every root x MPI_IN_PLACE where MPI allows it x
 *     communicator shape (world, dup, odd/even split, reversed split),
 *     completed in turn with MPI_Wait, an MPI_Test loop, MPI_Waitall, an
 *     MPI_Testall loop, MPI_Waitany, an MPI_Testany loop, MPI_Waitsome, an
 *     MPI_Testsome loop, and an MPI_Request_get_status loop followed by
 *     MPI_Request_free (arrays hold MPI_REQUEST_NULL around the request).
 *     Buffers carry canary bytes after them and, in the v-variants, in the
 *     gaps of uneven counts (zeros included) at shuffled displacements; the
 *     whole allocations are compared. Small sizes also run with the default
 *     KCOLL_MIN_BYTES. The statistics row MPI_I<coll> must count the call
 *     on the forced algorithm exactly when kcoll should run it (the decision
 *     uses what every rank knows at the start: the v-variants whose sizes
 *     only an agreement tells always run in kcoll), else once on an mpi:
 *     reason. Reductions: int32 MPI_SUM and MPI_MAX against the host and
 *     against kcoll's own blocking call, double MPI_SUM against kcoll's
 *     blocking call (kcoll's fixed order makes them bit-identical), and a
 *     non-commutative user operation (2x2 matrix product) once per
 *     reduction.
 *  2. The status of a completed kcoll request equals the status of the
 *     host's own non-blocking collective (PMPI_Ibcast + PMPI_Wait): source,
 *     tag, element count, not cancelled; a request the host ran gives the
 *     host's own status for that call (MPI leaves source and tag undefined;
 *     where the host fills them with leftovers, as MPICH 4.0.2 does, only
 *     the cancelled flag is compared: see nbjob.h).
 *  3. kcoll's requests, the host's (a small MPI_Ibcast and MPI_Iallreduce
 *     the host runs) and point-to-point MPI_Isend/MPI_Irecv in one array,
 *     completed with every array completion function.
 *  4. 16 collectives of several families, roots and sizes outstanding on
 *     one communicator, completed in reverse order; 40 (more than kcoll's
 *     16 lanes: the rest queue); 24 on two communicators in turn; blocking
 *     collectives interleaved with outstanding non-blocking ones.
 *  5. MPI_Request_free after MPI_Request_get_status saw the completion.
 *  6. A rank that starts two collectives and computes for 0.5 s before it
 *     waits, while the others already wait.
 *  7. Progress: the MPI standard's MPI_Ibarrier / MPI_Send / MPI_Recv
 *     example in both orders (in the second, rank 0 waits for the barrier
 *     before it sends, so rank 1's part must advance while it blocks in
 *     MPI_Recv), a broadcast whose root blocks in MPI_Recv while the others
 *     wait for it, and one whose root calls a small MPI_Allreduce (the
 *     host's) before it waits, while the others wait first and call the
 *     MPI_Allreduce after. These run last: a watchdog (alarm) names a case
 *     that hangs and aborts; it also guards every other part.
 *  8. A communicator kcoll has no team for yet (made by MPI_Comm_idup):
 *     its non-blocking calls go to the host MPI (mpi:no_team) until a
 *     blocking collective sets the team up.
 *  9. Derived datatypes: MPI_Ibcast and MPI_Iallgather of a vector on
 *     kcoll's path (freed before the wait; two layouts of one signature),
 *     a darray on the host's (mpi:noncontig_datatype); the host's result.
 * 10. MPI_Iscatterv and MPI_Igatherv of a darray with nothing to move on
 *     rank 0: on the host's path on every rank (rank 0 decides alone too).
 * 11. KCOLL_ALLTOALL_ALGO changed between an MPI_Ialltoallv's start and its
 *     wait, one rank's agreement completed before the change: the
 *     algorithm forced at the start runs on every rank.
 *
 * Freeing a completed non-blocking collective request (5.) goes beyond the
 * MPI standard, which calls it erroneous; kcoll supports it for its own
 * requests, so only kcoll's requests are freed that way.
 *
 * -q (MPICH above 3 ranks, where each of its own collectives busy-polls
 * and costs milliseconds) and more than 4 ranks thin the matrix. */
#include <time.h>

#include "nbjob.h"

/* sizes in bytes: per block (blocked collectives), of the message
 * (MPI_Ibcast) or of the int32 vector (reductions, rounded up) */
static const size_t sizes[] = {0, 1, 4095, 16384 + 3, 262144 + 5};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define BIG (NSIZES - 1)

static int quick, wsize;

/* ---------------------------------------------------------------------- */
/* 1. The matrix */

static long case_no;

/* Run one case; returns what went wrong or NULL. */
static const char *run_case(job_t *j, int ai, size_t min_bytes)
{
    const int fam = colls[j->c].fam, red = is_red(j->c);
    const char *algo = fam_algos[fam][ai], *row = colls[j->c].row;
    const int expect = expect_kcoll(j, ai > 0, min_bytes);
    const int mode = (int)(case_no % NCMODES);
    char path[64];
    snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algo, ":"), algo);
    job_fill(j);
    int rc_host = MPI_SUCCESS, rc_kb = MPI_SUCCESS;
    if (j->kind != K_DOUBLE)
        rc_host = job_issue(j, HOST, NULL);
    /* kcoll's own blocking call, where kcoll runs it (where the host does,
     * MPICH 4.0.2's PMPI_Reduce crashes in place at a non-zero root) */
    const int kb = red && expect;
    if (kb)
        rc_kb = job_issue(j, KB, NULL);
    const uint64_t path0 = mt_calls(row, path), any0 = kcoll_runs(row, fam);
    const uint64_t host0 = host_runs(row);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    const char *why = NULL;
    int rc = job_issue(j, NB, &req);
    /* the host's calls are counted at their start: only kcoll's requests
     * may be freed after completion */
    const int hosted = host_runs(row) != host0;
    if (rc == MPI_SUCCESS)
        why = complete(&req, mode, &st, !hosted);
    const uint64_t path1 = mt_calls(row, path), any1 = kcoll_runs(row, fam);
    const uint64_t host1 = host_runs(row);
    if (why)
        return why;
    if (rc_host != MPI_SUCCESS || rc_kb != MPI_SUCCESS || rc != MPI_SUCCESS)
        return "an MPI call returned an error";
    if (j->kind != K_DOUBLE && !job_same(j, HOST, NB))
        return "result differs from the host MPI's blocking call";
    if (kb && !job_same(j, KB, NB))
        return "result differs from kcoll's own blocking call";
    /* kcoll's request: the status of a host collective that communicated;
     * the host's request: the host's own status for this very call */
    MPI_Status ref = expect || !HOST_STATUS_DEFINED ? host_status : host_nb_status(j);
    if ((why = status_check(&st, &ref)))
        return why;
    if (expect != (any1 == any0 + 1))
        return expect ? "kcoll did not run" : "kcoll ran where the host MPI should";
    if (expect && ai > 0 && path1 != path0 + 1)
        return "statistics do not show the forced algorithm";
    if (host1 != host0 + !expect)
        return expect ? "a call kcoll ran was counted as the host's"
                      : "the host's call was not counted once on an mpi: reason";
    return NULL;
}

/* The matrix, thinned where a dimension adds little: the largest size on
 * the world and reversed communicators with roots 0 and p-1; more than 4
 * ranks: roots 0, p-1 and one that moves; the duplicate and the odd/even
 * split: auto and the first two forced algorithms; the default
 * KCOLL_MIN_BYTES with auto, root 0 and not in place only; -q: roots 0 and
 * p-1, in place alternating, no 4095-byte size, world and reversed only,
 * forced algorithms at 16 KiB + 3 only. */
static int wanted(int c, int shape, int ai, int si, int pass, int root, int ip, int p)
{
    const int moving = (int)((ai + si * 3 + c) % (p ? p : 1));
    if (pass && (ai || root || ip))
        return 0;
    if ((shape == 1 || shape == 2) && ai > 2)
        return 0;
    if (si == BIG && ((shape != 0 && shape != 3) || (root != 0 && root != p - 1)))
        return 0;
    if (p > 4 && root != 0 && root != p - 1 && root != moving)
        return 0;
    if (quick && ((shape != 0 && shape != 3) || si == 2 || (root != 0 && root != p - 1) ||
                  (has_in_place(c) && ip != (ai + si) % 2) || (ai > 0 && si != 3)))
        return 0;
    return 1;
}

static char *arena[3][2], *arena_tmp;
static size_t maxb; /* bytes in each arena, canaries excluded */

static void matrix(MPI_Comm comms[MT_NSHAPES], const char *names[MT_NSHAPES])
{
    for (int shape = 0; shape < MT_NSHAPES; shape++) {
        MPI_Comm comm = comms[shape];
        int p;
        MPI_Comm_size(comm, &p);
        /* case numbers (they seed the layouts) alike on every rank of comm:
         * the halves of the odd/even split run different numbers of cases */
        case_no = 1000000L * shape;
        for (int c = 0; c < NCOLL; c++) {
            const int fam = colls[c].fam;
            wd_arm(120);
            for (int ai = 0; ai < 8 && fam_algos[fam][ai]; ai++) {
                kcoll_param_set(fam_param[fam], fam_algos[fam][ai]);
                for (int si = 0; si < NSIZES; si++)
                    for (int pass = 0; pass < (sizes[si] < SMALL ? 2 : 1); pass++) {
                        kcoll_param_set("MIN_BYTES", pass ? "16384" : "0");
                        const int nkinds = is_red(c) ? 2 : 1;
                        for (int k = 0; k < nkinds; k++)
                            for (int root = 0; root < (rooted(c) ? p : 1); root++)
                                for (int ip = 0; ip < (has_in_place(c) ? 2 : 1); ip++) {
                                    if ((c == BARRIER && si > 0) ||
                                        !wanted(c, shape, ai, si, pass, root, ip, p))
                                        continue;
                                    const int kind = !is_red(c) ? K_BYTE : k ? K_DOUBLE : K_INT;
                                    const int n = (int)(kind == K_BYTE ? sizes[si]
                                                                       : (sizes[si] + 3) / 4);
                                    job_t j;
                                    job_init(&j, c, comm, n, kind, root, ip, case_no);
                                    const size_t min_bytes = pass ? SMALL : 0;
                                    /* double sums: against kcoll's blocking call only, so
                                     * only where kcoll runs both */
                                    if (kind == K_DOUBLE && !expect_kcoll(&j, ai > 0, min_bytes))
                                        continue;
                                    if (j.slen > maxb || j.rlen > maxb) {
                                        fprintf(stderr, "test_nonblocking: buffers too small\n");
                                        MPI_Abort(MPI_COMM_WORLD, 2);
                                    }
                                    for (int h = 0; h < 3; h++)
                                        for (int s = 0; s < 2; s++)
                                            j.b[h][s] = arena[h][s];
                                    j.tmp = arena_tmp;
                                    wd_note("%s %s, %s, %zu bytes (%s), root %d%s, %s",
                                            colls[c].row, names[shape], fam_algos[fam][ai],
                                            sizes[si], kind_names[kind], root,
                                            ip ? ", in place" : "",
                                            cmode_names[case_no % NCMODES]);
                                    const char *why = run_case(&j, ai, min_bytes);
                                    if (why)
                                        mt_fail("%s: %s %s, %s, %zu bytes of %s%s, root %d%s, "
                                                "min_bytes %zu, completed by %s",
                                                why, colls[c].row, names[shape],
                                                fam_algos[fam][ai], sizes[si], kind_names[kind],
                                                is_red(c) && kind == K_INT
                                                    ? (j.op == MPI_MAX ? " MAX" : " SUM")
                                                    : "",
                                                root, ip ? ", in place" : "", min_bytes,
                                                cmode_names[case_no % NCMODES]);
                                    else
                                        mt_pass();
                                    case_no++;
                                }
                    }
            }
            kcoll_param_set(fam_param[fam], "auto");
        }
    }
    kcoll_param_set("MIN_BYTES", "16384");
    wd_arm(0);
}

/* The non-commutative user operation, once per reduction (forced
 * partitioned: kcoll runs it), against the host and kcoll's blocking call. */
static void user_op(MPI_Comm comm)
{
    int p;
    MPI_Comm_size(comm, &p);
    kcoll_param_set("MIN_BYTES", "0");
    for (int c = REDUCE; c <= RS; c++) {
        const int fam = colls[c].fam;
        kcoll_param_set(fam_param[fam], "partitioned");
        job_t j;
        job_init(&j, c, comm, 1003, K_MAT, p - 1, c == ALLREDUCE, case_no);
        job_alloc(&j);
        wd_note("%s with a user operation", colls[c].row);
        const char *why = run_case(&j, 1, 0);
        if (why)
            mt_fail("%s: %s, non-commutative user operation (matrix product)%s", why,
                    colls[c].row, j.ip ? ", in place" : "");
        else
            mt_pass();
        case_no++;
        job_free(&j);
        kcoll_param_set(fam_param[fam], "auto");
    }
    kcoll_param_set("MIN_BYTES", "16384");
}

/* ---------------------------------------------------------------------- */
/* 2. Statuses */

static void statuses(MPI_Comm comm)
{
    int p;
    char b = 1;
    MPI_Request q;
    MPI_Comm_size(comm, &p);
    /* the host's own: a 1-byte broadcast, straight to PMPI */
    PMPI_Ibcast(&b, 1, MPI_BYTE, 0, comm, &q);
    PMPI_Wait(&q, &host_status);
    MPI_Status hb;
    PMPI_Ibarrier(comm, &q);
    PMPI_Wait(&q, &hb);
    const char *why = status_check(&hb, &host_status);
    if (why)
        mt_fail("the host's own statuses differ between MPI_Ibcast and MPI_Ibarrier: %s", why);
    /* kcoll's, through MPI_Wait and MPI_Request_get_status */
    kcoll_param_set("MIN_BYTES", "0");
    char buf[64];
    memset(buf, wrank, sizeof buf);
    const uint64_t k0 = kcoll_runs("MPI_Ibcast", F_BCAST);
    MPI_Status st, st2;
    MPI_Ibcast(buf, (int)sizeof buf, MPI_BYTE, 0, comm, &q);
    MPI_Wait(&q, &st);
    int flag = 0;
    MPI_Ibarrier(comm, &q);
    while (MPI_Request_get_status(q, &flag, &st2) == MPI_SUCCESS && !flag)
        sched_yield();
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    kcoll_param_set("MIN_BYTES", "16384");
    if (p > 1 && kcoll_runs("MPI_Ibcast", F_BCAST) != k0 + 1)
        mt_fail("status check: the 64-byte MPI_Ibcast did not run in kcoll");
    else if (p > 1 && ((why = status_check(&st, &host_status)) ||
                       (why = status_check(&st2, &host_status))))
        mt_fail("%s (kcoll source %d tag %d, host source %d tag %d)", why, st.MPI_SOURCE,
                st.MPI_TAG, host_status.MPI_SOURCE, host_status.MPI_TAG);
    else if (buf[0] != 0 || buf[63] != 0)
        mt_fail("status check: MPI_Ibcast result wrong");
    else
        mt_pass();
}

/* ---------------------------------------------------------------------- */
/* 3. Mixed arrays */

enum { MIX_WAITALL, MIX_TESTALL, MIX_WAITANY, MIX_TESTANY, MIX_WAITSOME, MIX_TESTSOME, NMIX };
static const char *const mix_names[NMIX] = {"MPI_Waitall", "MPI_Testall loop",
                                            "MPI_Waitany loop", "MPI_Testany loop",
                                            "MPI_Waitsome loop", "MPI_Testsome loop"};

/* Complete all n requests with one of the array functions; statuses go to
 * sts[i] by index. Returns NULL or what went wrong. */
static const char *complete_all(int how, int n, MPI_Request *reqs, MPI_Status *sts)
{
    int left = 0, rc = MPI_SUCCESS, seen[16] = {0};
    for (int i = 0; i < n; i++)
        left += reqs[i] != MPI_REQUEST_NULL;
    if (how == MIX_WAITALL)
        return MPI_Waitall(n, reqs, sts) == MPI_SUCCESS ? NULL : "MPI_Waitall failed";
    if (how == MIX_TESTALL) {
        int flag = 0;
        while ((rc = MPI_Testall(n, reqs, &flag, sts)) == MPI_SUCCESS && !flag)
            sched_yield();
        return rc == MPI_SUCCESS ? NULL : "MPI_Testall failed";
    }
    while (left > 0) {
        int idx = MPI_UNDEFINED, flag = 0, out = 0, ids[16];
        MPI_Status st, some[16];
        if (how == MIX_WAITANY || how == MIX_TESTANY) {
            rc = how == MIX_WAITANY ? (flag = 1, MPI_Waitany(n, reqs, &idx, &st))
                                    : MPI_Testany(n, reqs, &idx, &flag, &st);
            if (rc != MPI_SUCCESS)
                return "MPI_Waitany/MPI_Testany failed";
            if (!flag) {
                sched_yield();
                continue;
            }
            if (idx == MPI_UNDEFINED || idx < 0 || idx >= n || seen[idx]++)
                return "MPI_Waitany/MPI_Testany returned a bad or repeated index";
            sts[idx] = st;
            left--;
            continue;
        }
        rc = how == MIX_WAITSOME ? MPI_Waitsome(n, reqs, &out, ids, some)
                                 : MPI_Testsome(n, reqs, &out, ids, some);
        if (rc != MPI_SUCCESS)
            return "MPI_Waitsome/MPI_Testsome failed";
        if (out == MPI_UNDEFINED)
            return "MPI_Waitsome/MPI_Testsome returned MPI_UNDEFINED with active requests";
        if (out == 0)
            sched_yield();
        for (int k = 0; k < out; k++) {
            if (ids[k] < 0 || ids[k] >= n || seen[ids[k]]++)
                return "MPI_Waitsome/MPI_Testsome returned a bad or repeated index";
            sts[ids[k]] = some[k];
            left--;
        }
    }
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL)
            return "a completed request was not set to MPI_REQUEST_NULL";
    return NULL;
}

static void mixed(MPI_Comm comm, const char *cname)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    const int right = (rank + 1) % p, left = (rank + p - 1) % p;
    enum { J_BCAST, J_SMALL, J_ALLGATHER, J_ALLRED, J_BARRIER, NJ };
    for (int how = 0; how < NMIX; how++) {
        wd_note("mixed array of requests on %s completed by %s", cname, mix_names[how]);
        job_t jobs[NJ];
        /* 64 KiB broadcast (kcoll), 1-byte broadcast (host), 20 KiB blocks
         * (kcoll), 10 ints summed (host by rule), a barrier (kcoll) */
        job_init(&jobs[J_BCAST], BCAST, comm, 65536, K_BYTE, how % p, 0, 900000 + how);
        job_init(&jobs[J_SMALL], BCAST, comm, 1, K_BYTE, p - 1, 0, 900100 + how);
        job_init(&jobs[J_ALLGATHER], ALLGATHER, comm, 20000, K_BYTE, 0, 0, 900200 + how);
        job_init(&jobs[J_ALLRED], ALLREDUCE, comm, 10, K_INT, 0, 0, 900300 + how);
        job_init(&jobs[J_BARRIER], BARRIER, comm, 0, K_BYTE, 0, 0, 900400 + how);
        for (int i = 0; i < NJ; i++) {
            job_alloc(&jobs[i]);
            job_fill(&jobs[i]);
            job_issue(&jobs[i], HOST, NULL);
        }
        int sendv[64], recvv[64] = {0};
        for (int i = 0; i < 64; i++)
            sendv[i] = rank * 1000 + i + how;
        const uint64_t b_kc = kcoll_runs("MPI_Ibcast", F_BCAST) +
                              kcoll_runs("MPI_Iallgather", F_ALLGATHER) +
                              kcoll_runs("MPI_Ibarrier", F_BARRIER);
        const uint64_t b_host = host_runs("MPI_Ibcast") + host_runs("MPI_Iallreduce");
        /* the array: collectives in one order on every rank, point-to-point
         * between them, a null request */
        MPI_Request reqs[8];
        MPI_Status sts[8];
        job_issue(&jobs[J_BCAST], NB, &reqs[0]);
        MPI_Irecv(recvv, 64, MPI_INT, left, 7, comm, &reqs[1]);
        job_issue(&jobs[J_SMALL], NB, &reqs[2]);
        job_issue(&jobs[J_ALLGATHER], NB, &reqs[3]);
        MPI_Isend(sendv, 64, MPI_INT, right, 7, comm, &reqs[4]);
        job_issue(&jobs[J_ALLRED], NB, &reqs[5]);
        reqs[6] = MPI_REQUEST_NULL;
        job_issue(&jobs[J_BARRIER], NB, &reqs[7]);
        const char *why = complete_all(how, 8, reqs, sts);
        const uint64_t a_kc = kcoll_runs("MPI_Ibcast", F_BCAST) +
                              kcoll_runs("MPI_Iallgather", F_ALLGATHER) +
                              kcoll_runs("MPI_Ibarrier", F_BARRIER);
        const uint64_t a_host = host_runs("MPI_Ibcast") + host_runs("MPI_Iallreduce");
        int count = -1;
        if (!why)
            for (int i = 0; i < NJ && !why; i++)
                if (!job_same(&jobs[i], HOST, NB))
                    why = "a collective's result differs from the host MPI's";
        if (!why)
            for (int i = 0; i < 64 && !why; i++)
                if (recvv[i] != left * 1000 + i + how)
                    why = "the point-to-point message arrived wrong";
        if (!why) {
            MPI_Get_count(&sts[1], MPI_INT, &count);
            if (sts[1].MPI_SOURCE != left || sts[1].MPI_TAG != 7 || count != 64)
                why = "the MPI_Irecv's status is wrong";
        }
        /* kcoll's requests: a communicating host collective's status; the
         * host's: its own for the same call */
        MPI_Status small_st = HOST_STATUS_DEFINED ? host_nb_status(&jobs[J_SMALL]) : host_status;
        MPI_Status allred_st =
            HOST_STATUS_DEFINED ? host_nb_status(&jobs[J_ALLRED]) : host_status;
        for (int i = 0; i < 8 && !why && p > 1; i++)
            if (i == 0 || i == 3 || i == 7)
                why = status_check(&sts[i], &host_status);
        if (!why)
            why = status_check(&sts[2], &small_st);
        if (!why)
            why = status_check(&sts[5], &allred_st);
        if (!why && p > 1 && (a_kc != b_kc + 3 || a_host != b_host + 2))
            why = "statistics: expected 3 calls in kcoll and 2 in the host MPI";
        if (why)
            mt_fail("%s: mixed array on %s completed by %s", why, cname, mix_names[how]);
        else
            mt_pass();
        for (int i = 0; i < NJ; i++)
            job_free(&jobs[i]);
    }
}

/* ---------------------------------------------------------------------- */
/* 4. Many outstanding; blocking ones in between */

static const int many_colls[] = {BCAST,  SCATTER,   GATHER,    ALLGATHER, ALLTOALL,
                                 BARRIER, SCATTERV, GATHERV,   ALLGATHERV, ALLTOALLV,
                                 REDUCE, ALLREDUCE, RSB,       RS};
#define NMANY (int)(sizeof many_colls / sizeof many_colls[0])

/* n collectives of rotating families and roots started on comm (on comm
 * and other in turn, if they differ), then completed in reverse order
 * (with rotating completion functions). */
static void many(MPI_Comm comm, MPI_Comm other, const char *cname, int n)
{
    int p, q;
    MPI_Comm_size(comm, &p);
    MPI_Comm_size(other, &q);
    wd_note("%d outstanding collectives on %s", n, cname);
    kcoll_param_set("MIN_BYTES", "0");
    kcoll_param_set("REDUCE_ALGO", "partitioned");
    kcoll_param_set("ALLREDUCE_ALGO", "partitioned");
    job_t *jobs = calloc((size_t)n, sizeof *jobs);
    MPI_Request *reqs = malloc((size_t)n * sizeof *reqs);
    for (int i = 0; i < n; i++) {
        const int c = many_colls[i % NMANY];
        const int kind = is_red(c) ? K_INT : K_BYTE;
        /* blocks of 16 KiB + 3 and more, distinct per call */
        const int bytes = 16384 + 3 + 97 * i;
        MPI_Comm on = i % 2 ? other : comm;
        job_init(&jobs[i], c, on, kind == K_INT ? bytes / 4 : bytes, kind,
                 (i * 5 + 1) % (i % 2 ? q : p), 0, 800000 + i);
        job_alloc(&jobs[i]);
        job_fill(&jobs[i]);
        job_issue(&jobs[i], HOST, NULL);
    }
    uint64_t kc0, host0, kc1, host1;
    all_runs(&kc0, &host0);
    for (int i = 0; i < n; i++)
        job_issue(&jobs[i], NB, &reqs[i]);
    const char *why = NULL;
    for (int i = n - 1; i >= 0 && !why; i--) {
        MPI_Status st;
        why = complete(&reqs[i], i % NCMODES, &st, p > 1);
    }
    all_runs(&kc1, &host1);
    int bad = -1;
    for (int i = 0; i < n && !why; i++)
        if (!job_same(&jobs[i], HOST, NB)) {
            why = "result differs from the host MPI's";
            bad = i;
        }
    if (!why && p > 1 && q > 1 && (kc1 != kc0 + (uint64_t)n || host1 != host0))
        why = "not every call ran in kcoll";
    if (why)
        mt_fail("%s: %d outstanding on %s, completed in reverse order (call %d: %s)", why, n,
                cname, bad, bad >= 0 ? colls[jobs[bad].c].row : "-");
    else
        mt_pass();
    for (int i = 0; i < n; i++)
        job_free(&jobs[i]);
    free(jobs);
    free(reqs);
    kcoll_param_set("REDUCE_ALGO", "auto");
    kcoll_param_set("ALLREDUCE_ALGO", "auto");
    kcoll_param_set("MIN_BYTES", "16384");
}

/* Non-blocking and blocking collectives interleaved on one communicator:
 * I, B, I, B, I, B, B, then the non-blocking ones completed in one call. */
static void interleaved(MPI_Comm comm, const char *cname)
{
    int p;
    MPI_Comm_size(comm, &p);
    wd_note("blocking collectives between non-blocking ones on %s", cname);
    kcoll_param_set("MIN_BYTES", "0");
    kcoll_param_set("ALLREDUCE_ALGO", "partitioned");
    static const int seq[] = {BCAST,     ALLREDUCE, GATHER, BCAST,
                              ALLTOALLV, BARRIER,   RSB,    ALLGATHERV};
    static const int blocking[] = {0, 1, 0, 1, 0, 1, 1, 0};
    enum { N = 8 };
    job_t jobs[N];
    MPI_Request reqs[N];
    for (int i = 0; i < N; i++) {
        const int kind = is_red(seq[i]) ? K_INT : K_BYTE;
        job_init(&jobs[i], seq[i], comm, kind == K_INT ? 5000 + i : 20000 + 11 * i, kind, i % p,
                 0, 700000 + i);
        job_alloc(&jobs[i]);
        job_fill(&jobs[i]);
        job_issue(&jobs[i], HOST, NULL);
    }
    int rc = MPI_SUCCESS;
    for (int i = 0; i < N; i++) {
        reqs[i] = MPI_REQUEST_NULL;
        int r = blocking[i] ? job_issue(&jobs[i], KB, NULL) : job_issue(&jobs[i], NB, &reqs[i]);
        if (r != MPI_SUCCESS)
            rc = r;
    }
    MPI_Status sts[N];
    if (MPI_Waitall(N, reqs, sts) != MPI_SUCCESS)
        rc = MPI_ERR_OTHER;
    const char *why = rc != MPI_SUCCESS ? "an MPI call returned an error" : NULL;
    for (int i = 0; i < N && !why; i++)
        if (!job_same(&jobs[i], HOST, blocking[i] ? KB : NB))
            why = blocking[i] ? "a blocking call's result differs from the host MPI's"
                              : "a non-blocking call's result differs from the host MPI's";
    if (why)
        mt_fail("%s: blocking and non-blocking interleaved on %s", why, cname);
    else
        mt_pass();
    for (int i = 0; i < N; i++)
        job_free(&jobs[i]);
    kcoll_param_set("ALLREDUCE_ALGO", "auto");
    kcoll_param_set("MIN_BYTES", "16384");
}

/* ---------------------------------------------------------------------- */
/* 5. MPI_Request_free after MPI_Request_get_status */

static void free_after_status(MPI_Comm comm)
{
    job_t j;
    int p;
    MPI_Comm_size(comm, &p);
    wd_note("MPI_Request_free after MPI_Request_get_status");
    job_init(&j, ALLGATHER, comm, 30000, K_BYTE, 0, 0, 600000);
    job_alloc(&j);
    job_fill(&j);
    job_issue(&j, HOST, NULL);
    const uint64_t k0 = kcoll_runs("MPI_Iallgather", F_ALLGATHER);
    MPI_Request q;
    MPI_Status st;
    int flag = 0, rc = job_issue(&j, NB, &q);
    while (rc == MPI_SUCCESS && (rc = MPI_Request_get_status(q, &flag, &st)) == MPI_SUCCESS &&
           !flag)
        sched_yield();
    /* the request stays valid after MPI_Request_get_status: a second look */
    if (rc == MPI_SUCCESS)
        rc = MPI_Request_get_status(q, &flag, &st);
    /* one rank: the host's request, which MPICH refuses to free */
    if (rc == MPI_SUCCESS)
        rc = p > 1 ? MPI_Request_free(&q) : MPI_Wait(&q, MPI_STATUS_IGNORE);
    const char *why = NULL;
    if (rc != MPI_SUCCESS || !flag)
        why = "an MPI call returned an error";
    else if (q != MPI_REQUEST_NULL)
        why = "MPI_Request_free did not set the request to MPI_REQUEST_NULL";
    else if (!job_same(&j, HOST, NB))
        why = "result differs from the host MPI's";
    else if (p > 1 && kcoll_runs("MPI_Iallgather", F_ALLGATHER) != k0 + 1)
        why = "kcoll did not run";
    else if (p > 1)
        why = status_check(&st, &host_status);
    if (why)
        mt_fail("%s: MPI_Request_free after MPI_Request_get_status", why);
    else
        mt_pass();
    job_free(&j);
    /* everybody has freed its request before the next collectives */
    MPI_Barrier(comm);
}

/* ---------------------------------------------------------------------- */
/* 6. A rank computes before it waits */

static void spin_seconds(double s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < s);
}

static void late_waiter(MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    wd_note("rank 0 computes 0.5 s between its starts and its wait");
    job_t j[2];
    MPI_Request q[2];
    job_init(&j[0], BCAST, comm, 262144 + 5, K_BYTE, 0, 0, 500000);
    job_init(&j[1], ALLGATHER, comm, 16384 + 3, K_BYTE, 0, 0, 500001);
    for (int i = 0; i < 2; i++) {
        job_alloc(&j[i]);
        job_fill(&j[i]);
        job_issue(&j[i], HOST, NULL);
    }
    int rc = job_issue(&j[0], NB, &q[0]);
    if (rc == MPI_SUCCESS)
        rc = job_issue(&j[1], NB, &q[1]);
    if (rank == 0)
        spin_seconds(0.5); /* no MPI call meanwhile */
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++)
        rc = MPI_Wait(&q[i], MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || !job_same(&j[0], HOST, NB) || !job_same(&j[1], HOST, NB))
        mt_fail("a late waiter: result wrong or an error");
    else
        mt_pass();
    for (int i = 0; i < 2; i++)
        job_free(&j[i]);
}

/* ---------------------------------------------------------------------- */
/* 7. Progress while a rank blocks elsewhere */

static void progress_cases(MPI_Comm comm)
{
    int p, rank, token = 0;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    if (p < 2)
        return;
    MPI_Request q;
    /* a: MPI_Ibarrier; 0 sends to 1 and 1 receives; then MPI_Wait */
    wd_note("progress: MPI_Ibarrier, MPI_Send/MPI_Recv, MPI_Wait");
    wd_arm(60);
    MPI_Ibarrier(comm, &q);
    if (rank == 0)
        MPI_Send(&rank, 1, MPI_INT, 1, 11, comm);
    else if (rank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 11, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    mt_pass();

    /* b: 0 waits for the barrier before it sends; 1 receives before it
     * waits: the barrier completes only if 1's part advances in MPI_Recv */
    wd_note("progress: 0 MPI_Ibarrier, MPI_Wait, MPI_Send; 1 MPI_Ibarrier, MPI_Recv, MPI_Wait");
    wd_arm(60);
    MPI_Ibarrier(comm, &q);
    if (rank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 12, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (rank == 0)
        MPI_Send(&rank, 1, MPI_INT, 1, 12, comm);
    mt_pass();

    /* c: a 256 KiB broadcast from 1 (the root writes: direct_write) while 1
     * blocks in MPI_Recv for a message 0 sends only after its MPI_Wait */
    wd_note("progress: MPI_Ibcast whose root blocks in MPI_Recv (direct_write)");
    wd_arm(60);
    kcoll_param_set("BCAST_ALGO", "direct_write");
    job_t j;
    job_init(&j, BCAST, comm, 262144 + 5, K_BYTE, 1, 0, 400000);
    job_alloc(&j);
    job_fill(&j);
    job_issue(&j, HOST, NULL);
    uint64_t k0 = kcoll_runs("MPI_Ibcast", F_BCAST);
    job_issue(&j, NB, &q);
    if (rank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 13, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (rank == 0)
        MPI_Send(&rank, 1, MPI_INT, 1, 13, comm);
    kcoll_param_set("BCAST_ALGO", "auto");
    if (!job_same(&j, HOST, NB) || kcoll_runs("MPI_Ibcast", F_BCAST) != k0 + 1)
        mt_fail("progress: MPI_Ibcast whose root blocks in MPI_Recv: wrong result or not kcoll");
    else
        mt_pass();
    job_free(&j);

    /* d: 0 starts a broadcast (kcoll), then a small MPI_Allreduce (host)
     * before its MPI_Wait; the others wait for the broadcast first */
    wd_note("progress: MPI_Ibcast (kcoll), MPI_Allreduce (host) before MPI_Wait on rank 0");
    wd_arm(60);
    job_init(&j, BCAST, comm, 262144 + 5, K_BYTE, 0, 0, 400001);
    job_alloc(&j);
    job_fill(&j);
    job_issue(&j, HOST, NULL);
    k0 = kcoll_runs("MPI_Ibcast", F_BCAST);
    const uint64_t h0 = host_runs("MPI_Allreduce");
    int one = rank + 1, sum = 0;
    job_issue(&j, NB, &q);
    if (rank == 0) {
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    }
    if (!job_same(&j, HOST, NB) || sum != p * (p + 1) / 2 ||
        kcoll_runs("MPI_Ibcast", F_BCAST) != k0 + 1 || host_runs("MPI_Allreduce") != h0 + 1)
        mt_fail("progress: MPI_Ibcast around a host MPI_Allreduce: wrong result or path");
    else
        mt_pass();
    job_free(&j);
    wd_arm(0);
}

/* ---------------------------------------------------------------------- */
/* 8. A communicator without a team yet */

static void no_team(void)
{
    MPI_Comm comm;
    MPI_Request q;
    int p;
    wd_note("a communicator made by MPI_Comm_idup");
    MPI_Comm_idup(MPI_COMM_WORLD, &comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Comm_size(comm, &p);
    const char *paths[3] = {"mpi:no_team", "kcoll", "kcoll"};
    for (int i = 0; i < 3; i++) {
        job_t j;
        job_init(&j, BCAST, comm, 65536, K_BYTE, i % p, 0, 300000 + i);
        job_alloc(&j);
        job_fill(&j);
        job_issue(&j, HOST, NULL);
        const uint64_t k0 = kcoll_runs("MPI_Ibcast", F_BCAST) + kcoll_runs("MPI_Bcast", F_BCAST);
        const uint64_t n0 = mt_calls("MPI_Ibcast", "mpi:no_team");
        int rc;
        if (i == 1) { /* a blocking one sets the team up */
            rc = job_issue(&j, KB, NULL);
            memcpy(j.b[NB][1], j.b[KB][1], j.rlen + CANARY);
        } else {
            rc = job_issue(&j, NB, &q);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        const uint64_t k1 = kcoll_runs("MPI_Ibcast", F_BCAST) + kcoll_runs("MPI_Bcast", F_BCAST);
        const uint64_t n1 = mt_calls("MPI_Ibcast", "mpi:no_team");
        const int want_kcoll = p > 1 && i > 0;
        if (rc != MPI_SUCCESS || !job_same(&j, HOST, NB))
            mt_fail("MPI_Comm_idup communicator, call %d: wrong result or an error", i);
        else if (p > 1 && (k1 != k0 + (uint64_t)want_kcoll || n1 != n0 + (uint64_t)(i == 0)))
            mt_fail("MPI_Comm_idup communicator, call %d: expected %s", i, paths[i]);
        else
            mt_pass();
        job_free(&j);
    }
    MPI_Comm_free(&comm);
}

/* ---------------------------------------------------------------------- */
/* 9. Derived datatypes: a vector runs on kcoll's path through its
 * datatype map, also when the program frees the datatype before the
 * request completes (MPI allows that: the request keeps its own copy of
 * the map) and when ranks lay the same bytes out differently (a vector on
 * odd ranks, twice as many ints on even ones, MPI_Ibcast); a darray, which
 * kcoll does not map, goes to the host MPI at the start
 * (mpi:noncontig_datatype). All against the host's result. */

static void noncontig(MPI_Comm comm)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    wd_note("non-blocking calls with derived datatypes");
    const int count = 3000; /* 24000 bytes of data, above KCOLL_MIN_BYTES */
    const size_t one = (size_t)count * 16, all = one * (size_t)p; /* extent <= 16 */
    char *ref = malloc(all + CANARY), *got = malloc(all + CANARY), *send = malloc(one + CANARY);
    static const char *const kinds[] = {"vector", "vector or 2 x int", "darray"};
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < (k == 1 ? 1 : 2); c++) {
            const char *row = c ? "MPI_Iallgather" : "MPI_Ibcast";
            MPI_Datatype t, mine;
            if (k == 2) {
                t = mt_unmapped_type();
            } else {
                MPI_Type_vector(2, 1, 2, MPI_INT, &t); /* 2 ints of every 3 */
                MPI_Type_commit(&t);
            }
            mine = t;
            int n = count;
            if (k == 1 && rank % 2 == 0) {
                mine = MPI_INT;
                n = 2 * count;
            }
            const size_t span = (c ? all : one) + CANARY;
            fill(ref, span, K_BYTE, (uint64_t)(rank * 3 + c + 1));
            fill(send, one + CANARY, K_BYTE, (uint64_t)(rank * 3 + c + 2));
            memcpy(got, ref, span);
            const char *path = k == 2 ? "mpi:noncontig_datatype" : "kcoll:*";
            const uint64_t n0 = mt_calls(row, path);
            MPI_Request q;
            int rc;
            if (c) {
                PMPI_Allgather(send, n, mine, ref, n, mine, comm);
                rc = MPI_Iallgather(send, n, mine, got, n, mine, comm, &q);
            } else {
                PMPI_Bcast(ref, n, mine, p - 1, comm);
                rc = MPI_Ibcast(got, n, mine, p - 1, comm, &q);
            }
            MPI_Type_free(&t); /* before the request completes */
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
            const uint64_t n1 = mt_calls(row, path);
            if (rc != MPI_SUCCESS || memcmp(ref, got, span))
                mt_fail("%s with a %s datatype: wrong result or an error", row, kinds[k]);
            else if (p > 1 && n1 != n0 + 1)
                mt_fail("%s with a %s datatype: not counted as %s", row, kinds[k], path);
            else
                mt_pass();
        }
    free(ref);
    free(got);
    free(send);
}

/* 10. MPI_Iscatterv and MPI_Igatherv of a datatype kcoll cannot address (a
 * darray) on every rank, where rank 0 has nothing to move: each rank
 * decides at the start on its own, so rank 0 too must give the call to the
 * host MPI (judging its datatype although its count is 0); running kcoll's
 * protocol alone it would wait for ever (the watchdog names that). Against
 * the host's result; kcoll must count the call on no rank. */
static void zero_count_unmapped(MPI_Comm comm)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    wd_note("non-blocking rooted v-variants of a darray, nothing to move on rank 0");
    const int n = 1500, root = p - 1;
    MPI_Datatype t = mt_unmapped_type();
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    int counts[MAXP], displs[MAXP];
    for (int q = 0; q < p; q++) {
        counts[q] = q == 0 ? 0 : n;
        displs[q] = q * n;
    }
    const size_t all = (size_t)p * (size_t)n * (size_t)ext + CANARY;
    const size_t one = (size_t)n * (size_t)ext + CANARY;
    char *rref = malloc(all), *rgot = malloc(all), *oref = malloc(one), *ogot = malloc(one);
    for (int c = 0; c < 2; c++) {
        const char *row = c ? "MPI_Igatherv" : "MPI_Iscatterv";
        fill(rref, all, K_BYTE, (uint64_t)(rank * 5 + c + 11));
        fill(oref, one, K_BYTE, (uint64_t)(rank * 5 + c + 13));
        memcpy(rgot, rref, all);
        memcpy(ogot, oref, one);
        const uint64_t k0 = mt_calls(row, "kcoll:*");
        MPI_Request q;
        int rc;
        if (c) {
            PMPI_Gatherv(oref, counts[rank], t, rref, counts, displs, t, root, comm);
            rc = MPI_Igatherv(ogot, counts[rank], t, rgot, counts, displs, t, root, comm, &q);
        } else {
            PMPI_Scatterv(rref, counts, displs, t, oref, counts[rank], t, root, comm);
            rc = MPI_Iscatterv(rgot, counts, displs, t, ogot, counts[rank], t, root, comm, &q);
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || memcmp(rref, rgot, all) || memcmp(oref, ogot, one))
            mt_fail("%s of a darray, nothing on rank 0: wrong result or an error", row);
        else if (mt_calls(row, "kcoll:*") != k0)
            mt_fail("%s of a darray, nothing on rank 0: kcoll ran it on this rank", row);
        else
            mt_pass();
    }
    MPI_Type_free(&t);
    free(rref);
    free(rgot);
    free(oref);
    free(ogot);
}

/* 11. KCOLL_ALLTOALL_ALGO changed (alike on every rank) between the start
 * of an MPI_Ialltoallv, whose size only its agreement tells, and its wait,
 * while rank 1 has completed the agreement before the change (an MPI_Test
 * between two host barriers) and the others, without a progress hook in
 * the host MPI (MPICH), only after it: every rank must run the algorithm
 * forced at the start. Against the host's result (the watchdog names a
 * hang). */
static void algo_changed_before_wait(MPI_Comm comm)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    wd_note("MPI_Ialltoallv whose forced algorithm changes before its wait");
    const int n = 3000; /* ints per block */
    int counts[MAXP], displs[MAXP];
    for (int q = 0; q < p; q++) {
        counts[q] = n;
        displs[q] = q * n;
    }
    const size_t len = (size_t)p * (size_t)n * sizeof(int) + CANARY;
    char *send = malloc(len), *ref = malloc(len), *got = malloc(len);
    fill(send, len, K_BYTE, (uint64_t)rank + 21);
    fill(ref, len, K_BYTE, 22);
    memcpy(got, ref, len);
    kcoll_param_set("MIN_BYTES", "0");
    kcoll_param_set("ALLTOALL_ALGO", "pairwise");
    PMPI_Alltoallv(send, counts, displs, MPI_INT, ref, counts, displs, MPI_INT, comm);
    MPI_Request q;
    int rc = MPI_Ialltoallv(send, counts, displs, MPI_INT, got, counts, displs, MPI_INT, comm, &q);
    PMPI_Barrier(comm);
    if (rank == 1 && rc == MPI_SUCCESS) {
        int flag;
        rc = MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    }
    PMPI_Barrier(comm);
    kcoll_param_set("ALLTOALL_ALGO", "bruck");
    if (rc == MPI_SUCCESS && q != MPI_REQUEST_NULL)
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || memcmp(ref, got, len))
        mt_fail("MPI_Ialltoallv with its algorithm changed before the wait: wrong result or an error");
    else
        mt_pass();
    kcoll_param_set("ALLTOALL_ALGO", "auto");
    kcoll_param_set("MIN_BYTES", "16384");
    free(send);
    free(ref);
    free(got);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    quick = argc > 1 && !strcmp(argv[1], "-q");
    wd_init("test_nonblocking");
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize > MAXP) {
        if (wrank == 0)
            fprintf(stderr, "test_nonblocking: at most %d ranks\n", MAXP);
        MPI_Finalize();
        return 1;
    }
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    MPI_Op_create(matmul, 0, &matmul_op);

    MPI_Comm comms[MT_NSHAPES];
    const char *names[MT_NSHAPES];
    mt_shapes(comms, names);
    /* the largest call: p blocks of 256 KiB + 5 doubles (8 bytes for each 4
     * of the int32 size), with gaps */
    maxb = (size_t)wsize * 2 * (262144 + 64) + 4096;
    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 2; s++)
            arena[h][s] = malloc(maxb + CANARY);
    arena_tmp = malloc(maxb + CANARY);

    wd_arm(120);
    statuses(MPI_COMM_WORLD);
    matrix(comms, names);
    wd_arm(120);
    user_op(comms[3]);
    for (int shape = 0; shape < (quick ? 1 : MT_NSHAPES); shape += 3) {
        mixed(comms[shape], names[shape]);
        many(comms[shape], comms[shape], names[shape], 16);
        interleaved(comms[shape], names[shape]);
    }
    many(comms[1], comms[1], names[1], 40);
    many(comms[0], comms[1], "world and dup in turn", 24);
    free_after_status(comms[3]);
    late_waiter(MPI_COMM_WORLD);
    no_team();
    noncontig(comms[3]);
    if (wsize > 1)
        zero_count_unmapped(comms[3]);
    if (wsize > 1)
        algo_changed_before_wait(MPI_COMM_WORLD);
    /* last: a hang here aborts the run */
    progress_cases(MPI_COMM_WORLD);
    wd_arm(0);

    /* every non-blocking row counted its fallbacks */
    for (int c = 0; c < NCOLL; c++) {
        if (wsize == 1 && mt_calls(colls[c].row, "mpi:one_rank") == 0)
            mt_fail("%s: no call counted as mpi:one_rank", colls[c].row);
        if (wsize > 1 && c != BARRIER && c != SCATTERV && c != GATHERV && c != ALLTOALLV &&
            mt_calls(colls[c].row, "mpi:below_min_bytes") == 0)
            mt_fail("%s: no call counted as mpi:below_min_bytes", colls[c].row);
    }

    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 2; s++)
            free(arena[h][s]);
    free(arena_tmp);
    mt_free_shapes(comms);
    MPI_Op_free(&matmul_op);
    MPI_Type_free(&mat_t);
    int rc = mt_finish("test_nonblocking");
    MPI_Finalize();
    return rc;
}
