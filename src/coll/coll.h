/* Collectives, their algorithms and the registry that names them.
 *
 * Every algorithm is one builder function in its own file under
 * src/coll/<collective>/: given the arguments of one rank it appends that
 * rank's steps to a schedule (sched/sched.h). The registry below gives each
 * a name for KCOLL_<COLL>_ALGO, kcoll-info and the statistics.
 */
#ifndef KCOLL_COLL_H
#define KCOLL_COLL_H

#include <stddef.h>

#include "sched/sched.h"

typedef enum {
    KCOLL_COLL_BCAST = 0,
    KCOLL_NCOLL
} kcoll_coll_t;

/* What a builder needs to know about one rank's call. Team ranks. */
typedef struct {
    kcoll_coll_t coll;
    int p;        /* processes in the team */
    int rank;     /* this rank */
    int root;     /* root of rooted collectives */
    size_t bytes; /* Bcast: the whole message */
    int k;        /* algorithm parameter (k-nomial fan-out...), already defaulted */
} kcoll_args_t;

typedef kcoll_status_t (*kcoll_builder_fn)(const kcoll_args_t *a, kcoll_sched_t *s);

typedef struct {
    kcoll_coll_t coll;
    const char *name;       /* as in KCOLL_BCAST_ALGO=<name> */
    kcoll_builder_fn build;
    const char *param;      /* name of the integer parameter ("k"), or NULL */
    int param_default, param_min;
    const char *help;       /* one line */
} kcoll_algo_t;

extern const kcoll_algo_t kcoll_algos[];
extern const int kcoll_nalgos;

const char *kcoll_coll_name(kcoll_coll_t c);  /* "MPI_Bcast" */
const char *kcoll_coll_env(kcoll_coll_t c);   /* "BCAST" */
int kcoll_algo_index(const kcoll_algo_t *a);  /* position in kcoll_algos */
const kcoll_algo_t *kcoll_algo_find(kcoll_coll_t c, const char *name);

/* Parse "<name>[:<param>=<N>]" for collective c. "auto" or "" gives
 * *algo = NULL. Returns 0, or -1 with a one-line reason in err. */
int kcoll_algo_parse(kcoll_coll_t c, const char *spec, const kcoll_algo_t **algo,
                     int *param, char *err, size_t errlen);

/* The default choice when no algorithm is forced (coll/<c>/select.c). */
const kcoll_algo_t *kcoll_bcast_select(int p, size_t bytes, int *param);

/* Relative rank: the root is 0, the others follow in rank order. */
static inline int kcoll_rel(const kcoll_args_t *a, int rank)
{
    return (rank - a->root + a->p) % a->p;
}
static inline int kcoll_abs(const kcoll_args_t *a, int rel)
{
    return (rel + a->root) % a->p;
}

/* Split n bytes into `parts` pieces whose boundaries fall on cache lines
 * (on pages once a piece is at least a few pages): piece i is
 * [*off, *off + *len). Later pieces may be empty. */
void kcoll_split(size_t n, int parts, int i, size_t *off, size_t *len);

/* Builders. */
kcoll_status_t kcoll_bcast_direct_read(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_direct_write(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_knomial(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_scatter_allgather(const kcoll_args_t *a, kcoll_sched_t *s);
kcoll_status_t kcoll_bcast_split_rw(const kcoll_args_t *a, kcoll_sched_t *s);

#endif
