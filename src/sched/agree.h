/* Agreement: before a collective whose arguments differ between ranks
 * (the v-variants: every rank knows only its own counts, or the root
 * alone knows all; datatypes whose layout only their rank knows), the
 * ranks of a team exchange a vote and, optionally, a layout table, so that
 * every rank decides from the same values and every builder sees every
 * rank's block layout.
 *
 * An agreement is an external operation (kcoll_xop_t, sched/sched.h): it
 * can run as a schedule's EXTERN step, and it never blocks.
 *
 * Protocol. Agreement of collective seq uses the vote and the layout table
 * of lane seq % KCOLL_LANES of every rank (sched/ctl.h). A rank first
 * makes sure every rank has finished reading the agreement of collective
 * seq - KCOLL_LANES of the same lane (each rank's `seen` word has reached
 * it): until then its test returns "in progress". It then writes its
 * table (the fill callback), stores its vote value and then seq into
 * vote_seq with release order; it then waits until every rank's vote_seq
 * holds seq and reads the votes (acquire) and whatever tables it needs.
 * When it is done reading (after building its schedule), it stores seq
 * into its `seen` word (release), which lets the others overwrite their
 * lane's vote and table again. Every collective of a team stores `seen`,
 * with or without an agreement, so that a lane's next agreement never
 * waits for a collective that had none.
 */
#ifndef KCOLL_AGREE_H
#define KCOLL_AGREE_H

#include <stdint.h>

#include "sched/ctl.h"
#include "sched/sched.h"

typedef struct {
    kcoll_xop_t op;       /* first: the agreement is an external operation */
    const kcoll_ctl_t *ctl;
    uint64_t seq;         /* the collective it belongs to */
    uint64_t vote;
    /* Write this rank's table (KCOLL_TABLE_LEN(p) values) just before the
     * vote is cast, or NULL: no table. */
    void (*fill)(void *ctx, size_t *table);
    void *ctx;
    uint64_t *votes;      /* every rank's vote once done (p entries; may be NULL) */
    int cast;             /* this rank's vote is published */
    int next;             /* the first rank whose vote has not been read yet */
} kcoll_agree_t;

/* Prepare the agreement of collective seq of team c with this rank's vote. */
void kcoll_agree_init(kcoll_agree_t *a, const kcoll_ctl_t *c, uint64_t seq, uint64_t vote,
                      void (*fill)(void *ctx, size_t *table), void *ctx, uint64_t *votes);
/* Rank r's table of collective seq, readable once the agreement is done
 * and until this rank stores `seen` for seq. */
static inline const size_t *kcoll_agree_table(const kcoll_ctl_t *c, int r, uint64_t seq)
{
    return kcoll_ctl_table(c, r, seq);
}
/* This rank has finished reading the agreement data of collective seq (or
 * had none to read). */
void kcoll_agree_seen(const kcoll_ctl_t *c, uint64_t seq);
/* Run an agreement to its end, pausing while it waits (for code that owns
 * the team, as kcoll_exec_run). */
kcoll_status_t kcoll_agree_run(kcoll_agree_t *a, char *err, size_t errlen);

#endif
