/* What the cost model knows about a machine (DESIGN.md section 7; paper
 * 003 sections III-IV): the terms of a cross-memory-attach copy, the
 * contention factor, memory and reduction rates, flag latency, and the
 * host MPI's own times. A tuning file (docs/tuning.md, model/tuning.h
 * reads it) holds them; without one the built-in defaults below stand.
 *
 * A CMA copy of n bytes whose remote pages c copies touch at once costs
 * (paper 003, section III)
 *
 *     T = alpha + n beta + l gamma(c) ceil(n / s)
 *
 * alpha: the system call and its permission check; beta: seconds per byte
 * copied; l: seconds to lock and pin one page with no contention; s: the
 * page size; gamma(c): how much longer a page lock takes with c
 * concurrent accessors of one process's pages. gamma is a polynomial
 * g0 + g1 c + g2 c^2 fitted to measurements (Table IV's form), or the
 * measured values themselves where c lies within them; "inter" is the
 * curve for accessors of which some run on another package than the
 * process whose pages they lock (paper 003 Fig. 5b: contention rises
 * steeply once readers span sockets).
 *
 * The struct holds no pointers: one rank loads it and the others receive
 * it as bytes, so every rank of a job prices alike.
 */
#ifndef KCOLL_MODEL_MACHINE_H
#define KCOLL_MODEL_MACHINE_H

#include <stddef.h>

#include "coll/coll.h"

#define KCOLL_GAMMA_MAX 64   /* measured contention values kept per curve */
#define KCOLL_HOST_POINTS 48 /* measured host-MPI times kept per collective */
#define KCOLL_TUNING_RULES 64

/* Reduction rate classes: what REDUCE steps cost depends on the element
 * type far more than on the operation. */
typedef enum {
    KCOLL_RCLASS_INT = 0, /* integer and logical types, bitwise operations */
    KCOLL_RCLASS_FLOAT,   /* float, float complex */
    KCOLL_RCLASS_DOUBLE,  /* double, long double, their complex forms, pairs */
    KCOLL_RCLASS_USER,    /* a user function */
    KCOLL_NRCLASS
} kcoll_rclass_t;

/* A contention curve: gamma(c) for c >= 1 concurrent accessors. */
typedef struct {
    double poly[3];                 /* g0, g1, g2 */
    int nmeasured;                  /* measured[c-1] for c = 1..nmeasured */
    double measured[KCOLL_GAMMA_MAX];
} kcoll_gamma_t;

/* One measured time of the host MPI: collective, processes, bytes (as the
 * selector sizes a call: per block, per vector), seconds. */
typedef struct {
    int p;
    double bytes, t;
} kcoll_hostpt_t;

typedef struct {
    char source[160];        /* where the values came from (free text) */
    /* CMA, paper 003 Table III */
    double alpha;            /* s per call */
    double beta;             /* s per byte read (process_vm_readv) */
    double beta_write;       /* s per byte written (process_vm_writev) */
    double l;                /* s per page locked and pinned */
    double page;             /* bytes (s) */
    int pkg_cores;           /* cores per package, for predictions of whole
                              * nodes (0: one package) */
    kcoll_gamma_t gamma_intra, gamma_inter;
    /* memory */
    double copy_alpha;       /* s per local memcpy (COPY step) */
    double copy_beta;        /* s per byte of memcpy */
    double package_bw;       /* bytes/s one package's memory delivers to
                              * all copies at once (0: no limit) */
    double link_bw;          /* bytes/s the links between packages carry
                              * for all copies crossing them at once (0:
                              * no limit) */
    double reduce_beta[KCOLL_NRCLASS]; /* s per byte of a REDUCE step, in cache */
    double stream_beta;      /* s more per byte of a REDUCE operand that is
                              * not in cache (streams from memory) */
    /* the other engines (docs/engines.md): a READ or WRITE of n bytes
     * costs shm_alpha + n shm_beta (times the owner's load, see
     * model/cost.c) + a cell at shm_beta where the owner is idle (the
     * pipeline's fill) through the bounce cells,
     * vms_alpha + n vms_beta through a pipe, and a COPY's copy_alpha +
     * n copy_beta as loads and stores (direct) */
    double shm_alpha, shm_beta;
    double vms_alpha, vms_beta;
    double shm_cell;         /* bytes of a bounce cell: the pipeline's fill */
    /* synchronization */
    double flag;             /* s from a SIGNAL to the waiter seeing it */
    double step;             /* s the executor spends per step */
    double handover;         /* s for a waiter that gave its core away to run
                              * again once what it waits for is there (the
                              * wake-up of a crowded node's scheduler) */
    /* a kcoll call's fixed cost beyond its steps, as kcoll-bench sees it
     * (a call after a barrier, its buffers and kcoll's own state out of
     * cache): kcoll-calibrate's measured time minus the price of the
     * same schedules */
    double call;             /* s per call (a Barrier's residual) */
    double call_data;        /* s more per call that moves data */
    /* the host MPI: a latency/bandwidth fallback, and measured points */
    double host_alpha;       /* s per message */
    double host_beta;        /* s per byte (two copies through shared memory) */
    /* the network between nodes (for communicators that span nodes,
     * model/nodes.c): the host MPI's latency and per-byte cost there */
    double net_alpha;        /* s per message */
    double net_beta;         /* s per byte */
    int nhost[KCOLL_NCOLL];
    kcoll_hostpt_t host[KCOLL_NCOLL][KCOLL_HOST_POINTS];
} kcoll_machine_t;

/* The cache state a call's data is estimated to be in (the call layer
 * estimates it; model/select.h): off-cache, as the model's prices and the
 * host's measured times are, or on-cache (in the last-level cache, as
 * the previous call of the same shape left it). */
typedef enum {
    KCOLL_CACHE_ANY = 0, /* a rule's condition: either state */
    KCOLL_CACHE_COLD = 1,
    KCOLL_CACHE_HOT = 2
} kcoll_cache_t;

/* A rule of a tuning file: collective (family), process counts pmin..pmax
 * (pmax 0: no bound), bytes in [bmin, bmax) (bmax 0: no bound), cache
 * state (KCOLL_CACHE_ANY: both) -> spec ("knomial:k=4", or "host"). */
typedef struct {
    int coll;                /* kcoll_coll_t (a family) */
    int pmin, pmax;
    double bmin, bmax;
    int cache;               /* kcoll_cache_t */
    char spec[64];
} kcoll_trule_t;

/* Everything a tuning file holds, plus where it came from. */
typedef struct {
    kcoll_machine_t m;
    int nrules;
    kcoll_trule_t rules[KCOLL_TUNING_RULES];
    char file[256];          /* the file read, or "" for the built-in defaults */
} kcoll_tuning_t;

/* The built-in defaults (model/machine.c says where each value is from). */
void kcoll_machine_defaults(kcoll_machine_t *m);
/* The built-in tuning, used where no tuning file is: the machine's
 * defaults and the rules measured with them (model/machine.c: where kcoll
 * measured slower than the host MPI in one cache state). A tuning file
 * stands alone: it has its own host times and rules. */
void kcoll_tuning_defaults(kcoll_tuning_t *t);

/* Paper 003 Table IV's machines, for predictions beyond this one:
 * "knl", "broadwell", "power8". Returns 0, or -1 for an unknown name. */
int kcoll_machine_preset(kcoll_machine_t *m, const char *name);

/* gamma(c) of a curve: the measured value (interpolated) where c lies
 * within the measurements, else the polynomial; never below 1 for c >= 1. */
double kcoll_gamma(const kcoll_gamma_t *g, double c);

/* The class of an operation's REDUCE steps. */
kcoll_rclass_t kcoll_rclass_of(const struct kcoll_op *op);

/* The process-wide tuning every team prices with (the built-in defaults
 * until kcoll_tuning_set). Changing it empties every decision cache (it
 * bumps the parameter generation). */
const kcoll_tuning_t *kcoll_tuning(void);
void kcoll_tuning_set(const kcoll_tuning_t *t);

#endif
