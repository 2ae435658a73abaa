/* A growable array: room for one more element. */
#ifndef KCOLL_GROW_H
#define KCOLL_GROW_H

#include <stddef.h>

/* Room for one more element in an array of `size`-byte elements holding n
 * of *cap (doubling, starting at `first`). Returns 0 or -1 (out of
 * memory; the array is unchanged). */
int kcoll_grow(void **items, int *cap, int n, size_t size, int first);

#endif
