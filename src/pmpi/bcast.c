/* MPI_Bcast: decide whether kcoll can do the call, and do it.
 *
 * The decision uses only what every rank of the call knows alike (kcoll
 * enabled, communicator, root, message size in bytes, which MPI requires to
 * match, parameters), plus the datatype's layout, so all ranks take the same
 * path: a rank never runs kcoll's protocol while another calls PMPI_Bcast.
 * (MPI allows ranks to describe the same bytes with differently laid-out
 * datatypes; kcoll assumes all ranks pass contiguous ones or none does, see
 * README "Limitations".) Invalid arguments go to PMPI_Bcast, so the user
 * sees the host MPI's own error.
 */
#include "core/stats.h"
#include "pmpi/pmpi.h"

KCOLL_PUBLIC int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const kcoll_coll_t coll = KCOLL_COLL_BCAST;
    kcoll_reason_t why;
    size_t bytes = 0;
    int p, rank, tsize;
    MPI_Aint lb;
    const kcoll_algo_t *algo;
    int param;

    why = KCOLL_R_DISABLED;
    if (!kcoll_ready())
        goto host;
    why = KCOLL_R_INVALID;
    if (count < 0 || datatype == MPI_DATATYPE_NULL || PMPI_Type_size(datatype, &tsize) != MPI_SUCCESS)
        goto host;
    bytes = (size_t)count * (size_t)tsize;
    if (!kcoll_pmpi_comm(comm, &p, &rank, &why))
        goto host;
    if (root < 0 || root >= p) {
        bytes = 0;
        goto host;
    }
    if (!kcoll_pmpi_policy(p, bytes, &why))
        goto host;
    if (!kcoll_dtype_contig(datatype, count, &lb)) {
        why = KCOLL_R_NONCONTIG;
        goto host;
    }
    kcoll_team_t *team = kcoll_pmpi_team(comm, coll, &algo, &param, &why);
    if (!team)
        goto host;
    if (!algo)
        algo = kcoll_bcast_select(p, bytes, &param);

    kcoll_args_t args = {.coll = coll, .p = p, .rank = rank, .root = root, .bytes = bytes,
                         .k = param};
    void *bufs[KCOLL_NBUF] = {NULL, (char *)buffer + lb, NULL};
    size_t lens[KCOLL_NBUF] = {0, bytes, 0};
    return kcoll_pmpi_run(comm, team, algo, &args, bufs, lens, bytes);

host:
    kcoll_stats_count_mpi(coll, why, bytes);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}
