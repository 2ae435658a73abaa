/* The direct engine: memory every rank of a node can map, moved with plain
 * loads and stores (paper 004's SMARTMAP, on Linux: DESIGN.md section 5).
 *
 * SMARTMAP lets every process address every other process's memory. Linux
 * gives that only for memory made shareable, so kcoll serves
 * MPI_Alloc_mem itself (pmpi/mem.c): each allocation is its own memfd,
 * mapped shared, and recorded in this process's *registry*, a small
 * memfd of its own that peers map too. A peer that finds a buffer exposed
 * in such memory (the exposure names the registry entry) opens the
 * allocation's fd through /proc/<pid>/fd (falling back to pidfd_getfd),
 * checks it is the file the registry names (its inode), maps it and keeps
 * the mapping; a step on that buffer is then a memcpy (or, for the
 * partitioned reduction, the reduction itself reading the peer's vector in
 * place), no system call, no page locking.
 *
 * Lifetimes. An entry is live while its generation is odd: the owner
 * fills the entry, then stores the generation with release order, and
 * MPI_Free_mem makes it even before it unmaps and closes. A peer's mapping
 * keeps the memory alive after the owner's free (that is mmap's rule), so
 * a peer never touches freed pages; it notices the entry's new generation
 * the next time it looks up that process and unmaps then (and everything
 * at kcoll's finalize, kcoll_direct_fini). At most KCOLL_DIRECT_MAPS
 * mappings of peers' allocations are kept; the least recently used one no
 * step is copying through goes first.
 *
 * Bounds: KCOLL_DIRECT_SLOTS allocations live at once per process (one fd
 * each); MPI_Alloc_mem beyond that is the host's.
 */
#ifndef KCOLL_XFER_DIRECT_H
#define KCOLL_XFER_DIRECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/status.h"

#define KCOLL_DIRECT_SLOTS 256
#define KCOLL_DIRECT_MAPS 64

/* This process's registry, made on first use: 0, or -1 with a reason. */
int kcoll_direct_init(char *why, size_t whylen);
/* Its fd and inode, for the team's slot (0, 0 before kcoll_direct_init). */
void kcoll_direct_self(int64_t *fd, uint64_t *ino);

/* A shareable allocation of size bytes (page-aligned), or NULL (no
 * registry, no free entry, the system refused: the caller uses the host's
 * allocator). */
void *kcoll_direct_alloc(size_t size);
/* Free one of them: 1 if base was kcoll's (now freed), 0 if not. */
int kcoll_direct_free(void *base);
/* The reference an exposure publishes for memory [addr, addr + len): its
 * registry entry and generation, or 0 when it is not (wholly) inside one
 * live allocation. */
uint64_t kcoll_direct_ref(const void *addr, size_t len);
/* Live allocations of this process (tests: nothing leaks). */
int kcoll_direct_live(void);
/* Mappings of peers' allocations this process holds now. */
int kcoll_direct_mapped(void);

/* A peer's memory [addr, addr + len) (addresses in the peer), whose
 * exposure published reference ref, as a local pointer: *local, and a
 * hold on the mapping (*hold, for kcoll_direct_put). The peer's registry
 * is fd reg_fd, inode reg_ino in process pid. KCOLL_OK, or an error with a
 * reason (the caller then moves the bytes with another engine). */
kcoll_status_t kcoll_direct_get(pid_t pid, int64_t reg_fd, uint64_t reg_ino, uint64_t ref,
                                uint64_t addr, size_t len, char **local, void **hold, char *why,
                                size_t whylen);
void kcoll_direct_put(void *hold);

/* Can this process map process pid's registry (fd, inode)? 0, or -1 with
 * a reason (the team's probe). */
int kcoll_direct_probe_peer(pid_t pid, int64_t reg_fd, uint64_t reg_ino, char *why,
                            size_t whylen);

/* Unmap every peer's mapping and registry (kcoll's end). This process's
 * own live allocations stay: the program may still use them. */
void kcoll_direct_fini(void);

#endif
