/* Topology through hwloc 2.x (DESIGN.md section 6).
 *
 * kcoll asks hwloc for the machine's structure: packages, NUMA nodes,
 * cores, hardware threads (PUs) and caches. Loading a topology reads a good
 * part of /sys and costs milliseconds, so it is loaded once per process and
 * kept, under a mutex, in kcoll_topo_cache.
 *
 * KCOLL_TOPO_SYNTHETIC replaces the machine with an hwloc synthetic
 * description such as "pack:2 numa:1 core:4 pu:1", so that tests can
 * exercise multi-level hierarchies on a small machine. The parameter can be
 * changed at run time (kcoll_param_set), so the cache remembers which
 * description it was loaded from and loads again when that changes. A
 * description that hwloc does not accept is an error whose reason names the
 * string, never a silent fall back to the real machine.
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
 *
 * Loading this machine's topology costs 6-9 ms at MPI_Init with two ranks
 * loading at once (hwloc's plugins and its reading of /sys), most of what
 * kcoll adds to MPI_Init. kcoll_topo_prefetch starts that load on a thread
 * of its own (every signal blocked there) before the host MPI starts, which
 * takes far longer and mostly waits for its launcher; the first question
 * about this machine then joins the thread and keeps what it loaded, the
 * same topology a load on the spot gives.
 */
#include "topo/topo.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/params.h"
#include "base/status.h"

/* Distinct cache sizes listed for one level. */
#define KCOLL_TOPO_MAX_SIZES 8

typedef struct {
    pthread_mutex_t lock;
    hwloc_topology_t topo; /* NULL until loaded */
    char *synthetic;       /* description it was loaded from ("" = this machine) */
} kcoll_topo_cache_t;

static kcoll_topo_cache_t kcoll_topo_cache = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL };

/* The load started ahead (kcoll_topo_prefetch): under the cache's lock,
 * except topo, which the thread sets and pthread_join publishes. */
static struct {
    pthread_t thread;
    int started;           /* a thread to join */
    hwloc_topology_t topo; /* what it loaded (NULL: it failed) */
} kcoll_topo_ahead;

/* Load a topology: this machine's (synth ""), or the hwloc synthetic
 * description synth. 0, or errno with the reason in err. */
static int kcoll_topo_load(const char *synth, hwloc_topology_t *out, char *err, size_t errlen)
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
    *out = topo;
    return 0;
}

static void *kcoll_topo_ahead_main(void *arg)
{
    hwloc_topology_t topo;
    (void)arg;
    /* the host's start-up first: this thread takes what it leaves idle */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    if (kcoll_topo_load("", &topo, NULL, 0) == 0)
        kcoll_topo_ahead.topo = topo;
    return NULL;
}

void kcoll_topo_prefetch(void)
{
    sigset_t all, old;
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (!kcoll_topo_cache.topo && !kcoll_topo_ahead.started) {
        /* the thread inherits the mask: no signal of the program's lands on it */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        kcoll_topo_ahead.started =
            pthread_create(&kcoll_topo_ahead.thread, NULL, kcoll_topo_ahead_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
}

/* Join the load started ahead, if any, and keep what it loaded where
 * nothing is cached yet. Called with the cache locked. */
static void kcoll_topo_ahead_join(void);

void kcoll_topo_settle(void)
{
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    kcoll_topo_ahead_join();
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
}

static void kcoll_topo_ahead_join(void)
{
    if (!kcoll_topo_ahead.started)
        return;
    pthread_join(kcoll_topo_ahead.thread, NULL);
    kcoll_topo_ahead.started = 0;
    hwloc_topology_t topo = kcoll_topo_ahead.topo;
    kcoll_topo_ahead.topo = NULL;
    char *mine = topo && !kcoll_topo_cache.topo ? strdup("") : NULL;
    if (mine) {
        kcoll_topo_cache.topo = topo;
        kcoll_topo_cache.synthetic = mine;
    } else if (topo) {
        hwloc_topology_destroy(topo);
    }
}

/* Load (or reuse) the topology for the current KCOLL_TOPO_SYNTHETIC.
 * Called with the cache locked. On failure the reason goes to err. */
static kcoll_status_t kcoll_topo_get(hwloc_topology_t *out, char *err, size_t errlen)
{
    const char *synth = kcoll_param_str(KCOLL_P_TOPO_SYNTHETIC);
    hwloc_topology_t topo = NULL;
    char *copy = NULL;
    int e;

    if (!synth)
        synth = "";
    kcoll_topo_ahead_join();
    if (kcoll_topo_cache.topo && strcmp(kcoll_topo_cache.synthetic, synth) == 0) {
        *out = kcoll_topo_cache.topo;
        return KCOLL_OK;
    }

    copy = strdup(synth);
    if (!copy) {
        kcoll_fmt(err, errlen, "out of memory");
        return KCOLL_ERR_NOMEM;
    }
    if ((e = kcoll_topo_load(synth, &topo, err, errlen)) != 0) {
        free(copy);
        errno = e;
        return KCOLL_ERR_SYS;
    }

    if (kcoll_topo_cache.topo)
        hwloc_topology_destroy(kcoll_topo_cache.topo);
    free(kcoll_topo_cache.synthetic);
    kcoll_topo_cache.topo = topo;
    kcoll_topo_cache.synthetic = copy;
    *out = topo;
    return KCOLL_OK;
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

int kcoll_topo_summary(char *out, size_t outlen)
{
    static const hwloc_obj_type_t caches[] = {
        HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE,
        HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE,
    };
    hwloc_topology_t topo;
    size_t pos = 0;
    int first = 1;

    if (!out || outlen == 0)
        return -1;
    out[0] = '\0';
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&topo, out, outlen) != KCOLL_OK) {
        pthread_mutex_unlock(&kcoll_topo_cache.lock);
        return -1;
    }
    kcoll_topo_count(topo, HWLOC_OBJ_PACKAGE, "package", "packages", out, outlen, &pos);
    kcoll_topo_count(topo, HWLOC_OBJ_NUMANODE, "NUMA node", "NUMA nodes", out, outlen, &pos);
    kcoll_topo_count(topo, HWLOC_OBJ_CORE, "core", "cores", out, outlen, &pos);
    kcoll_topo_count(topo, HWLOC_OBJ_PU, "PU", "PUs", out, outlen, &pos);
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++)
        kcoll_topo_cache_level(topo, caches[i], 5 - (unsigned)i, &first, out, outlen, &pos);
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return 0;
}

size_t kcoll_topo_llc_bytes(void)
{
    hwloc_topology_t topo;
    uint64_t best = 0;

    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&topo, NULL, 0) == KCOLL_OK) {
        for (int d = 0; d < hwloc_topology_get_depth(topo); d++) {
            hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, (unsigned)d, 0);

            if (!obj || !hwloc_obj_type_is_cache(obj->type))
                continue;
            for (; obj; obj = obj->next_cousin)
                if (obj->attr->cache.size > best)
                    best = obj->attr->cache.size;
        }
    }
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return best > SIZE_MAX ? SIZE_MAX : (size_t)best;
}

/* The object type and cache depth a level name stands for. */
static int kcoll_topo_level_type(const char *name, size_t len, hwloc_obj_type_t *type)
{
    static const struct {
        const char *name;
        hwloc_obj_type_t type;
    } names[] = {
        {"l1", HWLOC_OBJ_L1CACHE}, {"l2", HWLOC_OBJ_L2CACHE}, {"l3", HWLOC_OBJ_L3CACHE},
        {"numa", HWLOC_OBJ_NUMANODE}, {"package", HWLOC_OBJ_PACKAGE},
        {"socket", HWLOC_OBJ_PACKAGE},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && !strncmp(names[i].name, name, len)) {
            *type = names[i].type;
            return 0;
        }
    return -1;
}

/* The PU this process runs on under KCOLL_TOPO_PLACE: NULL where it spans
 * several (bound to more than one, and not asked to place by index). */
static hwloc_obj_t kcoll_topo_pu(hwloc_topology_t topo, int index, int synthetic,
                                 hwloc_cpuset_t where)
{
    const char *place = kcoll_param_str(KCOLL_P_TOPO_PLACE);
    const int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (npu <= 0)
        return NULL;
    if (!strcmp(place, "compact") || (synthetic && strcmp(place, "scatter")))
        return hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)(index % npu));
    if (!strcmp(place, "scatter")) {
        int npack = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        if (npack <= 0)
            npack = 1;
        const int per = npu / npack > 0 ? npu / npack : 1;
        return hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU,
                                     (unsigned)(((index % npack) * per + (index / npack) % per) % npu));
    }
    /* bound: the binding if it is one PU's worth of objects, else where it runs now */
    if (hwloc_get_cpubind(topo, where, HWLOC_CPUBIND_PROCESS) == 0 &&
        hwloc_bitmap_weight(where) == 1)
        return hwloc_get_pu_obj_by_os_index(topo, (unsigned)hwloc_bitmap_first(where));
    return NULL;
}

int kcoll_topo_place(int index, int *ids, int max, int *pu, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    const char *spec = kcoll_param_str(KCOLL_P_HIER_LEVELS);
    int n = 0, rc = 0;
    *pu = -1;
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&topo, err, errlen) != KCOLL_OK) {
        pthread_mutex_unlock(&kcoll_topo_cache.lock);
        return -1;
    }
    const int synthetic = kcoll_topo_cache.synthetic[0] != '\0';
    hwloc_cpuset_t where = hwloc_bitmap_alloc();
    hwloc_obj_t at = where ? kcoll_topo_pu(topo, index, synthetic, where) : NULL;
    if (at) {
        *pu = (int)at->logical_index;
        hwloc_bitmap_copy(where, at->cpuset);
    } else if (where && hwloc_get_cpubind(topo, where, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_fill(where);
    }
    for (const char *p = spec; *p && rc == 0;) {
        size_t len = strcspn(p, ",");
        hwloc_obj_type_t type;
        if (len && kcoll_topo_level_type(p, len, &type)) {
            kcoll_fmt(err, errlen,
                      "KCOLL_HIER_LEVELS='%s': unknown level '%.*s' (l1, l2, l3, numa, package)",
                      spec, (int)len, p);
            rc = -1;
        } else if (len && n < max) {
            /* the one object of that type that holds where this process
             * runs (NUMA nodes hang beside the CPU tree in hwloc 2, so
             * by the objects' cpusets, not by ancestry) */
            hwloc_obj_t obj = where ? hwloc_get_next_obj_covering_cpuset_by_type(topo, where,
                                                                                  type, NULL)
                                    : NULL;
            ids[n] = -1;
            if (obj && !hwloc_get_next_obj_covering_cpuset_by_type(topo, where, type, obj))
                ids[n] = (int)obj->logical_index;
            n++;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    hwloc_bitmap_free(where);
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return rc ? -1 : n;
}

int kcoll_topo_npus(void)
{
    hwloc_topology_t topo;
    int n = 0;
    pthread_mutex_lock(&kcoll_topo_cache.lock);
    if (kcoll_topo_get(&topo, NULL, 0) == KCOLL_OK)
        n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    pthread_mutex_unlock(&kcoll_topo_cache.lock);
    return n > 0 ? n : 0;
}
