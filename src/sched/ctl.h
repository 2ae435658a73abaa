/* The control segment (DESIGN.md section 4): the shared memory through
 * which the processes of a team synchronize, as the executor, the
 * agreement and the team see it.
 *
 * Layout: a header line, then one slot per rank, then the layout tables.
 * Every field of a slot and every table is written only by its owner;
 * everybody else only reads it.
 *
 * Lanes. Several collectives may be outstanding on one team at once
 * (non-blocking and persistent collectives; MPI requires only that every
 * rank starts them in the same order). Collective number seq (counted per
 * team, identical on every rank) uses lane seq % KCOLL_LANES of every
 * slot: its own buffer exposures, its own flags, its own agreement vote
 * and its own layout table. Collectives in different lanes never see each
 * other's words. Within a lane, every word carries the collective's number
 * (flags hold seq << KCOLL_SEQ_SHIFT | value, exposures and votes store
 * seq last), so a lane's next user is never taken for its previous one:
 * flags only grow, and an exposure or vote of another collective is
 * recognized as such.
 *
 * When a lane may be used again (the rules the call layer follows,
 * call/request.c):
 *  - a rank starts collective s in lane s % KCOLL_LANES only after its
 *    own collective s - KCOLL_LANES has completed: by then no peer will
 *    touch this rank's exposed buffers of s - KCOLL_LANES any more (every
 *    peer access to a rank's buffer is ordered before that rank's last
 *    step, which the simulator checks for every algorithm), so its
 *    exposures may be overwritten, and flags only grow;
 *  - a rank writes its vote and table of collective s only after every
 *    rank has said (lane word `seen`) that it has finished reading the
 *    agreement of collective s - KCOLL_LANES (sched/agree.h).
 * So at most KCOLL_LANES collectives are outstanding per team; a later
 * start waits (as a request that has not started yet) for the oldest.
 */
#ifndef KCOLL_SCHED_CTL_H
#define KCOLL_SCHED_CTL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/status.h"
#include "sched/sched.h"
#include "xfer/iovs.h"

#define KCOLL_CACHELINE 64
#define KCOLL_SEG_MAGIC 0x6b636f6c6c736567ull /* "kcollseg" */
/* Collectives one team may have outstanding at once. */
#define KCOLL_LANES 16
/* Flag words hold (seq << KCOLL_SEQ_SHIFT) | value. */
#define KCOLL_SEQ_SHIFT 24
static inline uint64_t kcoll_flag_word(uint64_t seq, uint32_t value)
{
    return (seq << KCOLL_SEQ_SHIFT) | value;
}

/* A word on a cache line of its own. v is written by the line's owner
 * only. sleepers is the exception to "written only by its owner": it
 * counts the peers asleep on v right now (sched/wait.h: a crowded node's
 * waiters sleep in the kernel until v changes), each adding and removing
 * itself with an atomic read-modify-write; an owner that stores v wakes
 * them when it is not 0. */
typedef struct {
    _Alignas(KCOLL_CACHELINE) _Atomic uint64_t v;
    _Atomic uint32_t sleepers;
} kcoll_line_t;

typedef struct {
    _Atomic uint64_t addr;
    _Atomic uint64_t len;  /* logical bytes (sched/dmap.h) */
    _Atomic uint64_t seq;  /* collective this exposure belongs to; stored last */
    _Atomic uint64_t map;  /* address of the buffer's datatype map in its owner, or 0 */
    /* the buffer lies in shareable memory peers may map: its reference in
     * the owner's registry (xfer/direct.h), or 0 */
    _Atomic uint64_t direct;
} kcoll_expo_t;

/* One lane of one rank's slot. */
typedef struct {
    _Alignas(KCOLL_CACHELINE) kcoll_expo_t expose[KCOLL_NBUF];
    kcoll_line_t flag[KCOLL_NFLAG];
    /* this rank's vote in the agreement of collective vote_seq (sched/agree.h) */
    _Alignas(KCOLL_CACHELINE) _Atomic uint64_t vote_seq; /* stored last */
    _Atomic uint64_t vote;
    /* the last collective of this lane this rank gave up after an error of
     * its own (kcoll_ctl_give_up): a peer that waits for it in that
     * collective would otherwise wait for ever (on the vote's line, which
     * has room: it is written once per failure) */
    _Atomic uint64_t gaveup;
    /* the last collective of this lane whose agreement this rank has
     * finished reading: peers may then overwrite their votes and tables */
    kcoll_line_t seen;
} kcoll_lane_t;

/* Values one rank posts in a sharing (sched/share.h): room for the times
 * of a check of a decision (call/adapt.h: 2 x 16 and two counts), as
 * floats (a time in seconds to 7 digits; the slot stays within a page
 * more per rank than before). */
#define KCOLL_SHARE_VALS 34

/* CPUs a slot's owner may run on (its affinity mask), as 64-bit words:
 * up to 1024 CPUs, as glibc's cpu_set_t. */
#define KCOLL_CPU_WORDS 16

typedef struct {
    kcoll_lane_t lane[KCOLL_LANES];
    _Alignas(KCOLL_CACHELINE) int64_t pid;
    uint64_t cpus[KCOLL_CPU_WORDS]; /* the owner's CPU affinity mask, published by attach */
    uint64_t probe_addr; /* address of a word in private memory, for the engine probe */
    uint64_t probe_val;
    int64_t dreg_fd;     /* the registry of shareable memory (xfer/direct.h): fd, */
    uint64_t dreg_ino;   /*   inode (0: none); set while the team is set up */
    char pipe[64];       /* the name of this rank's pipe (xfer/vmsplice.h) while the team
                          * is set up */
    _Atomic uint64_t attached; /* 1 once the owner has mapped the segment */
    /* the owner's values of the team's sharings (sched/share.h): the
     * ticket of the last one it posted, and its values, in the half
     * ticket % 2 */
    kcoll_line_t share;
    float share_val[2][KCOLL_SHARE_VALS];
} kcoll_slot_t;

typedef struct {
    _Alignas(KCOLL_CACHELINE) uint64_t magic;
    uint32_t p;
    uint32_t slot_size;
    uint32_t lanes;
    uint32_t pad;
    uint64_t cell; /* bytes of a bounce cell of the channel (xfer/chan.h): the creator's */
    /* a team set up while its communicator's calls went on (team/team.h:
     * kcoll_team_turn): ranks done setting up (high 16 bits) and the
     * highest call any rank handed to the host meanwhile (low 48 bits) */
    _Atomic uint64_t turn;
} kcoll_seg_hdr_t;

/* Values in one layout table: send counts, send displacements, receive
 * counts, receive displacements, p each, in bytes. */
#define KCOLL_TABLE_LEN(p) (4 * (size_t)(p))

/* One rank's view of a mapped control segment. */
typedef struct kcoll_ctl {
    int p, rank;
    pid_t *pids;         /* pids[r] of every team rank */
    void *seg;           /* the mapping (owned by whoever mapped it) */
    size_t seg_len;
    kcoll_slot_t *slots; /* slots[r] */
    size_t *tables;      /* rank r, lane l at tables + (r * KCOLL_LANES + l) * KCOLL_TABLE_LEN(p) */
    /* the two-sided engines' mailboxes and bounce cells, after the tables,
     * as this rank uses them (xfer/chan.h); its resolver serves this
     * rank's exposures (kcoll_ctl_resolve) */
    struct kcoll_chan *chan;
    /* the direct engine is on: exposures in shareable memory say so, and
     * steps on peers' buffers that say so are loads and stores */
    int direct;
} kcoll_ctl_t;

/* Bytes needed for a segment of p slots, with bounce cells of
 * KCOLL_SHM_CELL bytes. */
size_t kcoll_ctl_seg_len(int p);
/* Called once by the creating rank on a zero-filled segment. */
void kcoll_ctl_seg_init(void *seg, int p);
/* This rank's view of a mapped segment (its length at least what the
 * creator's header asks for); publishes its pid and probe word and sets up
 * its side of the channel. The pids are read later, with
 * kcoll_ctl_load_pids, once all attached. */
kcoll_status_t kcoll_ctl_attach(kcoll_ctl_t *c, void *seg, size_t len, int p, int rank);
/* Has every rank attached? */
int kcoll_ctl_all_attached(const kcoll_ctl_t *c);
/* Fill c->pids from the slots (after every rank has attached). */
kcoll_status_t kcoll_ctl_load_pids(kcoll_ctl_t *c);
/* The CPUs the team's processes may run on, together (the union of
 * their affinity masks; after every rank has attached): more ranks than
 * that share cores, and a waiter then keeps a core from the rank it waits
 * for. 0 if unknown. */
int kcoll_ctl_cores(const kcoll_ctl_t *c);
/* Release what attach allocated (not the mapping). */
void kcoll_ctl_fini(kcoll_ctl_t *c);

/* The owner's side of a two-sided transfer (xfer/chan.h's resolver, ctx
 * a kcoll_ctl_t): the memory pieces of bytes [off, off + len) of this
 * rank's buffer buf as exposed for collective seq, from its own lane
 * (address, length, datatype map). An exposure of another collective, a
 * range beyond the buffer: an error with the reason. */
kcoll_status_t kcoll_ctl_resolve(void *ctx, uint64_t seq, int buf, size_t off, size_t len,
                                 kcoll_iovs_t *out, char *why, size_t whylen);

static inline int kcoll_lane_of(uint64_t seq)
{
    return (int)(seq % KCOLL_LANES);
}
/* Rank r's lane of collective seq. */
static inline kcoll_lane_t *kcoll_ctl_lane(const kcoll_ctl_t *c, int r, uint64_t seq)
{
    return &c->slots[r].lane[kcoll_lane_of(seq)];
}
/* Rank r's layout table of collective seq. */
static inline size_t *kcoll_ctl_table(const kcoll_ctl_t *c, int r, uint64_t seq)
{
    return c->tables +
           ((size_t)r * KCOLL_LANES + (size_t)kcoll_lane_of(seq)) * KCOLL_TABLE_LEN(c->p);
}

/* This rank gives collective seq up (an error after it entered its lane):
 * the peers waiting for it there learn it from their watch (sched/wait.h)
 * and fail too, instead of waiting for steps it will never take. */
static inline void kcoll_ctl_give_up(const kcoll_ctl_t *c, uint64_t seq)
{
    /* release: orders nothing but itself (a peer only compares it) */
    atomic_store_explicit(&kcoll_ctl_lane(c, c->rank, seq)->gaveup, seq, memory_order_release);
}
/* Has rank r given collective seq up? */
static inline int kcoll_ctl_gave_up(const kcoll_ctl_t *c, int r, uint64_t seq)
{
    /* acquire: pairs with the release in kcoll_ctl_give_up */
    return atomic_load_explicit(&kcoll_ctl_lane(c, r, seq)->gaveup, memory_order_acquire) == seq;
}

/* Address and expected value of this process's private probe word. */
const void *kcoll_ctl_probe_word(uint64_t *value);

/* 1 if the process is alive (exists and is not a zombie), 0 otherwise. */
int kcoll_pid_alive(pid_t pid);

#endif
