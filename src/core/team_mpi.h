/* Teams of MPI communicators: created on the first eligible call,
 * cached on the communicator with an attribute, destroyed when the
 * communicator is freed and at MPI_Finalize. */
#ifndef KCOLL_TEAM_MPI_H
#define KCOLL_TEAM_MPI_H

#include <mpi.h>

#include "core/stats.h"
#include "core/team.h"

/* Create the attribute keyval (after PMPI_Init). Returns 0 or -1. */
int kcoll_teams_init(void);
/* Destroy every team still alive and free the keyval (before PMPI_Finalize). */
void kcoll_teams_finalize(void);
/* The team of comm, creating it on first use: collective over comm, so every
 * rank must call it at the same point. NULL means "use the host MPI", with
 * the reason in *why (and for the whole life of comm). */
kcoll_team_t *kcoll_team_get(MPI_Comm comm, kcoll_reason_t *why);

#endif
