/* Hierarchical collectives on communicators that span nodes (paper 003
 * section VII.G, paper 000 section IV): kcoll inside each node, the host
 * MPI between the nodes (docs/hierarchy.md).
 *
 * A communicator whose ranks lie on several nodes gets, once, when its
 * record is made (pmpi/comm.c):
 *   - its node communicator: the ranks of this node, in the
 *     communicator's rank order (MPI_COMM_TYPE_SHARED), with a kcoll team
 *     of its own: CMA, shared segments and pids are only ever used
 *     there, never across nodes;
 *   - its leaders' communicator: local rank 0 of every node (the node's
 *     lowest rank), node k being the k-th node in the order of its
 *     leader's rank; MPI_COMM_NULL on the other ranks;
 *   - the map of every rank's node and local rank.
 * A blocking collective on it is composed of collectives on those two
 * communicators: the on-node phases are ordinary intercepted calls on the
 * node communicator (kcoll selects their algorithms as for any one-node
 * communicator, KCOLL_<COLL>_ALGO included), the inter-node phases are
 * host MPI calls on the leaders' communicator. The statistics count the
 * composed call once, as kcoll:hier(<first on-node phase's path>|host).
 */
#ifndef KCOLL_PMPI_HIER_H
#define KCOLL_PMPI_HIER_H

#include <mpi.h>

#include "call/call.h"

typedef struct kcoll_hier {
    MPI_Comm node;    /* this node's ranks (its own kcoll team) */
    MPI_Comm leaders; /* local rank 0 of every node; MPI_COMM_NULL elsewhere */
    int p, rank;      /* of the communicator */
    int nn, me;       /* nodes; this rank's node */
    int pn, lr;       /* ranks on this node; this rank's local rank */
    int maxpn;        /* ranks on the most populated node */
    int blocked;      /* every node holds a run of ranks, nodes in order: rank order is
                       * node-major order */
    int *node_of;     /* [p] node of each rank */
    int *lrank_of;    /* [p] local rank of each rank */
    int *nsize;       /* [nn] ranks per node */
    int *members;     /* [pn] this node's ranks, by local rank */
} kcoll_hier_t;

/* Make comm's hierarchy (collective over comm, which spans nodes): NULL,
 * alike on every rank, when it cannot be made. */
kcoll_hier_t *kcoll_hier_create(MPI_Comm comm);
void kcoll_hier_free(kcoll_hier_t *h);
/* comm's hierarchy, or NULL. */
kcoll_hier_t *kcoll_comm_hier(MPI_Comm comm);

/* -- shared by the composed collectives (pmpi/hier.c) -- */

/* A blocking host call inside a composed collective: while it blocks,
 * kcoll's pending requests are advanced beside it (pmpi/drive.c). */
#define KCOLL_HIER_HOST(rc, call)                                                        \
    do {                                                                                 \
        int drive_ = kcoll_drive_begin();                                                \
        (rc) = (call);                                                                   \
        kcoll_drive_end(drive_);                                                         \
    } while (0)
/* The tag of the point-to-point messages on a node communicator (it is
 * kcoll's own: no user message can match). */
#define KCOLL_HIER_TAG 7411
/* Scratch for count elements of dt: the address to hand to MPI (the
 * datatype's true lower bound taken off), the allocation in *mem (free
 * it). NULL when out of memory. */
void *kcoll_hier_tmp(int count, MPI_Datatype dt, void **mem);
/* Copy count elements of dt from src to dst (any datatype). */
int kcoll_hier_copy(const void *src, void *dst, int count, MPI_Datatype dt);
/* Do elements of dt follow each other without gaps? Their bytes start at
 * *at (buf plus the datatype's true lower bound). */
int kcoll_hier_contiguous(const void *buf, MPI_Datatype dt, const char **at);
/* The data of count elements of dt at buf as b contiguous bytes: buf's
 * own bytes when dt is contiguous, else packed into *mem (free it; NULL
 * when out of memory). */
const char *kcoll_hier_bytes(const void *buf, int count, MPI_Datatype dt, size_t b, void **mem);
/* b contiguous bytes (as kcoll_hier_bytes made them) into count elements
 * of dt at buf. */
int kcoll_hier_unbytes(const char *src, size_t b, void *buf, int count, MPI_Datatype dt);
/* The bytes of count elements of dt (0 for an unusable datatype). */
size_t kcoll_hier_size(int count, MPI_Datatype dt);
/* Every rank's block in node-major order: its bytes b[q] and place at[q],
 * the total, the nodes' runs for the leaders' calls (ncnt, ndsp) and this
 * node's members' blocks within its run (lcnt, ldsp, by local rank). */
typedef struct {
    size_t *b, *at, total;
    int *ncnt, *ndsp, *lcnt, *ldsp;
} kcoll_hier_blocks_t;
/* Blocks of counts[q] elements of esize bytes, or (counts NULL) all of
 * `uniform` bytes. 0, or -1 when out of memory or when the total does not
 * fit the leaders' int counts (alike on every rank that knows every
 * block). Free with kcoll_hier_blocks_free in either case. */
int kcoll_hier_blocks(const kcoll_hier_t *h, const int *counts, size_t uniform, size_t esize,
                      kcoll_hier_blocks_t *k);
void kcoll_hier_blocks_free(kcoll_hier_blocks_t *k);

/* The composed collectives (pmpi/hier.c): MPI arguments as the user passed
 * them; c is the call's description (for the statistics). Each returns the
 * MPI result. */
int kcoll_hier_barrier(const kcoll_call_t *c, MPI_Comm comm);
int kcoll_hier_bcast(const kcoll_call_t *c, MPI_Comm comm, void *buf, int count,
                     MPI_Datatype dt, int root);
/* Reduce (root >= 0) and Allreduce (root -1). */
int kcoll_hier_reduce(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf, void *rbuf,
                      int count, MPI_Datatype dt, MPI_Op op, int root);
/* Reduce_scatter (rcounts) and Reduce_scatter_block (rcounts NULL: rcount each). */
int kcoll_hier_reduce_scatter(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf,
                              void *rbuf, const int *rcounts, int rcount, MPI_Datatype dt,
                              MPI_Op op);
/* Gather (root >= 0), Allgather (root -1) and Allgatherv (root -1,
 * rcounts and rdispls; NULL otherwise). */
int kcoll_hier_gather(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf, int scount,
                      MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                      int rcount, MPI_Datatype rtype, int root);
int kcoll_hier_scatter(const kcoll_call_t *c, MPI_Comm comm, const void *sbuf, int scount,
                       MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root);

#endif
