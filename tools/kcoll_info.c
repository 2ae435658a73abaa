/* kcoll-info: what kcoll would do on this machine, and why.
 *
 * It prints, in this order:
 *   1. kcoll's version and the MPI it was built against (the first line of
 *      MPI_Get_library_version, which MPI allows before MPI_Init; kcoll-info
 *      never initializes MPI, so it runs without a launcher);
 *   2. whether cross-memory attach works here: two forked sibling processes,
 *      like two ranks under a launcher, one reading the other's private
 *      memory (kcoll_cma_probe_local), with the reason and the fix when it
 *      does not, and the Yama ptrace_scope that governs it;
 *   3. the topology as hwloc sees it (or KCOLL_TOPO_SYNTHETIC), where this
 *      process runs at each level of KCOLL_HIER_LEVELS, and the levels a
 *      team of one rank per PU would have with KCOLL_TOPO_PLACE (the
 *      launcher's local rank, OMPI_COMM_WORLD_LOCAL_RANK or
 *      MPI_LOCALRANKID, places this process for compact and scatter);
 *   4. every algorithm of the registry, with its parameter and help;
 *   5. every KCOLL_* parameter with its default, current value and help.
 *
 * The exit status is 0 whenever the report was printed, including when
 * cross-memory attach is not permitted: that is information, not a failure.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "coll/coll.h"
#include "model/keep.h"
#include "model/nodes.h"
#include "model/select.h"
#include "model/quick.h"
#include "model/tuning.h"
#include "base/params.h"
#include "base/status.h"
#include "kcoll.h"
#include "topo/topo.h"
#include "sched/ctl.h"
#include "xfer/cma.h"

#ifndef KCOLL_MPI_FLAVOR
#define KCOLL_MPI_FLAVOR "unknown"
#endif

/* Help text is wrapped to this many columns, indented by KCOLL_INFO_INDENT. */
#define KCOLL_INFO_WIDTH 79
#define KCOLL_INFO_INDENT 6

static void kcoll_info_usage(FILE *f)
{
    fprintf(f,
            "usage: kcoll-info [--params]\n"
            "Print kcoll's version, the MPI it was built for, whether cross-memory\n"
            "attach is permitted here, the topology, the algorithms and the KCOLL_*\n"
            "parameters (set them in the environment).\n"
            "  --params     print only the parameters\n"
            "  --explain COLLECTIVE PROCESSES BYTES [--machine knl|broadwell|power8|FILE]\n"
            "               [--nodes N [--ppn A,B,...]] [--cores N]\n"
            "               [--engine cma|shm|vmsplice|direct]\n"
            "               the cost model's price of every candidate for that call, the\n"
            "               winner and its terms; with --nodes, the call on N nodes\n"
            "               (every layout: the host MPI alone, kcoll's leaders, lanes),\n"
            "               with --ppn the ranks of each node (N counts summing to the\n"
            "               processes; default: as many on each); with --cores, the\n"
            "               processes share N cores (a crowded node); with --engine, its\n"
            "               steps priced for that transfer engine\n"
            "  -h, --help   print this help\n");
}

/* The first line of the MPI library's version string, runs of blanks
 * squeezed to one space. */
static void kcoll_info_mpi_version(char *out, size_t outlen)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    size_t o = 0;
    int blank = 0;

    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS || len < 0) {
        snprintf(out, outlen, "version unknown");
        return;
    }
    if (len > MPI_MAX_LIBRARY_VERSION_STRING)
        len = MPI_MAX_LIBRARY_VERSION_STRING;
    lib[len] = '\0';
    for (const char *s = lib; *s && *s != '\n' && o + 1 < outlen; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\r') {
            blank = 1;
            continue;
        }
        if (blank && o > 0 && o + 2 < outlen)
            out[o++] = ' ';
        blank = 0;
        out[o++] = *s;
    }
    out[o] = '\0';
}

/* Print text as indented lines of at most KCOLL_INFO_WIDTH columns,
 * breaking at spaces. */
static void kcoll_info_wrap(const char *text)
{
    const int room = KCOLL_INFO_WIDTH - KCOLL_INFO_INDENT;

    while (*text) {
        int n = (int)strlen(text), cut = n;

        if (n > room) {
            for (cut = room; cut > 0 && text[cut] != ' '; cut--)
                ;
            if (cut == 0) /* one word longer than a line */
                for (cut = room; text[cut] && text[cut] != ' '; cut++)
                    ;
        }
        printf("%*s%.*s\n", KCOLL_INFO_INDENT, "", cut, text);
        text += cut;
        while (*text == ' ')
            text++;
    }
}

static const char *kcoll_info_shown(const char *v)
{
    return (v && v[0]) ? v : "\"\"";
}

static void kcoll_info_params(void)
{
    int wname = 0, wdef = 0;

    for (int i = 0; i < KCOLL_NPARAMS; i++) {
        int n = (int)strlen("KCOLL_") + (int)strlen(kcoll_param_desc[i].name);
        int d = (int)strlen(kcoll_info_shown(kcoll_param_desc[i].def));

        if (n > wname)
            wname = n;
        if (d > wdef)
            wdef = d;
    }
    printf("parameters:\n");
    for (int i = 0; i < KCOLL_NPARAMS; i++) {
        const kcoll_param_desc_t *p = &kcoll_param_desc[i];
        const char *cur = kcoll_param_str((kcoll_param_id_t)i);
        int pad = wname - (int)strlen("KCOLL_") - (int)strlen(p->name);

        printf("  KCOLL_%s%*s  default %-*s  current %s\n", p->name, pad, "", wdef,
               kcoll_info_shown(p->def), kcoll_info_shown(cur));
        if (p->help)
            kcoll_info_wrap(p->help);
    }
}

/* "k=4 (2..1048576), chunk=128 (4..)" or "" */
static void kcoll_info_algo_params(const kcoll_algo_t *a, char *out, size_t outlen)
{
    int n = 0;
    out[0] = '\0';
    for (const kcoll_pdesc_t *d = a->params; d < a->params + KCOLL_ALGO_MAX_PARAMS && d->name;
         d++)
        n += snprintf(out + n, n < (int)outlen ? outlen - (size_t)n : 0, "%s%s=%d (%d..%d)",
                      n ? ", " : "", d->name, d->def, d->min, d->max);
}

/* "cma" or "cma,shm": the engines an algorithm runs on */
static void kcoll_info_algo_engines(const kcoll_algo_t *a, char *out, size_t outlen)
{
    int n = 0;
    out[0] = '\0';
    for (int id = 0; id < KCOLL_NENGINES; id++)
        if (a->engines & KCOLL_ENGINE_BIT(id))
            n += snprintf(out + n, n < (int)outlen ? outlen - (size_t)n : 0, "%s%s", n ? "," : "",
                          kcoll_engine((kcoll_engine_id_t)id)->name);
}

static void kcoll_info_algos(void)
{
    char param[96], eng[64];
    int wcoll = 0, walgo = 0, wparam = 0, weng = 0;

    for (int i = 0; i < kcoll_nalgos; i++) {
        const kcoll_algo_t *a = &kcoll_algos[i];
        int c = (int)strlen(kcoll_coll_name(a->family)), n = (int)strlen(a->name);
        kcoll_info_algo_params(a, param, sizeof param);
        kcoll_info_algo_engines(a, eng, sizeof eng);
        if (c > wcoll)
            wcoll = c;
        if (n > walgo)
            walgo = n;
        if ((int)strlen(param) > wparam)
            wparam = (int)strlen(param);
        if ((int)strlen(eng) > weng)
            weng = (int)strlen(eng);
    }
    printf("algorithms (collective, name, parameters with default and range, engines, what):\n");
    for (int i = 0; i < kcoll_nalgos; i++) {
        const kcoll_algo_t *a = &kcoll_algos[i];
        kcoll_info_algo_params(a, param, sizeof param);
        kcoll_info_algo_engines(a, eng, sizeof eng);
        printf("  %-*s  %-*s  ", wcoll, kcoll_coll_name(a->family), walgo, a->name);
        if (wparam > 0)
            printf("%-*s  ", wparam, param);
        printf("%-*s  %s\n", weng, eng, a->help ? a->help : "");
    }
}

/* Which call modes kcoll takes with this MPI. */
static void kcoll_info_modes(void)
{
    printf("calls: blocking and non-blocking (MPI_I*) collectives; persistent (MPI_*_init): %s; "
           "large-count (MPI_*_c): %s; up to %d collectives outstanding per communicator\n",
#ifdef KCOLL_HAVE_PERSISTENT
           "yes",
#else
           "no (this MPI does not declare MPI_Bcast_init)",
#endif
#ifdef KCOLL_HAVE_LARGE_COUNT
           "yes",
#else
           "no (this MPI does not declare MPI_Bcast_c)",
#endif
           KCOLL_LANES);
    /* what pmpi/fortran.c builds for this MPI */
    printf("fortran: %s\n",
#if defined(OPEN_MPI)
           "active: kcoll's own entry points for mpif.h, use mpi and mpi_f08 (mpi_bcast_, "
           "ompi_bcast_f, ...), since Open MPI's bindings call PMPI_* directly"
#elif defined(MPICH)
           "active: MPICH's bindings call kcoll's C functions (mpi_f08's MPI_Barrier, "
           "MPI_Ibarrier and MPI_Init through kcoll's own mpi_*_f08_)"
#else
           "not active: kcoll has no Fortran entry points for this MPI"
#endif
    );
}

/* What kcoll found of the host MPI beyond its name: its interface, how
 * kcoll's requests advance inside it, MPI-4 sessions, communicators made
 * behind kcoll's back. */
static void kcoll_info_host(void)
{
    /* the same run-time look-up as mpi/progress.c */
    void *hook = dlsym(RTLD_DEFAULT, "opal_progress_register");
    printf("host: interface %s; progress: %s; sessions: %s; communicators kcoll did not see "
           "being made: %s\n",
#ifdef MPI_ABI_VERSION
           "the MPI-5 standard ABI (built with mpi_abi.h: this libkcoll runs under every MPI "
           "that implements it)",
#else
           "the MPI's own (a libkcoll per MPI)",
#endif
           hook ? "the host's progress engine runs kcoll's (opal_progress_register), and "
                  "kcoll's long waits run the host's"
                : "no hook for foreign requests in this MPI: kcoll's requests advance in its "
                  "calls and completion functions, and kcoll's long waits run the host's "
                  "progress (an MPI_Iprobe now and then)",
#ifdef KCOLL_HAVE_SESSIONS
           "communicators made with MPI_Comm_create_from_group get teams (when MPI_Init "
           "started kcoll)",
#else
           "this MPI declares no MPI_Comm_create_from_group",
#endif
           "a team set up in the calls after the first non-blocking collective (point to "
           "point over kcoll's duplicate of MPI_COMM_WORLD; where every rank has one thread "
           "calling MPI), or at the first blocking one");
}

/* The levels of a team of p ranks, the i-th placed as KCOLL_TOPO_PLACE
 * places the node's i-th process. Returns the levels kept (lv made), or
 * 0 (lv flat). */
static int kcoll_info_levels_of(int p, kcoll_levels_t *lv)
{
    int mine[KCOLL_MAX_LEVELS], pu, n;
    char err[256];
    memset(lv, 0, sizeof *lv);
    n = kcoll_topo_place(0, mine, KCOLL_MAX_LEVELS, &pu, err, sizeof err);
    int *all = n > 0 ? malloc((size_t)p * (size_t)n * sizeof *all) : NULL;
    if (!all)
        return 0;
    for (int q = 0; q < p; q++) {
        if (kcoll_topo_place(q, mine, KCOLL_MAX_LEVELS, &pu, err, sizeof err) != n) {
            free(all);
            return 0;
        }
        for (int l = 0; l < n; l++)
            all[l * p + q] = mine[l];
    }
    int rc = kcoll_levels_make(lv, p, n, all);
    free(all);
    return rc ? 0 : lv->n;
}

/* Where this process runs at each level, and the levels of a node full of
 * ranks placed as KCOLL_TOPO_PLACE says. */
static void kcoll_info_levels(void)
{
    int ids[KCOLL_MAX_LEVELS], pu, n, index = 0;
    char err[256], line[256];
    const char *env = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!env)
        env = getenv("MPI_LOCALRANKID");
    if (env)
        index = atoi(env);
    n = kcoll_topo_place(index, ids, KCOLL_MAX_LEVELS, &pu, err, sizeof err);
    if (n < 0) {
        printf("levels: unavailable: %s\n", err);
        return;
    }
    printf("levels: KCOLL_HIER_LEVELS=%s, KCOLL_TOPO_PLACE=%s\n",
           kcoll_params_get("HIER_LEVELS"), kcoll_params_get("TOPO_PLACE"));
    printf("  this process (local rank %d): ", index);
    if (pu >= 0)
        printf("PU %d", pu);
    else
        printf("not bound to one PU");
    const char *spec = kcoll_params_get("HIER_LEVELS");
    for (int l = 0; l < n; l++) {
        size_t len = strcspn(spec, ",");
        if (ids[l] >= 0)
            printf(", %.*s %d", (int)len, spec, ids[l]);
        else
            printf(", %.*s: none or several", (int)len, spec);
        spec += len + (spec[len] == ',');
    }
    printf("\n");
    const int npu = kcoll_topo_npus();
    kcoll_levels_t lv;
    if (npu > 0 && kcoll_info_levels_of(npu, &lv) > 0) {
        kcoll_levels_describe(&lv, line, sizeof line);
        printf("  a team of %d ranks placed %s: %s\n", npu, kcoll_params_get("TOPO_PLACE"), line);
    }
    kcoll_levels_free(&lv);
}

/* --explain: every candidate the model prices for one call, sorted, the
 * winner and its terms. The machine: --machine knl|broadwell|power8 (paper
 * 003 Table IV), a tuning file (--machine FILE, or KCOLL_TUNING), else the
 * built-in defaults. Levels: a synthetic or real topology with
 * KCOLL_TOPO_PLACE placing p ranks, where that gives levels; a Table IV
 * machine's packages (compact placement) for the memory domains. */
/* --explain ... --nodes N [--ppn a,b,...]: the call by p ranks on N
 * nodes (p / N each, or the counts --ppn gives, placed in blocks), every
 * layout's price with its phases, the cheapest layout, and what the
 * runtime runs (KCOLL_HIER=auto picks among the layouts it has:
 * model/nodes.c). */
static int kcoll_info_nodes(kcoll_coll_t c, int p, size_t bytes, int nodes, const char *ppnarg,
                            const kcoll_tuning_t *t, const char *file)
{
    int *ppn = malloc((size_t)(nodes > 0 ? nodes : 1) * sizeof *ppn), n = 0, even = 1, sum = 0;
    if (!ppn)
        return 2;
    if (!ppnarg) {
        if (nodes < 1 || p % nodes) {
            fprintf(stderr, "kcoll-info: --nodes %d must divide the %d processes (or give "
                            "--ppn)\n", nodes, p);
            free(ppn);
            return 2;
        }
        for (n = 0; n < nodes; n++)
            ppn[n] = p / nodes;
    } else {
        /* a,b,c: one count of at least one rank per node, summing to p */
        for (const char *at = ppnarg; *at; n++) {
            char *end;
            long v = strtol(at, &end, 10);
            if (end == at || v < 1 || v > p || (*end && *end != ',') || n == nodes) {
                fprintf(stderr, "kcoll-info: --ppn %s: want %d counts of ranks per node (one "
                                "per node, each at least 1), separated by commas\n",
                        ppnarg, nodes);
                free(ppn);
                return 2;
            }
            ppn[n] = (int)v;
            sum += (int)v;
            at = *end ? end + 1 : end;
        }
        if (n != nodes || sum != p) {
            fprintf(stderr, "kcoll-info: --ppn %s gives %d nodes and %d ranks; --nodes %d and "
                            "the processes, %d, want %d counts summing to %d\n",
                    ppnarg, n, sum, nodes, p, nodes, p);
            free(ppn);
            return 2;
        }
    }
    for (int k = 1; k < nodes; k++)
        even &= ppn[k] == ppn[0];
    const size_t seg = kcoll_nodes_segment(kcoll_param_int(KCOLL_P_HIER_SEGMENT));
    kcoll_nodes_price_t np;
    kcoll_price_nodes_counts(&t->m, c, ppn, nodes, bytes, seg, &np);
    printf("%s, %d processes on %d nodes (", kcoll_coll_name(c), p, nodes);
    if (even)
        printf("%d each", ppn[0]);
    else
        for (int k = 0; k < nodes; k++)
            printf("%s%d", k ? "," : "", ppn[k]);
    printf(", blocked), %zu bytes\n", bytes);
    printf("machine: %s%s%s\n", t->m.source, file && *file ? ", file " : "", file ? file : "");
    printf("network between nodes: %.2f us, %.2f GB/s\n", t->m.net_alpha * 1e6,
           1e-9 / t->m.net_beta);
    if (t->m.package_bw > 0)
        printf("node memory: %.2f GB/s, shared by the copies that run at once\n",
               t->m.package_bw * 1e-9);
    else
        printf("node memory: no limit on what copies at once share (package_bw 0)\n");
    printf("host MPI on a node: %.2fx its textbook formula at 2 ranks and this size (measured; "
           "its on-node terms scaled so)\n",
           kcoll_host_measured_scale(&t->m, c, (double)bytes, KCOLL_RCLASS_DOUBLE));
    const double host = np.lay[KCOLL_NODES_HOST].t;
    static const char *const what[KCOLL_NODES_NLAYOUTS] = {
        "host MPI alone (flat)", "leaders: one per node between nodes",
        "lanes: every local rank between nodes"};
    for (int l = 0; l < KCOLL_NODES_NLAYOUTS; l++) {
        const kcoll_nodes_lprice_t *lp = &np.lay[l];
        if (!lp->priced) {
            printf("%-64s %s\n", what[l],
                   l != KCOLL_NODES_LEADERS ? "not a candidate for this collective here"
                   : np.lay[KCOLL_NODES_LANES].priced
                       ? "no leaders' layout for this collective"
                       : "no layout across nodes: the host MPI runs it whole");
            continue;
        }
        printf("%-64s %10.2f us  host / it %.2fx%s\n", what[l], lp->t * 1e6,
               lp->t > 0 ? host / lp->t : 1.0,
               kcoll_nodes_runs(c, ppn, nodes) & KCOLL_NODES_BIT(l)
                   ? ""
                   : "  (priced only: not run for this collective on these nodes)");
        if (l == KCOLL_NODES_HOST || nodes == 1)
            continue;
        const int pipe = l == KCOLL_NODES_LEADERS && c == KCOLL_COLL_BCAST;
        if (lp->agree > 0)
            printf("  %-62s %10.2f us\n",
                   c == KCOLL_COLL_ALLTOALLV
                       ? "first, every rank: agree on the block, share the layouts"
                       : "first, every rank: the root's layout (MPI_Bcast)",
                   lp->agree * 1e6);
        const double ph[3] = {lp->before, lp->net, lp->after};
        for (int i = 0; i < 3; i++) {
            if (lp->coll[i] == KCOLL_NCOLL)
                continue;
            char label[96];
            if (i == 1 && l == KCOLL_NODES_LANES && lp->pieces > 1)
                snprintf(label, sizeof label, "between nodes: %s, %d lanes, %d pieces overlapped",
                         kcoll_coll_name(lp->coll[i]), np.lanes, lp->pieces);
            else if (i == 1 && l == KCOLL_NODES_LANES && np.rounds > 1)
                snprintf(label, sizeof label, "between nodes: %s, %d lanes in %d rounds",
                         kcoll_coll_name(lp->coll[i]), np.lanes, np.rounds);
            else if (i == 1 && l == KCOLL_NODES_LANES)
                snprintf(label, sizeof label, "between nodes: %s, %d lanes at once",
                         kcoll_coll_name(lp->coll[i]), np.lanes);
            else if (i != 1 && lp->pieces > 1)
                snprintf(label, sizeof label, "%s, on %s: %s, %s piece",
                         i ? "after" : "before",
                         lp->rootnode & (1u << i) ? "the root's node" : "each node",
                         kcoll_coll_name(lp->coll[i]), i ? "last" : "first");
            else if (i == 1)
                snprintf(label, sizeof label, "between nodes: %s%s",
                         kcoll_coll_name(lp->coll[i]), pipe ? ", pipelined" : "");
            else
                snprintf(label, sizeof label, "%s, on %s: %s%s", i ? "after" : "before",
                         lp->rootnode & (1u << i) ? "the root's node" : "each node",
                         kcoll_coll_name(lp->coll[i]), pipe ? " per segment" : "");
            printf("  %-62s %10.2f us\n", label, ph[i] * 1e6);
        }
    }
    const kcoll_nodes_layout_t all =
        kcoll_nodes_pick(&t->m, c, ppn, nodes, bytes, seg, KCOLL_NODES_ALL, NULL);
    const unsigned runs = kcoll_nodes_runs(c, ppn, nodes);
    const kcoll_nodes_layout_t run = kcoll_nodes_pick(&t->m, c, ppn, nodes, bytes, seg, runs, NULL);
    printf("pick: %s (the cheapest layout at this size class)%s\n",
           kcoll_nodes_layout_name(all),
           runs & KCOLL_NODES_BIT(all) ? ""
                                       : ": priced only, not run for this collective on these nodes");
    printf("KCOLL_HIER=auto: %s (the cheapest of the layouts that run for %s: host, leaders%s)\n",
           run == KCOLL_NODES_HOST ? "the host MPI whole" : kcoll_nodes_layout_name(run),
           kcoll_coll_name(c), runs & KCOLL_NODES_BIT(KCOLL_NODES_LANES) ? ", lanes" : "");
    free(ppn);
    return 0;
}

/* Where among the ranked candidates cand[1..n) the host MPI is: its
 * index, or 0 for none (kcoll_model_low_end may give it the class). */
static int kcoll_info_host_at(const kcoll_cand_t *cand, int n)
{
    for (int i = 1; i < n; i++)
        if (!cand[i].ch.algo)
            return i;
    return 0;
}

/* One engine per call (KCOLL_ENGINE=auto on cma, docs/engines.md): the
 * best on shm against cma's best, and which runs the call. */
static void kcoll_info_percall(const kcoll_machine_t *m, const kcoll_pcall_t *pc,
                               const kcoll_cand_t *best)
{
    static kcoll_cand_t alt[KCOLL_MAX_CANDS];
    kcoll_pcall_t on = *pc;
    char spec[128] = "the host MPI";
    double ht, kt;
    on.engine = KCOLL_ENGINE_SHM;
    const int n = kcoll_model_rank(m, &on, 1, alt, KCOLL_MAX_CANDS);
    if (!n)
        return;
    if (alt[0].ch.algo && kcoll_model_low_end(m, &on, on.bytes, &alt[0].ch, &ht, &kt)) {
        /* the host at the class's lower end on shm too: its decision */
        const int h = kcoll_info_host_at(alt, n);
        if (h)
            alt[0] = alt[h];
    }
    if (alt[0].ch.algo)
        kcoll_algo_spec(alt[0].ch.algo, &alt[0].ch.prm, spec, sizeof spec);
    const int shm = kcoll_percall_takes(alt[0].ch.algo != NULL, alt[0].t, best->t);
    char stays[128];
    snprintf(stays, sizeof stays,
             "the call runs on cma (shm runs a call priced at least %.0f%% "
             "cheaper)",
             KCOLL_PERCALL_MARGIN * 100);
    printf("one engine per call (KCOLL_ENGINE=auto): on shm the best is %s at %.2f us "
           "(%.2fx the best above): %s\n",
           spec, alt[0].t * 1e6, best->t > 0 ? alt[0].t / best->t : 1.0,
           shm             ? "the call runs on shm"
           : best->ch.algo ? stays
                           : "the host MPI is predicted fastest: kcoll hands this call to it");
}

static int kcoll_info_explain(const char *coll, const char *procs, const char *size,
                              const char *machine, int nodes, const char *ppn, int cores,
                              int engine)
{
    const kcoll_coll_t c = kcoll_coll_by_name(coll);
    int64_t bytes;
    int p = atoi(procs);
    if (c == KCOLL_NCOLL || p < 1 || kcoll_parse_size(size, &bytes) || bytes < 0) {
        fprintf(stderr, "kcoll-info: --explain <collective> <processes> <bytes>, e.g. "
                        "--explain MPI_Bcast 64 1M\n");
        return 2;
    }
    static kcoll_tuning_t t;
    char err[512];
    const char *file = machine ? machine : getenv("KCOLL_TUNING");
    if (machine && !kcoll_machine_preset(&t.m, machine)) {
        file = NULL;
    } else if (file && *file) {
        if (kcoll_tuning_load(file, &t, err, sizeof err)) {
            fprintf(stderr, "kcoll-info: %s\n", err);
            return 2;
        }
    } else {
        /* no file named: what a job of p ranks on this machine prices with,
         * its quick calibration where one is kept (docs/tuning.md) */
        static char qpath[600];
        char lib[MPI_MAX_LIBRARY_VERSION_STRING], ident[600];
        int len = 0;
        t = *kcoll_tuning();
        if (kcoll_param_int(KCOLL_P_QUICK_CALIBRATE) &&
            MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
            lib[strcspn(lib, "\n")] = '\0';
            if (!kcoll_quick_path(p, lib, qpath, sizeof qpath, ident, sizeof ident) &&
                access(qpath, R_OK) == 0 && !kcoll_tuning_load(qpath, &t, err, sizeof err))
                file = qpath;
            else
                t = *kcoll_tuning();
        }
    }
    if (ppn && !nodes) {
        fprintf(stderr, "kcoll-info: --ppn gives the ranks of each node: it needs --nodes\n");
        return 2;
    }
    if (nodes)
        return kcoll_info_nodes(c, p, (size_t)bytes, nodes, ppn, &t, file);
    /* levels of p ranks on this (or the synthetic) topology */
    kcoll_levels_t lv = {0};
    int n = kcoll_info_levels_of(p, &lv);
    int *pkg = NULL;
    if (t.m.pkg_cores > 0 && (pkg = malloc((size_t)p * sizeof *pkg)))
        for (int q = 0; q < p; q++)
            pkg[q] = q / t.m.pkg_cores;
    /* no --engine: an auto team's, cma with single calls on shm */
    const int percall = engine < 0 && kcoll_param_int(KCOLL_P_SHM_PERCALL) > 0;
    if (engine < 0)
        engine = KCOLL_ENGINE_CMA;
    kcoll_pcall_t pc = {.coll = c, .p = p, .bytes = (size_t)bytes, .lv = n > 0 ? &lv : NULL,
                        .pkg = pkg, .cores = cores, .engine = engine};
    static kcoll_cand_t cand[KCOLL_MAX_CANDS];
    int nc = kcoll_model_rank(&t.m, &pc, 1, cand, KCOLL_MAX_CANDS);
    char line[256];
    printf("%s, %d processes, %lld bytes%s\n", kcoll_coll_name(c), p, (long long)bytes,
           kcoll_coll_is_v(c) ? " (priced as uniform blocks)" : "");
    printf("machine: %s%s%s\n", t.m.source, file && *file ? ", file " : "", file ? file : "");
    if (percall)
        printf("engine: auto (cma, and single calls on shm where priced cheaper: "
               "docs/engines.md)\n");
    else if (engine)
        printf("engine: %s (docs/engines.md)\n", kcoll_engine((kcoll_engine_id_t)engine)->name);
    if (n > 0) {
        kcoll_levels_describe(&lv, line, sizeof line);
        printf("levels: %s\n", line);
    }
    if (pkg)
        printf("packages: %d cores each, ranks placed compactly\n", t.m.pkg_cores);
    if (cores > 0 && cores < p)
        printf("crowded: %d processes share %d cores (waiters give their core away)\n", p,
               cores);
    /* what decides before the model (model/select.h's precedence) */
    char pname[64], rspec[128] = "";
    snprintf(pname, sizeof pname, "%s_ALGO", kcoll_coll_env(c));
    const char *forced = kcoll_params_get(pname);
    kcoll_select_t rres;
    kcoll_choice_t rch;
    const kcoll_decisions_t team = {.engine = engine,
                                    .percall = percall ? KCOLL_ENGINE_BIT(KCOLL_ENGINE_SHM) : 0};
    const int rule =
        kcoll_select_rules(&t, kcoll_coll_family(c), p, kcoll_class_bytes((size_t)bytes),
                           KCOLL_CACHE_COLD, 1, &team, &rres, &rch);
    if (rule && rres == KCOLL_SELECT_KCOLL)
        kcoll_choice_spec(&rch, rspec, sizeof rspec);
    kcoll_select_t hres;
    kcoll_choice_t hch;
    const int hrule =
        kcoll_select_rules(&t, kcoll_coll_family(c), p, kcoll_class_bytes((size_t)bytes),
                           KCOLL_CACHE_HOT, 1, &team, &hres, &hch);
    if (hrule && hrule != rule && !(forced && strcmp(forced, "auto"))) {
        char hspec[128] = "host";
        if (hres == KCOLL_SELECT_KCOLL)
            kcoll_choice_spec(&hch, hspec, sizeof hspec);
        printf("on-cache (a repeat of the previous call on buffers that fit in the cache): "
               "rule %d of the tuning decides it: %s\n", hrule, hspec);
    }
    if (forced && strcmp(forced, "auto"))
        printf("KCOLL_%s=%s decides this call; the model's ranking below is not used\n", pname,
               forced);
    else if (rule)
        printf("rule %d of the tuning file decides this call: %s; the model's ranking below "
               "is not used\n",
               rule, rule && rres == KCOLL_SELECT_HOST ? "host" : rspec);
    printf("%-4s %-30s %12s %8s\n", "", "candidate", "predicted us", "vs best");
    for (int i = 0; i < nc; i++) {
        if (cand[i].ch.algo)
            kcoll_algo_spec(cand[i].ch.algo, &cand[i].ch.prm, line, sizeof line);
        else
            snprintf(line, sizeof line, "host MPI");
        printf("%-4s %-30s %12.2f %7.2fx\n", i ? "" : "best", line, cand[i].t * 1e6,
               cand[0].t > 0 ? cand[i].t / cand[0].t : 1.0);
    }
    /* the class's lower end (model/select.h, kcoll_model_low_end) */
    int low_host = 0;
    double low_h = 0, low_k = 0;
    if (nc && cand[0].ch.algo && !rule && !(forced && strcmp(forced, "auto")) &&
        kcoll_model_low_end(&t.m, &pc, (size_t)bytes, &cand[0].ch, &low_h, &low_k)) {
        kcoll_algo_spec(cand[0].ch.algo, &cand[0].ch.prm, line, sizeof line);
        printf("at its size class's lower end, %zu bytes, the host MPI is priced %.2f us and "
               "%s %.2f us: the host MPI takes the class (kcoll's pick is the runner-up that "
               "the check by measurement times, docs/adapt.md)\n",
               (size_t)1 << (kcoll_size_class((size_t)bytes) - 1), low_h * 1e6, line,
               low_k * 1e6);
        low_host = 1;
        const int h = kcoll_info_host_at(cand, nc);
        if (h) {
            const kcoll_cand_t host = cand[h];
            memmove(&cand[1], &cand[0], (size_t)h * sizeof cand[0]);
            cand[0] = host;
        }
    }
    if (nc && cand[0].ch.algo) {
        const kcoll_price_t *w = &cand[0].pr;
        printf("terms of the winner (rank %d ends last, us): alpha %.2f, bytes %.2f, "
               "lock %.2f, copy %.2f, reduce %.2f, sync %.2f, wait %.2f, call %.2f; highest "
               "contention %.1f; %d steps\n",
               w->crit, w->alpha * 1e6, w->bytes * 1e6, w->lock * 1e6, w->copy * 1e6,
               w->reduce * 1e6, w->sync * 1e6, w->wait * 1e6, w->call * 1e6, w->cmax, w->steps);
    } else if (nc && !rule && !(forced && strcmp(forced, "auto")) && !percall && !low_host) {
        printf("the host MPI is predicted fastest: kcoll hands this call to it\n");
    }
    if (percall && nc && !rule && !(forced && strcmp(forced, "auto")))
        kcoll_info_percall(&t.m, &pc, &cand[0]);
    free(pkg);
    kcoll_levels_free(&lv);
    return 0;
}

int main(int argc, char **argv)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING + 1], why[1024], topo[512];
    int only_params = 0, scope;
    kcoll_status_t st;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            kcoll_info_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--params") == 0) {
            only_params = 1;
        } else if (strcmp(argv[i], "--explain") == 0 && i + 3 < argc) {
            const char *machine = NULL, *ppn = NULL;
            int nodes = 0, cores = 0, engine = -1;
            for (int k = i + 4; k + 1 < argc; k += 2) {
                if (!strcmp(argv[k], "--machine")) {
                    machine = argv[k + 1];
                } else if (!strcmp(argv[k], "--engine") &&
                           (engine = kcoll_engine_by_name(argv[k + 1])) >= 0) {
                    continue;
                } else if (!strcmp(argv[k], "--nodes") && atoi(argv[k + 1]) > 0) {
                    nodes = atoi(argv[k + 1]);
                } else if (!strcmp(argv[k], "--ppn")) {
                    ppn = argv[k + 1];
                } else if (!strcmp(argv[k], "--cores") && atoi(argv[k + 1]) > 0) {
                    cores = atoi(argv[k + 1]);
                } else {
                    fprintf(stderr, "kcoll-info: --explain: unknown option '%s'\n", argv[k]);
                    return 2;
                }
            }
            kcoll_params_load();
            return kcoll_info_explain(argv[i + 1], argv[i + 2], argv[i + 3], machine, nodes,
                                      ppn, cores, engine);
        } else {
            fprintf(stderr, "kcoll-info: unknown option '%s'\n", argv[i]);
            kcoll_info_usage(stderr);
            return 2;
        }
    }

    kcoll_params_load();
    if (only_params) {
        kcoll_info_params();
        return 0;
    }

    printf("kcoll %s\n", KCOLL_VERSION);
    kcoll_info_mpi_version(mpi, sizeof mpi);
    printf("MPI: %s (%s)\n", KCOLL_MPI_FLAVOR, mpi);

    fflush(stdout); /* the probe forks */
    st = kcoll_cma_probe_local(why, sizeof why);
    if (st == KCOLL_OK)
        printf("CMA: permitted\n");
    else
        printf("CMA: NOT permitted: %s\n", why[0] ? why : kcoll_status_str(st));
    scope = kcoll_cma_yama_scope();
    if (scope >= 0)
        printf("Yama ptrace_scope: %d\n", scope);
    else
        printf("Yama: absent\n");
    /* what KCOLL_ENGINE=auto makes of that (docs/engines.md) */
    printf("engines: auto runs %s; loads and stores on MPI_Alloc_mem memory where processes can "
           "map each other's (direct); KCOLL_ENGINE=cma|shm|vmsplice|direct forces one\n",
           st == KCOLL_OK ? "cma (one copy; single calls two copies through shared memory where "
                            "that is faster)"
                          : "shm (two copies through shared memory)");

    if (kcoll_topo_summary(topo, sizeof topo) == 0) {
        char src[800];
        printf("topology: %s (%s)\n", topo, kcoll_topo_source(src, sizeof src));
    } else
        printf("topology: unavailable: %s\n", topo);
    {
        char kept[4200];
        const int n = kcoll_keep_file(kept, sizeof kept);
        if (n >= 0)
            printf("decisions: %d kept in %s (the cost model's, from the last job; a job reads "
                   "them where kcoll's build, the tuning and the parameters are theirs: "
                   "KCOLL_KEEP_DECISIONS)\n",
                   n, kept);
        else
            printf("decisions: none kept%s\n",
                   kcoll_param_int(KCOLL_P_KEEP_DECISIONS) ? "" : " (KCOLL_KEEP_DECISIONS=0)");
    }

    kcoll_info_levels();
    kcoll_info_modes();
    kcoll_info_host();
    printf("\n");
    kcoll_info_algos();
    printf("\n");
    kcoll_info_params();
    return 0;
}
