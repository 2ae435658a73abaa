/* For tests that sweep an algorithm's parameter: its first (and, today,
 * only) parameter descriptor, and a parameter set with that one changed. */
#ifndef KCOLL_TEST_ALGO_PARAM_H
#define KCOLL_TEST_ALGO_PARAM_H

#include "coll/coll.h"

static inline const kcoll_pdesc_t *first_param(const kcoll_algo_t *a)
{
    return a->params[0].name ? &a->params[0] : NULL;
}

static inline kcoll_aparam_t with_param(const kcoll_algo_t *a, int v)
{
    kcoll_aparam_t prm;
    kcoll_algo_defaults(a, &prm);
    if (first_param(a))
        *kcoll_aparam_field(&prm, first_param(a)) = v;
    return prm;
}

#endif
