/* Calls an entry point hands to the host MPI undescribed, counted (see
 * mpi/host.h): a blocking MPI_Gatherv, MPI_Scatterv or MPI_Alltoallv that
 * its team's host streak takes (call/call.c, "the host streak"), or that
 * goes to the host while kcoll is disabled. Neither describes the call,
 * so the statistics count it from the entry point's own arguments: this
 * rank's v side where it has one (the root's blocks, an all-to-all's
 * receive counts), else its own block. */
#include "call/shortcut.h"
#include "mpi/host.h"

size_t kcoll_handed_bytes(kcoll_coll_t c, int p, int rank, int root, const int *vcounts,
                          MPI_Datatype vtype, int count, MPI_Datatype type)
{
    const int v = kcoll_streak_v(c, rank, root, vcounts);
    if (!v && (count <= 0 || type == MPI_DATATYPE_NULL))
        return 0;
    const MPI_Datatype dt = v ? vtype : type;
    size_t size = kcoll_dtype_plain(dt); /* a predefined type's, without asking */
    int asked = 0;
    if (size && kcoll_shortcut_allowed) { /* kept for the kept streak's inline path */
        kcoll_streak_fasts[c].type = KCOLL_HANDLE_WORD(dt);
        kcoll_streak_fasts[c].size = size;
    } else if (PMPI_Type_size(dt, &asked) == MPI_SUCCESS && asked > 0) {
        size = (size_t)asked;
    }
    return kcoll_streak_sum(v, p, vcounts, count, size);
}

int kcoll_off_count(kcoll_coll_t c, MPI_Comm comm, int root, const int *vcounts,
                    MPI_Datatype vtype, int count, MPI_Datatype type)
{
    int p, rank;
    /* the communicator's size and this rank asked every call: a disabled
     * kcoll keeps no record of a communicator, so a size kept here could
     * be a freed one's whose handle now names another */
    if (kcoll_team_threads || !kcoll_comm_place(comm, &p, &rank))
        return 0;
    kcoll_stats_bump(kcoll_off_fast.cells[c],
                     kcoll_handed_bytes(c, p, rank, root, vcounts, vtype, count, type));
    return 1;
}
