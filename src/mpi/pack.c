/* The packer of the datatypes kcoll has no map for (call.h:
 * KCOLL_TYPE_HOSTPACK: a darray, MPI_SHORT_INT): PMPI_Pack and PMPI_Unpack
 * on MPI_COMM_SELF, whose format on one kind of machine is the data's
 * bytes in type-map order, as a map packs them (a peer may read them with
 * a map of its own), in pieces whose bytes fit the host's int. The call
 * layer moves such data packed where a schedule across nodes needs its
 * bytes (call/request.c). */
#include <stddef.h>

#include "mpi/host.h"

static int kcoll_packing(const kcoll_call_t *c, int side, const void *from, void *to, size_t n,
                         int unpack)
{
    const kcoll_handles_t hd = kcoll_handles_of(c);
    const MPI_Datatype dt = side ? hd.rdt : hd.dt;
    MPI_Aint lb, extent;
    int size = 0;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS || size <= 0 ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS)
        return -1;
    const size_t per = ((size_t)1 << 30) / (size_t)size ? ((size_t)1 << 30) / (size_t)size : 1;
    for (size_t i = 0; i < n; i += per) {
        const int k = (int)(n - i < per ? n - i : per), bytes = k * size;
        int pos = 0, rc;
        if (unpack)
            rc = PMPI_Unpack((const char *)from + i * (size_t)size, bytes, &pos,
                             (char *)to + (ptrdiff_t)i * extent, k, dt, MPI_COMM_SELF);
        else
            rc = PMPI_Pack((const char *)from + (ptrdiff_t)i * extent, k, dt,
                           (char *)to + i * (size_t)size, bytes, &pos, MPI_COMM_SELF);
        if (rc != MPI_SUCCESS || pos != bytes)
            return -1;
    }
    return 0;
}

static int kcoll_pack(const kcoll_call_t *c, int side, const void *base, size_t n, void *out)
{
    return kcoll_packing(c, side, base, out, n, 0);
}

static int kcoll_unpack(const kcoll_call_t *c, int side, const void *in, size_t n, void *base)
{
    return kcoll_packing(c, side, in, base, n, 1);
}

const kcoll_packer_t kcoll_host_packer = {kcoll_pack, kcoll_unpack};
