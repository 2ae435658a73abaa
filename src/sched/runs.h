/* Runs of block moves: step coalescing while a schedule is built.
 *
 * Blocked collectives address data block by block; with a uniform layout
 * neighbouring blocks are neighbours in memory on both sides, and one
 * system call for the whole range is much cheaper than one per block. A
 * builder hands its moves to kcoll_run_add instead of appending them:
 * consecutive moves of one kind between the same peer and buffers whose
 * peer and local ranges both continue the previous one become one READ,
 * WRITE or COPY step. (The executor further batches consecutive steps to
 * one peer into one system call, sched/exec.c; merging here keeps the
 * schedules short, which the simulator and the model read too.)
 */
#ifndef KCOLL_SCHED_RUNS_H
#define KCOLL_SCHED_RUNS_H

#include "sched/sched.h"

/* kind is KCOLL_STEP_READ, _WRITE or _COPY (COPY: pbuf/poff is the local
 * destination, as in kcoll_sched_copy's step). */
typedef struct {
    int kind, peer, pbuf, lbuf;
    size_t poff, loff, len;
} kcoll_run_t;

void kcoll_run_init(kcoll_run_t *r);
void kcoll_run_add(kcoll_sched_t *s, kcoll_run_t *r, int kind, int peer, kcoll_buf_t pbuf,
                   size_t poff, kcoll_buf_t lbuf, size_t loff, size_t len);
/* Append the pending run, if any. */
void kcoll_run_flush(kcoll_sched_t *s, kcoll_run_t *r);

#endif
