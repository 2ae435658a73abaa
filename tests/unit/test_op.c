/* The reduction kernels (op/op.c) against values worked out here: integer
 * SUM and PROD wrap (int8 127 + 1 = -128, not the saturated 127), logical
 * operations give 0/1, bitwise ones act on bits, MIN/MAX on signed and
 * unsigned and floating point, complex SUM/PROD, MAXLOC/MINLOC with ties
 * (the smaller index wins), the argument order inout = in op inout, the
 * validity table (no bitwise ops on floating point, no MIN on complex),
 * and lengths that leave a vector loop's remainder (1..67 elements). */
#include <complex.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "op/op.h"

static void apply(kcoll_opkind_t k, kcoll_type_t t, const void *in, void *inout, size_t n)
{
    kcoll_op_t op = {.kind = k, .type = t, .esize = kcoll_type_size(t)};
    kcoll_op_apply(&op, in, inout, n * op.esize);
}

static void order_fn(const void *in, void *inout, size_t n, const kcoll_op_t *op)
{
    const int *a = in;
    int *b = inout;
    (void)op;
    for (size_t i = 0; i < n; i++)
        b[i] = a[i] * 10 + b[i]; /* "in" is the left operand */
}

int main(void)
{
    /* wrap-around, not saturation */
    int8_t a8[3] = {127, -128, 100}, b8[3] = {1, -1, 100};
    apply(KCOLL_OP_SUM, KCOLL_T_INT8, a8, b8, 3);
    CHECK(b8[0] == -128 && b8[1] == 127 && b8[2] == -56, "int8 sum %d %d %d", b8[0], b8[1], b8[2]);
    uint16_t a16[2] = {65535, 300}, b16[2] = {65535, 300};
    apply(KCOLL_OP_PROD, KCOLL_T_UINT16, a16, b16, 2);
    CHECK(b16[0] == 1 && b16[1] == (uint16_t)90000, "uint16 prod %u %u", b16[0], b16[1]);
    int32_t a32[2] = {INT32_MAX, -5}, b32[2] = {1, 3};
    apply(KCOLL_OP_SUM, KCOLL_T_INT32, a32, b32, 2);
    CHECK(b32[0] == INT32_MIN && b32[1] == -2, "int32 sum");

    /* every length up to 67: the vector body and its remainder */
    for (size_t n = 1; n <= 67; n++) {
        int64_t x[67], y[67];
        uint32_t u[67], v[67];
        double d[67], e[67];
        for (size_t i = 0; i < n; i++) {
            x[i] = (int64_t)i * 3 - 50;
            y[i] = 40 - (int64_t)i;
            u[i] = (uint32_t)(i * 2654435761u);
            v[i] = (uint32_t)(i * 40503u + 7);
            d[i] = (double)i * 0.5 - 3.0;
            e[i] = 1.0 / (double)(i + 1);
        }
        int64_t y0[67];
        uint32_t v0[67];
        double e0[67];
        memcpy(y0, y, sizeof y);
        memcpy(v0, v, sizeof v);
        memcpy(e0, e, sizeof e);
        apply(KCOLL_OP_MIN, KCOLL_T_INT64, x, y, n);
        apply(KCOLL_OP_BXOR, KCOLL_T_UINT32, u, v, n);
        apply(KCOLL_OP_SUM, KCOLL_T_DOUBLE, d, e, n);
        int ok = 1;
        for (size_t i = 0; i < n; i++)
            ok &= y[i] == (x[i] < y0[i] ? x[i] : y0[i]) && v[i] == (u[i] ^ v0[i]) &&
                  e[i] == d[i] + e0[i];
        CHECK(ok, "n=%zu: int64 MIN, uint32 BXOR or double SUM wrong", n);
    }

    /* logical: 0/1 results from any non-zero */
    int16_t l1[4] = {0, 0, 7, -3}, l2[4] = {0, 9, 0, 2};
    int16_t land[4], lor[4], lxor[4];
    memcpy(land, l2, sizeof l2);
    memcpy(lor, l2, sizeof l2);
    memcpy(lxor, l2, sizeof l2);
    apply(KCOLL_OP_LAND, KCOLL_T_INT16, l1, land, 4);
    apply(KCOLL_OP_LOR, KCOLL_T_INT16, l1, lor, 4);
    apply(KCOLL_OP_LXOR, KCOLL_T_INT16, l1, lxor, 4);
    CHECK(!memcmp(land, (int16_t[4]){0, 0, 0, 1}, 8), "LAND");
    CHECK(!memcmp(lor, (int16_t[4]){0, 1, 1, 1}, 8), "LOR");
    CHECK(!memcmp(lxor, (int16_t[4]){0, 1, 1, 0}, 8), "LXOR");
    _Bool t1[2] = {1, 1}, t2[2] = {1, 0};
    apply(KCOLL_OP_LXOR, KCOLL_T_BOOL, t1, t2, 2);
    CHECK(t2[0] == 0 && t2[1] == 1, "bool LXOR");

    /* unsigned MAX is unsigned */
    uint64_t m1[1] = {UINT64_MAX}, m2[1] = {1};
    apply(KCOLL_OP_MAX, KCOLL_T_UINT64, m1, m2, 1);
    CHECK(m2[0] == UINT64_MAX, "uint64 MAX");

    /* complex */
    double _Complex c1[1] = {1.0 + 2.0 * I}, c2[1] = {3.0 - 1.0 * I};
    apply(KCOLL_OP_PROD, KCOLL_T_CDOUBLE, c1, c2, 1);
    CHECK(creal(c2[0]) == 5.0 && cimag(c2[0]) == 5.0, "complex prod %g%+gi", creal(c2[0]),
          cimag(c2[0]));
    float _Complex f1[1] = {1.5f + 1.0f * I}, f2[1] = {0.5f - 4.0f * I};
    apply(KCOLL_OP_SUM, KCOLL_T_CFLOAT, f1, f2, 1);
    CHECK(crealf(f2[0]) == 2.0f && cimagf(f2[0]) == -3.0f, "complex sum");

    /* MAXLOC/MINLOC, ties to the smaller index on either side */
    struct { float v; int i; } p1[3] = {{2.0f, 5}, {3.0f, 9}, {1.0f, 1}},
                              p2[3] = {{2.0f, 3}, {3.0f, 4}, {7.0f, 0}};
    apply(KCOLL_OP_MAXLOC, KCOLL_T_FLOAT_INT, p1, p2, 3);
    CHECK(p2[0].i == 3 && p2[1].i == 4 && p2[2].v == 7.0f && p2[2].i == 0, "float MAXLOC");
    struct { int v; int i; } q1[3] = {{2, 1}, {-4, 8}, {0, 2}}, q2[3] = {{2, 6}, {-4, 3}, {5, 0}};
    apply(KCOLL_OP_MINLOC, KCOLL_T_2INT, q1, q2, 3);
    CHECK(q2[0].i == 1 && q2[1].i == 3 && q2[2].v == 0 && q2[2].i == 2, "2int MINLOC");
    /* Fortran's pairs: the index in the value's type */
    struct { double v, i; } d1[3] = {{2.5, 7.0}, {-1.0, 2.0}, {4.0, 1.0}},
                            d2[3] = {{2.5, 3.0}, {-1.0, 5.0}, {3.0, 0.0}};
    apply(KCOLL_OP_MAXLOC, KCOLL_T_2DOUBLE, d1, d2, 3);
    CHECK(d2[0].i == 3.0 && d2[1].i == 2.0 && d2[2].v == 4.0 && d2[2].i == 1.0, "2double MAXLOC");
    struct { float v, i; } g1[2] = {{1.0f, 4.0f}, {-3.0f, 9.0f}}, g2[2] = {{1.0f, 6.0f}, {2.0f, 0.0f}};
    apply(KCOLL_OP_MINLOC, KCOLL_T_2FLOAT, g1, g2, 2);
    CHECK(g2[0].i == 4.0f && g2[1].v == -3.0f && g2[1].i == 9.0f, "2float MINLOC");

    /* the user function gets (in, inout) in that order */
    int o1[2] = {1, 2}, o2[2] = {3, 4};
    kcoll_op_t uop = {.kind = KCOLL_OP_USER, .type = KCOLL_T_OPAQUE,
        .esize = sizeof(int), .user = order_fn};
    kcoll_op_apply(&uop, o1, o2, sizeof o1);
    CHECK(o2[0] == 13 && o2[1] == 24, "user op order");

    /* reversed operands: inout = inout op in gives the bits apply gives
     * with the buffers swapped (complex PROD and MINLOC are not symmetric
     * in their evaluation or tie handling) */
    {
        double _Complex x[3] = {1.5 + 0.25 * I, -2.0 + 1.0e-9 * I, 3.0}, y[3] = {0.1 - 7.0 * I, 5.0, -1.0 * I};
        double _Complex r1[3], r2[3];
        memcpy(r1, x, sizeof x);
        kcoll_op_t cop = {.kind = KCOLL_OP_PROD, .type = KCOLL_T_CDOUBLE,
            .esize = sizeof(double _Complex)};
        kcoll_op_apply(&cop, y, r1, sizeof r1);     /* r1 = y op x */
        memcpy(r2, y, sizeof y);
        kcoll_op_apply_rev(&cop, x, r2, sizeof r2); /* r2 = y op x */
        CHECK(!memcmp(r1, r2, sizeof r1), "complex PROD reversed");
        struct { int v; int i; } k1[2] = {{1, 4}, {2, 0}}, k2[2] = {{1, 2}, {2, 9}}, s1[2], s2[2];
        kcoll_op_t lop = {.kind = KCOLL_OP_MINLOC, .type = KCOLL_T_2INT, .esize = 8};
        memcpy(s1, k2, sizeof k2);
        kcoll_op_apply(&lop, k1, s1, sizeof s1);
        memcpy(s2, k1, sizeof k1);
        kcoll_op_apply_rev(&lop, k2, s2, sizeof s2);
        CHECK(!memcmp(s1, s2, sizeof s1) && s1[0].i == 2 && s1[1].i == 0, "MINLOC reversed");
        kcoll_op_t uop2 = {.kind = KCOLL_OP_USER, .type = KCOLL_T_OPAQUE,
            .esize = 4, .user = order_fn};
        CHECK(!kcoll_op_has_rev(&uop2) && kcoll_op_has_rev(&lop), "user functions have no reverse");
    }

    /* validity follows MPI's table */
    CHECK(kcoll_op_valid(KCOLL_OP_SUM, KCOLL_T_CDOUBLE), "SUM complex");
    CHECK(!kcoll_op_valid(KCOLL_OP_MIN, KCOLL_T_CDOUBLE), "no MIN complex");
    CHECK(!kcoll_op_valid(KCOLL_OP_BAND, KCOLL_T_DOUBLE), "no BAND double");
    CHECK(!kcoll_op_valid(KCOLL_OP_LAND, KCOLL_T_FLOAT), "no LAND float");
    CHECK(kcoll_op_valid(KCOLL_OP_BOR, KCOLL_T_BYTE) && !kcoll_op_valid(KCOLL_OP_SUM, KCOLL_T_BYTE),
          "byte: bitwise only");
    CHECK(!kcoll_op_valid(KCOLL_OP_MAXLOC, KCOLL_T_INT32) &&
          kcoll_op_valid(KCOLL_OP_MAXLOC, KCOLL_T_2INT) &&
          kcoll_op_valid(KCOLL_OP_MINLOC, KCOLL_T_2DOUBLE) &&
          !kcoll_op_valid(KCOLL_OP_SUM, KCOLL_T_2FLOAT), "MAXLOC on pairs only");
    CHECK(!kcoll_op_valid(KCOLL_OP_SUM, KCOLL_T_BOOL) && kcoll_op_valid(KCOLL_OP_LOR, KCOLL_T_BOOL),
          "bool: logical only");
    return check_report("test_op");
}
