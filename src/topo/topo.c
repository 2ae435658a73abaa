/* Topology through hwloc 2.x (DESIGN.md section 6; docs/tuning.md, "Quick
 * calibration", for the kept file).
 *
 * kcoll asks hwloc for the machine's structure: packages, NUMA nodes,
 * cores, hardware threads (PUs) and caches. What it needs of it is small,
 * the facts: how many PUs and packages, the largest cache, a summary line,
 * and for every PU the object of each level a place can name (l1, l2, l3,
 * numa, package) that holds it. Those are taken from hwloc's topology once
 * per process and kept, under a mutex, in kcoll_topo_cache; every question
 * below is answered from them.
 *
 * Loading a topology costs milliseconds (hwloc's plugins, loaded with their
 * libraries at hwloc_topology_init, and its reading of /sys), most of what
 * kcoll would add to MPI_Init. So the facts of this machine are also kept
 * in the per-user cache folder (base/cache.h), in a small text file named
 * by a hash of the identity of what hwloc would see: CPU model, online
 * CPUs and NUMA nodes, kernel release, the CPUs and memory its cgroup
 * allows (a container's or a batch job's: hwloc leaves the others out), every HWLOC_*
 * variable of the environment, the hwloc and kcoll versions. A later
 * process with the same identity reads the file (no hwloc at all) instead
 * of loading; a damaged file, or one of another identity, is loaded again
 * and rewritten. Where there is no file yet, kcoll_topo_prefetch starts
 * the load on a thread of its own (every signal blocked there) right after
 * the host MPI started, so that it overlaps kcoll's own start-up; the
 * first question joins it.
 *
 * KCOLL_TOPO_SYNTHETIC replaces the machine with an hwloc synthetic
 * description such as "pack:2 numa:1 core:4 pu:1", so that tests can
 * exercise multi-level hierarchies on a small machine (never kept in a
 * file). The parameter can be changed at run time (kcoll_param_set), so
 * the cache remembers which description it was loaded from and loads again
 * when that changes. A description that hwloc does not accept is an error
 * whose reason names the string, never a silent fall back to the real
 * machine.
 *
 * kcoll_topo_summary writes one line for kcoll-info and the logs:
 *   "1 package, 1 NUMA node, 2 cores, 2 PUs; L3 32 MiB x1, L2 1 MiB x2, L1d 48 KiB x2"
 * Each data (or unified) cache level appears with its size and how many
 * caches of that level there are; a level whose caches differ in size (a
 * hybrid processor) lists each size: "L2 2 MiB x2 + 4 MiB x1". Instruction
 * caches are left out: kcoll moves data.
 *
 * kcoll_topo_llc_bytes gives the size of the largest cache, which
 * kcoll-bench uses to rotate buffers so that timed copies start off-cache.
 */
#include "topo/topo.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcoll.h"

#include "base/cache.h"
#include "base/log.h"
#include "base/params.h"
#include "base/status.h"

/* Distinct cache sizes listed for one level. */
#define KCOLL_TOPO_MAX_SIZES 8

/* The levels a place names (KCOLL_HIER_LEVELS), in this order. */
#define KCOLL_TOPO_NLEVELS 5
static const struct {
    const char *name;
    hwloc_obj_type_t type;
} kcoll_topo_levels[KCOLL_TOPO_NLEVELS] = {
    {"l1", HWLOC_OBJ_L1CACHE}, {"l2", HWLOC_OBJ_L2CACHE}, {"l3", HWLOC_OBJ_L3CACHE},
    {"numa", HWLOC_OBJ_NUMANODE}, {"package", HWLOC_OBJ_PACKAGE},
};

/* The kept file's format (its first line). */
#define KCOLL_TOPO_FORMAT "kcoll-topology 1"

/* What kcoll knows of a topology. */
typedef struct {
    int npus;           /* PUs, in hwloc's logical order */
    int npack;          /* packages (0: none) */
    uint64_t llc;       /* the largest cache, bytes (0: none) */
    char summary[512];  /* kcoll_topo_summary's line */
    int *os;            /* [npus] PU i's OS index */
    int *ids;           /* [npus * KCOLL_TOPO_NLEVELS] the logical index of the
                         * object of level l that holds PU i (at i * NLEVELS + l),
                         * or -1: none */
} kcoll_topo_facts_t;

typedef struct {
    pthread_mutex_t lock;
    kcoll_topo_facts_t *facts; /* NULL until loaded */
    char *synthetic;           /* description they were loaded from ("" = this machine) */
    char source[700];          /* where they came from (kcoll_topo_source) */
} kcoll_topo_cache_t;

static kcoll_topo_cache_t kcoll_topo_cache = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, "" };

/* The load started ahead (kcoll_topo_prefetch): under the cache's lock,
 * except facts, which the thread sets and pthread_join publishes. */
static struct {
    pthread_t thread;
    int started;                /* a thread to join */
    kcoll_topo_facts_t *facts;  /* what it loaded (NULL: it failed) */
} kcoll_topo_ahead;

static void kcoll_topo_facts_free(kcoll_topo_facts_t *f)
{
    if (f) {
        free(f->os);
        free(f->ids);
        free(f);
    }
}

/* The facts' arrays for n PUs, or NULL. */
static kcoll_topo_facts_t *kcoll_topo_facts_new(int n)
{
    kcoll_topo_facts_t *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->npus = n;
    f->os = malloc((size_t)(n > 0 ? n : 1) * sizeof *f->os);
    f->ids = malloc((size_t)(n > 0 ? n : 1) * KCOLL_TOPO_NLEVELS * sizeof *f->ids);
    if (!f->os || !f->ids) {
        kcoll_topo_facts_free(f);
        return NULL;
    }
    return f;
}

/* "32 MiB", "48 KiB", "1280 KiB", "100 B": the largest unit that divides
 * the size exactly. */
static void kcoll_topo_fmt_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    unsigned u = 0;

    if (bytes == 0) {
        snprintf(buf, len, "? B");
        return;
    }
    while (u + 1 < sizeof unit / sizeof unit[0] && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu %s", (unsigned long long)bytes, unit[u]);
}

/* Append with snprintf semantics; *pos may run past len (then out is full
 * and truncated, still terminated). */
static void kcoll_topo_append(char *out, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void kcoll_topo_append(char *out, size_t len, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*pos >= len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(out + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n;
}

static void kcoll_topo_count(hwloc_topology_t topo, hwloc_obj_type_t type, const char *one,
                             const char *many, char *out, size_t len, size_t *pos)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);

    if (n < 0) /* the type sits at several depths: count does not apply */
        n = 0;
    kcoll_topo_append(out, len, pos, "%s%d %s", *pos ? ", " : "", n, n == 1 ? one : many);
}

/* "L2 1 MiB x2" (or "L2 2 MiB x2 + 4 MiB x1") for one cache type; nothing
 * if the machine has no cache of that type. */
static void kcoll_topo_cache_level(hwloc_topology_t topo, hwloc_obj_type_t type, unsigned level,
                                   int *first, char *out, size_t len, size_t *pos)
{
    uint64_t size[KCOLL_TOPO_MAX_SIZES];
    int count[KCOLL_TOPO_MAX_SIZES], nsizes = 0, others = 0;
    hwloc_obj_t obj = NULL, first_obj;
    const char *suffix = "";
    char buf[32];

    first_obj = hwloc_get_next_obj_by_type(topo, type, NULL);
    if (!first_obj)
        return;
    if (level == 1 && first_obj->attr->cache.type == HWLOC_OBJ_CACHE_DATA)
        suffix = "d";

    while ((obj = hwloc_get_next_obj_by_type(topo, type, obj)) != NULL) {
        uint64_t s = obj->attr->cache.size;
        int j;

        for (j = 0; j < nsizes && size[j] != s; j++)
            ;
        if (j == nsizes) {
            if (nsizes == KCOLL_TOPO_MAX_SIZES) {
                others++;
                continue;
            }
            size[nsizes] = s;
            count[nsizes++] = 0;
        }
        count[j]++;
    }

    kcoll_topo_append(out, len, pos, "%sL%u%s", *first ? "; " : ", ", level, suffix);
    *first = 0;
    for (int j = 0; j < nsizes; j++) {
        kcoll_topo_fmt_size(size[j], buf, sizeof buf);
        kcoll_topo_append(out, len, pos, "%s%s x%d", j ? " + " : " ", buf, count[j]);
    }
    if (others)
        kcoll_topo_append(out, len, pos, " + %d more", others);
}


/* The one object of type that holds the CPUs of set, or NULL where there
 * is none or several (NUMA nodes hang beside the CPU tree in hwloc 2, so
 * by the objects' cpusets, not by ancestry). */
static hwloc_obj_t kcoll_topo_holder(hwloc_topology_t topo, hwloc_const_cpuset_t set,
                                     hwloc_obj_type_t type)
{
    hwloc_obj_t obj = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, type, NULL);
    return obj && !hwloc_get_next_obj_covering_cpuset_by_type(topo, set, type, obj) ? obj : NULL;
}

/* The facts of a loaded topology, or NULL (out of memory). */
static kcoll_topo_facts_t *kcoll_topo_facts_of(hwloc_topology_t topo)
{
    static const hwloc_obj_type_t caches[] = {
        HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE,
        HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE,
    };
    const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    kcoll_topo_facts_t *f = kcoll_topo_facts_new(n > 0 ? n : 0);
    if (!f)
        return NULL;
    const int npack = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    f->npack = npack > 0 ? npack : 0;
    for (int i = 0; i < f->npus; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        f->os[i] = pu ? (int)pu->os_index : -1;
        for (int l = 0; l < KCOLL_TOPO_NLEVELS; l++) {
            hwloc_obj_t obj = pu ? kcoll_topo_holder(topo, pu->cpuset, kcoll_topo_levels[l].type)
                                 : NULL;
            f->ids[i * KCOLL_TOPO_NLEVELS + l] = obj ? (int)obj->logical_index : -1;
        }
    }
    for (int d = 0; d < hwloc_topology_get_depth(topo); d++) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, (unsigned)d, 0);
        if (!obj || !hwloc_obj_type_is_cache(obj->type))
            continue;
        for (; obj; obj = obj->next_cousin)
            if (obj->attr->cache.size > f->llc)
                f->llc = obj->attr->cache.size;
    }
    size_t pos = 0;
    int first = 1;
    char *out = f->summary;
    const size_t outlen = sizeof f->summary;
    out[0] = '\0';
    kcoll_topo_count(topo, HWLOC_OBJ_PACKAGE, "package", "packages", out, outlen, &pos);
    kcoll_topo_count(topo, HWLOC_OBJ_NUMANODE, "NUMA node", "NUMA nodes", out, outlen, &pos);
    kcoll_topo_count(topo, HWLOC_OBJ_CORE, "core", "cores", out, outlen, &pos);
    kcoll_topo_count(topo, HWLOC_OBJ_PU, "PU", "PUs", out, outlen, &pos);
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++)
        kcoll_topo_cache_level(topo, caches[i], 5 - (unsigned)i, &first, out, outlen, &pos);
    return f;
}

/* Load a topology, this machine's (synth "") or the hwloc synthetic
 * description synth, and take its facts. 0, or errno with the reason in
 * err. */
static int kcoll_topo_load(const char *synth, kcoll_topo_facts_t **out, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    int e;
    if (hwloc_topology_init(&topo) != 0) {
        e = errno;
        kcoll_fmt(err, errlen, "hwloc_topology_init failed: %s", strerror(e));
        return e;
    }
    if (synth[0] != '\0' && hwloc_topology_set_synthetic(topo, synth) != 0) {
        e = errno;
        kcoll_fmt(err, errlen,
                  "KCOLL_TOPO_SYNTHETIC='%s' is not a valid hwloc synthetic "
                  "topology (%s); example: 'pack:2 numa:1 core:4 pu:1'",
                  synth, strerror(e));
        hwloc_topology_destroy(topo);
        return e;
    }
    if (hwloc_topology_load(topo) != 0) {
        e = errno;
        kcoll_fmt(err, errlen, "hwloc_topology_load failed: %s", strerror(e));
        hwloc_topology_destroy(topo);
        return e;
    }
    *out = kcoll_topo_facts_of(topo);
    hwloc_topology_destroy(topo);
    if (!*out) {
        kcoll_fmt(err, errlen, "out of memory for the topology's facts");
        return ENOMEM;
    }
    return 0;
}

/* A small file's text, its lines joined by '|' (or "", unreadable). */
static void kcoll_topo_text_of(const char *file, char *out, size_t len)
{
    FILE *f = fopen(file, "r");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    out[n] = '\0';
    while (n > 0 && out[n - 1] == '\n')
        out[--n] = '\0';
    for (char *c = out; *c; c++)
        if (*c == '\n')
            *c = '|';
    if (f)
        fclose(f);
}

/* The CPUs and memory nodes this process's cgroup allows (a container's,
 * a batch job's), as "cpus=...;mems=..." ("" each where there is no
 * cpuset controller): hwloc leaves the others out of the topology. */
static void kcoll_topo_allowed(char *out, size_t len)
{
    static const char *const v2[2] = {"/sys/fs/cgroup%s/cpuset.cpus.effective",
                                      "/sys/fs/cgroup%s/cpuset.mems.effective"};
    static const char *const v1[2] = {"/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus",
                                      "/sys/fs/cgroup/cpuset%s/cpuset.effective_mems"};
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024], file[1200], got[2][384] = {"", ""}, one[384];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        /* cgroup v2: "0::<path>"; v1: "<n>:cpuset:<path>" (a hybrid has
         * both: the one with a cpuset controller answers) */
        const char *const *form = !a[1] ? v2 : strstr(a + 1, "cpuset") ? v1 : NULL;
        for (int k = 0; form && k < 2; k++) {
            snprintf(file, sizeof file, form[k], b + 1);
            kcoll_topo_text_of(file, one, sizeof one);
            if (one[0])
                memcpy(got[k], one, sizeof one);
        }
    }
    if (f)
        fclose(f);
    snprintf(out, len, "cpus=%s;mems=%s", got[0], got[1]);
}

/* The identity of what hwloc sees of this machine (into ident), and the
 * kept file's path: the cache folder's topology-<hash of the identity>.txt.
 * 0, or -1 when there is no folder to name. */
static int kcoll_topo_path(char *path, size_t len, char *ident, size_t ilen)
{
    extern char **environ;
    char cpu[256], online[256], nodes[256], allowed[800], folder[400];
    struct utsname u;
    size_t at;
    if (kcoll_cache_folder(folder, sizeof folder) != 0)
        return -1;
    kcoll_cpu_model(cpu, sizeof cpu);
    kcoll_topo_text_of("/sys/devices/system/cpu/online", online, sizeof online);
    kcoll_topo_text_of("/sys/devices/system/node/online", nodes, sizeof nodes);
    kcoll_topo_allowed(allowed, sizeof allowed);
    if (uname(&u) != 0)
        u.release[0] = '\0';
    at = (size_t)snprintf(ident, ilen, "%s;cpu=%s;online=%s;nodes=%s;kernel=%s;%s;hwloc=%x;"
                          "kcoll=%s",
                          KCOLL_TOPO_FORMAT, cpu, online, nodes, u.release, allowed,
                          hwloc_get_api_version(), KCOLL_VERSION);
    /* hwloc's own variables change what it finds (HWLOC_XMLFILE,
     * HWLOC_COMPONENTS, HWLOC_ALLOW, ...): all of them, as they are */
    uint64_t h = KCOLL_FNV_START;
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "HWLOC_", 6)) {
            h = kcoll_fnv(h, *e, strlen(*e) + 1);
            if (at < ilen)
                at += (size_t)snprintf(ident + at, ilen - at, ";%s", *e);
        }
    if (at >= ilen)
        return -1; /* an identity that does not fit is not one */
    h = kcoll_fnv(KCOLL_FNV_START, ident, strlen(ident));
    const int n = snprintf(path, len, "%s/topology-%016llx.txt", folder, (unsigned long long)h);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The kept file of the identity ident: its facts, or NULL where there is
 * none, or it is damaged or of another identity. */
static kcoll_topo_facts_t *kcoll_topo_read(const char *path, const char *ident)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    kcoll_topo_facts_t *facts = NULL;
    int n = -1, npack = -1, ok = 0;
    unsigned long long llc = 0;
    if (!f)
        return NULL;
    if (!fgets(line, sizeof line, f) || strcmp(line, KCOLL_TOPO_FORMAT "\n"))
        goto done;
    /* the identity in full: two identities of one hash are two machines */
    if (!fgets(line, sizeof line, f) || strncmp(line, "ident ", 6) ||
        strncmp(line + 6, ident, strlen(ident)) || strcmp(line + 6 + strlen(ident), "\n"))
        goto done;
    if (fscanf(f, "npus %d\npackages %d\nllc %llu\n", &n, &npack, &llc) != 3 || n <= 0 ||
        npack < 0)
        goto done;
    if (!fgets(line, sizeof line, f) || strncmp(line, "summary ", 8))
        goto done;
    if (!(facts = kcoll_topo_facts_new(n)))
        goto done;
    facts->npack = npack;
    facts->llc = llc;
    line[strcspn(line, "\n")] = '\0';
    if (strlen(line + 8) >= sizeof facts->summary)
        goto done;
    memcpy(facts->summary, line + 8, strlen(line + 8) + 1);
    for (int i = 0; i < n; i++) {
        int *id = facts->ids + i * KCOLL_TOPO_NLEVELS, pu;
        if (fscanf(f, "pu %d %d %d %d %d %d %d\n", &pu, &facts->os[i], &id[0], &id[1], &id[2],
                   &id[3], &id[4]) != 7 || pu != i)
            goto done;
    }
    ok = fgets(line, sizeof line, f) && !strcmp(line, "end\n");
done:
    fclose(f);
    if (!ok) {
        kcoll_topo_facts_free(facts);
        return NULL;
    }
    return facts;
}

/* kcoll_cache_write's writer of the facts (arg: {facts, ident}). */
typedef struct {
    const kcoll_topo_facts_t *facts;
    const char *ident;
} kcoll_topo_kept_t;

static int kcoll_topo_write(FILE *f, void *arg)
{
    const kcoll_topo_kept_t *k = arg;
    const kcoll_topo_facts_t *t = k->facts;
    fprintf(f, "%s\nident %s\nnpus %d\npackages %d\nllc %llu\nsummary %s\n", KCOLL_TOPO_FORMAT,
            k->ident, t->npus, t->npack, (unsigned long long)t->llc, t->summary);
    for (int i = 0; i < t->npus; i++) {
        const int *id = t->ids + i * KCOLL_TOPO_NLEVELS;
        fprintf(f, "pu %d %d %d %d %d %d %d\n", i, t->os[i], id[0], id[1], id[2], id[3], id[4]);
    }
    fprintf(f, "end\n");
    return ferror(f) ? -1 : 0;
}

/* Keep facts as this machine's in the cache (with the lock held), and in
 * the cache folder where they were loaded (kept_ident: their identity;
 * NULL: read from path). A folder that cannot be written costs nothing but
 * a load in the next process. */
static void kcoll_topo_keep(kcoll_topo_facts_t *facts, const char *path, const char *kept_ident)
{
    char *mine = strdup("");
    if (!mine) {
        kcoll_topo_facts_free(facts);
        return;
    }
    kcoll_topo_facts_free(kcoll_topo_cache.facts);
    free(kcoll_topo_cache.synthetic);
    kcoll_topo_cache.facts = facts;
    kcoll_topo_cache.synthetic = mine;
    if (!kept_ident) {
        snprintf(kcoll_topo_cache.source, sizeof kcoll_topo_cache.source, "read from %s", path);
        return;
    }
    const kcoll_topo_kept_t k = {facts, kept_ident};
    const int saved = path && kcoll_cache_write(path, kcoll_topo_write, (void *)&k) == 0;
    snprintf(kcoll_topo_cache.source, sizeof kcoll_topo_cache.source, "loaded by hwloc%s%s",
             path ? (saved ? ", kept in " : ", not kept in ") : " (no cache folder)",
             path ? path : "");
}

/* This machine's facts from the kept file, kept in the cache (with the lock
 * held). 0, or -1 (no such file: *path and *ident name the one to write,
 * path "" where there is no folder). */
static int kcoll_topo_from_file(char *path, size_t len, char *ident, size_t ilen)
{
    if (kcoll_topo_path(path, len, ident, ilen) != 0) {
        path[0] = '\0';
        return -1;
    }
    kcoll_topo_facts_t *facts = kcoll_topo_read(path, ident);
    if (!facts)
        return -1;
    kcoll_topo_keep(facts, path, NULL);
    return 0;
}

static void *kcoll_topo_ahead_main(void *arg)
{
    kcoll_topo_facts_t *facts;
    (void)arg;
    /* at the process's own priority: the start-up it overlaps (kcoll's,
     * after the host's) waits in host collectives, which spin under
     * several MPIs, and Intel MPI has threads of its own beside it; at the
     * lowest priority this thread got almost none of the core there, and
     * its 4-9 ms of work took up to 110 ms (docs/tuning.md) */
    if (kcoll_topo_load("", &facts, NULL, 0) == 0)
        kcoll_topo_ahead.facts = facts;
    return NULL;
}

void kcoll_topo_prefetch(void)
{
    char path[600], ident[2048];
    sigset_t all, old;
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (!kcoll_topo_cache.facts && !kcoll_topo_ahead.started &&
        kcoll_topo_from_file(path, sizeof path, ident, sizeof ident) != 0) {
        /* the thread inherits the mask: no signal of the program's lands on it */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        kcoll_topo_ahead.started =
            pthread_create(&kcoll_topo_ahead.thread, NULL, kcoll_topo_ahead_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
}

/* Join the load started ahead, if any, and keep what it loaded (in the
 * file too) where nothing is cached yet. Called with the cache locked. */
static void kcoll_topo_ahead_join(void)
{
    if (!kcoll_topo_ahead.started)
        return;
    pthread_join(kcoll_topo_ahead.thread, NULL);
    kcoll_topo_ahead.started = 0;
    kcoll_topo_facts_t *facts = kcoll_topo_ahead.facts;
    kcoll_topo_ahead.facts = NULL;
    if (facts && !kcoll_topo_cache.facts) {
        char path[600], ident[2048];
        const int named = kcoll_topo_path(path, sizeof path, ident, sizeof ident) == 0;
        kcoll_topo_keep(facts, named ? path : NULL, ident);
    } else {
        kcoll_topo_facts_free(facts);
    }
}

void kcoll_topo_settle(void)
{
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    kcoll_topo_ahead_join();
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
}

/* The facts for the current KCOLL_TOPO_SYNTHETIC: kept, read from the kept
 * file (this machine), or loaded. Called with the cache locked. On failure
 * the reason goes to err. */
static kcoll_status_t kcoll_topo_get(const kcoll_topo_facts_t **out, char *err, size_t errlen)
{
    const char *synth = kcoll_param_str(KCOLL_P_TOPO_SYNTHETIC);
    kcoll_topo_facts_t *facts = NULL;
    char *copy = NULL;
    int e;

    if (!synth)
        synth = "";
    kcoll_topo_ahead_join();
    if (kcoll_topo_cache.facts && strcmp(kcoll_topo_cache.synthetic, synth) == 0) {
        *out = kcoll_topo_cache.facts;
        return KCOLL_OK;
    }
    if (!synth[0]) { /* this machine: the kept file, else hwloc (and keep it) */
        char path[600], ident[2048];
        if (kcoll_topo_from_file(path, sizeof path, ident, sizeof ident) != 0) {
            if ((e = kcoll_topo_load("", &facts, err, errlen)) != 0) {
                errno = e;
                return KCOLL_ERR_SYS;
            }
            kcoll_topo_keep(facts, path[0] ? path : NULL, ident);
        }
        if (!kcoll_topo_cache.facts || kcoll_topo_cache.synthetic[0]) {
            kcoll_fmt(err, errlen, "out of memory");
            return KCOLL_ERR_NOMEM;
        }
        *out = kcoll_topo_cache.facts;
        return KCOLL_OK;
    }

    copy = strdup(synth);
    if (!copy) {
        kcoll_fmt(err, errlen, "out of memory");
        return KCOLL_ERR_NOMEM;
    }
    if ((e = kcoll_topo_load(synth, &facts, err, errlen)) != 0) {
        free(copy);
        errno = e;
        return KCOLL_ERR_SYS;
    }
    kcoll_topo_facts_free(kcoll_topo_cache.facts);
    free(kcoll_topo_cache.synthetic);
    kcoll_topo_cache.facts = facts;
    kcoll_topo_cache.synthetic = copy;
    snprintf(kcoll_topo_cache.source, sizeof kcoll_topo_cache.source,
             "hwloc synthetic '%.600s'", synth);
    *out = facts;
    return KCOLL_OK;
}

int kcoll_topo_summary(char *out, size_t outlen)
{
    const kcoll_topo_facts_t *f;
    if (!out || outlen == 0)
        return -1;
    out[0] = '\0';
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&f, out, outlen) != KCOLL_OK) {
        pthread_mutex_unlock(&kcoll_topo_cache.lock);
        return -1;
    }
    snprintf(out, outlen, "%s", f->summary);
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return 0;
}

const char *kcoll_topo_source(char *out, size_t outlen)
{
    const kcoll_topo_facts_t *f;
    char err[256];
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&f, err, sizeof err) == KCOLL_OK)
        snprintf(out, outlen, "%s", kcoll_topo_cache.source);
    else
        snprintf(out, outlen, "none: %s", err);
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return out;
}

/* This machine's PUs and largest cache (0 each where unknown). */
static void kcoll_topo_counts(int *npus, uint64_t *llc)
{
    const kcoll_topo_facts_t *f;
    *npus = 0;
    *llc = 0;
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&f, NULL, 0) == KCOLL_OK) {
        *npus = f->npus;
        *llc = f->llc;
    }
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
}

size_t kcoll_topo_llc_bytes(void)
{
    int npus;
    uint64_t llc;
    kcoll_topo_counts(&npus, &llc);
    return llc > SIZE_MAX ? SIZE_MAX : (size_t)llc;
}

/* The level a name stands for (kcoll_topo_levels; "socket" is "package"),
 * or -1. */
static int kcoll_topo_level_of(const char *name, size_t len)
{
    if (len == 6 && !strncmp(name, "socket", len))
        return KCOLL_TOPO_NLEVELS - 1;
    for (int l = 0; l < KCOLL_TOPO_NLEVELS; l++)
        if (strlen(kcoll_topo_levels[l].name) == len &&
            !strncmp(kcoll_topo_levels[l].name, name, len))
            return l;
    return -1;
}

/* Is the CPU of OS index os in set (size bytes)? */
static int kcoll_topo_has(const cpu_set_t *set, size_t size, int os)
{
    return os >= 0 && (size_t)os < size * 8 && CPU_ISSET_S((size_t)os, size, set);
}

/* The CPUs this process is bound to, as hwloc's process binding on Linux
 * takes them: every thread's affinity, together. 0, or -1. */
static int kcoll_topo_binding(cpu_set_t *set, size_t size)
{
    DIR *d = opendir("/proc/self/task");
    cpu_set_t *one = CPU_ALLOC(CPU_SETSIZE * 8);
    struct dirent *e;
    int any = 0;
    CPU_ZERO_S(size, set);
    while (d && one && (e = readdir(d)))
        if (e->d_name[0] != '.' &&
            sched_getaffinity((pid_t)atoi(e->d_name), size, one) == 0) {
            CPU_OR_S(size, set, set, one);
            any = 1;
        }
    if (d)
        closedir(d);
    CPU_FREE(one);
    if (!any && sched_getaffinity(0, size, set) == 0)
        any = 1;
    return any ? 0 : -1;
}

/* The PU (logical index) this process runs on under KCOLL_TOPO_PLACE, or
 * -1 where it spans several (bound to more than one, and not asked to
 * place by index); *where then holds its binding (every PU where it has
 * none). */
static int kcoll_topo_pu(const kcoll_topo_facts_t *f, int index, int synthetic, cpu_set_t *where,
                         size_t size)
{
    const char *place = kcoll_param_str(KCOLL_P_TOPO_PLACE);
    const int npu = f->npus;
    CPU_ZERO_S(size, where);
    if (npu <= 0)
        return -1;
    if (!strcmp(place, "compact") || (synthetic && strcmp(place, "scatter")))
        return index % npu;
    if (!strcmp(place, "scatter")) {
        const int npack = f->npack > 0 ? f->npack : 1;
        const int per = npu / npack > 0 ? npu / npack : 1;
        return ((index % npack) * per + (index / npack) % per) % npu;
    }
    /* bound: the binding if it is one PU, else where it runs now */
    if (kcoll_topo_binding(where, size) != 0) {
        for (int i = 0; i < npu; i++)
            if (f->os[i] >= 0 && (size_t)f->os[i] < size * 8)
                CPU_SET_S((size_t)f->os[i], size, where);
        return -1;
    }
    if (CPU_COUNT_S(size, where) == 1)
        for (int i = 0; i < npu; i++)
            if (kcoll_topo_has(where, size, f->os[i]))
                return i;
    return -1;
}

int kcoll_topo_place(int index, int *ids, int max, int *pu, char *err, size_t errlen)
{
    const kcoll_topo_facts_t *f;
    const char *spec = kcoll_param_str(KCOLL_P_HIER_LEVELS);
    const size_t size = CPU_ALLOC_SIZE(CPU_SETSIZE * 8);
    int n = 0, rc = 0;
    *pu = -1;
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&f, err, errlen) != KCOLL_OK) {
        pthread_mutex_unlock(&kcoll_topo_cache.lock);
        return -1;
    }
    const int synthetic = kcoll_topo_cache.synthetic[0] != '\0';
    cpu_set_t *where = CPU_ALLOC(CPU_SETSIZE * 8);
    const int at = where ? kcoll_topo_pu(f, index, synthetic, where, size) : -1;
    *pu = at;
    for (const char *p = spec; *p && rc == 0;) {
        size_t len = strcspn(p, ",");
        const int l = len ? kcoll_topo_level_of(p, len) : 0;
        if (len && l < 0) {
            kcoll_fmt(err, errlen,
                      "KCOLL_HIER_LEVELS='%s': unknown level '%.*s' (l1, l2, l3, numa, package)",
                      spec, (int)len, p);
            rc = -1;
        } else if (len && n < max) {
            /* the one object of that level that holds where this process
             * runs: its PU's, or the one every PU of its binding shares */
            int id = -1, seen = 0;
            for (int i = 0; i < f->npus && where; i++) {
                const int os = f->os[i];
                if (at >= 0 ? i != at : !kcoll_topo_has(where, size, os))
                    continue;
                const int v = f->ids[i * KCOLL_TOPO_NLEVELS + l];
                if (v < 0)
                    continue; /* this PU has none: hwloc's search skips it too */
                if (!seen)
                    id = v, seen = 1;
                else if (v != id)
                    id = -1, seen = 2;
                if (seen == 2)
                    break;
            }
            ids[n++] = id;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (where)
        CPU_FREE(where);
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return rc ? -1 : n;
}

int kcoll_topo_npus(void)
{
    int npus;
    uint64_t llc;
    kcoll_topo_counts(&npus, &llc);
    return npus > 0 ? npus : 0;
}
