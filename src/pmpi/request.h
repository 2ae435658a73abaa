/* kcoll's requests as MPI requests (pmpi/request.c).
 *
 * A non-blocking collective kcoll runs is handed to the user as a
 * generalized request of the host MPI (mpi/greq.c).
 *
 * A persistent collective (MPI_Bcast_init...) keeps the host's own
 * persistent request as the handle: kcoll decides once, at the
 * initialization, whether it runs the starts ("a plan", keyed by the
 * handle); if not, MPI_Start goes to the host with that very request.
 * While kcoll runs a start, the completion functions answer for the handle
 * themselves, since the host sees it inactive.
 */
#ifndef KCOLL_PMPI_REQUEST_H
#define KCOLL_PMPI_REQUEST_H

#include "pmpi/pmpi.h"

/* Record a persistent request: r runs its starts, or NULL: the host does,
 * counted under why. r runs on *own, the request's private communicator,
 * which the plan then keeps and frees with itself (*own becomes
 * MPI_COMM_NULL); without r, *own (if any) is freed here. */
void kcoll_plan_add(MPI_Request handle, kcoll_req_t *r, const kcoll_call_t *c,
                    kcoll_reason_t why, MPI_Comm *own);

#endif
