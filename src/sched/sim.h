/* The simulator: runs the schedules of all p ranks of a team in a single
 * process, on real bytes, and checks them (DESIGN.md section 3).
 *
 * A simulation holds one or more collectives of one team, in the order
 * every rank starts them (collective c has sequence number c + 1). Each
 * uses its lane, (c + 1) % lanes, of a modelled control segment whose
 * words behave as the executor's do (sched/ctl.h): a flag holds
 * seq << KCOLL_SEQ_SHIFT | value, so a WAIT is satisfied by any signal of
 * its lane that reached that word, also a later collective's; an exposure
 * holds the collective number it belongs to, and a READ or WRITE of a
 * peer's buffer proceeds only when the lane's exposure is its own
 * collective's. A rank starts collective c when it has started c - 1 (and
 * completed it, if c - 1 is blocking) and its lane is free on that rank
 * (collective c - lanes has completed there): the rules of the call layer.
 * Started collectives of a rank advance in an interleaving the seed
 * chooses. So several overlapping collectives, more than the lanes, with
 * blocking ones among them, are checked as they run together.
 *
 * Findings (kcoll_sim_run returns KCOLL_ERR_SCHED, kcoll_sim_error says
 * which collective, rank, step, what):
 *  - deadlock: no rank can proceed and not all are done;
 *  - out-of-bounds access, access to a buffer the peer never exposes;
 *  - cross-talk: a READ/WRITE finds the lane's exposure belonging to a
 *    later collective (its owner returned while it was still wanted);
 *  - a data race: two accesses to the same bytes, at least one a write,
 *    that are not ordered by the schedules' SIGNAL/WAIT/EXPOSE/EXTERN
 *    edges (vector clocks, so the verdict does not depend on the
 *    interleaving);
 *  - use after return: a peer touches a rank's buffer of a collective in a
 *    way not ordered before that rank's last step of it;
 *  - a flag signalled with a smaller word than before.
 * EXTERN(i) of a collective is modelled as one event shared by every rank
 * whose schedule of that collective has it: it completes on a rank once
 * all of them have started it (an agreement, or a host operation between
 * the team's ranks).
 *
 * Several nodes (kcoll_sim_set_nodes, kcoll_sim_set_group): the ranks are
 * a communicator's, each on a node, and EXTERN steps that name a host
 * collective (kcoll_xcoll_t, sched.h) are the messages between nodes.
 * Further findings then:
 *  - a READ, WRITE or WAIT between ranks of different nodes;
 *  - a host collective on a group the rank is not a member of;
 *  - a group's members starting its host collectives in different orders
 *    or with different shapes (kind, root, length, element size): the
 *    k-th each member starts on a group must be the same one, of the same
 *    collective of the simulation, as MPI matches collectives on a
 *    communicator by their order;
 *  - a host collective some member never starts: the others wait in it,
 *    a deadlock.
 * A host collective's data moves when its last member starts it, with the
 * collective's operation for reductions (kcoll's order over the group's
 * ranks: c_0 op (c_1 op (... c_{n-1}))); each member's step completes
 * then, ordered after every member's start.
 * What was delivered is then checked by the caller: the buffers hold the
 * bytes the schedules moved, and kcoll_sim_writes counts per byte how often
 * it was written (single copy: exactly once where data belongs).
 */
#ifndef KCOLL_SIM_H
#define KCOLL_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "op/op.h"
#include "sched/sched.h"

typedef struct kcoll_sim kcoll_sim_t;

/* A simulation of p ranks with one collective (number 0), addressed by
 * the functions below until kcoll_sim_add. Lanes: KCOLL_LANES. */
kcoll_sim_t *kcoll_sim_new(int p);
void kcoll_sim_free(kcoll_sim_t *sim);
/* Another collective of the team, started by every rank after the ones
 * before it; blocking: a rank starts nothing after it before it has
 * completed there. Returns its number (or -1, out of memory); it becomes
 * the one the functions below address. */
int kcoll_sim_add(kcoll_sim_t *sim, int blocking);
/* Whether the addressed collective is blocking (the first is, unless set). */
void kcoll_sim_set_blocking(kcoll_sim_t *sim, int blocking);
/* Lanes of the modelled control segment (1..KCOLL_LANES), before running. */
void kcoll_sim_set_lanes(kcoll_sim_t *sim, int lanes);
/* Give rank `rank` a buffer (caller-owned memory, modified by the run). */
void kcoll_sim_set_buffer(kcoll_sim_t *sim, int rank, kcoll_buf_t buf, uint8_t *data, size_t len);
/* The reduction operation REDUCE steps apply (kept by reference). A REDUCE
 * counts as a read of its source and a read and write of its destination
 * for the race checks, and as one write of each destination byte. */
void kcoll_sim_set_op(kcoll_sim_t *sim, const kcoll_op_t *op);
/* Rank `rank`'s buffer `buf` is the same memory as its buffer `same_as`,
 * from the same first byte (MPI_IN_PLACE mapped onto the receive buffer).
 * Races are then checked on accesses through either name as accesses to
 * one buffer. Give both names the same data with kcoll_sim_set_buffer. */
void kcoll_sim_alias(kcoll_sim_t *sim, int rank, kcoll_buf_t buf, kcoll_buf_t same_as);
/* Rank r lives on node node_of[r] (copied; any ids). Before running. */
kcoll_status_t kcoll_sim_set_nodes(kcoll_sim_t *sim, const int *node_of);
/* Host collectives naming group `group` (an id >= 0) run between its n
 * members, members[i] being rank i in the group. Once per group, before
 * running. */
kcoll_status_t kcoll_sim_set_group(kcoll_sim_t *sim, int group, int n, const int *members);
/* The schedule of `rank`, for a builder to append to. */
kcoll_sched_t *kcoll_sim_sched(kcoll_sim_t *sim, int rank);
/* seed 0: ranks in round-robin order, one step at a time, collectives in
 * order; otherwise a pseudo-random interleaving drawn from the seed. */
kcoll_status_t kcoll_sim_run(kcoll_sim_t *sim, unsigned seed);
const char *kcoll_sim_error(const kcoll_sim_t *sim);
/* Per-byte write counts of a rank's buffer after the run. */
const uint16_t *kcoll_sim_writes(const kcoll_sim_t *sim, int rank, kcoll_buf_t buf);

#endif
