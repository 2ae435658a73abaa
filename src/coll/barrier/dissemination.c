/* MPI_Barrier, dissemination (Hensgen, Finkel and Manber), on the flags of
 * the team's control segment; no data moves.
 *
 * In round t = 0..ceil(log2 p)-1 a rank raises its DATA flag to t+1 and
 * waits until rank (rank - 2^t) mod p has raised its own to t+1. After
 * round t a rank has heard, directly or through others, from the 2^(t+1)
 * ranks before it; after the last round from all p. So no rank leaves
 * before every rank has entered. Flags carry the collective's sequence
 * number, so nothing needs resetting between barriers, and a rank that
 * already left for the next collective only raises its flags further.
 *
 * Cost: ceil(log2 p) * (one flag store + one cache-line transfer); each
 * process's flag is polled by one peer per round. Any p.
 */
#include "coll/coll.h"

kcoll_status_t kcoll_barrier_dissemination(const kcoll_args_t *a, kcoll_sched_t *s)
{
    const int p = a->p, r = a->rank;
    for (int t = 0; (1 << t) < p; t++) {
        kcoll_sched_signal(s, KCOLL_FLAG_DATA, (uint32_t)(t + 1));
        kcoll_sched_wait(s, (r - (1 << t) % p + p) % p, KCOLL_FLAG_DATA, (uint32_t)(t + 1));
    }
    return s->err;
}
