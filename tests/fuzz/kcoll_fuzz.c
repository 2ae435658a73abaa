/* kcoll-fuzz: a differential fuzzer of kcoll against the host MPI.
 *
 * From a seed every rank knows, it draws one sequence of steps, the same
 * on every rank: collective calls, communicators made and freed, changes
 * of kcoll's parameters and completions of outstanding requests. Each
 * collective call runs twice from identical buffers: through kcoll (MPI_*,
 * in its blocking, non-blocking or, where the MPI declares it, persistent
 * form) and through the host MPI (PMPI_*, blocking); after completion every
 * byte of both calls' buffers must be equal: data, the gaps of derived
 * datatypes and of v-displacements, the canaries after each buffer, and
 * the send buffers. The fuzzer does not assume which path kcoll takes (its
 * own algorithms, one schedule across nodes, or the host MPI): it only
 * counts them (kcoll's statistics), so a run that silently hands
 * everything to the host is visible (--min-kcoll fails it).
 *
 * What is drawn:
 *  - the collective: all 14 kcoll intercepts, blocking or non-blocking
 *    (up to MAXOUT outstanding over all communicators, more than kcoll's 16
 *    lanes per communicator, completed later in random order and with any
 *    completion function), or persistent (MPI-4: init, several starts with
 *    new contents, free);
 *  - the communicator: MPI_COMM_WORLD or one of NSLOTS - 1 slots, each
 *    empty or holding a duplicate (of the world or of another slot), an
 *    odd/even split, a split with the ranks reversed, a split with random
 *    colours (some ranks left out), MPI_Comm_split_type(SHARED) (one per
 *    node: with fake nodes, node-local ones), MPI_Comm_create_group of a
 *    random subset, or MPI_Comm_idup; freed at random, even with
 *    non-blocking calls on it outstanding;
 *  - the count, in units of a signature: 0 (one call in seven), 1, odd, page-crossing, large
 *    (up to --max-bytes per buffer);
 *  - data movement datatypes, per rank and per side (MPI lets each rank
 *    describe the same signature with its own layout): for 6 ints, MPI_INT
 *    or eight derived layouts (contiguous, vector, indexed out of order,
 *    struct with padding, C and Fortran subarrays, resized, hvector); for
 *    5 bytes MPI_BYTE, a contiguous type, a byte vector; for 2 doubles
 *    MPI_DOUBLE, a vector, a padded struct; a darray (which kcoll does not
 *    map) on all ranks alike; a non-blocking call may use a duplicate of
 *    its datatype freed right after the call;
 *  - reductions: every predefined operation on the C datatypes it is
 *    defined for (signed and unsigned integers of 1 to 8 bytes, float,
 *    double, float and double complex, C bool, byte, MAXLOC/MINLOC pairs)
 *    and user operations: a commutative wrapping sum, a non-commutative
 *    "first non-zero" on MPI_INT, and the non-commutative 2x2 matrix
 *    product on a contiguous type of 4 ints; with values for which the
 *    result is exact in any order (small integers, powers of two), so the
 *    host's order and kcoll's documented one give the same bits;
 *  - the root, MPI_IN_PLACE where MPI allows it, v-counts (some zero) at
 *    shuffled displacements with gaps;
 *  - kcoll's parameters, alike on every rank: the family's algorithm
 *    forced (any that kcoll_algorithms lists, with a random parameter, so
 *    invalid ones too) or auto; KCOLL_MIN_BYTES 0 (half the time: kcoll takes small and
 *    empty calls too), auto or 4096; the packing
 *    threshold for derived datatypes.
 *
 * Known host bugs the data avoids (docs/fuzzing.md): Open MPI 4.1.4
 * saturates 8/16-bit sums (its op/avx) and compares unsigned long MIN/MAX
 * as signed and its in-place PMPI_Ialltoallv leaves the next non-blocking
 * collective hanging, MPICH 4.0.2 has wrong unsigned MIN/MAX on some ranks,
 * hangs in PMPI_Iallgatherv (and Open MPI 4.1.4 in PMPI_(I)Allgather(v))
 * when the ranks' layouts of the signature differ (the ranks of an
 * Allgather(v) draw one),
 * crashes in PMPI_Reduce in place at a non-zero root (the host's reference
 * gets an in-place input as a separate send buffer), and its own persistent
 * collectives are broken (a persistent call kcoll hands to MPICH is
 * started but not compared, and counted); Open MPI (4.1.4, 5.0.11) drops
 * the tail of a rank's own block copied from a resized type in its
 * collectives' local copies (pick_layout).
 *
 * On a mismatch a rank prints the seed, the call number, what the call
 * was and a command that replays the sequence up to it; the run goes on
 * and fails at the end. A watchdog names a call that hangs (--timeout).
 *
 * usage: kcoll-fuzz [--seed S] [--calls N] [--max-bytes B] [--min-kcoll PCT]
 *                   [--timeout SEC] [--only N,M,...] [-v] [-q]
 *                   [--expect-nodes=0,0,1,...]
 * --only: of the sequence's calls only these are made (the others are
 * drawn and skipped, so what remains is the same), to narrow a failure
 * down to the calls that cause it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbjob.h"

#ifdef KCOLL_HOST_OLD_MPICH
#define KCOLL_FUZZ_NO_PERSISTENT 1
/* MPICH 4.0.2's MPI_Iallgatherv on a communicator of one rank puts the
 * block at displacement 0 whatever displs[0] says (a program of its own
 * shows it; its in-place MPI_Allgatherv is right, and 5.0.2's both): the
 * reference of an in-place Allgatherv on one rank is the in-place call */
#define KCOLL_FUZZ_OLD_MPICH_ONE_RANK(f) ((f)->p == 1 && (f)->c == ALLGATHERV)
#else
#define KCOLL_FUZZ_NO_PERSISTENT 0
#define KCOLL_FUZZ_OLD_MPICH_ONE_RANK(f) 0
#endif

#define NSLOTS 6
#define MAXOUT 24
#define UNIT_MAX 9 /* a unit's elements at most (MPI_INT: 6) */

/* ---------------------------------------------------------------------- */
/* The shared random stream (splitmix64): the same draws on every rank */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
    return n ? (unsigned)(rnd() % n) : 0;
}

static int chance(unsigned percent)
{
    return below(100) < percent;
}

/* ---------------------------------------------------------------------- */
/* Options and counters */

static struct {
    uint64_t seed;
    long calls;
    size_t max_bytes;
    double min_kcoll;
    unsigned timeout;
    int verbose, quick;
    const char *expect_nodes;
    const char *only; /* "N,M,...": only these calls are made */
    char *argv0;
} opt = {1, 500, 1 << 20, 0, 120, 0, 0, NULL, NULL, NULL};

/* Is call `num` made (--only, to narrow a failing sequence down: the
 * others are drawn all the same, so the rest of the sequence is
 * unchanged)? */
static int selected(long num)
{
    if (!opt.only)
        return 1;
    for (const char *s = opt.only; *s;) {
        char *end;
        const long v = strtol(s, &end, 10);
        if (end == s)
            return 0;
        if (v == num)
            return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int wsize;
static long mismatches, host_persistent;
static long made_comms, freed_comms, max_out;
static long issued[3]; /* blocking, non-blocking, persistent calls made here */

/* ---------------------------------------------------------------------- */
/* Communicator slots: slot 0 is MPI_COMM_WORLD; the others empty or
 * holding a communicator made by the sequence (MPI_COMM_NULL on the ranks
 * it leaves out). Which slots are live is the same on every rank. */

typedef struct {
    int live;
    MPI_Comm comm;
    char what[40];
} slot_t;
static slot_t slots[NSLOTS];

static int nout;
static void complete_some(uint64_t draw);
static void comm_make(int s, long call)
{
    const unsigned kind = below(8), other = below(NSLOTS), key = below(1000);
    const uint64_t salt = rnd();
    MPI_Comm made = MPI_COMM_NULL;
    int rc = MPI_SUCCESS;
    if (slots[s].live) { /* replace: the old one goes first */
        if (slots[s].comm != MPI_COMM_NULL)
            MPI_Comm_free(&slots[s].comm);
        freed_comms++;
    }
    switch (kind) {
    case 0: /* a duplicate, of another slot's communicator where this rank has one */
    case 1: {
        int all_have = slots[other].live && slots[other].comm != MPI_COMM_NULL, every = 0;
        /* a duplicate of another slot needs all its members here: dup the
         * world instead unless every rank has that communicator (asked
         * through MPI_Allreduce, not PMPI_: with MPICH kcoll's pending
         * requests advance only inside intercepted calls) */
        MPI_Allreduce(&all_have, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        const MPI_Comm base = every && kind == 0 ? slots[other].comm : MPI_COMM_WORLD;
        rc = MPI_Comm_dup(base, &made);
        snprintf(slots[s].what, sizeof slots[s].what, "dup of %s",
                 base == MPI_COMM_WORLD ? "world" : slots[other].what);
        break;
    }
    case 2:
        rc = MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &made);
        snprintf(slots[s].what, sizeof slots[s].what, "odd/even split");
        break;
    case 3:
        rc = MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &made);
        snprintf(slots[s].what, sizeof slots[s].what, "reversed split");
        break;
    case 4: { /* random colours, some ranks left out, random order */
        const uint64_t h = mt_mix(salt + (uint64_t)wrank);
        const int color = h % 5 == 0 ? MPI_UNDEFINED : (int)((h >> 8) % 2);
        rc = MPI_Comm_split(MPI_COMM_WORLD, color, (int)((h >> 16) % 7), &made);
        snprintf(slots[s].what, sizeof slots[s].what, "random split");
        break;
    }
    case 5:
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, (int)key ^ wrank,
                                 MPI_INFO_NULL, &made);
        snprintf(slots[s].what, sizeof slots[s].what, "node split");
        break;
    case 6: { /* a random subset (at least one rank) in a random order */
        int members[MAXP], n = 0;
        for (int r = 0; r < wsize; r++)
            if (mt_mix(salt + 77 * (uint64_t)r) % 3 || r == (int)(salt % (uint64_t)wsize))
                members[n++] = r;
        for (int i = n - 1; i > 0; i--) {
            int k = (int)(mt_mix(salt + (uint64_t)i) % (uint64_t)(i + 1)), t = members[i];
            members[i] = members[k];
            members[k] = t;
        }
        int in = 0;
        for (int i = 0; i < n; i++)
            in |= members[i] == wrank;
        if (in) {
            MPI_Group wg, g;
            MPI_Comm_group(MPI_COMM_WORLD, &wg);
            MPI_Group_incl(wg, n, members, &g);
            rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &made);
            MPI_Group_free(&g);
            MPI_Group_free(&wg);
        }
        snprintf(slots[s].what, sizeof slots[s].what, "group of %d", n);
        break;
    }
    default: { /* a non-blocking duplicate: kcoll sets no team up in it */
        MPI_Request q;
        rc = MPI_Comm_idup(MPI_COMM_WORLD, &made, &q);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        snprintf(slots[s].what, sizeof slots[s].what, "idup");
        break;
    }
    }
    if (rc != MPI_SUCCESS && mismatches++ < 10)
        fprintf(stderr, "kcoll-fuzz: MISMATCH: seed %llu, before call %ld, world rank %d: making "
                "a communicator (%s) returned an error\n", (unsigned long long)opt.seed, call,
                wrank, slots[s].what);
    if (made != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
    slots[s].comm = made;
    slots[s].live = 1;
    made_comms++;
    if (opt.verbose && wrank == 0)
        printf("  [call %ld] slot %d: %s\n", call, s, slots[s].what);
}

/* ---------------------------------------------------------------------- */
/* Datatypes of the data-movement collectives: signatures and layouts */

enum { SIG_INT6, SIG_BYTE5, SIG_DBL2, SIG_DARRAY, NSIGS };
typedef struct {
    const char *name;
    MPI_Datatype t;
    int epu; /* elements per unit of the signature */
    /* Open MPI's local copy of a rank's own block from it goes wrong from
     * 64 KiB (pick_layout) */
    int ompi_own_copy_bug;
} layout_t;
#define NLAY 9
static layout_t lays[NSIGS][NLAY];
static int nlays[NSIGS];
static const int unit_bytes[NSIGS] = {24, 5, 16, 8};

static void add_layout(int sig, const char *name, MPI_Datatype t, int epu)
{
    if (t != MPI_INT && t != MPI_BYTE && t != MPI_DOUBLE)
        MPI_Type_commit(&t);
    lays[sig][nlays[sig]++] = (layout_t){name, t, epu, 0};
}

static void make_layouts(void)
{
    MPI_Datatype t, u;
    add_layout(SIG_INT6, "MPI_INT", MPI_INT, 6);
    MPI_Type_contiguous(6, MPI_INT, &t);
    add_layout(SIG_INT6, "contig(6 int)", t, 1);
    MPI_Type_vector(3, 2, 3, MPI_INT, &t);
    add_layout(SIG_INT6, "vector(3,2,3)", t, 1);
    int bl[3] = {1, 3, 2}, dis[3] = {5, 0, 10};
    MPI_Type_indexed(3, bl, dis, MPI_INT, &t);
    add_layout(SIG_INT6, "indexed{5,0,10}", t, 1);
    int sbl[2] = {1, 5};
    MPI_Aint sdis[2] = {0, 16};
    MPI_Datatype st[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, sbl, sdis, st, &u);
    MPI_Type_create_resized(u, 0, 40, &t);
    MPI_Type_free(&u);
    add_layout(SIG_INT6, "struct+padding", t, 1);
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
    add_layout(SIG_INT6, "subarray(C 4x5:2x3)", t, 1);
    MPI_Type_contiguous(6, MPI_INT, &u);
    MPI_Type_create_resized(u, 0, 32, &t);
    MPI_Type_free(&u);
    add_layout(SIG_INT6, "resized(6 int, 32)", t, 1);
    lays[SIG_INT6][nlays[SIG_INT6] - 1].ompi_own_copy_bug = 1;
    MPI_Type_contiguous(3, MPI_INT, &u);
    MPI_Type_create_hvector(2, 1, 40, u, &t);
    MPI_Type_free(&u);
    add_layout(SIG_INT6, "hvector(2,3 int,40B)", t, 1);
    int fsizes[2] = {5, 4}, fsub[2] = {3, 2}, fstarts[2] = {1, 2};
    MPI_Type_create_subarray(2, fsizes, fsub, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    add_layout(SIG_INT6, "subarray(F 5x4:3x2)", t, 1);

    add_layout(SIG_BYTE5, "MPI_BYTE", MPI_BYTE, 5);
    MPI_Type_contiguous(5, MPI_BYTE, &t);
    add_layout(SIG_BYTE5, "contig(5 byte)", t, 1);
    MPI_Type_vector(5, 1, 2, MPI_BYTE, &t);
    add_layout(SIG_BYTE5, "vector(5,1,2 byte)", t, 1);

    add_layout(SIG_DBL2, "MPI_DOUBLE", MPI_DOUBLE, 2);
    MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &t);
    add_layout(SIG_DBL2, "vector(2,1,3 double)", t, 1);
    int dbl[2] = {1, 1};
    MPI_Aint ddis[2] = {0, 24};
    MPI_Datatype dt2[2] = {MPI_DOUBLE, MPI_DOUBLE};
    MPI_Type_create_struct(2, dbl, ddis, dt2, &u);
    MPI_Type_create_resized(u, 0, 40, &t);
    MPI_Type_free(&u);
    add_layout(SIG_DBL2, "struct(double,pad,double)", t, 1);

    lays[SIG_DARRAY][nlays[SIG_DARRAY]++] = (layout_t){"darray", mt_unmapped_type(), 1, 0};
}

/* Bytes from the first byte of `count` elements of t to the end of the
 * last (every layout here starts at its lower bound 0). */
static size_t span_of(MPI_Datatype t, long count)
{
    MPI_Aint lb, ext, tlb, text;
    if (count <= 0)
        return 0;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    return (size_t)(count - 1) * (size_t)ext + (size_t)(tlb + text);
}

/* ---------------------------------------------------------------------- */
/* Reductions: datatypes, operations, exact values */

enum { C_SINT, C_UINT, C_F, C_D, C_CF, C_CD, C_BOOL, C_BYTE, C_FI, C_II, C_DI, C_MAT };
enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MAXLOC,
       O_MINLOC, O_WRAPADD, O_FIRSTNZ, O_MATMUL, NOPS };
static const char *const op_names[NOPS] = {"SUM",  "PROD", "MIN", "MAX", "LAND",
                                           "LOR",  "LXOR", "BAND", "BOR", "BXOR",
                                           "MAXLOC", "MINLOC", "user wrapping sum (commutative)",
                                           "user first non-zero (not commutative)",
                                           "user 2x2 matrix product (not commutative)"};
static MPI_Op ops[NOPS];

typedef struct {
    const char *name;
    MPI_Datatype t;
    int cls;
    size_t size;
} rtype_t;
static const rtype_t rtypes_init[] = {
    {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, C_SINT, 1},   {"MPI_SHORT", MPI_SHORT, C_SINT, 2},
    {"MPI_INT", MPI_INT, C_SINT, 4},                   {"MPI_LONG", MPI_LONG, C_SINT, 8},
    {"MPI_INT64_T", MPI_INT64_T, C_SINT, 8},           {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, C_UINT, 1},
    {"MPI_UINT16_T", MPI_UINT16_T, C_UINT, 2},         {"MPI_UNSIGNED", MPI_UNSIGNED, C_UINT, 4},
    {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, C_UINT, 8}, {"MPI_FLOAT", MPI_FLOAT, C_F, 4},
    {"MPI_DOUBLE", MPI_DOUBLE, C_D, 8},                {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, C_CF, 8},
    {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, C_CD, 16}, {"MPI_C_BOOL", MPI_C_BOOL, C_BOOL, 1},
    {"MPI_BYTE", MPI_BYTE, C_BYTE, 1},                 {"MPI_FLOAT_INT", MPI_FLOAT_INT, C_FI, 8},
    {"MPI_2INT", MPI_2INT, C_II, 8},                   {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, C_DI, 16},
    {"contig(4 int)", MPI_DATATYPE_NULL, C_MAT, 16},
};
#define NRT (int)(sizeof rtypes_init / sizeof rtypes_init[0])
static rtype_t rtypes[NRT];

static int op_valid(const rtype_t *t, int op)
{
    switch (t->cls) {
    case C_SINT: return op <= O_BXOR || op == O_WRAPADD || (op == O_FIRSTNZ && t->t == MPI_INT);
    case C_UINT: return op <= O_BXOR || op == O_WRAPADD;
    case C_F: case C_D: return op <= O_MAX;
    case C_CF: case C_CD: return op == O_SUM;
    case C_BOOL: return op >= O_LAND && op <= O_LXOR;
    case C_BYTE: return op >= O_BAND && op <= O_BXOR;
    case C_FI: case C_II: case C_DI: return op == O_MAXLOC || op == O_MINLOC;
    case C_MAT: return op == O_MATMUL;
    }
    return 0;
}

/* The user operations. Wrapping sum: commutative, on integers of any
 * width. First non-zero: associative, not commutative, on MPI_INT. */
static void user_wrapadd(void *in, void *io, int *len, MPI_Datatype *dt)
{
    int size;
    MPI_Type_size(*dt, &size);
    for (int i = 0; i < *len; i++)
        for (int b = 0, carry = 0; b < size; b++) {
            int s = ((unsigned char *)in)[i * size + b] + ((unsigned char *)io)[i * size + b] + carry;
            ((unsigned char *)io)[i * size + b] = (unsigned char)s;
            carry = s >> 8;
        }
}

static void user_firstnz(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] != 0)
            ((int *)io)[i] = ((int *)in)[i];
}

static void make_reductions(void)
{
    memcpy(rtypes, rtypes_init, sizeof rtypes);
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    rtypes[NRT - 1].t = mat_t;
    const MPI_Op pre[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR,
                          MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    for (int o = 0; o < O_WRAPADD; o++)
        ops[o] = pre[o];
    MPI_Op_create(user_wrapadd, 1, &ops[O_WRAPADD]);
    MPI_Op_create(user_firstnz, 0, &ops[O_FIRSTNZ]);
    MPI_Op_create(matmul, 0, &ops[O_MATMUL]);
    matmul_op = ops[O_MATMUL];
}

/* Element i of this rank's reduction input: a value for which op's result
 * is exact whatever the order of evaluation, and that avoids the hosts'
 * known bugs (see the top of the file). */
static void rvalue(const rtype_t *t, int op, uint64_t h, char *dst)
{
    const int small_int = t->size <= 2;
    int64_t v = 0;
    switch (t->cls) {
    case C_SINT:
    case C_UINT:
        if (op == O_SUM) /* the sum of all ranks' fits 8 bits */
            v = (int64_t)(h % (uint64_t)(120 / wsize + 1)) -
                (t->cls == C_SINT ? (int64_t)(60 / wsize) : 0);
        else if (op == O_PROD) /* -1, 0, 1 (2 where 2^p fits) */
            v = t->cls == C_UINT ? (int64_t)(h % (small_int ? 2 : 3))
                                 : (int64_t)(h % (small_int ? 3 : 4)) - 1;
        else if (op == O_MIN || op == O_MAX)
            v = (int64_t)((h >> 3) & ((1ull << (8 * t->size - 1)) - 1)) -
                (t->cls == C_SINT && (h & 1) ? (int64_t)((h >> 3) & 0xff) : 0);
        else if (op >= O_LAND && op <= O_LXOR)
            v = h % 3 ? (int64_t)(h >> 5) : 0;
        else if (op == O_FIRSTNZ)
            v = h % 3 ? 0 : (int64_t)(h >> 20) % 1000;
        else
            v = (int64_t)(h >> 7);
        memcpy(dst, &v, t->size); /* little-endian: the low bytes */
        break;
    case C_F:
    case C_D: {
        double d;
        if (op == O_SUM)
            d = (double)((int64_t)(h % 201) - 100);
        else if (op == O_PROD)
            d = (h % 4 == 0 ? -1.0 : 1.0) * (h & 16 ? 2.0 : h & 32 ? 0.5 : 1.0);
        else
            d = ((double)(h % 2001) - 1000.0) * 0.25 + (h & 1 ? 0.5 : 1.0);
        if (t->cls == C_F) {
            float f = (float)d;
            memcpy(dst, &f, 4);
        } else {
            memcpy(dst, &d, 8);
        }
        break;
    }
    case C_CF:
    case C_CD: { /* sums of small integers */
        double re = (double)((int64_t)(h % 21) - 10), im = (double)((int64_t)((h >> 8) % 21) - 10);
        if (t->cls == C_CF) {
            float f[2] = {(float)re, (float)im};
            memcpy(dst, f, 8);
        } else {
            double d[2] = {re, im};
            memcpy(dst, d, 16);
        }
        break;
    }
    case C_BOOL:
        *(_Bool *)dst = (h & 1) != 0;
        break;
    case C_BYTE:
        *(unsigned char *)dst = (unsigned char)(h >> 11);
        break;
    case C_FI: { /* few distinct values: ties, broken by the lower index */
        struct { float v; int i; } e = {(float)(h % 4), (int)((h >> 8) % 5)};
        memcpy(dst, &e, sizeof e);
        break;
    }
    case C_II: {
        struct { int v; int i; } e = {(int)(h % 4) - 1, (int)((h >> 8) % 5)};
        memcpy(dst, &e, sizeof e);
        break;
    }
    case C_DI: {
        struct { double v; int i; } e;
        memset(&e, 0, sizeof e); /* its padding too */
        e.v = (double)(h % 4);
        e.i = (int)((h >> 8) % 5);
        memcpy(dst, &e, sizeof e);
        break;
    }
    case C_MAT:
        for (int k = 0; k < 4; k++) {
            int32_t m = (int32_t)((h >> (8 * k)) % 7) - 3;
            memcpy(dst + 4 * k, &m, 4);
        }
        break;
    }
}

/* ---------------------------------------------------------------------- */
/* kcoll's parameters, alike on every rank */

static const char *const fam_row[NFAM] = {"MPI_Bcast",     "MPI_Scatter", "MPI_Gather",
                                          "MPI_Allgather", "MPI_Alltoall", "MPI_Barrier",
                                          "MPI_Reduce",    "MPI_Allreduce",
                                          "MPI_Reduce_scatter_block"};
static char forced[NFAM][64]; /* the spec in force ("auto") */
static char min_bytes[16] = "auto", pack_below[16] = "4096";

/* The parameter an algorithm takes and a range to draw it from (beyond
 * the valid one at both ends: invalid specs must fall back). */
static const struct {
    const char *algo, *param;
    int lo, hi;
} algo_params[] = {{"knomial", "k", 1, 9},        {"throttled_read", "k", 0, 9},
                   {"throttled_write", "k", 0, 9}, {"ring_neighbor", "j", 0, 9},
                   {"partitioned", "chunk", 0, 300}, {"staggered", "chunk", 0, 300},
                   {"hier", "chunk", 1, 600}};

/* Force family fam's algorithm (or auto) for the next calls; p: a process
 * count the algorithm list is asked for (kcoll_algorithms). */
static void draw_algo(int fam, int p)
{
    char list[512], spec[64] = "auto";
    const unsigned pick = below(100), which = below(64), pv = below(1000);
    if (pick < 45 && kcoll_algorithms(fam_row[fam], p < 2 ? 2 : p, list, sizeof list) > 0) {
        int n = 1;
        for (const char *s = list; *s; s++)
            n += *s == ',';
        const char *a = list;
        for (unsigned k = which % (unsigned)n; k; k--)
            a = strchr(a, ',') + 1;
        int len = (int)strcspn(a, ",");
        snprintf(spec, sizeof spec, "%.*s", len, a);
        for (size_t i = 0; i < sizeof algo_params / sizeof algo_params[0]; i++)
            if (!strcmp(spec, algo_params[i].algo) && pv % 2) {
                int v = algo_params[i].lo + (int)(pv % (unsigned)(algo_params[i].hi - algo_params[i].lo + 1));
                snprintf(spec + len, sizeof spec - (size_t)len, ":%s=%d", algo_params[i].param, v);
            }
    }
    if (strcmp(spec, forced[fam])) {
        char name[32];
        snprintf(name, sizeof name, "%s", fam_param[fam]);
        if (kcoll_param_set(name, spec) != 0 && kcoll_param_set(name, "auto") == 0)
            snprintf(spec, sizeof spec, "auto"); /* refused at once: not a spec kcoll parses */
        snprintf(forced[fam], sizeof forced[fam], "%s", spec);
    }
}

static void draw_params(void)
{
    /* 0 half the time: kcoll then takes the small calls and zero counts too */
    static const char *const mins[] = {"auto", "0", "0", "4096"};
    static const char *const packs[] = {"4096", "4096", "0", "1048576"};
    const unsigned m = below(4), k = below(4);
    if (strcmp(min_bytes, mins[m])) {
        kcoll_param_set("MIN_BYTES", mins[m]);
        snprintf(min_bytes, sizeof min_bytes, "%s", mins[m]);
    }
    if (strcmp(pack_below, packs[k])) {
        kcoll_param_set("DTYPE_PACK_BELOW", packs[k]);
        snprintf(pack_below, sizeof pack_below, "%s", packs[k]);
    }
}

/* ---------------------------------------------------------------------- */
/* One call */

enum { FORM_B, FORM_NB, FORM_P };
static const char *const form_names[3] = {"blocking", "non-blocking", "persistent"};

typedef struct {
    long num;           /* the call's number in the sequence */
    int c, form, slot, ip, sig, rt, op, fresh_type, starts;
    unsigned root_draw;
    long units;         /* the count, in units (reductions: elements) */
    uint64_t salt;
    /* this rank's part */
    MPI_Comm comm;
    int p, rank, root;
    MPI_Datatype st, rtp;      /* send and receive datatypes (reductions: both the type) */
    MPI_Datatype kst, krt;     /* kcoll's: the same, or a duplicate freed after the call */
    const char *sname, *rname;
    int scount, rcount;        /* elements */
    int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
    size_t slen, rlen;         /* bytes, canaries excluded */
    char *kb[2], *hb[2], *htmp;
    MPI_Request req;
    int on_host; /* the non-blocking call went to the host MPI (its statistics say) */
} fcall_t;

static fcall_t *outstanding[MAXOUT];

static const char *coll_name(const fcall_t *f)
{
    return colls[f->c].name;
}

/* The count drawn for a call: 0, 1, odd, page-crossing, medium or large,
 * at most `cap` units. */
static long draw_units(long cap)
{
    const unsigned k = below(100);
    long u;
    if (k < 15)
        u = 0;
    else if (k < 25)
        u = 1;
    else if (k < 45)
        u = 1 + 2 * (long)below(50);
    else if (k < 60)
        u = 4096 / 24 - 2 + (long)below(5) + 4096 / 24 * (long)below(3); /* pages of int6 */
    else if (k < 90)
        u = 100 + (long)below(5000);
    else
        u = cap / 2 + (long)below((unsigned)(cap / 2 + 1));
    return u > cap ? cap : u;
}

/* Elements per unit and the layout of side `side` of this rank. */
static const layout_t *pick_layout(const fcall_t *f, int side)
{
    /* Open MPI 4.1.4's MPI_Allgather(v) and MPI_Iallgather(v) and MPICH
     * 4.0.2's MPI_Iallgatherv hang when the ranks' layouts of the
     * signature differ, and so do Open MPI 5.0.11's MPI_Allgatherv across
     * nodes (seed 7 on fake nodes) and MPICH 5.0.2's MPI_Iallgatherv (seed
     * 9 at 3 ranks), each with KCOLL_DISABLE=1 too: one for all */
    const uint64_t who = f->c == ALLGATHER || f->c == ALLGATHERV ? 0 : (uint64_t)wrank;
    const uint64_t h = mt_mix(f->salt * 31 + who * 2 + (uint64_t)side);
    const layout_t *l = &lays[f->sig][h % (uint64_t)nlays[f->sig]];
    /* Open MPI (4.1.4 and 5.0.11) copies a rank's own block from a
     * resized(6 int, 32) send type wrongly in every collective's local
     * copy (Gather's root, Allgather, Alltoall, Scatter's root, blocking
     * and not; MPI_Sendrecv to itself is right) where the block's data is
     * 8 or 16 bytes over a multiple of 64 KiB: the last 8 or 16 bytes are
     * not copied (seed 1 at 3 ranks, call 71769, 2731 units; a program of
     * its own on MPI_COMM_SELF, docs/fuzzing.md). So no such send layout
     * there for a block of 64 KiB or more: a rank's own block is at most
     * `units` units (the same test on every rank) */
    if (side == 0 && l->ompi_own_copy_bug && mt_host_is_ompi() &&
        f->units * unit_bytes[SIG_INT6] >= 65536)
        l = &lays[f->sig][(h + 1) % (uint64_t)nlays[f->sig]];
    return l;
}

/* Counts, displacements (shuffled, with gaps) and buffer lengths of this
 * rank's part of call f. */
static void layout_call(fcall_t *f)
{
    const int p = f->p, me = f->rank;
    const long n = f->units;
    int order[MAXP];
    if (is_red(f->c)) {
        const rtype_t *t = &rtypes[f->rt];
        f->st = f->rtp = t->t;
        f->sname = f->rname = t->name;
        f->scount = f->rcount = (int)n;
        const size_t es = t->size;
        switch (f->c) {
        case REDUCE:
        case ALLREDUCE:
            f->slen = f->rlen = (size_t)n * es;
            break;
        case RSB:
            f->slen = (size_t)p * (size_t)n * es;
            f->rlen = f->ip ? f->slen : (size_t)n * es;
            break;
        default: {
            size_t total = 0;
            for (int q = 0; q < p; q++)
                total += (size_t)(f->rc[q] = vcount((long)f->salt, q, 1, (int)n, 0));
            f->slen = total * es;
            f->rlen = f->ip ? f->slen : (size_t)f->rc[me] * es;
        }
        }
        return;
    }
    const layout_t *ls = pick_layout(f, 0), *lr = pick_layout(f, 1);
    if (f->c == BCAST) /* one buffer: the root's data and the others' result */
        ls = lr;
    f->st = ls->t;
    f->rtp = lr->t;
    f->sname = ls->name;
    f->rname = lr->name;
    const int se = ls->epu, re = lr->epu;
    f->scount = (int)n * se;
    f->rcount = (int)n * re;
    long send_elems = 0, recv_elems = 0;
    switch (f->c) {
    case BCAST:
        recv_elems = n * re;
        break;
    case SCATTER:
        send_elems = (long)p * n * se;
        recv_elems = n * re;
        break;
    case GATHER:
    case ALLGATHER:
        send_elems = n * se;
        recv_elems = (long)p * n * re;
        break;
    case ALLTOALL:
        send_elems = (long)p * n * se;
        recv_elems = (long)p * n * re;
        break;
    case BARRIER:
        break;
    case SCATTERV:
    case GATHERV:
    case ALLGATHERV: {
        /* units per rank alike everywhere; displacements: the root's
         * (Allgatherv: every rank its own) */
        int units[MAXP];
        for (int q = 0; q < p; q++)
            units[q] = vcount((long)f->salt, q, 0, (int)n, 0);
        const int ve = f->c == SCATTERV ? se : re; /* the v side's elements per unit */
        for (int q = 0; q < p; q++)
            (f->c == SCATTERV ? f->sc : f->rc)[q] = units[q] * ve;
        mt_seed((unsigned)f->salt * 131u + (f->c == ALLGATHERV ? (unsigned)me * 7u : 0u) + 5u);
        int *cnt = f->c == SCATTERV ? f->sc : f->rc, *dsp = f->c == SCATTERV ? f->sd : f->rd;
        const long end = mt_shuffle(p, cnt, dsp, order);
        if (f->c == SCATTERV) {
            send_elems = end;
            f->rcount = units[me] * re;
            recv_elems = f->rcount;
        } else {
            f->scount = units[me] * se;
            send_elems = f->scount;
            recv_elems = end;
        }
        break;
    }
    case ALLTOALLV:
        for (int q = 0; q < p; q++) {
            f->sc[q] = vcount((long)f->salt, me, q, (int)n, f->ip) * se;
            f->rc[q] = vcount((long)f->salt, q, me, (int)n, f->ip) * re;
        }
        mt_seed((unsigned)f->salt * 131u + (unsigned)me * 7u + 9u);
        send_elems = mt_shuffle(p, f->sc, f->sd, order);
        recv_elems = mt_shuffle(p, f->rc, f->rd, order);
        break;
    }
    /* the v-variants' displacements leave gaps of whole elements: the
     * span of the last element reached */
    f->slen = span_of(f->st, send_elems);
    f->rlen = span_of(f->rtp, recv_elems);
}

/* The in-place argument is this rank's (MPI_IN_PLACE goes where). */
static int own_ip(const fcall_t *f)
{
    if (!f->ip)
        return 0;
    if (f->c == SCATTER || f->c == SCATTERV || f->c == GATHER || f->c == GATHERV || f->c == REDUCE)
        return f->rank == f->root;
    return 1;
}

/* Fill the buffers: reductions exact values (the receive buffer too:
 * in place it is the input), everything else bytes; canaries after each.
 * Both calls' buffers alike. */
static void fill_call(fcall_t *f, unsigned gen)
{
    const uint64_t salt = f->salt * 1000003u + (uint64_t)wrank * 7919u + gen * 104729u;
    for (int s = 0; s < 2; s++) {
        const size_t len = s ? f->rlen : f->slen;
        char *b = f->hb[s];
        fill(b, len + CANARY, K_BYTE, salt + (uint64_t)s);
        if (is_red(f->c)) {
            const rtype_t *t = &rtypes[f->rt];
            for (size_t i = 0; i + t->size <= len; i += t->size)
                rvalue(t, f->op, mt_mix(salt + 2 * i + (uint64_t)s), b + i);
        }
        memcpy(f->kb[s], b, len + CANARY);
    }
}

#ifdef KCOLL_HAVE_PERSISTENT
#define FZ_INIT(B, ...) how == 2 ? MPI_##B##_init(__VA_ARGS__, MPI_INFO_NULL, req):
#else
#define FZ_INIT(B, ...)
#endif
/* how: 0 kcoll blocking, 1 kcoll non-blocking, 2 kcoll persistent (init),
 * 4 the host's non-blocking reference */
#define FZ_CALL(B, I, ...)                                                             \
    (FZ_INIT(B, __VA_ARGS__) how == 1 ? MPI_##I(__VA_ARGS__, req)                      \
     : how == 4 ? PMPI_##I(__VA_ARGS__, req) : MPI_##B(__VA_ARGS__))

static int issue(fcall_t *f, int how, MPI_Request *req)
{
    const int host = how == 4, ip = own_ip(f), n = (int)f->units, root = f->root, me = f->rank;
    char *s = host ? f->hb[0] : f->kb[0], *r = host ? f->hb[1] : f->kb[1];
    const void *sb = s;
    void *rb = r;
    const MPI_Datatype st = host ? f->st : f->kst, rt = host ? f->rtp : f->krt;
    const MPI_Comm comm = f->comm;
    const MPI_Op op = ops[f->op];
    /* the host's reference gets an in-place input as a separate send
     * buffer: MPICH 4.0.2 crashes in PMPI_Reduce in place at a non-zero
     * root, Open MPI 4.1.4's in-place PMPI_Ialltoallv leaves the next
     * non-blocking collective on the communicator hanging, and MPICH
     * 4.0.2's in-place PMPI_Iallgatherv with derived datatypes hangs or
     * gives wrong data (an Allgather(v)'s input: this rank's own block) */
    const int host_copy = ip && host &&
                          (is_red(f->c) || f->c == ALLTOALL || f->c == ALLTOALLV ||
                           f->c == ALLGATHER || f->c == ALLGATHERV) &&
                          !KCOLL_FUZZ_OLD_MPICH_ONE_RANK(f);
    if (host_copy && (f->c == ALLGATHER || f->c == ALLGATHERV)) {
        MPI_Aint lb, ext;
        MPI_Type_get_extent(rt, &lb, &ext);
        const long at = f->c == ALLGATHER ? (long)me * f->rcount : f->rd[me];
        const int cnt = f->c == ALLGATHER ? f->rcount : f->rc[me];
        memcpy(f->htmp, r + at * ext, span_of(rt, cnt));
        sb = f->htmp;
    } else if (host_copy) {
        memcpy(f->htmp, r, f->rlen);
        sb = f->htmp;
    } else if (ip && (f->c == SCATTER || f->c == SCATTERV)) {
        rb = MPI_IN_PLACE;
    } else if (ip) {
        sb = MPI_IN_PLACE;
    }
    switch (f->c) {
    case BCAST:
        return FZ_CALL(Bcast, Ibcast, r, f->rcount, rt, root, comm);
    case SCATTER:
        return FZ_CALL(Scatter, Iscatter, sb, f->scount, st, rb, f->rcount, rt, root, comm);
    case SCATTERV:
        return FZ_CALL(Scatterv, Iscatterv, sb, f->sc, f->sd, st, rb, f->rcount, rt, root, comm);
    case GATHER:
        return FZ_CALL(Gather, Igather, sb, f->scount, st, rb, f->rcount, rt, root, comm);
    case GATHERV:
        return FZ_CALL(Gatherv, Igatherv, sb, f->scount, st, rb, f->rc, f->rd, rt, root, comm);
    case ALLGATHER:
        if (host_copy) /* in place: the own block, in the receive datatype */
            return FZ_CALL(Allgather, Iallgather, sb, f->rcount, rt, rb, f->rcount, rt, comm);
        return FZ_CALL(Allgather, Iallgather, sb, f->scount, st, rb, f->rcount, rt, comm);
    case ALLGATHERV:
        if (host_copy)
            return FZ_CALL(Allgatherv, Iallgatherv, sb, f->rc[me], rt, rb, f->rc, f->rd, rt, comm);
        return FZ_CALL(Allgatherv, Iallgatherv, sb, f->scount, st, rb, f->rc, f->rd, rt, comm);
    case ALLTOALL:
        if (host_copy) /* in place: the send side is the receive side */
            return FZ_CALL(Alltoall, Ialltoall, sb, f->rcount, rt, rb, f->rcount, rt, comm);
        return FZ_CALL(Alltoall, Ialltoall, sb, f->scount, st, rb, f->rcount, rt, comm);
    case ALLTOALLV:
        if (host_copy)
            return FZ_CALL(Alltoallv, Ialltoallv, sb, f->rc, f->rd, rt, rb, f->rc, f->rd, rt, comm);
        return FZ_CALL(Alltoallv, Ialltoallv, sb, f->sc, f->sd, st, rb, f->rc, f->rd, rt, comm);
    case BARRIER:
        return FZ_CALL(Barrier, Ibarrier, comm);
    case REDUCE:
        return FZ_CALL(Reduce, Ireduce, sb, rb, n, st, op, root, comm);
    case ALLREDUCE:
        return FZ_CALL(Allreduce, Iallreduce, sb, rb, n, st, op, comm);
    case RSB:
        return FZ_CALL(Reduce_scatter_block, Ireduce_scatter_block, sb, rb, n, st, op, comm);
    default:
        return FZ_CALL(Reduce_scatter, Ireduce_scatter, sb, rb, f->rc, st, op, comm);
    }
}

/* The host's reference call: its non-blocking form, always (MPI does not
 * match a blocking collective with a non-blocking one, and whether kcoll
 * requests are pending here is this rank's own business). While it runs,
 * a completion call on a pending kcoll request of this rank (outstanding
 * ones, or the persistent start `active`), which does not complete it,
 * advances kcoll's requests: with MPICH kcoll advances them only inside
 * the calls it intercepts (MPICH has no progress hook), and a peer waiting
 * for them must not wait for this rank's host call to end. */
static int host_ref(fcall_t *f, MPI_Request active)
{
    if (active == MPI_REQUEST_NULL && nout)
        active = outstanding[0]->req;
    MPI_Request h;
    int rc = issue(f, 4, &h), done = 0, flag;
    if (rc == MPI_SUCCESS && active == MPI_REQUEST_NULL)
        return PMPI_Wait(&h, MPI_STATUS_IGNORE);
    while (rc == MPI_SUCCESS && !done) {
        rc = PMPI_Test(&h, &done, MPI_STATUS_IGNORE);
        if (!done) {
            MPI_Request_get_status(active, &flag, MPI_STATUS_IGNORE);
            sched_yield();
        }
    }
    return rc;
}

static void describe(const fcall_t *f, char *out, size_t len)
{
    const char *fam_spec = forced[colls[f->c].fam];
    if (is_red(f->c))
        snprintf(out, len, "%s %s on %s (p=%d), %ld x %s, %s, root %d%s, algo %s, min_bytes %s",
                 form_names[f->form], coll_name(f), slots[f->slot].what, f->p, f->units,
                 rtypes[f->rt].name, op_names[f->op], rooted(f->c) ? f->root : -1,
                 f->ip ? ", in place" : "",
                 fam_spec, min_bytes);
    else
        snprintf(out, len, "%s %s on %s (p=%d), %ld units, this rank's send %s, recv %s%s, "
                 "root %d%s, algo %s, min_bytes %s, pack_below %s",
                 form_names[f->form], coll_name(f), slots[f->slot].what, f->p, f->units,
                 f->sname, f->rname, f->fresh_type ? " (freed duplicates)" : "",
                 rooted(f->c) ? f->root : -1,
                 f->ip ? ", in place" : "", fam_spec, min_bytes, pack_below);
}

static void mismatch(const fcall_t *f, const char *why)
{
    char d[400];
    describe(f, d, sizeof d);
    if (mismatches++ < 10)
        fprintf(stderr,
                "kcoll-fuzz: MISMATCH: seed %llu, call %ld, world rank %d: %s: %s\n"
                "kcoll-fuzz: reproduce: mpiexec -n %d %s --seed %llu --calls %ld --max-bytes %zu%s\n",
                (unsigned long long)opt.seed, f->num, wrank, why, d, wsize, opt.argv0,
                (unsigned long long)opt.seed, f->num + 1, opt.max_bytes, opt.verbose ? " -v" : "");
}

/* A call that returned an error: which, and the MPI's words for it. */
static void mismatch_rc(const fcall_t *f, int rc, int hrc)
{
    char msg[MPI_MAX_ERROR_STRING] = "", why[MPI_MAX_ERROR_STRING + 64];
    int len = 0;
    MPI_Error_string(rc != MPI_SUCCESS ? rc : hrc, msg, &len);
    snprintf(why, sizeof why, "%s returned an error (%s)",
             rc != MPI_SUCCESS ? "kcoll's call" : "the host's reference call", msg);
    mismatch(f, why);
}

/* Compare kcoll's buffers with the host's. In place, a Reduce_scatter's
 * result is only the first block of the receive buffer. */
static void compare(fcall_t *f)
{
    if (memcmp(f->kb[0], f->hb[0], f->slen + CANARY)) {
        mismatch(f, "the send buffer differs from the host MPI's");
        return;
    }
    if (f->ip && (f->c == RSB || f->c == RS)) {
        size_t mine = (size_t)(f->c == RSB ? f->units : f->rc[f->rank]) * rtypes[f->rt].size;
        if (memcmp(f->kb[1], f->hb[1], mine) ||
            memcmp(f->kb[1] + f->rlen, f->hb[1] + f->rlen, CANARY))
            mismatch(f, "the result differs from the host MPI's");
        return;
    }
    if (memcmp(f->kb[1], f->hb[1], f->rlen + CANARY)) {
        size_t at = 0;
        while (f->kb[1][at] == f->hb[1][at])
            at++;
        char why[96];
        snprintf(why, sizeof why, "the receive buffer differs from the host MPI's at byte %zu of %zu%s",
                 at, f->rlen, at >= f->rlen ? " (the canary)" : "");
        mismatch(f, why);
    }
}

static void free_call(fcall_t *f)
{
    for (int s = 0; s < 2; s++) {
        free(f->kb[s]);
        free(f->hb[s]);
    }
    free(f->htmp);
    free(f);
}

/* A request completed: compare, release. */
static void finish(fcall_t *f, int rc)
{
    if (rc != MPI_SUCCESS)
        mismatch(f, "the completion returned an error");
    else
        compare(f);
    free_call(f);
}

/* Complete outstanding requests: one, some or all, with a completion
 * function drawn. */
static void complete_some(uint64_t draw)
{
    const unsigned mode = (unsigned)(draw % 6), pick = (unsigned)(draw >> 8) & 0xffff;
    if (!nout)
        return;
    char list[200];
    int at = 0;
    for (int i = 0; i < nout && at < (int)sizeof list - 24; i++)
        at += snprintf(list + at, sizeof list - (size_t)at, " %ld:%s", outstanding[i]->num,
                       coll_name(outstanding[i]) + 4);
    wd_note("kcoll-fuzz: seed %llu: completing %d outstanding calls (mode %u):%s",
            (unsigned long long)opt.seed, nout, mode, list);
    if (mode < 3) { /* one, with one of nbjob.h's nine completion functions */
        const int i = (int)(pick % (unsigned)nout);
        fcall_t *f = outstanding[i];
        MPI_Status st;
        /* MPI forbids freeing a non-blocking collective's request: mode 8
         * frees only kcoll's (generalized) ones and waits for the host's */
        const char *why = complete(&f->req, (int)(pick >> 8) % NCMODES, &st, !f->on_host);
        outstanding[i] = outstanding[--nout];
        if (why)
            mismatch(f, why);
        finish(f, MPI_SUCCESS);
        return;
    }
    MPI_Request reqs[MAXOUT];
    MPI_Status sts[MAXOUT];
    for (int i = 0; i < nout; i++)
        reqs[i] = outstanding[i]->req;
    int rc = MPI_SUCCESS;
    if (mode == 3) {
        rc = MPI_Waitall(nout, reqs, sts);
    } else if (mode == 4) { /* Testall until done */
        int flag = 0;
        while ((rc = MPI_Testall(nout, reqs, &flag, sts)) == MPI_SUCCESS && !flag)
            sched_yield();
    } else { /* Waitsome until all are done */
        int left = nout;
        while (left > 0 && rc == MPI_SUCCESS) {
            int outc, idx[MAXOUT];
            rc = MPI_Waitsome(nout, reqs, &outc, idx, sts);
            left -= outc == MPI_UNDEFINED ? left : outc;
        }
    }
    for (int i = 0; i < nout; i++) {
        if (rc == MPI_SUCCESS && reqs[i] != MPI_REQUEST_NULL)
            mismatch(outstanding[i], "a completed request is not MPI_REQUEST_NULL");
        finish(outstanding[i], rc);
    }
    nout = 0;
}

/* Statistics rows of the three forms of collective c. */
static void row_of(int c, int form, char *out, size_t len)
{
    if (form == FORM_NB)
        snprintf(out, len, "%s", colls[c].row);
    else
        snprintf(out, len, "%s%s", colls[c].name, form == FORM_P ? "_init" : "");
}

static uint64_t row_calls(int c, int form, const char *path)
{
    char row[64];
    row_of(c, form, row, sizeof row);
    return mt_calls(row, path);
}

/* One collective call of the sequence. */
static void one_call(long num)
{
    fcall_t *f = calloc(1, sizeof *f);
    if (!f) {
        fprintf(stderr, "kcoll-fuzz: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    f->num = num;
    f->c = (int)below(NCOLL);
    f->form = (int)below(100) < 40 ? FORM_B : FORM_NB;
#ifdef KCOLL_HAVE_PERSISTENT
    /* (MPICH 4.0.2's own persistent collectives hang: with KCOLL_DISABLE=1
     * seed 1 at 3 ranks stops at call 35, a persistent MPI_Scatter, so
     * under it none are drawn, and a long run tests the rest) */
    if (chance(15) && !KCOLL_FUZZ_NO_PERSISTENT)
        f->form = FORM_P;
#endif
    f->starts = 1 + (int)below(3);
    do
        f->slot = chance(30) ? 0 : (int)below(NSLOTS);
    while (!slots[f->slot].live);
    f->root_draw = below(1u << 30);
    f->ip = has_in_place(f->c) && chance(30);
#if defined(OPEN_MPI)
    /* Open MPI's in-place non-blocking all-to-alls (libnbc), 4.1.4 and
     * 5.0.11 alike, and kcoll hands some calls to them unchanged (a darray,
     * sizes below what kcoll takes, and with KCOLL_DISABLE=1 all):
     *  - 4.1.4's in-place PMPI_Ialltoallv leaves the next non-blocking
     *    collective on the communicator hanging (seed 1 at 3 ranks, call
     *    21026: the host's reference of call 21028 never completed);
     *  - its in-place PMPI_Ialltoall crashes in libnbc's progress of the
     *    call (seed 1 at 3 ranks, call 35405, with kcoll replaced by a bare
     *    forwarding library too);
     *  - 5.0.11 crashes in libnbc's progress (NBC_Progress ->
     *    mca_pml_ob1_isend) with KCOLL_DISABLE=1 (seed 2 at 3 ranks, calls
     *    1210 and 32798 in two runs), and runs seeds 1 and 2 clean without
     *    these calls; its in-place PMPI_Ialltoallv between nodes gives
     *    other data than its blocking MPI_Alltoallv in place (seed 7 on
     *    2 x 2 fake nodes, call 90; test_hier shows it with KCOLL_DISABLE=1)
     * (docs/fuzzing.md "Long runs") */
    if ((f->c == ALLTOALLV || f->c == ALLTOALL) && f->form != FORM_B)
        f->ip = 0;
#endif
    f->salt = rnd();
    /* (not for reductions: a duplicate of a predefined type is derived,
     * which predefined operations refuse) */
    f->fresh_type = f->form == FORM_NB && chance(20) && !is_red(f->c);
    if (is_red(f->c)) {
        do {
            f->rt = (int)below(NRT);
            f->op = (int)below(NOPS);
        } while (!op_valid(&rtypes[f->rt], f->op));
    } else {
        const unsigned s = below(100);
        f->sig = s < 60 ? SIG_INT6 : s < 78 ? SIG_BYTE5 : s < 95 ? SIG_DBL2 : SIG_DARRAY;
    }
    const int fam = colls[f->c].fam;
    draw_algo(fam, wsize); /* the world's size: the same list on every rank */
    /* units: at most max_bytes per buffer at the world's size */
    /* (derived layouts' extents are up to 3.4 times their data) */
    const size_t ub = is_red(f->c) ? rtypes[f->rt].size : (size_t)unit_bytes[f->sig] * 4;
    long cap = (long)(opt.max_bytes / ((size_t)wsize * ub));
    if (f->c == BCAST || f->c == REDUCE || f->c == ALLREDUCE)
        cap = (long)(opt.max_bytes / ub);
    f->units = f->c == BARRIER ? 0 : draw_units(cap < 1 ? 1 : cap);
    /* The MPICH family's in-place MPI_Reduce_scatter with unequal counts
     * and a vector over 512 KiB (its pairwise exchange) copies its own
     * block over itself: MPICH 5.0.2 aborts (yaksa's "memcpy argument
     * memory ranges overlap"), 4.0.2 too or gives wrong data, with
     * KCOLL_DISABLE=1 and in a program of its own (seed 2 at 3 ranks,
     * call 389: counts 164133, 164135, 0 of MPI_UINT16_T); kcoll hands
     * such calls to it (the checks of decisions time the host too) */
    if (f->c == RS && f->ip && !mt_host_is_ompi() &&
        (size_t)f->units * (size_t)wsize * rtypes[f->rt].size > (256u << 10))
        f->ip = 0;
    issued[f->form]++;

    f->comm = slots[f->slot].comm;
    if (!selected(num)) { /* --only: drawn, not made */
        free(f);
        return;
    }
    if (f->comm == MPI_COMM_NULL) { /* this rank is not in the communicator */
        free(f);
        return;
    }
    MPI_Comm_size(f->comm, &f->p);
    MPI_Comm_rank(f->comm, &f->rank);
    f->root = (int)(f->root_draw % (unsigned)f->p);
#ifdef KCOLL_HOST_OLD_MPICH
    /* MPICH 4.0.2 crashes in PMPI_Reduce in place at a non-zero root (the
     * host's reference avoids it, but kcoll hands such calls to it too:
     * seed 1 at 3 ranks, call 2844, below KCOLL_MIN_BYTES) */
    if (f->c == REDUCE && f->root != 0)
        f->ip = 0;
#endif
    if (f->p > MAXP) {
        free(f);
        return;
    }
    layout_call(f);
    f->kst = f->st;
    f->krt = f->rtp;
    if (f->fresh_type) { /* kcoll gets duplicates, freed right after the call */
        MPI_Type_dup(f->st, &f->kst);
        MPI_Type_dup(f->rtp, &f->krt);
    }
    for (int s = 0; s < 2; s++) {
        const size_t len = (s ? f->rlen : f->slen) + CANARY;
        f->kb[s] = malloc(len);
        f->hb[s] = malloc(len);
    }
    f->htmp = malloc(f->rlen + CANARY);
    if (!f->kb[0] || !f->kb[1] || !f->hb[0] || !f->hb[1] || !f->htmp) {
        fprintf(stderr, "kcoll-fuzz: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char d[400];
    describe(f, d, sizeof d);
    wd_note("kcoll-fuzz: seed %llu, call %ld: %s", (unsigned long long)opt.seed, num, d);
    if (opt.verbose && f->rank == 0)
        printf("  [call %ld] %s\n", num, d);

    fill_call(f, 0);
    int rc;
    if (f->form == FORM_B) {
        rc = issue(f, 0, NULL);
        int hrc = host_ref(f, MPI_REQUEST_NULL);
        if (f->fresh_type) {
            MPI_Type_free(&f->kst);
            MPI_Type_free(&f->krt);
        }
        if (rc != MPI_SUCCESS || hrc != MPI_SUCCESS)
            mismatch_rc(f, rc, hrc);
        else
            compare(f);
        free_call(f);
        return;
    }
    if (f->form == FORM_NB) {
        /* ranks outside some communicators have fewer outstanding: this
         * completion is this rank's own, drawn from the call's salt */
        for (uint64_t k = 0; nout == MAXOUT; k++)
            complete_some(mt_mix(f->salt + k));
        const uint64_t host0 = row_calls(f->c, FORM_NB, "mpi:*");
        rc = issue(f, 1, &f->req);
        f->on_host = row_calls(f->c, FORM_NB, "mpi:*") != host0;
        int hrc = host_ref(f, rc == MPI_SUCCESS && !f->on_host ? f->req : MPI_REQUEST_NULL);
        if (f->fresh_type) {
            MPI_Type_free(&f->kst);
            MPI_Type_free(&f->krt);
        }
        if (rc != MPI_SUCCESS || hrc != MPI_SUCCESS) {
            mismatch_rc(f, rc, hrc);
            if (rc == MPI_SUCCESS)
                MPI_Wait(&f->req, MPI_STATUS_IGNORE);
            free_call(f);
            return;
        }
        outstanding[nout++] = f;
        if (nout > max_out)
            max_out = nout;
        return;
    }
    /* persistent: init, starts with new contents, each compared; free */
    rc = issue(f, 2, &f->req);
    if (rc != MPI_SUCCESS) {
        mismatch(f, "MPI_<coll>_init returned an error");
        free_call(f);
        return;
    }
    for (int s = 0; s < f->starts; s++) {
        if (s)
            fill_call(f, (unsigned)s);
        const uint64_t host0 = row_calls(f->c, FORM_P, "mpi:*");
        rc = MPI_Start(&f->req);
        const int on_host = row_calls(f->c, FORM_P, "mpi:*") != host0;
        int hrc = host_ref(f, rc == MPI_SUCCESS ? f->req : MPI_REQUEST_NULL);
        MPI_Status st;
        const char *why = rc != MPI_SUCCESS ? "MPI_Start returned an error"
                          : hrc != MPI_SUCCESS ? "the host's reference call returned an error"
                                               : complete_as(&f->req, (int)(f->salt >> (8 + 4 * s)) % NCMODES,
                                                             &st, 1, 1);
#ifdef KCOLL_HOST_PERSISTENT_BROKEN
        if (on_host) { /* the MPICH family's own persistent collectives: broken, not compared */
            host_persistent++;
            continue;
        }
#else
        (void)on_host;
#endif
        if (why)
            mismatch(f, why);
        else
            compare(f);
    }
    if (MPI_Request_free(&f->req) != MPI_SUCCESS)
        mismatch(f, "MPI_Request_free returned an error");
    free_call(f);
}

/* ---------------------------------------------------------------------- */

static void check_placement(const char *list)
{
    int want[MAXP], n = 0;
    for (const char *s = list; *s && n < MAXP; n++) {
        want[n] = atoi(s);
        s += strcspn(s, ",");
        if (*s == ',')
            s++;
    }
    /* a node: the processes of one MPI_COMM_TYPE_SHARED communicator (as
     * the host sees them), named by its lowest world rank */
    MPI_Comm node;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int leader = wrank, leaders[MAXP], got[MAXP], nodes = 0;
    PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
    PMPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < wsize && i < MAXP; i++) {
        got[i] = nodes;
        for (int k = 0; k < i; k++)
            if (leaders[k] == leaders[i]) {
                got[i] = got[k];
                break;
            }
        if (got[i] == nodes)
            nodes++;
    }
    for (int i = 0; i < wsize; i++)
        if (i >= n || got[i] != want[i]) {
            if (wrank == 0)
                fprintf(stderr, "kcoll-fuzz: ranks are not placed as --expect-nodes=%s says\n", list);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
}

static void usage(void)
{
    if (wrank == 0)
        fprintf(stderr, "usage: kcoll-fuzz [--seed S] [--calls N] [--max-bytes B] [--min-kcoll PCT] "
                        "[--timeout SEC] [--only N,M,...] [-v] [-q] [--expect-nodes=0,0,1,...]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    wd_init("kcoll-fuzz");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* errors are compared */
    opt.argv0 = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seed") && v)
            opt.seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--calls") && v)
            opt.calls = atol(argv[++i]);
        else if (!strcmp(a, "--max-bytes") && v)
            opt.max_bytes = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--min-kcoll") && v)
            opt.min_kcoll = atof(argv[++i]);
        else if (!strcmp(a, "--timeout") && v)
            opt.timeout = (unsigned)atoi(argv[++i]);
        else if (!strcmp(a, "-v"))
            opt.verbose = 1;
        else if (!strcmp(a, "-q"))
            opt.quick = 1;
        else if (!strcmp(a, "--only") && v)
            opt.only = argv[++i];
        else if (!strncmp(a, "--expect-nodes=", 15))
            opt.expect_nodes = a + 15;
        else
            usage();
    }
    if (wsize > MAXP) {
        if (wrank == 0)
            fprintf(stderr, "kcoll-fuzz: at most %d ranks\n", MAXP);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (opt.expect_nodes)
        check_placement(opt.expect_nodes);
    if (opt.quick && opt.max_bytes > (256 << 10))
        opt.max_bytes = 256 << 10;
    make_layouts();
    make_reductions();
    slots[0] = (slot_t){1, MPI_COMM_WORLD, "world"};
    for (int f = 0; f < NFAM; f++)
        snprintf(forced[f], sizeof forced[f], "auto");
    rng_state = opt.seed * 0x2545f4914f6cdd1dull + 1;
    uint64_t kc0[3] = {0}, host0[3] = {0};
    for (int c = 0; c < NCOLL; c++)
        for (int fm = 0; fm < 3; fm++) {
            kc0[fm] += row_calls(c, fm, "kcoll:*");
            host0[fm] += row_calls(c, fm, "mpi:*");
        }
    const double t0 = MPI_Wtime();

    for (long call = 0; call < opt.calls;) {
        wd_arm(opt.timeout);
        const unsigned step = below(100);
        if (step < 4) {
            const int sl = 1 + (int)below(NSLOTS - 1);
            comm_make(sl, call);
        } else if (step < 7) {
            const int s = 1 + (int)below(NSLOTS - 1);
            if (slots[s].live) { /* freed even with requests outstanding on it */
                if (slots[s].comm != MPI_COMM_NULL)
                    MPI_Comm_free(&slots[s].comm);
                slots[s].live = 0;
                freed_comms++;
            }
        } else if (step < 15) {
            complete_some(rnd());
        } else if (step < 17) {
            draw_params();
        } else {
            one_call(call++);
        }
    }
    wd_arm(opt.timeout);
    for (uint64_t k = 0; nout; k++)
        complete_some(mt_mix(opt.seed + k));
    wd_arm(0);
    const double secs = MPI_Wtime() - t0;

    /* what took which path: kcoll's statistics, summed over the ranks */
    uint64_t mine[7] = {0}, sum[7];
    for (int c = 0; c < NCOLL; c++)
        for (int fm = 0; fm < 3; fm++) {
            mine[fm] += row_calls(c, fm, "kcoll:*");
            mine[3 + fm] += row_calls(c, fm, "mpi:*");
        }
    for (int fm = 0; fm < 3; fm++) {
        mine[fm] -= kc0[fm];
        mine[3 + fm] -= host0[fm];
    }
    mine[6] = (uint64_t)mismatches;
    PMPI_Allreduce(mine, sum, 7, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    long hp = host_persistent, hp_all = 0;
    PMPI_Allreduce(&hp, &hp_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    const uint64_t kc = sum[0] + sum[1] + sum[2], all = kc + sum[3] + sum[4] + sum[5];
    const double share = all ? 100.0 * (double)kc / (double)all : 0;
    int status = sum[6] != 0;
    if (wrank == 0) {
        printf("kcoll-fuzz: seed %llu, %d ranks: %ld calls (%ld blocking, %ld non-blocking, %ld "
               "persistent; up to %ld outstanding), %ld communicators made, %ld freed, %.1f s\n",
               (unsigned long long)opt.seed, wsize, opt.calls, issued[0], issued[1], issued[2],
               max_out, made_comms, freed_comms, secs);
        printf("kcoll-fuzz: on kcoll's paths %.1f%% of the calls the ranks made (blocking %llu of "
               "%llu, non-blocking %llu of %llu, persistent starts %llu of %llu)%s\n",
               share, (unsigned long long)sum[0], (unsigned long long)(sum[0] + sum[3]),
               (unsigned long long)sum[1], (unsigned long long)(sum[1] + sum[4]),
               (unsigned long long)sum[2], (unsigned long long)(sum[2] + sum[5]),
               hp_all ? " (persistent starts the host ran were not compared: MPICH's own are broken)"
                      : "");
        if (share < opt.min_kcoll) {
            printf("kcoll-fuzz: FAIL: kcoll took %.1f%% of the calls, less than --min-kcoll %.1f\n",
                   share, opt.min_kcoll);
            status = 1;
        }
        printf("kcoll-fuzz: %llu mismatches%s\n", (unsigned long long)sum[6],
               sum[6] ? " (FAIL)" : "");
        fflush(stdout);
    }
    for (int s = 1; s < NSLOTS; s++)
        if (slots[s].live && slots[s].comm != MPI_COMM_NULL)
            MPI_Comm_free(&slots[s].comm);
    MPI_Finalize();
    return status;
}
