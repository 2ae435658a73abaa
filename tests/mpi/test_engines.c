/* Every collective and every algorithm through each transfer engine forced
 * (KCOLL_ENGINE when the communicator is made: docs/engines.md), against
 * the host MPI's own result, byte for byte.
 *
 * For each engine named on the command line (default: shm), the program
 * makes a communicator with KCOLL_ENGINE set to it (a duplicate of
 * MPI_COMM_WORLD, and from 3 ranks on a split with the ranks reversed),
 * then runs every collective (the v-variants and the reductions included)
 * with every algorithm of its family forced (the topology trees among
 * them: at 3 ranks on a synthetic two-package node, test CMake file) and auto, at sizes of a few
 * bytes, a few pages and more than two bounce cells, the first and the
 * last rank as root, in place for every other case, blocking, and every
 * third case also non-blocking (completed with MPI_Wait), with KCOLL_MIN_BYTES=0 so that
 * kcoll takes every call. A case passes when both kcoll calls leave the
 * buffers exactly as the host's PMPI_* call does (canaries included) and
 * the forced algorithm's statistics row counted the blocking call. At the
 * end the statistics' transfers row must show bytes on the engine under
 * test and, where the engine is forced (all but direct), on no other. The
 * matrix is thin by design: this runs once per engine for both MPIs; the
 * full matrices run on the default engine (test_bcast, test_reduce...).
 *
 * direct (--alloc-mem, or the engine "direct"): kcoll's buffers come from
 * MPI_Alloc_mem, so that peers can map them. */
#include "nbjob.h"

static const size_t sizes[] = {3, 12289, 139267}; /* bytes */
/* the algorithms nbjob.h's lists leave out: the topology trees (flat on
 * a team without levels; with KCOLL_TOPO_SYNTHETIC, on the levels) */
static const char *const more_algos[NFAM] = {[F_BCAST] = "hier", [F_BARRIER] = "hier",
                                             [F_ALLREDUCE] = "hier"};

/* Algorithm a of family fam: nbjob.h's list, then more_algos; NULL after
 * the last. */
static const char *algo_at(int fam, int a)
{
    int n = 0;
    while (n < 8 && fam_algos[fam][n])
        n++;
    return a < n ? fam_algos[fam][a] : a == n ? more_algos[fam] : NULL;
}
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static int alloc_mem;

/* kcoll's two sets (KB, NB) from MPI_Alloc_mem with --alloc-mem. */
static void alloc_job(job_t *j)
{
    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 2; s++) {
            size_t len = (s ? j->rlen : j->slen) + CANARY;
            if (alloc_mem && h != HOST)
                MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &j->b[h][s]);
            else
                j->b[h][s] = malloc(len);
        }
    j->tmp = malloc(j->slen + j->rlen + CANARY);
    j->owned = 0;
}

static void free_job(job_t *j)
{
    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 2; s++) {
            if (alloc_mem && h != HOST)
                MPI_Free_mem(j->b[h][s]);
            else
                free(j->b[h][s]);
        }
    free(j->tmp);
}

static uint64_t engine_bytes(const char *engine)
{
    char path[64];
    uint64_t calls = 0, bytes = 0;
    snprintf(path, sizeof path, "engine:%s", engine);
    kcoll_stats_get("transfers", path, &calls, &bytes);
    return bytes;
}

/* One case: collective c, algorithm spec algo of its family. */
static void run_case(MPI_Comm comm, const char *engine, const char *shape, int c,
                     const char *algo, int si, int root, int ip, long id, int nonblocking)
{
    const int fam = colls[c].fam;
    const int kind = is_red(c) ? K_INT : K_BYTE;
    const size_t es = (size_t)kind_size[kind];
    int n = (int)((sizes[si] + es - 1) / es);
    job_t j;
    job_init(&j, c, comm, n, kind, root, ip && has_in_place(c), id);
    alloc_job(&j);
    job_fill(&j);
    kcoll_param_set(fam_param[fam], algo);
    wd_note("test_engines: %s on %s, %s %s, %zu bytes, root %d, in place %d%s", engine, shape,
            colls[c].name, algo, sizes[si], root, j.ip, nonblocking ? ", also non-blocking" : "");
    char path[64];
    snprintf(path, sizeof path, "kcoll:%.*s", (int)strcspn(algo, ":"), algo);
    const int forced = strcmp(algo, "auto") != 0;
    uint64_t before = forced ? mt_calls(colls[c].name, path) : kcoll_runs(colls[c].name, fam);
    int rc1 = job_issue(&j, HOST, NULL);
    int rc2 = job_issue(&j, KB, NULL);
    uint64_t after = forced ? mt_calls(colls[c].name, path) : kcoll_runs(colls[c].name, fam);
    int rc3 = MPI_SUCCESS;
    if (nonblocking) {
        MPI_Request req;
        rc3 = job_issue(&j, NB, &req);
        if (rc3 == MPI_SUCCESS)
            rc3 = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    const char *why = NULL;
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS || rc3 != MPI_SUCCESS)
        why = "an MPI error";
    else if (!job_same(&j, HOST, KB))
        why = "the blocking call's buffers differ from the host's";
    else if (nonblocking && !job_same(&j, HOST, NB))
        why = "the non-blocking call's buffers differ from the host's";
    else if (j.p > 1 && after != before + 1)
        why = "the call was not counted on kcoll's (forced) algorithm";
    if (why)
        mt_fail("%s on %s: %s %s, %zu bytes, root %d, in place %d: %s", engine, shape,
                colls[c].name, algo, sizes[si], root, j.ip, why);
    else
        mt_pass();
    free_job(&j);
}

static void run_engine(const char *engine, int p)
{
    MPI_Comm comms[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
    const char *shapes[2] = {"a duplicate of MPI_COMM_WORLD", "a split with the ranks reversed"};
    int wr;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    kcoll_param_set("ENGINE", engine);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    if (p >= 3)
        MPI_Comm_split(MPI_COMM_WORLD, 0, p - wr, &comms[1]);
    kcoll_param_set("ENGINE", "auto");
    uint64_t mine0 = engine_bytes(engine), cma0 = engine_bytes("cma"),
             shm0 = engine_bytes("shm"), vms0 = engine_bytes("vmsplice");
    long id = 0;
    for (int s = 0; s < 2; s++) {
        if (comms[s] == MPI_COMM_NULL)
            continue;
        for (int c = 0; c < NCOLL; c++) {
            const int fam = colls[c].fam;
            for (int a = 0; algo_at(fam, a); a++)
                for (int si = 0; si < NSIZES; si++) {
                    /* the first and the last rank as root (rooted ones) */
                    for (int root = 0; root < p; root += p > 1 ? p - 1 : 1, id++) {
                        if (!rooted(c) && root > 0)
                            continue;
                        /* the second shape: one size per algorithm */
                        if (s == 1 && si != (a + c) % NSIZES)
                            continue;
                        run_case(comms[s], engine, shapes[s], c, algo_at(fam, a), si, root,
                                 (int)(id % 2), id, id % 3 == 0);
                    }
                }
            kcoll_param_set(fam_param[fam], "auto");
        }
    }
    /* the engine moved the bytes; a forced one all of them */
    uint64_t mine = engine_bytes(engine) - mine0, cma = engine_bytes("cma") - cma0,
             shm = engine_bytes("shm") - shm0, vms = engine_bytes("vmsplice") - vms0;
    uint64_t others = (strcmp(engine, "cma") ? cma : 0) + (strcmp(engine, "shm") ? shm : 0) +
                      (strcmp(engine, "vmsplice") ? vms : 0);
    if (p > 1 && (mine == 0 || (strcmp(engine, "direct") && others)))
        mt_fail("KCOLL_ENGINE=%s: %llu bytes through it, %llu through others", engine,
                (unsigned long long)mine, (unsigned long long)others);
    else
        mt_pass();
    for (int s = 0; s < 2; s++)
        if (comms[s] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[s]);
}

/* One Allreduce of n ints on comm, by kcoll and by the host MPI, blocking
 * and non-blocking, in place or not: 0 when all agree byte for byte. */
static int percall_allreduce(MPI_Comm comm, int n, int seed, int in_place)
{
    const size_t len = (size_t)n * sizeof(int);
    int *in = malloc(len + 1), *out = malloc(len + 1), *nb = malloc(len + 1),
        *ref = malloc(len + 1);
    int rank, bad = !in || !out || !nb || !ref;
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; !bad && i < n; i++)
        in[i] = (i * 7 + seed) ^ (rank * 131);
    if (!bad) {
        MPI_Request req;
        const void *send = in_place ? MPI_IN_PLACE : in;
        if (in_place) {
            memcpy(out, in, len);
            memcpy(nb, in, len);
        }
        bad |= PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
        bad |= MPI_Allreduce(send, out, n, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
        bad |= MPI_Iallreduce(send, nb, n, MPI_INT, MPI_SUM, comm, &req) != MPI_SUCCESS ||
               MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS;
        bad |= memcmp(out, ref, len) || memcmp(nb, ref, len);
    }
    free(in);
    free(out);
    free(nb);
    free(ref);
    return bad;
}

/* One engine per call (docs/engines.md): a communicator on cma
 * (KCOLL_ENGINE=auto) runs the Allreduce sizes the built-in tuning pins
 * on shm at 2 ranks (8 KiB, 64-256 KiB; odd sizes, in place too) through
 * the two-copy engine and the others through cma, with the host's
 * results (count 0 too); with
 * KCOLL_SHM_PERCALL=0 every call through cma; at other process counts no
 * rule applies and the model keeps cma. Needs cross-memory attach. */
static void run_percall(int p)
{
    static const struct {
        int bytes;
        int shm; /* at 2 ranks, with the bounce memory budget */
        int in_place;
    } cases[] = {{8192, 1, 0},    {8204, 1, 1},  {98304, 1, 0}, {98308, 1, 1},
                 {1 << 20, 0, 0}, {32768, 0, 1}, {0, 0, 0}};
    const uint64_t probe0 = engine_bytes("cma");
    if (percall_allreduce(MPI_COMM_WORLD, (1 << 20) / 4, 0, 0) == 0 && p > 1 &&
        engine_bytes("cma") == probe0) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            printf("test_engines: one engine per call skipped: cross-memory attach is not "
                   "in use here\n");
        return;
    }
    for (int budget = 1; budget >= 0; budget--) {
        MPI_Comm comm;
        kcoll_param_set("SHM_PERCALL", budget ? "4MiB" : "0");
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        kcoll_param_set("SHM_PERCALL", "4MiB");
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const uint64_t cma0 = engine_bytes("cma"), shm0 = engine_bytes("shm");
            wd_note("test_engines: one engine per call, budget %d, %d bytes, in place %d", budget,
                    cases[k].bytes, cases[k].in_place);
            int bad = percall_allreduce(comm, cases[k].bytes / 4, (int)k, cases[k].in_place);
            const uint64_t cma = engine_bytes("cma") - cma0, shm = engine_bytes("shm") - shm0;
            const int want_shm = budget && p == 2 && cases[k].shm;
            if (bad)
                mt_fail("one engine per call: Allreduce of %d bytes (budget %d, in place %d) "
                        "differs from the host's",
                        cases[k].bytes, budget, cases[k].in_place);
            else if (p > 1 && cases[k].bytes && (want_shm ? !shm || cma : shm || !cma))
                mt_fail("one engine per call: Allreduce of %d bytes (budget %d) moved %llu "
                        "bytes on shm and %llu on cma; want all on %s",
                        cases[k].bytes, budget, (unsigned long long)shm, (unsigned long long)cma,
                        want_shm ? "shm" : "cma");
            else
                mt_pass();
        }
        MPI_Comm_free(&comm);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wd_init("test_engines");
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    MPI_Op_create(matmul, 0, &matmul_op);
    kcoll_param_set("MIN_BYTES", "0");
    int nengines = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--alloc-mem")) {
            alloc_mem = 1;
            continue;
        }
        if (!strcmp(argv[i], "direct"))
            alloc_mem = 1;
        nengines++;
    }
    wd_arm(600);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--alloc-mem"))
            run_engine(argv[i], p);
    if (!nengines)
        run_engine("shm", p);
    run_percall(p);
    wd_arm(0);
    MPI_Op_free(&matmul_op);
    MPI_Type_free(&mat_t);
    int rc = mt_finish("test_engines");
    MPI_Finalize();
    return rc;
}
