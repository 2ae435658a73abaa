/* Selection: which algorithm, with which parameters, runs a collective of
 * p processes and a given size (DESIGN.md section 7).
 *
 * Precedence: an algorithm forced with KCOLL_<FAMILY>_ALGO, then the rules
 * (model/rules.c: a table of (family, process counts, sizes) -> algorithm
 * and parameters, or the host MPI; the first matching rule wins). The cost
 * model will price candidates where no rule or variable decides.
 *
 * Every rule's size bounds are powers of two, so a decision holds for a
 * whole size class (the bytes' highest set bit): the team caches decisions
 * per (collective, size class) in a kcoll_decisions_t and selection costs a
 * table lookup after the first call. A change of any parameter
 * (kcoll_params_generation) empties the cache, and a forced spec is parsed
 * once per parameter generation.
 */
#ifndef KCOLL_MODEL_SELECT_H
#define KCOLL_MODEL_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"

/* A choice: an algorithm and its parameters, or the host MPI (algo NULL). */
typedef struct {
    const kcoll_algo_t *algo;
    kcoll_aparam_t prm;
} kcoll_choice_t;

typedef enum {
    KCOLL_SELECT_KCOLL = 0, /* run choice.algo */
    KCOLL_SELECT_HOST,      /* a rule says the host MPI is faster here */
    KCOLL_SELECT_BAD        /* the forced spec is invalid (warned once) */
} kcoll_select_t;

typedef struct {
    kcoll_coll_t family;
    int pmin, pmax;     /* process counts pmin..pmax (pmax 0: no bound) */
    size_t bmin, bmax;  /* bytes in [bmin, bmax) (bmax 0: no bound); powers of two */
    const char *spec;   /* "throttled_read:k=4", or "host" */
    int levels;         /* only for teams with at least this many topology levels */
} kcoll_rule_t;

/* The default rules, drawn from the papers and from 2-rank measurements
 * (model/rules.c explains each). */
extern const kcoll_rule_t kcoll_default_rules[];
extern const int kcoll_ndefault_rules;

/* The size class of a message: 0 for 0 bytes, else 1 + the highest set
 * bit (1 byte: 1, 2-3 bytes: 2, ...). */
static inline int kcoll_size_class(size_t bytes)
{
    return bytes ? 64 - __builtin_clzll((unsigned long long)bytes) : 0;
}

#define KCOLL_DECISIONS 32
/* A team's decision cache (direct-mapped; a collision just decides again). */
typedef struct {
    uint64_t gen; /* parameter generation of the entries; 0: empty */
    int p;        /* the process count they are for (a team's never changes) */
    struct {
        int16_t key;   /* coll * 65 + size class + 1; 0: empty */
        int16_t algo;  /* index in kcoll_algos, or -1 */
        int8_t result; /* kcoll_select_t */
        kcoll_aparam_t prm;
    } e[KCOLL_DECISIONS];
    /* the forced spec of each family, parsed for generation `gen` */
    struct {
        int8_t state;  /* 0 unparsed, 1 auto, 2 forced, 3 invalid */
        int16_t algo;
        kcoll_aparam_t prm;
    } forced[KCOLL_NCOLL];
} kcoll_decisions_t;

/* The choice for collective c at p processes and `bytes` (the size the
 * rules read: see the call layer), on a team with `levels` topology
 * levels (a team's never change), through the cache d. */
kcoll_select_t kcoll_select(kcoll_decisions_t *d, kcoll_coll_t c, int p, int levels,
                            size_t bytes, kcoll_choice_t *out);

#endif
