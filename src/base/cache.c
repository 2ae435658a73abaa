/* kcoll's per-user cache folder (see cache.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_* */
#endif
#include "base/cache.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/params.h"

int kcoll_cache_folder(char *out, size_t len)
{
    const char *dir = kcoll_param_str(KCOLL_P_CACHE_DIR);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (dir && *dir)
        n = snprintf(out, len, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(out, len, "%s/kcoll", xdg);
    else if (home && *home)
        n = snprintf(out, len, "%s/.cache/kcoll", home);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

uint64_t kcoll_fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull; /* the 64-bit FNV prime */
    }
    return h;
}

void kcoll_cpu_model(char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(out, len, "%s", strchr(line, ':') + 2);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    if (f)
        fclose(f);
}

int kcoll_cpu_affinity(uint64_t *words, int n)
{
    cpu_set_t set;
    memset(words, 0, (size_t)n * sizeof *words);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int cpu = 0; cpu < n * 64 && cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            words[cpu / 64] |= 1ull << (cpu % 64);
    return 0;
}

int kcoll_cpu_count(const uint64_t *words, int n)
{
    int cpus = 0;
    for (int w = 0; w < n; w++)
        cpus += __builtin_popcountll(words[w]);
    return cpus;
}

double kcoll_run_delay(void)
{
    /* "<ns on a CPU> <ns waiting on a run queue> <time slices>" */
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long ran = 0, waited = 0;
    const int got = f ? fscanf(f, "%llu %llu", &ran, &waited) : 0;
    if (f)
        fclose(f);
    return got == 2 ? (double)waited * 1e-9 : -1;
}

/* mkdir -p of the file's folder (0 on success). */
static int kcoll_cache_dirs(const char *file)
{
    char d[512];
    snprintf(d, sizeof d, "%s", file);
    char *slash = strrchr(d, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    for (char *q = d + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            if (mkdir(d, 0700) != 0 && errno != EEXIST)
                return -1;
            *q = '/';
        }
    return mkdir(d, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int kcoll_cache_write(const char *path, int (*write)(FILE *f, void *arg), void *arg)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = kcoll_cache_dirs(path) == 0 ? fopen(tmp, "w") : NULL;
    int ok = f && write(f, arg) == 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok) {
        const int e = errno ? errno : EIO;
        if (f)
            unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}
