/* Composed schedules: one phase per group of ranks (see coll.h,
 * kcoll_phase_append). The hierarchical reductions are made of other
 * builders' schedules, each run for the ranks of one group and appended
 * with its ranks, flag values and buffers moved to where the composition
 * keeps them (sched/sched.h, kcoll_sched_append_mapped). */
#include "coll/coll.h"

void kcoll_phase_append(kcoll_sched_t *s, const kcoll_args_t *b, kcoll_builder_fn build,
                        const int *members, uint32_t base, const kcoll_bufmap_t *map, int nmap,
                        int sync, const char *need)
{
    kcoll_sched_t sub;
    if (sync && b->p > 1) {
        kcoll_sched_signal(s, KCOLL_FLAG_AUX, base);
        for (int i = 0; i < b->p; i++)
            if (i != b->rank && (!need || need[i]))
                kcoll_sched_wait(s, members[i], KCOLL_FLAG_AUX, base);
    }
    kcoll_sched_init(&sub);
    if (build(b, &sub) != KCOLL_OK && !s->err)
        s->err = sub.err ? sub.err : KCOLL_ERR_ARG;
    kcoll_sched_append_mapped(s, &sub, members, base, map, nmap, b->rank);
    kcoll_sched_free(&sub);
}
