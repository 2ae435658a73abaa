/* A user operation that is associative and not commutative, for the
 * reduction tests: the composition of affine maps x -> a*x + b modulo
 * 2^32, (f op g) = f o g. Reduced in any order but r_0 o (r_1 o (... o
 * r_{p-1})) it gives other maps (inputs drawn so that any two differ), so
 * a result checks the order as well as the delivery. */
#ifndef KCOLL_TEST_AFFINE_OP_H
#define KCOLL_TEST_AFFINE_OP_H

#include <stdint.h>

#include "op/op.h"

typedef struct { uint32_t a, b; } affine_t;

static inline void compose(const void *in_, void *inout_, size_t n, const kcoll_op_t *op)
{
    const affine_t *in = in_;
    affine_t *io = inout_;
    (void)op;
    for (size_t i = 0; i < n; i++) {
        affine_t f = in[i], g = io[i];
        io[i] = (affine_t){f.a * g.a, f.a * g.b + f.b};
    }
}

static const kcoll_op_t affine_op = {.kind = KCOLL_OP_USER, .type = KCOLL_T_OPAQUE,
    .esize = sizeof(affine_t), .user = compose};

/* rank r's element i: odd a, so no two compositions collapse */
static inline affine_t affine_input(int r, size_t i)
{
    uint32_t h = (uint32_t)(r * 2654435761u) ^ (uint32_t)(i * 40503u + 17u);
    return (affine_t){(h << 1) | 1u, h * 7u + (uint32_t)r};
}

#endif
