/* Derived datatypes as maps (sched/dmap.h), made once per datatype.
 *
 * A datatype whose elements are not one run of bytes each, back to back,
 * is flattened into the segments of one element, in type-map order, by
 * walking its constructors with MPI_Type_get_envelope and
 * MPI_Type_get_contents: contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, subarray, resized and dup, nested
 * in any way, down to predefined types (each one run of bytes; a predefined
 * type with a hole, MPI_SHORT_INT, is refused). A piece that continues the
 * last one in memory merges with it, and equal pieces at a constant stride
 * make one segment (count, stride), so a vector of contiguous blocks is one
 * segment however many blocks it has.
 *
 * The map is kept on the datatype as an attribute (freed with it, by the
 * attribute's delete function); a datatype kcoll cannot flatten (darray,
 * the Fortran 90 parameterized types, more than KCOLL_DMAP_MAX_SEG
 * segments) is remembered as such, and its calls go to the host MPI
 * (mpi:noncontig_datatype). A non-blocking or persistent call copies the map
 * it uses (call layer), since MPI lets the program free a datatype while a
 * call that uses it is pending.
 *
 * Describing a call asks the host three questions about its datatype
 * (size, extent, true extent). For the predefined types whose elements
 * are one run of bytes, back to back (MPI_INT, MPI_DOUBLE, MPI_BYTE, ...),
 * the answers are asked once at start-up and kept in a small table keyed
 * by the handle, so that a call on them, the common case and the one
 * whose cost shows when the call goes to the host, asks nothing. Only
 * predefined handles are kept: MPI never frees them, and no datatype the
 * program creates can have one of their handles, so an entry is never
 * stale; every other datatype is asked about at each call, as before.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "mpi/objects.h"

static int kcoll_dtype_keyval = MPI_KEYVAL_INVALID;
/* one flattening at a time: two threads meeting a new datatype at once
 * must not both set its attribute (the second would free the first's map) */
static pthread_mutex_t kcoll_dtype_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the attribute holds for a datatype kcoll could not flatten */
static char kcoll_dtype_none;

typedef struct {
    kcoll_dseg_t *seg; /* the segments so far (kcoll_grow) */
    int n, cap;
} kcoll_flat_t;

/* Append a piece: it continues the last segment's only piece (merged), or
 * is one more of the last segment's equal pieces at its stride (a count
 * 1 segment takes the stride this piece gives it), or starts a segment. */
static int kcoll_flat_seg(kcoll_flat_t *f, int64_t off, uint64_t len)
{
    if (f->n > 0) {
        kcoll_dseg_t *last = &f->seg[f->n - 1];
        if (last->count == 1 && last->off + (int64_t)last->len == off) {
            last->len += len;
            return 0;
        }
        if (last->len == len &&
            (last->count == 1 || off == last->off + (int64_t)last->count * last->stride)) {
            if (last->count == 1)
                last->stride = off - last->off;
            last->count++;
            return 0;
        }
    }
    if ((uint64_t)f->n >= KCOLL_DMAP_MAX_SEG ||
        kcoll_grow((void **)&f->seg, &f->cap, f->n, sizeof *f->seg, 16))
        return -1;
    f->seg[f->n++] = (kcoll_dseg_t){off, len, 1, 0, 0};
    return 0;
}

static MPI_Aint kcoll_type_ext(MPI_Datatype dt)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(dt, &lb, &ext);
    return ext;
}

static int kcoll_flat(kcoll_flat_t *f, MPI_Datatype dt, int64_t at);

/* A predefined type's one run: its size and true lower bound; -1 for a
 * derived type or one with a hole (MPI_SHORT_INT: refused), 0 if named. */
static int kcoll_flat_named(MPI_Datatype t, int *size, MPI_Aint *tlb)
{
    int ni, na, nd, comb;
    MPI_Aint text;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb != MPI_COMBINER_NAMED)
        return 1;
    PMPI_Type_size(t, size);
    PMPI_Type_get_true_extent(t, tlb, &text);
    return (MPI_Aint)*size == text ? 0 : -1;
}

/* count blocks of blen elements of t, block i at at + d(i) bytes (the
 * elements of a predefined t appended directly: a column of a million
 * doubles asks MPI about MPI_DOUBLE once, not a million times) */
static int kcoll_flat_blocks(kcoll_flat_t *f, MPI_Datatype t, int64_t at, int count,
                             const int *blens, int blen, const void *displs, int aint,
                             int64_t stride)
{
    const int64_t ext = kcoll_type_ext(t);
    int size = 0;
    MPI_Aint tlb = 0;
    const int named = kcoll_flat_named(t, &size, &tlb);
    if (named < 0)
        return -1;
    for (int i = 0; i < count; i++) {
        int64_t d = displs ? (aint ? (int64_t)((const MPI_Aint *)displs)[i]
                                   : (int64_t)((const int *)displs)[i] * ext)
                           : (int64_t)i * stride;
        int n = blens ? blens[i] : blen;
        for (int j = 0; j < n; j++) {
            const int64_t o = at + d + (int64_t)j * ext;
            if (named == 0 ? size > 0 && kcoll_flat_seg(f, o + tlb, (uint64_t)size)
                           : kcoll_flat(f, t, o))
                return -1;
        }
    }
    return 0;
}

/* The elements of a subarray, in memory order: one row (a contiguous
 * block of the fastest dimension) per index of the other dimensions */
static int kcoll_flat_subarray(kcoll_flat_t *f, MPI_Datatype t, int64_t at, int nd,
                               const int *sizes, const int *subsizes, const int *starts,
                               int order)
{
    int64_t stride[32];
    int dim[32], idx[32]; /* k-th fastest dimension: dim[k] (C: the last first) */
    if (nd < 1 || nd > 32)
        return -1;
    for (int k = 0; k < nd; k++) {
        dim[k] = order == MPI_ORDER_C ? nd - 1 - k : k;
        if (subsizes[dim[k]] <= 0)
            return 0;
        stride[k] = k == 0 ? kcoll_type_ext(t) : stride[k - 1] * sizes[dim[k - 1]];
        idx[k] = 0;
    }
    for (;;) {
        int64_t off = 0;
        for (int k = 0; k < nd; k++)
            off += (int64_t)(starts[dim[k]] + idx[k]) * stride[k];
        if (kcoll_flat_blocks(f, t, at + off, 1, NULL, subsizes[dim[0]], NULL, 0, 0))
            return -1;
        int k = 1;
        for (; k < nd; k++) { /* the next row */
            if (++idx[k] < subsizes[dim[k]])
                break;
            idx[k] = 0;
        }
        if (k == nd)
            return 0;
    }
}

/* Append the segments of one element of dt whose origin is at `at`. */
static int kcoll_flat(kcoll_flat_t *f, MPI_Datatype dt, int64_t at)
{
    int ni, na, nd, comb;
    if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return -1;
    if (comb == MPI_COMBINER_NAMED) {
        int size;
        MPI_Aint tlb;
        if (kcoll_flat_named(dt, &size, &tlb))
            return -1; /* a predefined type with a hole (MPI_SHORT_INT) */
        return size ? kcoll_flat_seg(f, at + tlb, (uint64_t)size) : 0;
    }
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    int rc = -1;
    if (!ints || !aints || !types ||
        PMPI_Type_get_contents(dt, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        nd = 0; /* nothing to free */
        goto out;
    }
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the data is the old type's; the extent is only the step */
        rc = kcoll_flat(f, types[0], at);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = kcoll_flat_blocks(f, types[0], at, 1, NULL, ints[0], NULL, 0, 0);
        break;
    case MPI_COMBINER_VECTOR:
        rc = kcoll_flat_blocks(f, types[0], at, ints[0], NULL, ints[1], NULL, 0,
                               (int64_t)ints[2] * kcoll_type_ext(types[0]));
        break;
    case MPI_COMBINER_HVECTOR:
        rc = kcoll_flat_blocks(f, types[0], at, ints[0], NULL, ints[1], NULL, 0, aints[0]);
        break;
    case MPI_COMBINER_INDEXED:
        rc = kcoll_flat_blocks(f, types[0], at, ints[0], ints + 1, 0, ints + 1 + ints[0], 0, 0);
        break;
    case MPI_COMBINER_HINDEXED:
        rc = kcoll_flat_blocks(f, types[0], at, ints[0], ints + 1, 0, aints, 1, 0);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        rc = kcoll_flat_blocks(f, types[0], at, ints[0], NULL, ints[1], ints + 2, 0, 0);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        rc = kcoll_flat_blocks(f, types[0], at, ints[0], NULL, ints[1], aints, 1, 0);
        break;
    case MPI_COMBINER_STRUCT:
        rc = 0;
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = kcoll_flat_blocks(f, types[i], at + aints[i], 1, NULL, ints[1 + i], NULL, 0, 0);
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = kcoll_flat_subarray(f, types[0], at, ints[0], ints + 1, ints + 1 + ints[0],
                                 ints + 1 + 2 * ints[0], ints[1 + 3 * ints[0]]);
        break;
    default: /* darray, the Fortran 90 types: to the host MPI */
        rc = -1;
    }
out:
    for (int i = 0; i < nd; i++) {
        int cni, cna, cnd, ccomb;
        PMPI_Type_get_envelope(types[i], &cni, &cna, &cnd, &ccomb);
        if (ccomb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
    free(ints);
    free(aints);
    free(types);
    return rc;
}

static int kcoll_dtype_delete(MPI_Datatype dt, int keyval, void *attr, void *extra)
{
    (void)dt, (void)keyval, (void)extra;
    if (attr != &kcoll_dtype_none)
        free(attr);
    return MPI_SUCCESS;
}

/* The table of predefined types (see above): a handle's bytes as the key,
 * open addressing with linear probing, half full at most. size 0: empty. */
#define KCOLL_PLAIN_SLOTS 64
static struct {
    uint64_t key;
    size_t size;
} kcoll_plain[KCOLL_PLAIN_SLOTS];
/* acquire/release: the table is filled before a reader sees it on */
static _Atomic int kcoll_plain_on;

static uint64_t kcoll_plain_key(MPI_Datatype dt)
{
    uint64_t k = 0;
    memcpy(&k, &dt, sizeof dt < sizeof k ? sizeof dt : sizeof k);
    return k;
}

static unsigned kcoll_plain_slot(uint64_t key)
{
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 58); /* 6 bits: 64 slots */
}

/* The entry of key: its slot, or the empty slot that ends its probe. */
static unsigned kcoll_plain_find(uint64_t key)
{
    unsigned i = kcoll_plain_slot(key);
    while (kcoll_plain[i].size && kcoll_plain[i].key != key)
        i = (i + 1) % KCOLL_PLAIN_SLOTS;
    return i;
}

size_t kcoll_dtype_plain(MPI_Datatype dt)
{
    /* acquire: pairs with the release in kcoll_plain_fill */
    if (!atomic_load_explicit(&kcoll_plain_on, memory_order_acquire))
        return 0;
    return kcoll_plain[kcoll_plain_find(kcoll_plain_key(dt))].size;
}

/* Ask the host about the predefined types once (after PMPI_Init). */
static void kcoll_plain_fill(void)
{
    const MPI_Datatype named[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT,
        MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
        MPI_LONG_LONG_INT, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
        MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_FLOAT_COMPLEX,
        MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_2INT, MPI_FLOAT_INT,
        MPI_LONG_INT};
    int n = 0;
    memset(kcoll_plain, 0, sizeof kcoll_plain);
    for (size_t t = 0; t < sizeof named / sizeof named[0]; t++) {
        int size;
        MPI_Aint lb, ext, tlb, text;
        /* an optional type this MPI lacks is MPI_DATATYPE_NULL: not asked about */
        if (named[t] == MPI_DATATYPE_NULL || PMPI_Type_size(named[t], &size) != MPI_SUCCESS ||
            PMPI_Type_get_extent(named[t], &lb, &ext) != MPI_SUCCESS ||
            PMPI_Type_get_true_extent(named[t], &tlb, &text) != MPI_SUCCESS)
            continue;
        const uint64_t key = kcoll_plain_key(named[t]);
        const unsigned i = kcoll_plain_find(key);
        if (size <= 0 || lb != 0 || tlb != 0 || ext != size || text != size ||
            kcoll_plain[i].size || 2 * (n + 1) > KCOLL_PLAIN_SLOTS)
            continue; /* with a gap (MPI_LONG_INT), a second name of one type, or full */
        kcoll_plain[i].key = key;
        kcoll_plain[i].size = (size_t)size;
        n++;
    }
    /* release: the entries are written before a reader sees the table on */
    atomic_store_explicit(&kcoll_plain_on, 1, memory_order_release);
}

int kcoll_dtype_init(void)
{
    kcoll_plain_fill();
    return PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, kcoll_dtype_delete, &kcoll_dtype_keyval,
                                   NULL) == MPI_SUCCESS
               ? 0
               : -1;
}

void kcoll_dtype_finalize(void)
{
    /* relaxed: after MPI_Finalize nothing may ask about a datatype; the
     * host answers (with its error) as it did before MPI_Init */
    atomic_store_explicit(&kcoll_plain_on, 0, memory_order_relaxed);
    if (kcoll_dtype_keyval != MPI_KEYVAL_INVALID)
        PMPI_Type_free_keyval(&kcoll_dtype_keyval);
}

/* Flatten dt (size bytes, extent ext) into a new map, or NULL. */
static kcoll_dmap_t *kcoll_dtype_flatten(MPI_Datatype dt, size_t size, MPI_Aint ext,
                                         MPI_Aint tlb)
{
    kcoll_flat_t f = {NULL, 0, 0};
    kcoll_dmap_t *m = NULL;
    /* segments from the true lower bound: the side's buffer is there */
    if (!kcoll_flat(&f, dt, -(int64_t)tlb) && f.n > 0 &&
        (m = calloc(1, kcoll_dmap_bytes((uint64_t)f.n)))) {
        memcpy(m->seg, f.seg, (size_t)f.n * sizeof *f.seg);
        m->nseg = (uint64_t)f.n;
        m->size = size;
        m->extent = ext;
        if (kcoll_dmap_seal(m)) {
            free(m);
            m = NULL;
        }
    }
    free(f.seg);
    return m;
}

const kcoll_dmap_t *kcoll_dtype_map(MPI_Datatype dt, size_t size, MPI_Aint ext, MPI_Aint tlb)
{
    void *attr;
    int found = 0, comb, ni, na, nd;
    if (kcoll_dtype_keyval == MPI_KEYVAL_INVALID || size == 0)
        return NULL;
    if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED)
        return NULL; /* no attributes on predefined types: they are contiguous or refused */
    if (PMPI_Type_get_attr(dt, kcoll_dtype_keyval, &attr, &found) == MPI_SUCCESS && found)
        return attr == &kcoll_dtype_none ? NULL : attr;
    pthread_mutex_lock(&kcoll_dtype_lock);
    if (PMPI_Type_get_attr(dt, kcoll_dtype_keyval, &attr, &found) != MPI_SUCCESS || !found) {
        kcoll_dmap_t *m = kcoll_dtype_flatten(dt, size, ext, tlb);
        attr = m ? (void *)m : (void *)&kcoll_dtype_none;
        PMPI_Type_set_attr(dt, kcoll_dtype_keyval, attr);
    }
    pthread_mutex_unlock(&kcoll_dtype_lock);
    return attr == &kcoll_dtype_none ? NULL : attr;
}

