/* Sharing: every rank of a team posts a few numbers and reads everybody's,
 * through the control segment, with no MPI message. The call layer's
 * run-time check of its decisions (call/adapt.h) uses it so that every
 * rank of a node decides from the same measurements, at the same call.
 *
 * Protocol. Sharings are numbered per team (the ticket, 1, 2, ...; every
 * rank counts them alike because it shares at the same calls of the same
 * communicator). For sharing n a rank writes its values into half n % 2
 * of its slot's share_val, stores n into its share word (release), then
 * waits until every other rank's share word has reached n (acquire) and
 * reads their half n % 2. Two halves suffice: a rank writes half n % 2
 * again only for sharing n + 2, which it can begin only after sharing
 * n + 1 is complete, that is after every rank posted n + 1, which each
 * did after it had read sharing n.
 *
 * The wait pauses as every kcoll wait does (sched/wait.h: it yields and
 * sleeps on a crowded node), calls poll() between rounds (the layer above
 * advances its other collectives there: a peer may wait for one of them
 * before it reaches this call), and watches the awaited ranks: one that
 * died is named in a one-line error instead of a hang.
 */
#ifndef KCOLL_SCHED_SHARE_H
#define KCOLL_SCHED_SHARE_H

#include <stdint.h>

#include "sched/ctl.h"

/* Sharing `ticket` of team c: post mine[0 .. KCOLL_SHARE_VALS) and fill
 * all[q * KCOLL_SHARE_VALS + i] with rank q's values (this rank's too).
 * mine and all NULL: a line-up, every rank past the same point, no values.
 * poll: NULL, or work to do while waiting (returns nonzero if anything
 * moved). Returns KCOLL_OK, or an error with a one-line reason in err. */
kcoll_status_t kcoll_share(const kcoll_ctl_t *c, uint64_t ticket,
                           const float mine[KCOLL_SHARE_VALS], float *all, int (*poll)(void),
                           char *err, size_t errlen);

#endif
