/* The schedule: one rank's part of a collective as a list of steps
 * (DESIGN.md section 3; the delegation framework of paper 002).
 *
 * An algorithm is a builder function that appends, for one rank, the steps
 * it performs. The same list is executed for real (sched/exec.c), checked
 * by the simulator for every rank of a p-process collective at once
 * (sched/sim.c) and, later, priced by the cost model.
 *
 * Buffers are named symbolically: SEND and RECV are the user's buffers of
 * the call, TMP a scratch buffer. A peer's buffer can be read or written
 * only after the peer has EXPOSEd it for the same collective; the executor
 * and the simulator both make READ/WRITE wait for that exposure.
 *
 * REDUCE combines two local byte ranges with the collective's reduction
 * operation (op/op.h): dst = src op dst, elementwise; it reads src and
 * reads and writes dst.
 *
 * Flags are single-writer, monotonically increasing counters: SIGNAL(f, v)
 * sets this rank's flag f to v (for this collective), WAIT(peer, f, v)
 * waits until the peer's flag f has reached at least v. Values a rank
 * signals on one flag within one collective never decrease.
 */
#ifndef KCOLL_SCHED_H
#define KCOLL_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

typedef enum {
    KCOLL_BUF_SEND = 0,
    KCOLL_BUF_RECV = 1,
    KCOLL_BUF_TMP = 2,
    KCOLL_NBUF = 3
} kcoll_buf_t;

typedef enum {
    KCOLL_FLAG_DATA = 0, /* "I hold data you may read" / progress of a producer */
    KCOLL_FLAG_DONE = 1, /* "I have finished with your buffers" */
    KCOLL_FLAG_AUX = 2,  /* a third chain for algorithms that need one */
    KCOLL_NFLAG = 3
} kcoll_flag_t;

/* Largest value a step may SIGNAL or WAIT for within one collective. */
#define KCOLL_FLAG_VALUE_MAX ((1u << 24) - 1)

typedef enum {
    KCOLL_STEP_EXPOSE, /* publish local buffer lbuf (address, length) */
    KCOLL_STEP_READ,   /* peer's pbuf[poff..+len) -> local lbuf[loff..+len) */
    KCOLL_STEP_WRITE,  /* local lbuf[loff..+len) -> peer's pbuf[poff..+len) */
    KCOLL_STEP_COPY,   /* local lbuf[loff..+len) -> local pbuf[poff..+len) */
    KCOLL_STEP_SIGNAL, /* own flag `flag` := value */
    KCOLL_STEP_WAIT,   /* until peer's flag `flag` >= value */
    KCOLL_STEP_REDUCE  /* local pbuf[poff..+len) = lbuf[loff..+len) op pbuf[poff..+len);
                        * flag 1 (reversed): pbuf = pbuf op lbuf */
} kcoll_step_kind_t;

typedef struct {
    uint8_t kind;  /* kcoll_step_kind_t */
    uint8_t lbuf;  /* local buffer (COPY, REDUCE: source) */
    uint8_t pbuf;  /* peer's buffer (COPY, REDUCE: local destination) */
    uint8_t flag;  /* SIGNAL/WAIT */
    int32_t peer;  /* READ/WRITE/WAIT: team rank of the peer */
    uint32_t value;/* SIGNAL/WAIT */
    size_t loff, poff, len;
} kcoll_step_t;

typedef struct {
    kcoll_step_t *steps;
    int n, cap;
    kcoll_status_t err; /* sticky: first failure while appending */
} kcoll_sched_t;

/* Room for one more element in a growable array of `size`-byte elements
 * holding n of *cap (doubling, starting at `first`). Returns 0 or -1. */
int kcoll_grow(void **items, int *cap, int n, size_t size, int first);

void kcoll_sched_init(kcoll_sched_t *s);
void kcoll_sched_reset(kcoll_sched_t *s); /* empty it, keep the memory */
void kcoll_sched_free(kcoll_sched_t *s);

/* Appenders. Zero-length data steps are dropped. Failures are remembered in
 * s->err, so a builder can append freely and return s->err at the end. */
void kcoll_sched_expose(kcoll_sched_t *s, kcoll_buf_t buf);
void kcoll_sched_read(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                      kcoll_buf_t lbuf, size_t loff, size_t len);
void kcoll_sched_write(kcoll_sched_t *s, int peer, kcoll_buf_t pbuf, size_t poff,
                       kcoll_buf_t lbuf, size_t loff, size_t len);
void kcoll_sched_copy(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff,
                      kcoll_buf_t sbuf, size_t soff, size_t len);
/* dbuf[doff..+len) = sbuf[soff..+len) op dbuf[doff..+len): the operation
 * the executor (kcoll_exec_t.op) or the simulator (kcoll_sim_set_op) has. */
void kcoll_sched_reduce(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff,
                        kcoll_buf_t sbuf, size_t soff, size_t len);
/* dbuf = dbuf op sbuf (operands the other way round; not for user
 * functions, see kcoll_op_has_rev). */
void kcoll_sched_reduce_rev(kcoll_sched_t *s, kcoll_buf_t dbuf, size_t doff,
                            kcoll_buf_t sbuf, size_t soff, size_t len);
void kcoll_sched_signal(kcoll_sched_t *s, kcoll_flag_t flag, uint32_t value);
void kcoll_sched_wait(kcoll_sched_t *s, int peer, kcoll_flag_t flag, uint32_t value);

/* One line per step, prefixed with "rank R:" (KCOLL_TRACE). */
void kcoll_sched_print(const kcoll_sched_t *s, int rank, FILE *out);
const char *kcoll_buf_name(int buf);
const char *kcoll_flag_name(int flag);

#endif
