/* Derived datatypes through kcoll against the host MPI, byte for byte.
 *
 * Eight datatypes of one signature (6 MPI_INTs) and eight layouts:
 * contiguous, vector, indexed out of memory order, a struct with padding
 * (resized), a subarray of a 4 x 5 matrix in C order and one of a 5 x 4
 * matrix in Fortran order, a resized contiguous type with a gap after it,
 * an hvector of contiguous blocks. In each case every rank
 * picks its own layout (rank + case, so sender and receivers differ), and
 * the collectives run on the host MPI (PMPI_*) and through kcoll (every
 * size to kcoll) from identical buffers, gaps and a canary tail included;
 * the whole allocations must come out equal (so kcoll wrote every data
 * byte where the host did and no gap byte), and the statistics must show
 * kcoll's path. Bcast, Scatter, Gather, Gatherv, Allgather, Alltoall,
 * Allreduce, Reduce, Reduce_scatter_block (reductions: one datatype on
 * all ranks, as MPI requires), Ibcast and Iallreduce with the datatype
 * freed before the wait. Counts 0, 1, 700 and 9000 units. Both host MPIs
 * refuse predefined operations on derived datatypes (MPI_ERR_OP) but the
 * contiguous one's: there the reductions must give the host's error class
 * and not run on kcoll's path. Then datatypes freed and made again (their
 * handles reused) and a predefined type with a gap, as Bcast.
 * Run twice by the tests: with the default KCOLL_DTYPE_PACK_BELOW (these
 * layouts' short pieces are packed) and with 0 (every piece moved
 * straight from memory to memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define NT 8
#define CANARY 64
static const char *const tnames[NT] = {"contig(6 int)", "vector(3,2,3)", "indexed{5,0,10}",
                                       "struct+padding", "subarray(4x5:2x3@1,1)",
                                       "resized(6 int, 8)", "hvector(2,contig3,40B)",
                                       "subarray(Fortran 5x4:3x2@1,2)"};
static MPI_Datatype types[NT];

static void make_types(void)
{
    MPI_Type_contiguous(6, MPI_INT, &types[0]);
    MPI_Type_vector(3, 2, 3, MPI_INT, &types[1]);
    int bl[3] = {1, 3, 2}, dis[3] = {5, 0, 10};
    MPI_Type_indexed(3, bl, dis, MPI_INT, &types[2]);
    /* struct { int a; double pad; int b[5]; } with the double left out */
    int sbl[2] = {1, 5};
    MPI_Aint sdis[2] = {0, 16};
    MPI_Datatype st[2] = {MPI_INT, MPI_INT}, s0;
    MPI_Type_create_struct(2, sbl, sdis, st, &s0);
    MPI_Type_create_resized(s0, 0, 40, &types[3]);
    MPI_Type_free(&s0);
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &types[4]);
    MPI_Datatype c6, c3;
    MPI_Type_contiguous(6, MPI_INT, &c6);
    MPI_Type_create_resized(c6, 0, 32, &types[5]);
    MPI_Type_free(&c6);
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_create_hvector(2, 1, 40, c3, &types[6]);
    MPI_Type_free(&c3);
    int fsizes[2] = {5, 4}, fsub[2] = {3, 2}, fstarts[2] = {1, 2};
    MPI_Type_create_subarray(2, fsizes, fsub, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &types[7]);
    for (int t = 0; t < NT; t++)
        MPI_Type_commit(&types[t]);
}

static size_t span_of(MPI_Datatype t, size_t count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    return count ? (size_t)(count - 1) * (size_t)ext + (size_t)(tlb + text) + CANARY : CANARY;
}

static void fill(char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(mt_mix(i * 131 + seed) >> 24);
}

/* The int data of a buffer: small values, so sums do not overflow and any
 * order gives the same bits */
static void fill_ints(char *b, MPI_Datatype t, int count, unsigned seed)
{
    int n = count * 6, pos = 0;
    int *v = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        v[i] = (int)(mt_mix((uint64_t)i + seed) % 1000);
    MPI_Unpack(v, (int)sizeof(int) * n, &pos, b, count, t, MPI_COMM_SELF);
    free(v);
}

typedef struct {
    char *ref[2], *got[2];
    size_t cap;
} bufs_t;

static void prepare(bufs_t *b, int which, size_t span, unsigned seed)
{
    fill(b->ref[which], span, seed);
    memcpy(b->got[which], b->ref[which], span);
}

static void verdict(const char *coll, const char *row, uint64_t before, int rc1, int rc2,
                    const bufs_t *b, const size_t span[2], int p, const char *what)
{
    if (rc1 != MPI_SUCCESS) { /* the host refuses the call: kcoll must give its error */
        int c1, c2;
        MPI_Error_class(rc1, &c1);
        MPI_Error_class(rc2, &c2);
        if (c1 != c2)
            mt_fail("%s: error class %d where the host MPI gives %d (%s)", coll, c2, c1, what);
        else if (p > 1 && mt_calls(row, "kcoll:*") != before)
            mt_fail("%s: the host MPI refuses it, yet kcoll ran it (%s)", coll, what);
        else
            mt_pass();
        return;
    }
    int ok = rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS;
    for (int w = 0; w < 2 && ok; w++)
        ok = !memcmp(b->ref[w], b->got[w], span[w]);
    if (!ok)
        mt_fail("%s: result differs from the host MPI (%s)", coll, what);
    else if (p > 1 && mt_calls(row, "kcoll:*") != before + 1)
        mt_fail("%s: not on kcoll's path (%s)", coll, what);
    else
        mt_pass();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, rank;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); /* the host's refusals come back */
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    kcoll_param_set("MIN_BYTES", "0");
    make_types();
    static const int counts[] = {0, 1, 700, 9000};
    bufs_t b;
    b.cap = span_of(types[4], (size_t)(9000 + 2) * (size_t)p) + CANARY;
    for (int w = 0; w < 2; w++) {
        b.ref[w] = malloc(b.cap);
        b.got[w] = malloc(b.cap);
    }
    for (int ci = 0; ci < 4; ci++)
        for (int k = 0; k < NT; k++) {
            const int n = counts[ci];
            const int mine_t = (rank + k) % NT, root = k % p;
            MPI_Datatype t = types[mine_t], tr = types[k]; /* tr: the reductions' */
            char what[160];
            snprintf(what, sizeof what, "%d units, this rank's %s, case %d, root %d", n,
                     tnames[mine_t], k, root);
            size_t one = span_of(t, (size_t)n), all = span_of(t, (size_t)n * (size_t)p);
            size_t sp[2];
            uint64_t before;
            int rc1, rc2;

            /* Bcast */
            sp[0] = one, sp[1] = 0;
            prepare(&b, 0, one, (unsigned)(rank * 7 + k));
            before = mt_calls("MPI_Bcast", "kcoll:*");
            rc1 = PMPI_Bcast(b.ref[0], n, t, root, comm);
            rc2 = MPI_Bcast(b.got[0], n, t, root, comm);
            verdict("MPI_Bcast", "MPI_Bcast", before, rc1, rc2, &b, sp, p, what);

            /* Scatter and Gather: the root's buffer holds p blocks */
            sp[0] = all, sp[1] = one;
            prepare(&b, 0, all, (unsigned)(rank * 11 + k));
            prepare(&b, 1, one, (unsigned)(rank * 13 + k));
            before = mt_calls("MPI_Scatter", "kcoll:*");
            rc1 = PMPI_Scatter(b.ref[0], n, t, b.ref[1], n, t, root, comm);
            rc2 = MPI_Scatter(b.got[0], n, t, b.got[1], n, t, root, comm);
            verdict("MPI_Scatter", "MPI_Scatter", before, rc1, rc2, &b, sp, p, what);

            prepare(&b, 0, all, (unsigned)(rank * 17 + k));
            prepare(&b, 1, one, (unsigned)(rank * 19 + k));
            before = mt_calls("MPI_Gather", "kcoll:*");
            rc1 = PMPI_Gather(b.ref[1], n, t, b.ref[0], n, t, root, comm);
            rc2 = MPI_Gather(b.got[1], n, t, b.got[0], n, t, root, comm);
            verdict("MPI_Gather", "MPI_Gather", before, rc1, rc2, &b, sp, p, what);

            /* Gatherv: rank q sends n - q units (at least 0), blocks reversed */
            int vc[64], vd[64], mycount = n - rank > 0 ? n - rank : 0, at = 0;
            for (int q = p - 1; q >= 0; q--) {
                vc[q] = n - q > 0 ? n - q : 0;
                vd[q] = at;
                at += vc[q] + 1; /* a unit of gap after every block */
            }
            sp[0] = span_of(t, (size_t)at);
            prepare(&b, 0, sp[0], (unsigned)(rank * 23 + k));
            prepare(&b, 1, one, (unsigned)(rank * 29 + k));
            before = mt_calls("MPI_Gatherv", "kcoll:*");
            rc1 = PMPI_Gatherv(b.ref[1], mycount, t, b.ref[0], vc, vd, t, root, comm);
            rc2 = MPI_Gatherv(b.got[1], mycount, t, b.got[0], vc, vd, t, root, comm);
            verdict("MPI_Gatherv", "MPI_Gatherv", before, rc1, rc2, &b, sp, p, what);

            /* Allgather, Alltoall */
            sp[0] = all, sp[1] = one;
            prepare(&b, 0, all, (unsigned)(rank * 31 + k));
            prepare(&b, 1, one, (unsigned)(rank * 37 + k));
            before = mt_calls("MPI_Allgather", "kcoll:*");
            rc1 = PMPI_Allgather(b.ref[1], n, t, b.ref[0], n, t, comm);
            rc2 = MPI_Allgather(b.got[1], n, t, b.got[0], n, t, comm);
            verdict("MPI_Allgather", "MPI_Allgather", before, rc1, rc2, &b, sp, p, what);

            sp[0] = sp[1] = all;
            prepare(&b, 0, all, (unsigned)(rank * 41 + k));
            prepare(&b, 1, all, (unsigned)(rank * 43 + k));
            before = mt_calls("MPI_Alltoall", "kcoll:*");
            rc1 = PMPI_Alltoall(b.ref[1], n, t, b.ref[0], n, t, comm);
            rc2 = MPI_Alltoall(b.got[1], n, t, b.got[0], n, t, comm);
            verdict("MPI_Alltoall", "MPI_Alltoall", before, rc1, rc2, &b, sp, p, what);

            /* reductions: datatype tr on every rank */
            size_t rone = span_of(tr, (size_t)n), rall = span_of(tr, (size_t)n * (size_t)p);
            sp[0] = rone, sp[1] = rone;
            prepare(&b, 0, rone, (unsigned)(rank * 47 + k));
            prepare(&b, 1, rone, (unsigned)(rank * 53 + k));
            fill_ints(b.ref[1], tr, n, (unsigned)(rank * 59 + k));
            fill_ints(b.got[1], tr, n, (unsigned)(rank * 59 + k));
            before = mt_calls("MPI_Allreduce", "kcoll:*");
            rc1 = PMPI_Allreduce(b.ref[1], b.ref[0], n, tr, MPI_SUM, comm);
            rc2 = MPI_Allreduce(b.got[1], b.got[0], n, tr, MPI_SUM, comm);
            verdict("MPI_Allreduce", "MPI_Allreduce", before, rc1, rc2, &b, sp, p, what);

            prepare(&b, 0, rone, (unsigned)(rank * 61 + k));
            before = mt_calls("MPI_Reduce", "kcoll:*");
            rc1 = PMPI_Reduce(b.ref[1], b.ref[0], n, tr, MPI_MAX, root, comm);
            rc2 = MPI_Reduce(b.got[1], b.got[0], n, tr, MPI_MAX, root, comm);
            verdict("MPI_Reduce", "MPI_Reduce", before, rc1, rc2, &b, sp, p, what);

            sp[0] = rone, sp[1] = rall;
            prepare(&b, 0, rone, (unsigned)(rank * 67 + k));
            prepare(&b, 1, rall, (unsigned)(rank * 71 + k));
            fill_ints(b.ref[1], tr, n * p, (unsigned)(rank * 73 + k));
            fill_ints(b.got[1], tr, n * p, (unsigned)(rank * 73 + k));
            before = mt_calls("MPI_Reduce_scatter_block", "kcoll:*");
            rc1 = PMPI_Reduce_scatter_block(b.ref[1], b.ref[0], n, tr, MPI_SUM, comm);
            rc2 = MPI_Reduce_scatter_block(b.got[1], b.got[0], n, tr, MPI_SUM, comm);
            verdict("MPI_Reduce_scatter_block", "MPI_Reduce_scatter_block", before, rc1, rc2, &b,
                    sp, p, what);

            /* non-blocking, the datatype freed before the wait */
            MPI_Datatype d, dr;
            MPI_Request q;
            MPI_Type_dup(t, &d);
            MPI_Type_dup(tr, &dr);
            sp[0] = one, sp[1] = 0;
            prepare(&b, 0, one, (unsigned)(rank * 79 + k));
            before = mt_calls("MPI_Ibcast", "kcoll:*");
            rc1 = PMPI_Bcast(b.ref[0], n, t, root, comm);
            rc2 = MPI_Ibcast(b.got[0], n, d, root, comm, &q);
            MPI_Type_free(&d);
            if (rc2 == MPI_SUCCESS)
                rc2 = MPI_Wait(&q, MPI_STATUS_IGNORE);
            verdict("MPI_Ibcast", "MPI_Ibcast", before, rc1, rc2, &b, sp, p, what);

            sp[0] = sp[1] = rone;
            prepare(&b, 0, rone, (unsigned)(rank * 83 + k));
            prepare(&b, 1, rone, (unsigned)(rank * 89 + k));
            fill_ints(b.ref[1], tr, n, (unsigned)(rank * 97 + k));
            fill_ints(b.got[1], tr, n, (unsigned)(rank * 97 + k));
            before = mt_calls("MPI_Iallreduce", "kcoll:*");
            rc1 = PMPI_Allreduce(b.ref[1], b.ref[0], n, tr, MPI_SUM, comm);
            rc2 = MPI_Iallreduce(b.got[1], b.got[0], n, dr, MPI_SUM, comm, &q);
            MPI_Type_free(&dr);
            if (rc2 == MPI_SUCCESS)
                rc2 = MPI_Wait(&q, MPI_STATUS_IGNORE);
            verdict("MPI_Iallreduce", "MPI_Iallreduce", before, rc1, rc2, &b, sp, p, what);
        }
    /* Handles the program frees and MPI hands out again: a dense dup of
     * MPI_INT and MPI_INT resized with a gap (extent 8) made in turn, each
     * freed after its call, so that one often gets the handle the other
     * just had; then MPI_SHORT_INT, a predefined type with a gap. An answer
     * about a datatype kept by handle past its free (or a predefined
     * type's taken for another's) shows as bytes unlike the host's. */
    for (int i = 0; i < 7; i++) {
        MPI_Datatype x = MPI_SHORT_INT;
        const int n = 700, root = i % p;
        if (i < 6) {
            if (i % 2)
                MPI_Type_create_resized(MPI_INT, 0, 8, &x);
            else
                MPI_Type_dup(MPI_INT, &x);
            MPI_Type_commit(&x);
        }
        size_t sp[2] = {span_of(x, (size_t)n), 0};
        char what[64];
        snprintf(what, sizeof what, "reused handles, type %d of 7", i + 1);
        prepare(&b, 0, sp[0], (unsigned)(rank * 101 + i));
        int rc1 = PMPI_Bcast(b.ref[0], n, x, root, comm);
        int rc2 = MPI_Bcast(b.got[0], n, x, root, comm);
        if (rc1 != rc2 || memcmp(b.ref[0], b.got[0], sp[0]))
            mt_fail("MPI_Bcast: result differs from the host MPI (%s)", what);
        else
            mt_pass();
        if (i < 6)
            MPI_Type_free(&x);
    }
    for (int w = 0; w < 2; w++) {
        free(b.ref[w]);
        free(b.got[w]);
    }
    for (int t = 0; t < NT; t++)
        MPI_Type_free(&types[t]);
    MPI_Comm_free(&comm);
    int rc = mt_finish("test_dtype");
    MPI_Finalize();
    return rc;
}
