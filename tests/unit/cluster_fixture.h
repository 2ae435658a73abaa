/* What the cross-node simulator tests share: the operations (int32 SUM
 * and a non-commutative user function, the composition of affine maps
 * modulo 2^32), every rank's input and the rank-order reference, the node
 * shapes and the placement of ranks on them. */
#ifndef KCOLL_TEST_CLUSTER_FIXTURE_H
#define KCOLL_TEST_CLUSTER_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "affine_op.h"
#include "op/op.h"

static const kcoll_op_t isum = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_INT32, .esize = 4};

/* rank r's element i, esize bytes */
static inline void input(const kcoll_op_t *op, int r, size_t i, uint8_t *dst)
{
    uint32_t h = (uint32_t)(r * 2654435761u) ^ (uint32_t)(i * 40503u + 17u);
    if (op == &affine_op) {
        affine_t v = affine_input(r, i);
        memcpy(dst, &v, sizeof v);
    } else {
        memcpy(dst, &h, 4);
    }
}

/* the reduction over ranks 0..p-1 of element i in rank order */
static inline void reference(const kcoll_op_t *op, int p, size_t i, uint8_t *out)
{
    uint8_t v[8];
    input(op, p - 1, i, out);
    for (int r = p - 2; r >= 0; r--) {
        input(op, r, i, v);
        kcoll_op_apply(op, v, out, op->esize);
    }
}

/* node_of for nodes of the given sizes, in blocks or round-robin
 * (rank r goes to the next node, in turn, that still has room) */
static inline int place(const int *sizes, int nodes, int rr, int *node_of)
{
    int p = 0, left[16];
    for (int k = 0; k < nodes; k++)
        p += left[k] = sizes[k];
    if (!rr) {
        for (int k = 0, r = 0; k < nodes; k++)
            for (int i = 0; i < sizes[k]; i++)
                node_of[r++] = k;
        return p;
    }
    for (int r = 0, k = 0; r < p; k = (k + 1) % nodes)
        if (left[k]) {
            left[k]--;
            node_of[r++] = 10 + 3 * k; /* any ids */
        }
    return p;
}

typedef struct {
    const char *name;
    int nodes, sizes[8], rr;
} shape_t;

static const shape_t shapes[] = {
    {"2x2", 2, {2, 2}, 0},
    {"2x3", 2, {3, 3}, 0},
    {"3x2", 3, {2, 2, 2}, 0},
    {"4x1", 4, {1, 1, 1, 1}, 0},
    {"3+2+1", 3, {3, 2, 1}, 0},
    {"1+3+2", 3, {1, 3, 2}, 0},
    {"3+2+1 round-robin", 3, {3, 2, 1}, 1},
    {"2x3 round-robin", 2, {3, 3}, 1},
    {"8 uneven", 8, {16, 1, 5, 2, 9, 16, 3, 7}, 0},
    {"8 uneven round-robin", 8, {4, 16, 2, 1, 11, 6, 16, 3}, 1},
};

static inline int first_of_node(int p, const int *node_of, int k, int nth)
{
    for (int r = 0; r < p; r++)
        if (node_of[r] == k && nth-- == 0)
            return r;
    return -1;
}

#endif
