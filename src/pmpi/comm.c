/* The communicator constructors: each is the host's, and the new
 * communicator gets kcoll's record (mpi/teams.c) while all its ranks are
 * in the call that made it, so that its first non-blocking collective
 * finds a team. */
#include "pmpi/pmpi.h"

/* (each is a blocking collective: with kcoll requests pending and no host
 * progress hook, mpi/drive.c advances them meanwhile) */

KCOLL_PUBLIC int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_dup(comm, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                     MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                       MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Intercomm_merge(intercomm, high, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                 int reorder, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                                  int reorder, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                       const int degrees[], const int destinations[],
                                       const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                             reorder, newcomm), newcomm);
}

KCOLL_PUBLIC int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                                const int sourceweights[], int outdegree,
                                                const int destinations[],
                                                const int destweights[], MPI_Info info,
                                                int reorder, MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights,
                                                      outdegree, destinations, destweights, info,
                                                      reorder, newcomm), newcomm);
}

#ifdef KCOLL_HAVE_SESSIONS
/* MPI-4 sessions: a communicator made from a group (of a session's
 * process set, or any group) gets its team like any other. A program that
 * uses sessions only, without MPI_Init, has no kcoll (kcoll starts in
 * MPI_Init): its calls go to the host unchanged. */
KCOLL_PUBLIC int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag,
                                            MPI_Info info, MPI_Errhandler errhandler,
                                            MPI_Comm *newcomm)
{
    KCOLL_RETURN_MADE(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm),
                      newcomm);
}
#endif
