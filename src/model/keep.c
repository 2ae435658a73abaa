/* Decisions kept between jobs (see keep.h).
 *
 * The file, decisions.bin in the cache folder: a header (magic, format,
 * the hash, the count) and the memo's records (kcoll_memo_rec_t) as this
 * build lays them out; the hash covers the layout too. The hash of what
 * the model prices with:
 * - kcoll's code: the GNU build-id of the object kcoll runs in (the
 *   library, or a program kcoll is linked into), else that file's size and
 *   time; neither known: nothing is kept;
 * - the tuning in force, as kcoll_tuning_write writes it;
 * - every parameter but the algorithm choices and those that only report
 *   (KCOLL_STATS, KCOLL_TRACE, KCOLL_WARN) or say where and whether to
 *   keep (KCOLL_CACHE_DIR, KCOLL_KEEP_DECISIONS, KCOLL_SHARED_PRICING).
 * A file of another hash (another build, machine terms or parameters) is
 * not read, and the next job's end replaces it.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cache.h"
#include "base/params.h"
#include "model/keep.h"
#include "model/select.h"
#include "model/tuning.h"

#define KEEP_MAGIC 0x6b636f6c6c646563ull /* "kcolldec" */
#define KEEP_FORMAT 1
#define KEEP_MAX 1024 /* records in a file at most */

typedef struct {
    uint64_t magic, format, hash, n;
} keep_header_t;

/* ---- kcoll's code ---- */

typedef struct {
    uintptr_t addr; /* an address in the object sought */
    uint64_t h;
    int found;
} build_id_ctx_t;

static int build_id_each(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    build_id_ctx_t *x = arg;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && x->addr >= lo && x->addr < lo + ph->p_memsz;
    }
    if (!mine)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *at = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = at + ph->p_memsz;
        while (at + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)at;
            const char *name = at + sizeof *nh;
            const char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                x->h = kcoll_fnv(x->h, desc, nh->n_descsz);
                x->found = 1;
                return 1;
            }
            at = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 1; /* the object, without a build-id */
}

/* The hash of kcoll's code into *h: 0, or -1 where nothing names it. */
static int keep_code(uint64_t *h)
{
    build_id_ctx_t x = {.addr = (uintptr_t)(void *)&keep_code, .h = *h};
    dl_iterate_phdr(build_id_each, &x);
    if (!x.found) {
        Dl_info di;
        struct stat st;
        if (!dladdr((void *)&keep_code, &di) || !di.dli_fname || stat(di.dli_fname, &st))
            return -1;
        const int64_t v[2] = {(int64_t)st.st_size, (int64_t)st.st_mtime};
        x.h = kcoll_fnv(x.h, v, sizeof v);
    }
    *h = x.h;
    return 0;
}

/* ---- the hash and the file ---- */

static int keep_param_reports(const char *name)
{
    static const char *const skip[] = {"STATS",     "TRACE",          "WARN",
                                       "CACHE_DIR", "KEEP_DECISIONS", "SHARED_PRICING"};
    const size_t len = strlen(name);
    if (len >= 5 && !strcmp(name + len - 5, "_ALGO"))
        return 1;
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (!strcmp(name, skip[i]))
            return 1;
    return 0;
}

/* The hash of what the model prices with (see above): 0, or -1. */
static int keep_hash(uint64_t *out)
{
    uint64_t h = KCOLL_FNV_START;
    const uint64_t layout[2] = {sizeof(kcoll_memo_rec_t), (uint64_t)kcoll_nalgos};
    h = kcoll_fnv(h, layout, sizeof layout);
    if (keep_code(&h))
        return -1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    const int bad = kcoll_tuning_write(f, kcoll_tuning()) != 0;
    fclose(f);
    if (!bad)
        h = kcoll_fnv(h, text, len);
    free(text);
    if (bad)
        return -1;
    for (int id = 0; id < KCOLL_NPARAMS; id++) {
        const char *name = kcoll_param_desc[id].name;
        if (keep_param_reports(name))
            continue;
        const char *v = kcoll_param_str((kcoll_param_id_t)id);
        h = kcoll_fnv(h, name, strlen(name) + 1);
        if (kcoll_param_desc[id].type == KCOLL_PT_STRING) {
            h = kcoll_fnv(h, v ? v : "", v ? strlen(v) + 1 : 1);
        } else {
            const int64_t n = kcoll_param_int((kcoll_param_id_t)id);
            h = kcoll_fnv(h, &n, sizeof n);
        }
    }
    *out = h;
    return 0;
}

static int keep_path(char *path, size_t len)
{
    char dir[4096];
    if (!kcoll_param_int(KCOLL_P_KEEP_DECISIONS) || kcoll_cache_folder(dir, sizeof dir))
        return -1;
    return snprintf(path, len, "%s/decisions.bin", dir) < (int)len ? 0 : -1;
}

/* The header of an open kept file into *hd: 1 where it is one of ours. */
static int keep_header(FILE *f, keep_header_t *hd)
{
    return fread(hd, sizeof *hd, 1, f) == 1 && hd->magic == KEEP_MAGIC &&
           hd->format == KEEP_FORMAT && hd->n <= KEEP_MAX;
}

/* The records of the file at path for hash h into recs (room for
 * KEEP_MAX): how many (0: none, another hash, or not a file of ours). */
static int keep_read(const char *path, uint64_t h, kcoll_memo_rec_t *recs)
{
    FILE *f = fopen(path, "rb");
    keep_header_t hd;
    int n = 0;
    if (f && keep_header(f, &hd) && hd.hash == h && fread(recs, sizeof *recs, hd.n, f) == hd.n)
        n = (int)hd.n;
    if (f)
        fclose(f);
    return n;
}

int kcoll_keep_file(char *path, size_t len)
{
    if (keep_path(path, len))
        return -1;
    FILE *f = fopen(path, "rb");
    keep_header_t hd;
    const int ok = f && keep_header(f, &hd);
    if (f)
        fclose(f);
    return ok ? (int)hd.n : -1;
}

int kcoll_keep_load(void)
{
    char path[4200];
    uint64_t h;
    if (keep_path(path, sizeof path) || keep_hash(&h))
        return 0;
    kcoll_memo_rec_t *recs = malloc(KEEP_MAX * sizeof *recs);
    if (!recs)
        return 0;
    const int n = kcoll_model_memo_import(recs, keep_read(path, h, recs));
    free(recs);
    return n;
}

typedef struct {
    uint64_t h;
    const kcoll_memo_rec_t *recs;
    int n;
} keep_out_t;

static int keep_write(FILE *f, void *arg)
{
    const keep_out_t *o = arg;
    const keep_header_t hd = {KEEP_MAGIC, KEEP_FORMAT, o->h, (uint64_t)o->n};
    return fwrite(&hd, sizeof hd, 1, f) == 1 &&
                   fwrite(o->recs, sizeof *o->recs, (size_t)o->n, f) == (size_t)o->n
               ? 0
               : -1;
}

/* Is decision a the same as b's (its key)? */
static int keep_same_key(const kcoll_memo_rec_t *a, const kcoll_memo_rec_t *b)
{
    return a->lvh == b->lvh && a->p == b->p && a->cores == b->cores && a->engine == b->engine &&
           a->key == b->key;
}

int kcoll_keep_save(void)
{
    char path[4200];
    uint64_t h;
    if (keep_path(path, sizeof path) || keep_hash(&h))
        return 0;
    kcoll_memo_rec_t *mine = malloc(2 * KEEP_MAX * sizeof *mine);
    if (!mine)
        return -1;
    int fresh, n = kcoll_model_memo_export(mine, KEEP_MAX, &fresh);
    if (!fresh) {
        free(mine);
        return 0;
    }
    /* with the file's (another job of the same hash may have kept others
     * since this one read it), this process's own first */
    kcoll_memo_rec_t *theirs = mine + KEEP_MAX;
    const int m = keep_read(path, h, theirs);
    for (int i = 0; i < m && n < KEEP_MAX; i++) {
        int dup = 0;
        for (int j = 0; j < n && !dup; j++)
            dup = keep_same_key(&theirs[i], &mine[j]);
        if (!dup)
            mine[n++] = theirs[i];
    }
    const keep_out_t o = {h, mine, n};
    const int rc = kcoll_cache_write(path, keep_write, (void *)&o) ? -1 : n;
    free(mine);
    return rc;
}
