/* A team: the processes of one communicator on this node, and the shared
 * control segment through which they synchronize (DESIGN.md section 4).
 *
 * Segment layout: a header line, then one slot per rank. A slot holds the
 * rank's buffer exposures (address, length, collective sequence number),
 * its flags (each a monotonically increasing 64-bit counter on its own
 * cache line), its votes in agreements (sched/agree.h) and its identity
 * (pid, probe word). After the slots come the layout tables: per rank two
 * tables (alternating between agreements) of KCOLL_TABLE_LEN(p) size_t,
 * where a v-variant publishes its counts and displacements. Every field of
 * a slot and every table is written only by its owner; everybody else only
 * reads it.
 *
 * This file knows nothing of MPI: the MPI side (core/team_mpi.c) creates and
 * maps the segment; tests map an anonymous shared segment before fork().
 */
#ifndef KCOLL_TEAM_H
#define KCOLL_TEAM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/status.h"
#include "sched/sched.h"

#define KCOLL_CACHELINE 64
#define KCOLL_SEG_MAGIC 0x6b636f6c6c736567ull /* "kcollseg" */

/* Flag words hold (seq << KCOLL_SEQ_SHIFT) | value, so that they only ever
 * grow from one collective to the next. */
#define KCOLL_SEQ_SHIFT 24

typedef struct {
    _Alignas(KCOLL_CACHELINE) _Atomic uint64_t v;
} kcoll_line_t;

typedef struct {
    _Atomic uint64_t addr;
    _Atomic uint64_t len;
    _Atomic uint64_t seq; /* collective this exposure belongs to; stored last */
    uint64_t pad;
} kcoll_expo_t;

/* A rank's vote in agreement number seq (sched/agree.h). */
typedef struct {
    _Alignas(KCOLL_CACHELINE) _Atomic uint64_t seq; /* stored last */
    _Atomic uint64_t value;
} kcoll_vote_t;

typedef struct {
    _Alignas(KCOLL_CACHELINE) kcoll_expo_t expose[KCOLL_NBUF];
    kcoll_line_t flag[KCOLL_NFLAG];
    kcoll_vote_t vote[2]; /* agreement a uses vote[a % 2] */
    _Alignas(KCOLL_CACHELINE) int64_t pid;
    uint64_t probe_addr; /* address of a word in private memory, for the CMA probe */
    uint64_t probe_val;
    _Atomic uint64_t attached; /* 1 once the owner has mapped the segment */
} kcoll_slot_t;

typedef struct {
    _Alignas(KCOLL_CACHELINE) uint64_t magic;
    uint32_t p;
    uint32_t slot_size;
} kcoll_seg_hdr_t;

/* Values in one layout table: send counts, send displacements, receive
 * counts, receive displacements, p each. */
#define KCOLL_TABLE_LEN(p) (4 * (size_t)(p))

typedef struct kcoll_team {
    int p, rank;
    pid_t *pids;          /* pids[r] of every team rank */
    void *seg;            /* mapping of the control segment (owned by the creator code) */
    size_t seg_len;
    kcoll_slot_t *slots;  /* slots[r] */
    uint64_t seq;         /* sequence number of the last collective started */
    uint64_t agree_seq;   /* number of the last agreement (sched/agree.h) */
    size_t *tables;       /* layout tables: rank r, agreement a at
                             tables + (2*r + a%2) * KCOLL_TABLE_LEN(p) */
    kcoll_sched_t sched;  /* storage reused by every call on this team */
    void *layouts;        /* p kcoll_layout_t, filled by kcoll_agree_layouts */
    void *scratch;        /* private scratch memory (TMP buffers), grown on demand */
    size_t scratch_len;
} kcoll_team_t;

/* Bytes needed for a segment of p slots. */
size_t kcoll_team_seg_len(int p);
/* Called once by the creating rank on a zero-filled segment. */
void kcoll_team_seg_init(void *seg, int p);
/* Local view of a mapped segment; publishes this rank's pid and probe word.
 * pids are read later, with kcoll_team_load_pids, once all have attached. */
kcoll_status_t kcoll_team_attach(kcoll_team_t *t, void *seg, size_t len, int p, int rank);
/* Fill t->pids from the slots (after every rank has attached). */
kcoll_status_t kcoll_team_load_pids(kcoll_team_t *t);
/* This rank's (rank r's) layout table of agreement a. */
static inline size_t *kcoll_team_table(const kcoll_team_t *t, int r, uint64_t a)
{
    return t->tables + (2 * (size_t)r + (size_t)(a % 2)) * KCOLL_TABLE_LEN(t->p);
}
/* At least len bytes of private, page-aligned scratch memory, kept for
 * the team's life (contents are not preserved when it grows). NULL when
 * out of memory. */
void *kcoll_team_scratch(kcoll_team_t *t, size_t len);
/* Release what attach allocated (not the mapping). */
void kcoll_team_fini(kcoll_team_t *t);

/* Address and expected value of this process's private probe word. */
const void *kcoll_team_probe_word(uint64_t *value);

/* 1 if the process is alive (exists and is not a zombie), 0 otherwise. */
int kcoll_pid_alive(pid_t pid);

#endif
