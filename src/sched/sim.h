/* The simulator: runs the schedules of all p ranks of one collective in a
 * single process, on real bytes, and checks them (DESIGN.md section 3).
 *
 * Findings (kcoll_sim_run returns KCOLL_ERR_SCHED, kcoll_sim_error says
 * which rank, which step, what):
 *  - deadlock: no rank can proceed and not all are done;
 *  - out-of-bounds access, access to a buffer the peer never exposes;
 *  - a data race: two accesses to the same bytes, at least one a write,
 *    that are not ordered by the schedules' SIGNAL/WAIT/EXPOSE edges
 *    (vector clocks, so the verdict does not depend on the interleaving);
 *  - use after return: a peer touches a rank's buffer in a way not ordered
 *    before that rank's last step (the user may reuse it once we return);
 *  - a flag signalled with a smaller value than before.
 * What was delivered is then checked by the caller: the buffers hold the
 * bytes the schedules moved, and kcoll_sim_writes counts per byte how often
 * it was written (single copy: exactly once where data belongs). */
#ifndef KCOLL_SIM_H
#define KCOLL_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "op/op.h"
#include "sched/sched.h"

typedef struct kcoll_sim kcoll_sim_t;

kcoll_sim_t *kcoll_sim_new(int p);
void kcoll_sim_free(kcoll_sim_t *sim);
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
/* The schedule of `rank`, for a builder to append to. */
kcoll_sched_t *kcoll_sim_sched(kcoll_sim_t *sim, int rank);
/* seed 0: ranks in round-robin order, one step at a time; otherwise a
 * pseudo-random interleaving drawn from the seed. */
kcoll_status_t kcoll_sim_run(kcoll_sim_t *sim, unsigned seed);
const char *kcoll_sim_error(const kcoll_sim_t *sim);
/* Per-byte write counts of a rank's buffer after the run. */
const uint16_t *kcoll_sim_writes(const kcoll_sim_t *sim, int rank, kcoll_buf_t buf);

#endif
