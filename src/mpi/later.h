/* A set-up of collective host calls run in the calls that follow it
 * (mpi/later.c), for mpi/teams.c: the team of a communicator that kcoll
 * did not see being made, set up without a blocking call. */
#ifndef KCOLL_MPI_LATER_H
#define KCOLL_MPI_LATER_H

#include <mpi.h>

#include "team/team.h"

/* The host collectives a set-up may make (each returns 0, or 1 when the
 * host's call failed): the two of team/team.c's set-up, and an allgather
 * of n ints from every rank (the topology levels). */
typedef struct {
    kcoll_team_host_t team;
    int (*allgather)(void *ctx, const int *mine, int n, int *all);
} kcoll_later_host_t;

typedef struct kcoll_later kcoll_later_t;

/* kcoll's own duplicate of MPI_COMM_WORLD, which the set-ups' messages go
 * over (collective over MPI_COMM_WORLD, at MPI_Init): 0, or -1 (then no
 * set-up starts). Freed by kcoll_later_finalize, once no set-up is under
 * way. */
int kcoll_later_init(void);
void kcoll_later_finalize(void);

/* Start fn(arg, host) over comm (collective: every rank of comm calls this
 * in the same collective call of its own, and comm's ranks are ranks of
 * MPI_COMM_WORLD): a non-blocking broadcast on comm agrees the tag of the
 * set-up's messages. Nothing else runs yet. NULL when it cannot start. */
kcoll_later_t *kcoll_later_start(MPI_Comm comm, void (*fn)(void *arg, const kcoll_later_host_t *h),
                                 void *arg);
/* Run it on until it waits for a host call that is not done, or returns:
 * 1 once fn has returned and every rank has said so to rank 0 (or fn will
 * never run: no tag could be agreed), else 0. Never waits for the other
 * ranks. */
int kcoll_later_advance(kcoll_later_t *s);
/* Free a set-up whose fn has returned. */
void kcoll_later_free(kcoll_later_t *s);

#endif
