/* A growable array (see grow.h). */
#include <stdlib.h>

#include "base/grow.h"

int kcoll_grow(void **items, int *cap, int n, size_t size, int first)
{
    if (n < *cap)
        return 0;
    int ncap = *cap ? 2 * *cap : first;
    void *p = realloc(*items, (size_t)ncap * size);
    if (!p)
        return -1;
    *items = p;
    *cap = ncap;
    return 0;
}
