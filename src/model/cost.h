/* The cost model: what a schedule costs on a machine (DESIGN.md sections
 * 3 and 7; paper 003 sections III-IV).
 *
 * The pricer builds the schedules of all p ranks of one call with the
 * same builders the executor runs and the simulator checks, and walks
 * them together as a timed simulation: a step starts when its rank's
 * previous step has ended and what it waits for (a flag, a peer's
 * exposure, an external operation's other participants) is visible; its
 * duration follows its kind (model/cost.c lists the formulas). The time of
 * the call is the end of its slowest rank. Because the model reads the
 * schedules themselves, it cannot drift from the code: a new algorithm is
 * priced the day it is written.
 */
#ifndef KCOLL_MODEL_COST_H
#define KCOLL_MODEL_COST_H

#include <stddef.h>

#include "coll/coll.h"
#include "model/machine.h"

/* The call to price, as the selector sees it: bytes per block for blocked
 * collectives (v-variants: priced as uniform with this block), per vector
 * for Reduce and Allreduce, per block for Reduce_scatter(_block), the
 * message for Bcast. Reductions are priced with elements of `esize` bytes
 * (0: 8) at the rate of class `rclass`. */
typedef struct {
    kcoll_coll_t coll;
    int p;
    int root;
    size_t bytes;
    size_t esize;
    kcoll_rclass_t rclass;
    const kcoll_levels_t *lv; /* the team's levels (NULL: flat) */
    /* memory domain (package) of each rank, for bandwidth sharing and
     * inter-package contention; NULL: the outermost level's groups, or
     * one domain */
    const int *pkg;
    /* cores the p ranks share (0 or >= p: a core each). Fewer: a crowded
     * node, where the ranks' work takes turns on the cores and a rank that
     * waits gives its core away (model/cost.c) */
    int cores;
    /* the engine READ and WRITE steps are priced for (kcoll_engine_id_t,
     * xfer/engine.h; 0: cma) */
    int engine;
    /* engines the selector may run the call on instead of `engine`, per
     * call (KCOLL_ENGINE_BIT; model/select.h: kcoll_decisions_t) */
    unsigned percall;
} kcoll_pcall_t;

/* A prediction, and the terms of the rank that ends last (seconds; they
 * add up to its end time). */
typedef struct {
    double t;       /* the call's predicted time */
    int crit;       /* the rank whose own work ends last */
    double alpha;   /* system calls: alpha per CMA call (batches count once) */
    double bytes;   /* CMA bytes at beta (or the shared memory bandwidth) */
    double lock;    /* page lock and pin: l gamma(c) ceil(n/s) */
    double copy;    /* local copies */
    double reduce;  /* REDUCE steps */
    double sync;    /* per-step overhead, flags, external operations */
    double wait;    /* idle: waiting for peers */
    double call;    /* the call's fixed cost beyond its steps */
    double cmax;    /* the highest average contention any copy saw */
    int steps;      /* steps of all ranks */
} kcoll_price_t;

/* Price algorithm a with parameters prm (valid for c->p) for call c on
 * machine m. Returns 0, or -1 if the schedules cannot be built or do not
 * finish (a deadlock: the simulator's tests rule that out for every
 * builder, so this means the builder rejected the call). */
int kcoll_price(const kcoll_machine_t *m, const kcoll_algo_t *a, const kcoll_aparam_t *prm,
                const kcoll_pcall_t *c, kcoll_price_t *out);

/* The host MPI's textbook time (model/cost.c) for collective coll by N
 * nodes of q ranks placed in blocks, n bytes sized as the selector sizes
 * a call: messages inside a node at host_alpha/host_beta, between nodes
 * at net_alpha/net_beta, every on-node message at that rate however many
 * run at once (the one-node selector scales the host's measured times
 * with it). N = 1: the host on one node. */
double kcoll_host_formula(const kcoll_machine_t *m, kcoll_coll_t coll, int N, int q, double n,
                          kcoll_rclass_t rc);

/* The same over N nodes of ppn[k] ranks (node 0 holds the root; ppn
 * NULL: one rank on every node), as honest as the one-node price: the
 * host's own terms (on-node latency and per-byte cost, reducing, copying)
 * times kcoll_host_measured_scale at n bytes, the network's as described;
 * the on-node messages that run at once sharing the node's memory
 * bandwidth (package_bw: one memory domain per node; 0, no limit); and
 * `flows` flows (>= 1) sharing each node's link: the network's per-byte
 * cost times flows. With nothing measured and no limit it is
 * kcoll_host_formula's price. */
double kcoll_host_formula_nodes(const kcoll_machine_t *m, kcoll_coll_t coll, int N, const int *ppn,
                                double n, kcoll_rclass_t rc, double flows);

/* How far the host MPI is from its textbook formula on a node: its
 * measured time for the collective at two ranks (interpolated in size,
 * scaled from the nearest measured count) over the formula's, at n bytes;
 * 1 where nothing was measured. The one-node price scales the measured
 * times to p ranks with the formula; across nodes the formula's on-node
 * terms are scaled by this, so both sides of a comparison across nodes
 * carry what was measured on the node. */
double kcoll_host_measured_scale(const kcoll_machine_t *m, kcoll_coll_t coll, double n,
                                 kcoll_rclass_t rc);

/* The host MPI's time for call c: its measured times at c->p where the
 * tuning has them (interpolated in size), scaled from the nearest
 * measured process count by the textbook formula otherwise, and the
 * textbook formula of the usual algorithm (host_alpha, host_beta) where
 * nothing was measured. */
double kcoll_price_host(const kcoll_machine_t *m, const kcoll_pcall_t *c);

#endif
