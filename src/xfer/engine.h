/* Transfer engines behind one table (DESIGN.md section 5).
 *
 * The executor (sched/exec.c) moves the data of READ and WRITE steps
 * through an engine: a pair of functions that copy between this process's
 * memory and a peer's, each given as an iovec list, as process_vm_readv
 * takes them. A team chooses its engine when it is set up, after probing
 * that the engine works between all its processes (team/team.c);
 * algorithms declare which engines they can run on (coll/coll.h).
 *
 * The engines (docs/engines.md):
 *  - cma (xfer/cma.c): process_vm_readv/writev, one copy made by the
 *    rank that runs the step; one-sided: the readv/writev below.
 *  - shm (xfer/chan.c): two copies through bounce cells in the team's
 *    segment, the owner of the exposed buffer making one of them.
 *  - direct (xfer/direct.c): plain loads and stores on memory every rank
 *    maps (MPI_Alloc_mem's), no system call at all.
 *  - vmsplice (xfer/vmsplice.c): the source splices its pages into a pipe,
 *    the destination reads them out: one copy, both sides acting.
 * A two-sided engine moves a step through the channel (xfer/chan.h), the
 * owner serving while it executes or waits. direct is not a pair of copy
 * functions but a mapping of the peer's buffer, which the executor copies
 * from or to itself, on top of the team's engine: a step whose peer
 * buffer is not shareable memory goes through that one.
 */
#ifndef KCOLL_XFER_ENGINE_H
#define KCOLL_XFER_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "base/status.h"

typedef enum {
    KCOLL_ENGINE_CMA = 0,      /* process_vm_readv/writev: one copy, kernel-assisted */
    KCOLL_ENGINE_SHM = 1,      /* two copies through the team's bounce cells */
    KCOLL_ENGINE_DIRECT = 2,   /* loads and stores on memory both processes map */
    KCOLL_ENGINE_VMSPLICE = 3, /* pages spliced into a pipe, one copy out of it */
    KCOLL_NENGINES
} kcoll_engine_id_t;

/* A set of engines, as a bit mask. */
#define KCOLL_ENGINE_BIT(id) (1u << (unsigned)(id))
#define KCOLL_ENGINES_ALL ((1u << KCOLL_NENGINES) - 1)

typedef struct kcoll_engine {
    kcoll_engine_id_t id;
    const char *name;                   /* "cma" */
    const char *read_call, *write_call; /* what a failure message names */
    /* two-sided: the step goes through the channel (xfer/chan.h) on this
     * path, and readv/writev are NULL */
    int two_sided;
    int path;
    /* Copy from the peer's memory (remote list, addresses in process pid)
     * into this process's (local list), or the other way round. Both lists
     * describe the same number of bytes; any number of entries. Maps errno
     * to a status: KCOLL_ERR_PEER_DEAD, KCOLL_ERR_PERM, KCOLL_ERR_SYS... */
    kcoll_status_t (*readv)(pid_t pid, const struct iovec *local, int nlocal,
                            const struct iovec *remote, int nremote);
    kcoll_status_t (*writev)(pid_t pid, const struct iovec *local, int nlocal,
                             const struct iovec *remote, int nremote);
    /* Let peers reach this process where that needs a step of its own
     * (cma: Yama's PR_SET_PTRACER). 0, or -1 with a reason in why. */
    int (*allow_peers)(char *why, size_t whylen);
    /* A real transfer from a peer: read the 8-byte word at remote_word in
     * process pid and compare it with expect. On failure an error status
     * and a one-line reason that names the likely cause and the fix. */
    kcoll_status_t (*probe_peer)(pid_t pid, const void *remote_word, uint64_t expect, char *why,
                                 size_t whylen);
} kcoll_engine_t;

/* The engine with this id (NULL for an unknown id). */
const kcoll_engine_t *kcoll_engine(kcoll_engine_id_t id);
/* The id of the engine called name, or -1. */
int kcoll_engine_by_name(const char *name);

#endif
