/* Agreement: before a collective whose arguments differ between ranks
 * (the v-variants: every rank knows only its own counts, or the root
 * alone knows all), the ranks of a team exchange a vote and, optionally,
 * a layout table, so that every rank decides from the same values: all
 * take kcoll's path or all take the host MPI's, with the same algorithm
 * and the same view of everybody's block layout.
 *
 * Protocol. Agreement number a (counted per team, identical on all ranks
 * because every rank of a collective call agrees in the same calls) uses
 * vote slot a % 2 and table a % 2 of every rank. A rank writes its table,
 * then its vote value, then stores a into the slot's seq with release
 * order; it then waits until every rank's slot a % 2 holds seq a and reads
 * the votes (acquire) and whatever tables it needs.
 *
 * Why two slots suffice: a rank can write slot a % 2 again only in
 * agreement a + 2, which it enters after finishing agreement a + 1, which
 * needs every rank's vote a + 1, which each rank casts only after it has
 * finished reading agreement a. So nobody overwrites what a slower rank
 * may still be reading, and kcoll_agree never needs an acknowledgement.
 * Peers' tables of agreement a stay readable until this rank's next call
 * of kcoll_agree.
 */
#ifndef KCOLL_AGREE_H
#define KCOLL_AGREE_H

#include <stdint.h>

#include "coll/coll.h"
#include "core/team.h"

/* This rank's layout table for the next agreement (KCOLL_TABLE_LEN(p)
 * values: send counts, send displacements, receive counts, receive
 * displacements), to fill before calling kcoll_agree. */
size_t *kcoll_agree_my_table(kcoll_team_t *t);

/* Cast `vote`, wait for every rank's vote of the same agreement and store
 * them in votes[0..p-1] (votes may be NULL). Returns KCOLL_OK, or an error
 * (a dead peer, a protocol violation) with a one-line reason in errmsg. */
kcoll_status_t kcoll_agree(kcoll_team_t *t, uint64_t vote, uint64_t *votes, char *errmsg,
                           size_t errlen);

/* After kcoll_agree: the layouts of all ranks from their tables of that
 * agreement (lay[q] points into rank q's table), valid until this rank's
 * next kcoll_agree. NULL if out of memory. */
const kcoll_layout_t *kcoll_agree_layouts(kcoll_team_t *t);

#endif
