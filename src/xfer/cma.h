/* The CMA transfer engine: single copies between two processes' memories
 * with process_vm_readv/process_vm_writev (DESIGN.md section 5).
 *
 * One system call moves at most 0x7ffff000 bytes and may move fewer than
 * asked (a partial transfer); the functions below loop until everything is
 * moved. errno is mapped to a status: ESRCH -> KCOLL_ERR_PEER_DEAD,
 * EPERM -> KCOLL_ERR_PERM, ENOSYS -> KCOLL_ERR_UNSUPPORTED, anything else
 * (EFAULT...) -> KCOLL_ERR_SYS with errno kept.
 */
#ifndef KCOLL_XFER_CMA_H
#define KCOLL_XFER_CMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "base/status.h"
#include "xfer/engine.h"

/* The engine table's entry (xfer/engine.h). */
extern const kcoll_engine_t kcoll_engine_cma;

/* Copy len bytes from address `remote` in process pid to `local`. */
kcoll_status_t kcoll_cma_read(pid_t pid, void *local, const void *remote, size_t len);
/* Copy len bytes from `local` to address `remote` in process pid. */
kcoll_status_t kcoll_cma_write(pid_t pid, const void *local, void *remote, size_t len);
/* Batched forms: the iovec lists describe the same total number of bytes;
 * any count of entries (more than IOV_MAX are split into several calls). */
kcoll_status_t kcoll_cma_readv(pid_t pid, const struct iovec *local, int nlocal,
                               const struct iovec *remote, int nremote);
kcoll_status_t kcoll_cma_writev(pid_t pid, const struct iovec *local, int nlocal,
                                const struct iovec *remote, int nremote);

/* Yama's ptrace_scope (0..3), or -1 where Yama is absent. */
int kcoll_cma_yama_scope(void);

/* Make this process readable by its peers where that is needed and
 * possible: under Yama ptrace_scope 1, prctl(PR_SET_PTRACER,
 * PR_SET_PTRACER_ANY). Idempotent. Returns 0, or -1 with a reason. */
int kcoll_cma_allow_peers(char *why, size_t whylen);

/* A real cross-process read: read 8 bytes at `remote_word` in pid and
 * compare them with `expect`. On failure returns an error status and a
 * one-line reason with the fix (Yama scope, capability, seccomp...). */
kcoll_status_t kcoll_cma_probe_peer(pid_t pid, const void *remote_word, uint64_t expect,
                                    char *why, size_t whylen);

/* Self-contained probe for kcoll-info: fork two sibling processes and let
 * one read the other, as two MPI ranks would. */
kcoll_status_t kcoll_cma_probe_local(char *why, size_t whylen);

#endif
