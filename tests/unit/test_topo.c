/* kcoll's topology summary: this machine, synthetic hierarchies given
 * through the TOPO_SYNTHETIC parameter (counts, cache levels and sizes, the
 * largest cache), a description hwloc refuses (an error with a reason,
 * never the real machine instead), and the switch back to this machine.
 * This machine is first loaded ahead (kcoll_topo_prefetch, as MPI_Init
 * does) and at the end on the spot: the summary, the largest cache and
 * where this process runs must be the same. */
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    char here[512], out[512];
    int r;

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

    return check_report("test_topo");
}
