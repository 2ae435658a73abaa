/* kcoll's topology: this machine, synthetic hierarchies given through the
 * TOPO_SYNTHETIC parameter (counts, cache levels and sizes, the largest
 * cache), a description hwloc refuses (an error with a reason, never the
 * real machine instead), and the switch back to this machine.
 *
 * This machine is first loaded ahead by hwloc (kcoll_topo_prefetch, as
 * MPI_Init does), in a fresh cache folder, and kept there; where this
 * process runs must be what hwloc itself says (asked here directly). Back
 * from the synthetic ones it is read from the kept file: the summary, the
 * largest cache and every place must be the same. A damaged kept file, one
 * of another identity, a folder that cannot be written and no folder at
 * all: hwloc loads again, with the same answers. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/params.h"
#include "topo/topo.h"

#define MiB ((size_t)1 << 20)

/* Whether `item` (such as "4 cores") appears in the summary as a whole
 * item: preceded by the start of the line or a space, and followed by the
 * end, ',', ';' or ' '. */
static int has_item(const char *line, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = strstr(line, item); p; p = strstr(p + 1, item)) {
        char after = p[n];
        if ((p == line || p[-1] == ' ') &&
            (after == '\0' || after == ',' || after == ';' || after == ' '))
            return 1;
    }
    return 0;
}

/* Set TOPO_SYNTHETIC and take the summary; returns its return value. */
static int summary_of(const char *synthetic, char *out, size_t len)
{
    int set = kcoll_params_set("TOPO_SYNTHETIC", synthetic);
    CHECK(set == 0, "TOPO_SYNTHETIC='%s' not accepted as a parameter", synthetic);
    memset(out, 'x', len);
    return kcoll_topo_summary(out, len);
}

/* Every place kcoll gives this process (bound, compact and scatter, as the
 * node's process 0..3), at every level, into out[48] (PU, then 5 ids). */
static void places(int out[3][4][6])
{
    static const char *const how[3] = {"bound", "compact", "scatter"};
    char err[256], levels[256];
    snprintf(levels, sizeof levels, "%s", kcoll_params_get("HIER_LEVELS"));
    CHECK(kcoll_params_set("HIER_LEVELS", "l1,l2,l3,numa,package") == 0, "levels");
    for (int h = 0; h < 3; h++) {
        CHECK(kcoll_params_set("TOPO_PLACE", how[h]) == 0, "TOPO_PLACE %s", how[h]);
        for (int i = 0; i < 4; i++) {
            int n = kcoll_topo_place(i, out[h][i] + 1, 5, &out[h][i][0], err, sizeof err);
            CHECK(n == 5, "%s %d: %d levels: %s", how[h], i, n, err);
        }
    }
    kcoll_params_set("TOPO_PLACE", "bound");
    kcoll_params_set("HIER_LEVELS", levels);
}

/* hwloc's own answer for this process (bound: its binding), or for the
 * i-th PU (compact): the one object of each level over those CPUs, or -1. */
static void hwloc_place(int compact, int i, int out[6])
{
    static const hwloc_obj_type_t type[5] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,
                                             HWLOC_OBJ_L3CACHE, HWLOC_OBJ_NUMANODE,
                                             HWLOC_OBJ_PACKAGE};
    hwloc_topology_t t;
    CHECK(hwloc_topology_init(&t) == 0 && hwloc_topology_load(t) == 0, "hwloc loads");
    hwloc_cpuset_t where = hwloc_bitmap_alloc();
    const int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    out[0] = -1;
    if (compact) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (unsigned)(i % npu));
        hwloc_bitmap_copy(where, pu->cpuset);
        out[0] = (int)pu->logical_index;
    } else {
        CHECK(hwloc_get_cpubind(t, where, HWLOC_CPUBIND_PROCESS) == 0, "binding");
        if (hwloc_bitmap_weight(where) == 1)
            out[0] = (int)hwloc_get_pu_obj_by_os_index(t, (unsigned)hwloc_bitmap_first(where))
                         ->logical_index;
    }
    for (int l = 0; l < 5; l++) {
        hwloc_obj_t o = hwloc_get_next_obj_covering_cpuset_by_type(t, where, type[l], NULL);
        out[1 + l] = o && !hwloc_get_next_obj_covering_cpuset_by_type(t, where, type[l], o)
                         ? (int)o->logical_index
                         : -1;
    }
    hwloc_bitmap_free(where);
    hwloc_topology_destroy(t);
}

/* Where this machine's answers come from now (kcoll_topo_source), after a
 * switch away and back (the kept facts dropped). */
static const char *reload(char *src, size_t len)
{
    char out[512];
    summary_of("pack:1 numa:1 core:1 pu:1", out, sizeof out);
    summary_of("", out, sizeof out);
    return kcoll_topo_source(src, len);
}

/* The machine's answers now are those of `want` (summary, llc, places). */
static void same_answers(const char *what, const char *summary, size_t llc, int want[3][4][6])
{
    char out[512];
    int now[3][4][6];
    CHECK(kcoll_topo_summary(out, sizeof out) == 0 && !strcmp(out, summary), "%s: summary '%s'",
          what, out);
    CHECK(kcoll_topo_llc_bytes() == llc, "%s: llc %zu", what, kcoll_topo_llc_bytes());
    places(now);
    CHECK(!memcmp(now, want, sizeof now), "%s: places differ", what);
}

int main(void)
{
    char here[512], out[512];
    int r;

    /* a fresh cache folder: nothing kept yet */
    char dir[] = "/tmp/kcoll-test-topo-XXXXXX", src[800], path[800];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    CHECK(kcoll_params_set("CACHE_DIR", dir) == 0, "CACHE_DIR");

    /* this machine, loaded ahead (a second prefetch while the first runs
     * does nothing) */
    kcoll_topo_prefetch();
    kcoll_topo_prefetch();
    CHECK(kcoll_params_set("TOPO_SYNTHETIC", "") == 0, "empty TOPO_SYNTHETIC");
    r = kcoll_topo_summary(here, sizeof here);
    printf("test_topo: this machine: %s\n", here);
    CHECK(r == 0, "summary of this machine: %d: %s", r, here);
    CHECK(strstr(here, "package") != NULL, "no package in '%s'", here);
    CHECK(strstr(here, "PU") != NULL, "no PU in '%s'", here);
    size_t llc_here = kcoll_topo_llc_bytes();
    printf("test_topo: this machine's largest cache: %zu bytes\n", llc_here);
    int ids_here[8], ids[8], pu_here, pu;
    char err[256];
    const int nl_here = kcoll_topo_place(0, ids_here, 8, &pu_here, err, sizeof err);
    CHECK(nl_here >= 0, "where this process runs: %s", err);
    kcoll_topo_source(src, sizeof src);
    printf("test_topo: this machine's topology: %s\n", src);
    CHECK(!strncmp(src, "loaded by hwloc, kept in ", 25) && strstr(src, dir), "source: %s", src);
    snprintf(path, sizeof path, "%s", src + 25);
    CHECK(access(path, R_OK) == 0, "no kept file %s", path);
    int hw[3][4][6], direct[6];
    places(hw);
    for (int i = 0; i < 4; i++) { /* what hwloc says, asked directly */
        hwloc_place(1, i, direct);
        CHECK(!memcmp(hw[1][i], direct, sizeof direct),
              "compact %d: PU %d ids %d %d %d %d %d; hwloc: PU %d ids %d %d %d %d %d", i,
              hw[1][i][0], hw[1][i][1], hw[1][i][2], hw[1][i][3], hw[1][i][4], hw[1][i][5],
              direct[0], direct[1], direct[2], direct[3], direct[4], direct[5]);
    }
    hwloc_place(0, 0, direct);
    CHECK(!memcmp(hw[0][0], direct, sizeof direct),
          "bound: PU %d ids %d %d %d %d %d; hwloc: PU %d ids %d %d %d %d %d", hw[0][0][0],
          hw[0][0][1], hw[0][0][2], hw[0][0][3], hw[0][0][4], hw[0][0][5], direct[0], direct[1],
          direct[2], direct[3], direct[4], direct[5]);

    /* two packages, one NUMA node each, two single-threaded cores each */
    r = summary_of("pack:2 numa:1 core:2 pu:1", out, sizeof out);
    printf("test_topo: pack:2 numa:1 core:2 pu:1: %s\n", out);
    CHECK(r == 0, "summary: %d: %s", r, out);
    CHECK(has_item(out, "2 packages"), "2 packages: %s", out);
    CHECK(has_item(out, "2 NUMA nodes"), "2 NUMA nodes: %s", out);
    CHECK(has_item(out, "4 cores"), "4 cores: %s", out);
    CHECK(has_item(out, "4 PUs"), "4 PUs: %s", out);
    CHECK(strstr(out, "L1") == NULL && strstr(out, "L2") == NULL && strstr(out, "L3") == NULL,
          "no cache described, none listed: %s", out);
    CHECK(kcoll_topo_llc_bytes() == 0, "no cache: llc %zu", kcoll_topo_llc_bytes());

    /* singular forms */
    r = summary_of("pack:1 numa:1 core:1 pu:1", out, sizeof out);
    CHECK(r == 0, "summary: %d: %s", r, out);
    CHECK(has_item(out, "1 package") && has_item(out, "1 NUMA node") && has_item(out, "1 core") &&
              has_item(out, "1 PU"),
          "singular forms: %s", out);

    /* caches with given sizes: one L3 of 8 MiB, an L2 and an L1d per core */
    r = summary_of("pack:1 l3:1(size=8MiB) core:4 l2:1(size=1MiB) l1d:1(size=48KiB) pu:2", out,
                   sizeof out);
    printf("test_topo: with caches: %s\n", out);
    CHECK(r == 0, "summary: %d: %s", r, out);
    CHECK(has_item(out, "1 package") && has_item(out, "4 cores") && has_item(out, "8 PUs"),
          "counts: %s", out);
    CHECK(strstr(out, "L3 8 MiB x1") != NULL, "L3 8 MiB x1: %s", out);
    CHECK(strstr(out, "L2 1 MiB x4") != NULL, "L2 1 MiB x4: %s", out);
    CHECK(strstr(out, "L1d 48 KiB x4") != NULL, "L1d 48 KiB x4: %s", out);
    CHECK(strstr(out, "L3") < strstr(out, "L2") && strstr(out, "L2") < strstr(out, "L1d"),
          "levels listed from the last one down: %s", out);
    CHECK(kcoll_topo_llc_bytes() == 8 * MiB, "llc %zu, want 8 MiB", kcoll_topo_llc_bytes());

    /* an L3 per package: two of them, 16 MiB each */
    r = summary_of("pack:2 l3:1(size=16MiB) core:2 l1d:1(size=32KiB) pu:1", out, sizeof out);
    printf("test_topo: two L3: %s\n", out);
    CHECK(r == 0, "summary: %d: %s", r, out);
    CHECK(strstr(out, "L3 16 MiB x2") != NULL, "L3 16 MiB x2: %s", out);
    CHECK(strstr(out, "L1d 32 KiB x4") != NULL, "L1d 32 KiB x4: %s", out);
    CHECK(kcoll_topo_llc_bytes() == 16 * MiB, "llc %zu, want 16 MiB", kcoll_topo_llc_bytes());

    /* a short output buffer: truncated, still terminated */
    char small[20];
    memset(small, 'x', sizeof small);
    r = kcoll_topo_summary(small, sizeof small);
    CHECK(r == 0 && memchr(small, '\0', sizeof small) != NULL &&
              strncmp(small, out, strlen(small)) == 0,
          "truncated summary: %d", r);

    /* descriptions hwloc refuses: -1, a reason, and no cache */
    static const char *const bad[] = {"bogus:3", "pack:2 core:x pu:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = summary_of(bad[i], out, sizeof out);
        printf("test_topo: '%s': %d: %s\n", bad[i], r, out);
        CHECK(r == -1, "'%s' accepted: %s", bad[i], out);
        CHECK(memchr(out, '\0', sizeof out) != NULL && out[0] != '\0', "'%s': no reason", bad[i]);
        CHECK(strstr(out, bad[i]) != NULL, "reason does not name the description: %s", out);
        CHECK(kcoll_topo_llc_bytes() == 0, "'%s': llc %zu", bad[i], kcoll_topo_llc_bytes());
        /* asked again: still refused, not remembered as something else */
        r = kcoll_topo_summary(out, sizeof out);
        CHECK(r == -1, "'%s' accepted the second time: %s", bad[i], out);
    }

    /* back to this machine */
    r = summary_of("", out, sizeof out);
    printf("test_topo: back to this machine: %s\n", out);
    CHECK(r == 0, "summary: %d: %s", r, out);
    CHECK(strcmp(out, here) == 0, "'%s' != '%s'", out, here);
    CHECK(kcoll_topo_llc_bytes() == llc_here, "llc %zu != %zu", kcoll_topo_llc_bytes(), llc_here);
    const int nl = kcoll_topo_place(0, ids, 8, &pu, err, sizeof err);
    CHECK(nl == nl_here && pu == pu_here, "placement: %d levels, PU %d ahead; %d, PU %d now", nl_here,
          pu_here, nl, pu);
    for (int l = 0; l < nl && l < nl_here; l++)
        CHECK(ids[l] == ids_here[l], "level %d: %d ahead, %d now", l, ids_here[l], ids[l]);

    kcoll_topo_source(src, sizeof src);
    CHECK(!strncmp(src, "read from ", 10) && !strcmp(src + 10, path), "back: %s", src);
    same_answers("read from the kept file", here, llc_here, hw);

    /* a damaged file: loaded again, and kept whole */
    FILE *f = fopen(path, "r+");
    CHECK(f && ftruncate(fileno(f), 60) == 0, "truncate %s", path);
    if (f)
        fclose(f);
    CHECK(!strncmp(reload(src, sizeof src), "loaded by hwloc, kept in ", 25), "damaged: %s", src);
    same_answers("after a damaged file", here, llc_here, hw);
    CHECK(!strncmp(reload(src, sizeof src), "read from ", 10), "rewritten: %s", src);

    /* a file of another identity under this one's name */
    char text[8192];
    f = fopen(path, "r");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = '\0';
    char *cpu = strstr(text, ";cpu=");
    CHECK(cpu != NULL, "no cpu in the kept file");
    if (cpu)
        cpu[5] = cpu[5] == 'X' ? 'Y' : 'X';
    f = fopen(path, "w");
    CHECK(f && fwrite(text, 1, len, f) == len, "rewrite %s", path);
    if (f)
        fclose(f);
    CHECK(!strncmp(reload(src, sizeof src), "loaded by hwloc, kept in ", 25), "other: %s", src);
    same_answers("after another identity", here, llc_here, hw);

    /* a folder that cannot be written, and none at all */
    CHECK(kcoll_params_set("CACHE_DIR", "/proc/kcoll-test") == 0, "CACHE_DIR");
    CHECK(!strncmp(reload(src, sizeof src), "loaded by hwloc, not kept in /proc/kcoll-test", 44),
          "unwritable: %s", src);
    same_answers("unwritable folder", here, llc_here, hw);
    CHECK(kcoll_params_set("CACHE_DIR", "") == 0, "CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK(!strcmp(reload(src, sizeof src), "loaded by hwloc (no cache folder)"), "none: %s", src);
    same_answers("no folder", here, llc_here, hw);

    unlink(path);
    CHECK(rmdir(dir) == 0, "%s left with more than the kept file", dir);
    return check_report("test_topo");
}
